"""Refit the judge's prose heads with today's evidence, several ways, and measure on the
dev splits (docs/model-card.md, "Generated tool turns read back with their own labels",
its last part).  Writes no weights.

    .venv/bin/python scripts/prose_heads.py

The shipped prose heads were fitted by older code on RAGTruth's calibration split,
HaluEval QA's and VitaminC's (300 answers each).  A refit by the same recipe today
loses RAGTruth (thirty-first session).  This fits the heads of layers 4 and 6 on the
same rows (``guardrail judge fit``'s rule: each family weighs alike, small ones pooled,
the threshold keeps 95 % of the supported sentences) and a few ways besides, and prints,
per dev set, kept / stopped, the example F1 as the proxy flags answers, and AUROC.  The detector's
probabilities come from the rows caches that ``guardrail judge fit --rows-cache`` and
``guardrail judge eval --rows-cache`` write (the commands in the model card's section);
a first run scores the sets (about 20 minutes on 2 cores), later ones take seconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import guardrail.train.judge as fitting
from guardrail.commands.judge import _rows
from guardrail.evidence.judge import FEATURES, Head, SentenceJudge
from guardrail.model import Detector
from guardrail.train.judge import family, fit, keep_threshold, measure

X = "data/external"
RT = "runs/ragtruth/derived_ragtruth_format"
FIT = [f"{RT}@calib", "runs/toolctx/judge.jsonl", "runs/toolctx/calib.jsonl",
       f"{X}/halueval-qa.jsonl@calib", f"{X}/vitaminc.jsonl@calib"]
DEV = ["runs/toolctx/dev.jsonl", "runs/toolctx/holdout.jsonl", f"{RT}@dev",
       f"{X}/halueval-qa.jsonl@dev", f"{X}/vitaminc.jsonl@dev"]
_S = FEATURES.index("structured")


def _prose(rows, layer: int):
    return [r for r in rows if r.x[_S] <= 0.5 and r.layer == layer]


def _line(label: str, judge: SentenceJudge, rows) -> str:
    m = measure(rows, judge)
    return f"{label:30s} " + " | ".join(
        f"{k} {m[k]['supported_kept']:.3f}/{m[k]['unsupported_stopped']:.3f} exF1 "
        f"{m[k]['example_f1']:.3f} AUC {m[k]['auroc']:.3f}"
        for k in ("ragtruth", "halueval-qa", "vitaminc"))


def _rethreshold(head: Head, rows) -> Head:
    """``head`` with the threshold that keeps 95 % of ``rows``' supported claims."""
    claims = [r for r in rows if r.claim]
    probs = np.asarray([head.prob(r.x) for r in claims])
    thr = keep_threshold(probs, np.asarray([r.gold for r in claims]), 0.95)
    return Head(head.mean, head.scale, head.weights, head.bias, thr, head.features)


def _alike(rows):
    """``fit`` by the rule the shipped heads were fitted by (0cf1080): every family of
    data weighs alike however few its rows (today a family of fewer than
    ``MIN_POOLED`` rows is pooled with the other small ones and weighs less)."""
    pooled, fitting.MIN_POOLED = fitting.MIN_POOLED, 1
    try:
        return fit(rows)
    finally:
        fitting.MIN_POOLED = pooled


def main() -> None:
    det = Detector.from_pretrained(None)
    fitted = _rows(det, FIT, [2, 4, 6], 300, "halueval-qa,vitaminc",
                   Path("runs/rows-prose-fit.json"))
    dev = _rows(det, DEV, [4, 6], 400, "halueval-qa,vitaminc", Path("runs/rows_dev.json"))
    shipped = SentenceJudge.from_json(det.meta["judge"])
    for layer in (4, 6):
        rows = _prose(fitted, layer)
        rt = [r for r in rows if family(r.dataset) == "ragtruth"]
        refit = fit(rows)
        heads = {"shipped": shipped.heads[layer], "refit (the recipe)": refit,
                 "refit, l2 10": fit(rows, l2=10.0), "refit, l2 0.1": fit(rows, l2=0.1),
                 **{f"refit without {f}": fit([r for r in rows if family(r.dataset) != f])
                    for f in ("vitaminc", "halueval-qa")},
                 "refit on RAGTruth alone": fit(rt),
                 "refit, every family alike": _alike(rows),
                 "the same without tool turns": _alike([r for r in rows
                                                        if family(r.dataset) != "toolctx"]),
                 "shipped, threshold from RT": _rethreshold(shipped.heads[layer], rt),
                 "refit, threshold from RT": _rethreshold(refit, rt)}
        counts = {f: sum(r.claim for r in rows if family(r.dataset) == f)
                  for f in sorted({family(r.dataset) for r in rows})}
        print(f"layer {layer}: claims fitted on {counts}; kept/stopped, example F1, AUROC "
              "on the dev splits")
        for label, head in heads.items():
            judge = SentenceJudge({**shipped.heads, layer: head}, shipped.structured_heads)
            print(_line(label, judge, _prose(dev, layer)))
        w = {f: (round(float(a), 2), round(float(b), 2)) for f, a, b in
             zip(refit.features, shipped.heads[layer].weights, refit.weights) if a or b}
        print("standardised weights, shipped / refit:", w)


if __name__ == "__main__":
    main()
