"""A `pcw` check that weighs the windows it reads by their attention mass raised to a power,
measured over long contexts (docs/context-states.md, "Sharper reads of the chosen windows").

    .venv/bin/python scripts/window_sharpen.py dump DIR OUT.json [--sharpen G] [--model M]
    .venv/bin/python scripts/window_sharpen.py table OUT.json ... [--offset D | --fit CALIB.json]

``dump`` reads a set made by `guardrail data longctx`, answers read a block per sentence as
the proxy reads them, at full depth, and writes each answer's highest token probability
and label, per cell (length/depth) and for the same items with their passages alone
(``ev``).  ``--sharpen G``: each block still reads its ``top_windows`` windows, but each
token weighs them by their mass to the power G instead of 1 (``attention._read_top``'s
``sharpen``; the shipped read is G = 1), the total against its own keys unchanged.
``table`` prints per cell recall at the model's threshold, its ratio to the evidence-only
recall, supported answers flagged and AUROC; ``--offset D`` adds D to the logit of every
long-context score first (never to ``ev``), ``--fit CALIB.json`` takes the smallest D
(steps of 0.1) at which the long cells of CALIB.json recall, on average, at least what
their evidence-only items recall, and applies it to the files named.  Runs no model.
"""

from __future__ import annotations

import argparse
import json


def dump(data: str, out: str, model: str, sharpen: float, layer: int | None) -> None:
    from guardrail.model.detector import Detector
    from guardrail.train.long_offset import score_set

    det = Detector.from_pretrained(model)
    det.sharpen = sharpen
    layer = det.model.resolve(layer)
    rows = [{"id": r.id, "y": int(r.hallucinated), "cell": r.cell, "score": float(r.score)}
            for r in score_set(det, data, [layer])[layer]]  # raw: no offset applied
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"data": data, "model": model, "sharpen": sharpen, "layer": layer,
                   "threshold": det.threshold_for(layer), "rows": rows}, f, indent=0)


def _scored(rows: list[dict]):
    from guardrail.train.long_offset import Scored

    return [Scored(r["id"], r["cell"], bool(r["y"]), r["score"]) for r in rows]


def _cell(rows, cell: str, threshold: float, offset: float) -> tuple[float, int, int, float]:
    """Recall, supported answers flagged, supported answers, AUROC (``ev`` never moved)."""
    from guardrail.train.long_offset import shifted
    from guardrail.train.scores import auroc

    d = 0.0 if cell == "ev" else offset
    mine = [(r.hallucinated, shifted(r.score, d) if d else r.score)
            for r in rows if r.cell == cell]
    bad = [s for y, s in mine if y]
    good = [s for y, s in mine if not y]
    return (sum(s >= threshold for s in bad) / len(bad), sum(s >= threshold for s in good),
            len(good), auroc([y for y, _ in mine], [s for _, s in mine]))


def _long_cells(rows) -> list[str]:
    return sorted({r.cell for r in rows} - {"ev"}, key=lambda c: [float(x) for x in
                                                                  c.split("/")])


def fit(path: str) -> float:
    """The last session's rule: the smallest offset (0.1 steps) at which the long cells
    recall on average what the passages alone do (``guardrail calibrate-long`` asks
    0.9x of every cell instead)."""
    from guardrail.train.long_offset import cell_ratios

    run = json.load(open(path, encoding="utf-8"))
    rows = _scored(run["rows"])
    for step in range(60):
        ratios = cell_ratios(rows, run["threshold"], step / 10)
        if sum(ratios.values()) / len(ratios) >= 1.0:
            return step / 10
    raise SystemExit(f"{path}: no offset up to 6 brings the long cells to evidence-only recall")


def table(paths: list[str], offset: float) -> None:
    for path in paths:
        run = json.load(open(path, encoding="utf-8"))
        t, rows = run["threshold"], _scored(run["rows"])
        ev = _cell(rows, "ev", t, offset)
        print(f"{path} (sharpen {run['sharpen']:g}, offset {offset:g}, threshold {t:.3f})")
        for c in [*_long_cells(rows), "ev"]:
            r, fp, n, auroc = _cell(rows, c, t, offset)
            ratio = r / ev[0] if ev[0] else float("nan")
            print(f"  {c:10s} recall {r:.3f} ({ratio:.2f}x)  supported flagged {fp:2d}/{n}"
                  f"  AUROC {auroc:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("data")
    d.add_argument("out")
    d.add_argument("--model", default="pcw")
    d.add_argument("--sharpen", type=float, default=1.0)
    d.add_argument("--exit-layer", type=int, default=None)
    t = sub.add_parser("table")
    t.add_argument("runs", nargs="+")
    t.add_argument("--offset", type=float, default=0.0)
    t.add_argument("--fit")
    a = ap.parse_args()
    if a.cmd == "dump":
        dump(a.data, a.out, a.model, a.sharpen, a.exit_layer)
    else:
        offset = fit(a.fit) if a.fit else a.offset
        if a.fit:
            print(f"offset {offset:g}, fitted on {a.fit}")
        table(a.runs, offset)


if __name__ == "__main__":
    main()
