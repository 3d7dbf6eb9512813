"""Commands: `guardrail data toolctx | longctx | fetch` — build and fetch data sets."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    data_app = typer.Typer(help="Build evaluation sets; fetch external data.", no_args_is_help=True)
    app.add_typer(data_app, name="data")

    @data_app.command("toolctx")
    def toolctx_cmd(
        out: Path = typer.Option(..., "--out", help="The JSONL file to write."),
        family: str = typer.Option("train", help="train | dev | calib | holdout: disjoint "
                                   "domains, field names, vocabularies and sentence templates "
                                   "(dev measures generalisation; calib, disjoint from both, is "
                                   "for fitting the sentence judge on turns the detector never "
                                   "trained on; holdout, disjoint from all three, is an "
                                   "evaluation set nobody tunes on)."),
        n: int = typer.Option(2000, "--n", help="How many chat turns."),
        seed: int = typer.Option(0),
    ) -> None:
        """Tool-grounded chat turns (JSON, tables, search results, ...) with sentence labels."""
        from guardrail.train import toolctx

        if family not in toolctx.FAMILIES:
            raise typer.BadParameter(f"--family must be one of {', '.join(toolctx.FAMILIES)}")
        turns = toolctx.generate(family, n, seed)
        toolctx.write_jsonl(out, turns)
        typer.echo(json.dumps({"out": str(out), "family": family, "seed": seed,
                               **toolctx.stats(turns)}, indent=2))

    @data_app.command("longctx")
    def longctx_cmd(
        out: Path = typer.Option(..., "--out", help="Directory to write the RAGTruth-format set to."),
        lengths: str = typer.Option("8192,16384", help="Context lengths in tokens, comma-separated."),
        depths: str = typer.Option("0,0.5,1", help="Evidence depths in [0, 1], comma-separated."),
        n_per_cell: int = typer.Option(8, "--n-per-cell", help="Items per (length, depth); "
                                       "the same items in every cell, half hallucinated."),
        seed: int = typer.Option(0),
        hallucinations: str = typer.Option("mixed", help="real (RAGTruth's annotated ones) | "
                                           "injected (one synthetic change) | mixed (half each)."),
        distractors: str = typer.Option("random", help="random | similar: surround the "
                                        "evidence with random documents, or with those "
                                        "sharing the most terms with it (harder retrieval)."),
        source_dir: Path = typer.Option(Path("../shared/data"), "--source-dir",
                                        help="The shared data directory (RAGTruth QA subset, "
                                        "FaithBench, SummEdits, TRUE)."),
        model: Optional[str] = typer.Option(None, help="Detector whose tokenizer counts tokens "
                                            "and whose training split picks the dev items "
                                            "(default: shipped)."),
        split: str = typer.Option("dev", help="dev: items of the model's dev split, to "
                                  "evaluate on | calib: items of its calibration split among "
                                  "non-dev documents, to fit or tune on (a threshold, a "
                                  "setting) without touching dev."),
    ) -> None:
        """A long-context set: real QA evidence buried at chosen depths in other real documents."""
        from guardrail.model import Detector
        from guardrail.train import longctx

        if split not in ("dev", "calib"):
            raise typer.BadParameter("--split must be dev or calib")
        try:
            lens = [int(x) for x in lengths.split(",") if x.strip()]
            deps = [float(x) for x in depths.split(",") if x.strip()]
        except ValueError as exc:
            raise typer.BadParameter(f"--lengths and --depths take numbers: {exc}") from exc
        det = Detector.from_pretrained(model)
        sp = det.meta.get("training", {}).get("split")
        if sp is None:
            sp = {"dev_fraction": 0.2, "seed": 13}
            typer.echo(f"warning: {det.name} records no training split; assuming {sp}", err=True)
        try:
            items, pool = longctx.load_sources(source_dir, sp["dev_fraction"], sp["seed"],
                                               split)  # type: ignore[arg-type]
            built = longctx.build(items, pool, det.tokenizer, lengths=lens, depths=deps,
                                  n_per_cell=n_per_cell, seed=seed,
                                  hallucinations=hallucinations,  # type: ignore[arg-type]
                                  distractor_order=distractors)  # type: ignore[arg-type]
        except (ValueError, FileNotFoundError) as exc:
            raise typer.BadParameter(str(exc)) from exc
        longctx.write_ragtruth(out, built)
        typer.echo(json.dumps({
            "out": str(out), "examples": len(built),
            "hallucinated": sum(le.example.hallucinated for le in built),
            "kinds": {k: sum(le.kind == k for le in built) for k in sorted({le.kind for le in built})},
            "n_tokens": [min(le.n_tokens for le in built), max(le.n_tokens for le in built)],
            "split": {**sp, "items_from": split}, "items": len(items),
            "distractor_documents": len(pool)}, indent=2))

    @data_app.command("fetch")
    def fetch_cmd(
        dest: Path = typer.Option(Path("data/external"), help="Sets, manifest and cache/ go here."),
        only: Optional[str] = typer.Option(None, help="Comma-separated sets (default: all)."),
        max_per_set: Optional[int] = typer.Option(None, "--max-per-set", min=1),
        length_control: str = typer.Option("matched", help="HaluEval's longer-answer shortcut: "
                                           "matched (equal classes per length bin) | ratio "
                                           "(pairs within --max-ratio) | none."),
        exclude: Path = typer.Option(Path("../shared/data/true_benchmark_subsets"),
                                     help="TRUE CSVs whose items are dropped (if present)."),
        no_exclude: bool = typer.Option(False, "--no-exclude"), seed: int = typer.Option(0),
        max_ratio: float = typer.Option(1.3),
    ) -> None:
        """Fetch halueval-qa|dialogue|summarization, vitaminc, knowledge-conflicts, passages."""
        from guardrail.train import fetch as fetching

        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        which = [x.strip() for x in only.split(",") if x.strip()] if only else fetching.SETS
        try:
            manifest = fetching.fetch(dest, which, max_per_set=max_per_set, seed=seed,
                                      length=length_control,  # type: ignore[arg-type]
                                      max_ratio=max_ratio, exclude=None if no_exclude else exclude)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        except (fetching.FetchError, OSError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(json.dumps(manifest, indent=2))
