"""Commands: `guardrail judge fit | eval | compare` — the sentence-level decision
(guardrail.evidence)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

DATA_HELP = ("Labelled data as PATH or PATH@SPLIT (repeatable): anything `guardrail eval` "
             "reads, a `guardrail data toolctx` or `guardrail data fetch` JSONL.  SPLIT is "
             "all (default), train, dev, fit or calib: the split by source recorded in the "
             "model's training metadata (fit + calib = train).")
SPLITS = ("all", "train", "dev", "fit", "calib")


def load_split(spec: str, meta: dict):
    """The examples of one ``PATH[@SPLIT]``."""
    from guardrail.train.data import load_any, split_by_source

    path, _, split = spec.rpartition("@") if "@" in spec else (spec, "", "all")
    if split not in SPLITS:
        raise typer.BadParameter(f"{spec!r}: the split must be one of {', '.join(SPLITS)}",
                                 param_hint="--data")
    try:
        examples = load_any(path)
    except (ValueError, OSError) as exc:
        raise typer.BadParameter(f"{spec}: {exc}", param_hint="--data") from exc
    if split == "all":
        return examples
    sp = meta.get("training", {}).get("split", {"dev_fraction": 0.2, "seed": 13})
    train, dev = split_by_source(examples, sp["dev_fraction"], sp["seed"])
    if split in ("train", "dev"):
        return train if split == "train" else dev
    fit, calib = split_by_source(train, sp.get("calib_fraction", 0.1), sp["seed"] + 1)
    return fit if split == "fit" else calib


CACHE_HELP = ("A JSON file of the detector's token probabilities per sentence: read when it "
              "was written for the same model, data and options, else written; refitting "
              "or re-measuring then runs no model (the evidence features are recomputed).")
WHOLE_HELP = ("Comma-separated data set name prefixes whose hallucinated examples without "
              "spans count as unsupported as a whole (claims, short answers), as for `train "
              "detector`; elsewhere they are left out.")


WINDOWS_HELP = ("Which windows of a long context each check reads: all (every window, the "
                "token minimum over them) or served (as the proxy reads them with the "
                "shipped scheduler settings: in flight one window packed from the passages "
                "the sentence matches, at full depth each sentence's own window).  Contexts "
                "of one window read the same either way.")


def _rows(det, specs: list[str], layers: list[int], limit: Optional[int],
          whole_response: str = "", cache: Optional[Path] = None, windows: str = "all"):
    """The rows of every spec at every layer.  With ``cache``, the detector's part of each
    spec's rows (token probabilities per sentence) is read from it when it was written
    for the same model weights, layers and labelled examples, else computed and
    added: a refit on one more data set runs the model on that set alone, and a change
    of the evidence features runs no model at all."""
    import hashlib
    from dataclasses import asdict

    from guardrail.train.data import example_row
    from guardrail.train.judge import Scored, rows_from, score
    from guardrail.train.kinds import kinds_of

    def key(examples) -> str:
        # The examples themselves, not the spec's path: a file rewritten in place (a new
        # `data fetch` or `data toolctx`) must not be read back as the scores of the old one.
        served = [] if windows == "all" else [windows]
        read = hashlib.sha256()
        for ex in examples:
            read.update(json.dumps(example_row(ex), sort_keys=True).encode())
        return hashlib.sha256(json.dumps([weights, det.meta.get("training", {}).get("report"),
                                          read.hexdigest(), layers, "scored", *served],
                                         default=str).encode()).hexdigest()

    weights = _weights_id(det)
    sel = None
    if windows == "served":
        from guardrail.config import SchedulerConfig
        from guardrail.engine.checks import window_selectors

        sel = window_selectors(SchedulerConfig(), det)

    stored = {}
    if cache is not None and cache.exists():
        stored = json.loads(cache.read_text()).get("entries", {})
    rows, changed = [], False
    for spec in specs:
        examples = _examples(det, spec, limit, whole_response)
        k = key(examples)
        if k not in stored:
            stored[k] = [asdict(sc) for layer in layers for sc in
                         score(det, examples, None if layer >= det.n_layers else layer,
                               selector=sel and (sel.final if layer >= det.n_layers
                                                 else sel.in_flight))]
            changed = True
            typer.echo(f"{spec}: {len(examples)} examples", err=True)
        scored = [Scored(**{**sc, "probs": tuple(sc["probs"])}) for sc in stored[k]]
        rows += rows_from(examples, scored, kinds_of(spec))
    if cache is not None and changed:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"entries": stored}))
    return rows


def _weights_id(det) -> str:
    """The detector's weights themselves (a hash of its safetensors files), not the name it
    was loaded by: the shipped model named as ``default`` or by its path, or a copy of it,
    reads its cached rows back.  A Hugging Face id keeps its name."""
    import hashlib

    from guardrail.model.sources import model_path

    path = model_path(det.name)
    files = sorted(path.glob("*.safetensors")) if path.is_dir() else []
    if not files:
        return det.name
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()


def _examples(det, spec: str, limit: Optional[int], whole_response: str):
    from guardrail.commands.training_data import labelled_examples

    examples = labelled_examples(load_split(spec, det.meta), whole_response)
    examples = examples[:limit] if limit else examples
    if not any(ex.has_spans for ex in examples):
        raise typer.BadParameter(f"{spec}: no span-labelled examples", param_hint="--data")
    return examples


def _windows(value: str) -> str:
    if value not in ("all", "served"):
        raise typer.BadParameter("--windows is all or served")
    return value


def _layers(spec: str, det) -> list[int]:
    try:
        layers = sorted({int(x) for x in spec.split(",") if x.strip()})
    except ValueError:
        raise typer.BadParameter("--layers takes numbers, e.g. 4,6") from None
    bad = [x for x in layers if x not in (*det.exit_layers, det.n_layers)]
    if bad or not layers:
        raise typer.BadParameter(f"--layers must be exit layers {list(det.exit_layers)} or "
                                 f"the full depth {det.n_layers}")
    return layers


def register(app: typer.Typer) -> None:
    judge_app = typer.Typer(help="The sentence judge: fit it, or measure what the proxy "
                            "would do with each sentence.", no_args_is_help=True)
    app.add_typer(judge_app, name="judge")

    @judge_app.command("fit")
    def fit_cmd(
        data: list[str] = typer.Option(..., "--data", help=DATA_HELP),
        model: Optional[Path] = typer.Option(None, help="Model directory whose "
                                             "guardrail.json gets the judge (default: "
                                             "the shipped model)."),
        layers: str = typer.Option("", help="Exit layers to fit a head for (default: every "
                                   "exit and full depth)."),
        keep: float = typer.Option(0.95, min=0.5, max=0.999, help="Share of supported "
                                   "sentences that must pass on every data set."),
        l2: float = typer.Option(1.0, min=0.0, help="L2 regularisation."),
        structured_heads: bool = typer.Option(True, help="Heads of their own for sentences "
                                              "grounded in structured contexts (tool "
                                              "results), when the data has enough of both."),
        tool_heads_only: bool = typer.Option(False, help="Refit only the heads for "
                                             "sentences grounded in structured contexts "
                                             "(tool results) and keep the model's prose "
                                             "heads, e.g. on labelled turns of your own tools."),
        limit: Optional[int] = typer.Option(None, min=1,
                                            help="First N examples of each --data."),
        whole_response: str = typer.Option("", help=WHOLE_HELP),
        rows_cache: Optional[Path] = typer.Option(None, help=CACHE_HELP),
        windows: str = typer.Option("all", callback=_windows, help=WINDOWS_HELP),
        out: Optional[Path] = typer.Option(None, help="Also write the fit's report JSON here."),
    ) -> None:
        """Fit a sentence judge per exit layer and write it into the model's guardrail.json."""
        from guardrail.evidence.judge import SentenceJudge
        from guardrail.model import DEFAULT_MODEL, Detector
        from guardrail.train.judge import (fit_judge, fit_tool_heads, format_measure, measure,
                                           rows_by_layer)

        directory = Path(model) if model else Path(DEFAULT_MODEL)
        det = Detector.from_pretrained(directory)
        rows = _rows(det, data, _layers(layers, det) if layers else
                     [*det.exit_layers, det.n_layers], limit, whole_response, rows_cache,
                     windows)
        try:
            if tool_heads_only:
                if not det.meta.get("judge"):
                    raise ValueError("--tool-heads-only refits a judge's tool heads: this "
                                     "model has no judge yet; fit one without it first")
                judge = fit_tool_heads(SentenceJudge.from_json(det.meta["judge"]), rows,
                                       keep=keep, l2=l2)
            else:
                judge = fit_judge(rows, keep=keep, l2=l2, split=structured_heads)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        report = {layer: measure(part, judge) for layer, part in rows_by_layer(rows).items()}
        for layer, m in report.items():
            tools = judge.structured_heads.get(layer)
            typer.echo(f"layer {layer} (fitted on these; threshold "
                       f"{judge.heads[layer].threshold:.3f}"
                       f"{f', structured contexts {tools.threshold:.3f}' if tools else ''}"
                       f"):\n{format_measure(m)}")
        cfg_path = directory / "guardrail.json"
        meta = json.loads(cfg_path.read_text())
        fitted = {"fitted_on": data, "keep": keep, "l2": l2}
        if tool_heads_only:  # the prose heads' own record stays beside the tool heads'
            before = meta["judge"]
            fitted = {**{k: before[k] for k in ("fitted_on", "keep", "l2") if k in before},
                      "tool_heads": fitted}
        meta["judge"] = {**judge.to_json(), **fitted}
        cfg_path.write_text(json.dumps(meta, indent=2) + "\n")
        typer.echo(f"wrote the judge into {cfg_path}")
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"data": data, "keep": keep, "report": report},
                                      indent=2, default=str) + "\n")

    @judge_app.command("eval")
    def eval_cmd(
        data: list[str] = typer.Option(..., "--data", help=DATA_HELP),
        model: Optional[str] = typer.Option(None, help="HF id or path (default: shipped)."),
        layers: str = typer.Option("", help="Exit layers to measure (default: the deepest "
                                   "exit and full depth)."),
        tokens: bool = typer.Option(False, "--tokens", help="Measure the token rule (a "
                                    "sentence is flagged when a token reaches the "
                                    "detector's threshold) instead of the judge."),
        limit: Optional[int] = typer.Option(None, min=1,
                                            help="First N examples of each --data."),
        whole_response: str = typer.Option("", help=WHOLE_HELP),
        rows_cache: Optional[Path] = typer.Option(None, help=CACHE_HELP),
        windows: str = typer.Option("all", callback=_windows, help=WINDOWS_HELP),
        out: Optional[Path] = typer.Option(None, help="Write the metrics JSON here."),
    ) -> None:
        """Per data set: supported sentences kept, unsupported stopped, stop F1, AUROC."""
        from guardrail.evidence.judge import SentenceJudge
        from guardrail.model import Detector
        from guardrail.train.judge import format_measure, measure, rows_by_layer

        det = Detector.from_pretrained(model)
        params = det.meta.get("judge")
        if not tokens and not params:
            raise typer.BadParameter("this model has no sentence judge: fit one with "
                                     "`guardrail judge fit`, or pass --tokens")
        judge = None if tokens else SentenceJudge.from_json(params)
        chosen = _layers(layers, det) if layers else [max(det.exit_layers, default=det.n_layers),
                                                       det.n_layers]
        rows = _rows(det, data, chosen, limit, whole_response, rows_cache, windows)
        result = {}
        for layer, part in rows_by_layer(rows).items():
            m = measure(part, judge, None if judge else det.threshold_for(
                None if layer >= det.n_layers else layer))
            result[layer] = m
            typer.echo(f"layer {layer} ({'tokens' if tokens else 'judge'}):\n"
                       f"{format_measure(m)}")
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"data": data, "model": det.name, "rule": "tokens" if
                                       tokens else "judge", "windows": windows,
                                       "layers": result},
                                      indent=2, default=str) + "\n")

    @judge_app.command("compare")
    def compare_cmd(
        data: list[str] = typer.Option(..., "--data", help=DATA_HELP),
        against: str = typer.Option(..., help="The model to compare with (B): HF id or "
                                    "path, e.g. the shipped guardrail/models/default."),
        model: Optional[str] = typer.Option(None, help="The candidate (A): HF id or path "
                                            "(default: shipped)."),
        layers: str = typer.Option("", help="Layers to compare, exits or full depth, which "
                                   "both models must have (default: A's deepest exit and "
                                   "full depth)."),
        tokens: bool = typer.Option(False, "--tokens", help="Compare the token rules "
                                    "instead of the judges."),
        limit: Optional[int] = typer.Option(None, min=1,
                                            help="First N examples of each --data."),
        whole_response: str = typer.Option("", help=WHOLE_HELP),
        rows_cache: Optional[Path] = typer.Option(None, help=CACHE_HELP + "  One file holds "
                                                  "both models' entries."),
        windows: str = typer.Option("all", callback=_windows, help=WINDOWS_HELP),
        resamples: int = typer.Option(1000, min=100, help="Bootstrap resamples of the "
                                      "answers."),
        seed: int = typer.Option(0, help="Seed of the resampling."),
        out: Optional[Path] = typer.Option(None, help="Write the comparison JSON here."),
    ) -> None:
        """Two models on the same sentences: each one's kept, stopped, stop F1, AUROC and
        example F1, and A - B with its 95 % paired bootstrap interval over the answers."""
        from guardrail.evidence.judge import SentenceJudge
        from guardrail.model import Detector
        from guardrail.train.compare import compare, format_compare, pair
        from guardrail.train.judge import decisions

        dets = [Detector.from_pretrained(m) for m in (model, against)]
        if not tokens:
            for det in dets:
                if not det.meta.get("judge"):
                    raise typer.BadParameter(f"{det.name} has no sentence judge: fit one "
                                             "with `guardrail judge fit`, or pass --tokens")
        a = dets[0]
        chosen = layers or ",".join(str(x) for x in (max(a.exit_layers, default=a.n_layers),
                                                     a.n_layers))
        chosen_layers = _layers(chosen, a)
        _layers(chosen, dets[1])  # B must have them too
        rows = [_rows(det, data, chosen_layers, limit, whole_response, rows_cache, windows)
                for det in dets]

        def decide(det):
            judge = None if tokens else SentenceJudge.from_json(det.meta["judge"])

            def run(part):
                layer = part[0].layer
                return decisions(part, judge, None if judge else det.threshold_for(
                    None if layer >= det.n_layers else layer))
            return run

        try:
            paired = pair(*rows)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--data") from exc
        result = compare(paired, decide(dets[0]), decide(dets[1]), resamples, seed)
        typer.echo(format_compare(result, dets[0].name, dets[1].name))
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"data": data, "a": dets[0].name, "b": dets[1].name,
                                       "rule": "tokens" if tokens else "judge",
                                       "windows": windows, "resamples": resamples,
                                       "seed": seed, "layers": result},
                                      indent=2, default=str) + "\n")
