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
import math


def dump(data: str, out: str, model: str, sharpen: float, layer: int | None) -> None:
    from guardrail.model.detector import Detector
    from guardrail.train.data import load_any
    from guardrail.train.evaluate import detect_all
    from guardrail.train.longctx_eval import evidence_only, read_fields

    det = Detector.from_pretrained(model)
    det.sharpen, det.long_offset = sharpen, {}  # raw scores: offsets are fitted on them
    layer = det.model.resolve(layer)
    fields = read_fields(data)
    examples = load_any(data)
    rows = []
    for cell, part in (("long", examples), ("ev", evidence_only(examples, fields))):
        detections, _ = detect_all(det, part, exit_layer=layer, progress=False,
                                   by_sentence=True)
        for ex, d in zip(part, detections):
            f = fields[ex.id]
            rows.append({"id": ex.id, "y": int(ex.hallucinated),
                         "cell": f"{f['length']}/{f['depth']:g}" if cell == "long" else cell,
                         "score": float(max(d.token_probs, default=0.0))})
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"data": data, "model": model, "sharpen": sharpen, "layer": layer,
                   "threshold": det.threshold_for(layer), "rows": rows}, f, indent=0)


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _offset(rows: list[dict], d: float) -> list[dict]:
    return [r if r["cell"] == "ev" or not d else
            {**r, "score": 1 / (1 + math.exp(-(_logit(r["score"]) + d)))} for r in rows]


def _cell(rows: list[dict], cell: str, threshold: float) -> tuple[float, int, int, float]:
    """Recall, supported answers flagged, supported answers, AUROC."""
    from guardrail.train.scores import auroc

    mine = [r for r in rows if r["cell"] == cell]
    bad = [r["score"] for r in mine if r["y"]]
    good = [r["score"] for r in mine if not r["y"]]
    return (sum(s >= threshold for s in bad) / len(bad), sum(s >= threshold for s in good),
            len(good), auroc([r["y"] for r in mine], [r["score"] for r in mine]))


def _long_cells(rows: list[dict]) -> list[str]:
    return sorted({r["cell"] for r in rows} - {"ev"}, key=lambda c: [float(x) for x in
                                                                     c.split("/")])


def fit(path: str) -> float:
    run = json.load(open(path, encoding="utf-8"))
    t, rows = run["threshold"], run["rows"]
    for step in range(60):
        shifted = _offset(rows, step / 10)
        cells = _long_cells(shifted)
        if sum(_cell(shifted, c, t)[0] for c in cells) / len(cells) >= _cell(shifted, "ev", t)[0]:
            return step / 10
    raise SystemExit(f"{path}: no offset up to 6 brings the long cells to evidence-only recall")


def table(paths: list[str], offset: float) -> None:
    for path in paths:
        run = json.load(open(path, encoding="utf-8"))
        t, rows = run["threshold"], _offset(run["rows"], offset)
        ev = _cell(rows, "ev", t)
        print(f"{path} (sharpen {run['sharpen']:g}, offset {offset:g}, threshold {t:.3f})")
        for c in [*_long_cells(rows), "ev"]:
            r, fp, n, auroc = _cell(rows, c, t)
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
