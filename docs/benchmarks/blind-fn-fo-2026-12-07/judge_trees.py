"""The judge's tool head at layer 4 as boosted trees instead of a logistic model: does a
model of the same evidence features that can weigh them together rank held-out
hand-written tool turns better?

    .venv/bin/python docs/benchmarks/blind-fn-fo-2026-12-07/judge_trees.py [--cache FILE]

Fitted on the generated turns the shipped tool heads were fitted on (`toolctx` judge and
calib files, 300 each) alone, and with the 65 hand-written sets `turns-cm` .. `-ey`
(read in earlier sessions, never trained on), which weigh as one family as
`guardrail judge fit` weighs them; measured on the sixteen unread sets `turns-ez` .. `-fo`
and the generated dev and holdout families (400 each), in flight, every flag counted as a
stop (the marked worked-out values too, which a stream releases).  Thresholds keep 95 % of
the fitting data's supported sentences per source, the trees' from 5-fold predictions
grouped by answer.  The evidence rules that reach a head's threshold whatever it says
apply to every head.  `oracle` is the most a set's own best threshold stops while it
keeps 95 % of that set's supported sentences: the ranking, whatever the threshold.  The
detector alone: the AUROC of a sentence's highest and mean token probability.
Needs scikit-learn (installed with sentence-transformers).  Writes judge_trees.json here.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GroupKFold, cross_val_predict

from guardrail.commands.judge import _rows
from guardrail.evidence.judge import FEATURES, FITTED_FEATURES, SentenceJudge
from guardrail.model import Detector
from guardrail.train.judge import _group_report, family_weights, fit, keep_threshold
from guardrail.train.scores import auroc

sys.path.insert(0, "scripts")
from hand_judge import order  # noqa: E402

P = "docs/model-card/paraphrases"
RULES = [FEATURES.index(f) for f in ("line_value_changed", "flag_changed", "values_swapped",
                                     "general_claim", "unlisted_extra")]
USE = [FEATURES.index(f) for f in FITTED_FEATURES]
S = FEATURES.index("structured")


def sets(lo: str, hi: str) -> list[str]:
    return [s for s in sorted(glob.glob(f"{P}/turns*.jsonl"), key=order)
            if (len(lo), lo) <= order(s) <= (len(hi), hi)]


def claims(rows) -> list:
    return [r for r in rows if r.x[S] > 0.5 and r.claim]


def measured(prob: np.ndarray, thr: float, rows) -> dict:
    p = np.array([max(pi, thr) if any(r.x[i] > 0.5 for i in RULES) else pi
                  for pi, r in zip(prob, rows)])
    g = np.array([r.gold for r in rows])
    m = _group_report(rows, list(p >= thr), list(p))
    best = 0.0
    for t in np.unique(p):  # the lowest threshold that keeps 95 % stops the most
        if (p[~g] < t).mean() >= 0.95:
            best = float((p[g] >= t).mean())
            break
    return {"kept": round(m["supported_kept"], 3), "stopped": round(m["unsupported_stopped"], 3),
            "stopped_n": int((p[g] >= thr).sum()), "unsupported": m["unsupported"],
            "auroc": round(m["auroc"], 3), "oracle": round(best, 3)}


def trees(depth):
    return HistGradientBoostingClassifier(max_depth=depth, max_iter=300, learning_rate=0.05,
                                          l2_regularization=1.0, random_state=0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=Path("runs/gbm/rows.json"))
    args = ap.parse_args()
    det = Detector.from_pretrained("guardrail/models/default")
    ship = SentenceJudge.from_json(det.meta["judge"]).head(4, True)

    def rows(specs, limit=None):
        return claims(_rows(det, specs, [4], limit, "", args.cache))
    gen = rows(["runs/toolctx/judge.jsonl", "runs/toolctx/calib.jsonl"], 300)
    read = [replace(r, dataset="turns/" + r.dataset.split("/")[-1])  # one family
            for r in rows(sets("cm", "ey"))]
    held = {"unread16": rows(sets("ez", "fo")),
            "generated": rows(["runs/toolctx/dev.jsonl", "runs/toolctx/holdout.jsonl"], 400)}
    out = {f"detector alone, {f}": {k: {"auroc": round(float(auroc(
        [r.gold for r in v], [r.x[FEATURES.index(f)] for r in v])), 3)} for k, v in held.items()}
        for f in ("p_max", "p_mean")}
    out["shipped"] = {k: measured(np.array([ship.prob(r.x) for r in v]), ship.threshold, v)
                       for k, v in held.items()}
    for name, data in (("gen", gen), ("gen+read", gen + read)):
        head = fit(data, keep=0.95, l2=1.0, every_source=True)
        out[f"logistic {name}"] = {k: measured(np.array([head.prob(r.x) for r in v]),
                                               head.threshold, v) for k, v in held.items()}
        X = np.array([[r.x[i] for i in USE] for r in data])
        y = np.array([r.gold for r in data])
        w = family_weights(data)
        for depth in (3, None):
            cv = cross_val_predict(trees(depth), X, y, cv=GroupKFold(5),
                                   groups=[r.example_id for r in data],
                                   params={"sample_weight": w}, method="predict_proba")[:, 1]
            thr = keep_threshold(cv, y, 0.95, w)
            model = trees(depth).fit(X, y, sample_weight=w)
            out[f"trees depth {depth or 'any'} {name}"] = {
                k: measured(model.predict_proba(np.array([[r.x[i] for i in USE] for r in v]))[:, 1],
                            thr, v) for k, v in held.items()}
    for name, res in out.items():
        print(f"{name:26s}", " | ".join(f"{k}: {v}" for k, v in res.items()))
    Path(__file__).with_name("judge_trees.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
