"""Command: `guardrail calibrate-long` — how a `pcw` model reads long contexts
(``guardrail.train.long_offset``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from guardrail.commands.training_data import LAYERS_HELP, layers_of


def _scores(det, data: list[str], scores: Optional[Path], wanted: list[int]) -> dict:
    """``{layer: {set: [Scored]}}``: the sets scored now, or read back from a report
    that this command wrote with the same read (``--scores``)."""
    from guardrail.train.long_offset import Scored, score_set

    if scores is None:
        try:
            by_set = {path: score_set(det, path, wanted) for path in data}
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--data") from exc
        return {layer: {p: rows[layer] for p, rows in by_set.items()} for layer in wanted}
    report = json.loads(scores.read_text())
    if report.get("sharpen") != det.sharpen:
        raise typer.BadParameter(f"{scores} was scored with sharpen {report.get('sharpen')}, "
                                 f"not {det.sharpen:g}", param_hint="--scores")
    missing = [layer for layer in wanted if str(layer) not in report["layers"]]
    if missing:
        raise typer.BadParameter(f"{scores} holds no scores at layers {missing}",
                                 param_hint="--scores")
    return {layer: {p: [Scored(**r) for r in s["scores"]]
                    for p, s in report["layers"][str(layer)]["sets"].items()}
            for layer in wanted}


def register(app: typer.Typer) -> None:
    @app.command("calibrate-long")
    def calibrate_long_cmd(
        model: Path = typer.Option(..., "--model", help="A `pcw` detector directory; its "
                                   "guardrail.json gets `pcw.sharpen` and `pcw.long_offset`, "
                                   "the weights are not touched."),
        data: list[str] = typer.Option([], "--data", help="A long-context set built from "
                                       "the model's calibration split (`guardrail data "
                                       "longctx --split calib`); repeatable."),
        sharpen: Optional[float] = typer.Option(None, help="The power to which each token "
                                                "raises the attention mass of the windows "
                                                "its block reads, to weigh them (1: the "
                                                "mass itself; default: the model's)."),
        layers: Optional[str] = typer.Option(None, help=LAYERS_HELP),
        out: Optional[Path] = typer.Option(None, help="Also write each set's scores and "
                                           "cell ratios here (JSON)."),
        scores: Optional[Path] = typer.Option(None, help="Fit on the scores of an earlier "
                                              "run's --out instead of scoring --data "
                                              "(the same sharpen; no model run)."),
    ) -> None:
        """Fit a score offset per layer for checks that read a few of many windows.

        Each long cell then recalls 0.9x what the passages alone do; writes guardrail.json."""
        from guardrail.model import Detector, PcwDetector
        from guardrail.model.detector import GUARDRAIL_CONFIG
        from guardrail.train.long_offset import cell_ratios, fit_offset

        if not model.is_dir():
            raise typer.BadParameter(f"{model} is not a directory", param_hint="--model")
        if bool(data) == bool(scores):
            raise typer.BadParameter("give the long sets to score (--data) or an earlier "
                                     "run's scores (--scores), not both")
        det = Detector.from_pretrained(model, device="cpu")
        if not isinstance(det, PcwDetector):
            raise typer.BadParameter(f"{model} is not a `pcw` model: a cross-encoder reads "
                                     "every window it scores", param_hint="--model")
        if sharpen is not None:
            det.sharpen = sharpen
        wanted = layers_of(det, layers)
        scored = _scores(det, data, scores, wanted)
        fitted, report = {}, {}
        for layer in wanted:
            t = det.threshold_for(layer)
            try:
                fitted[str(layer)] = fit_offset(list(scored[layer].values()), t)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--data") from exc
            report[str(layer)] = {"offset": fitted[str(layer)], "threshold": t, "sets": {
                path: {"before": cell_ratios(rows, t, 0.0),
                       "after": cell_ratios(rows, t, fitted[str(layer)]),
                       "scores": [vars(r) for r in rows]}
                for path, rows in scored[layer].items()}}
        meta_path = model / GUARDRAIL_CONFIG
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        kept = det.long_offset if det.sharpen == meta.get("pcw", {}).get("sharpen", 1.0) else {}
        det.long_offset = {**kept, **fitted}  # another read: earlier offsets do not hold
        meta["pcw"] = {k: v for k, v in meta.get("pcw", {}).items()
                       if k not in ("sharpen", "long_offset")} | det.meta["pcw"]
        sets = list(scored[wanted[0]])
        meta["long_calibration"] = {"data": sets, "sharpen": det.sharpen, "offsets": fitted}
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
        if out is not None:
            out.write_text(json.dumps({"model": str(model), "sharpen": det.sharpen,
                                       "layers": report}, indent=1) + "\n")
        typer.echo(json.dumps({"sharpen": det.sharpen, "long_offset": fitted, "ratios": {
            layer: {p: r["after"] for p, r in v["sets"].items()}
            for layer, v in report.items()}}, indent=2))
