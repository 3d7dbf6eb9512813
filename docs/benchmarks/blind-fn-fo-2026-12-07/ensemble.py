"""Two engines on prose: the shipped cross-encoder (v6-H2) and `pcw`, each with its own
judge, and the two combined, in flight (layer 4) on RAGTruth QA's calib and dev splits.

    .venv/bin/python docs/benchmarks/blind-fn-fo-2026-12-07/ensemble.py [--cache FILE]

Each sentence's score is its judge's probability; a combination adds up the two judges'
margins over their own thresholds on the logit scale (``sum``: flagged when the sum is at
least 0), flags when either judge does (``either``) or when both do (``both``).  No weight
or threshold is fitted here.  Writes ensemble.json beside this file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from guardrail.commands.judge import _rows
from guardrail.evidence.judge import SentenceJudge
from guardrail.model import Detector
from guardrail.train.compare import pair
from guardrail.train.judge import _group_report, decisions

RT = "../shared/data/ragtruth_qa_test_subset"
MODELS = {"h2": "guardrail/models/default", "pcw": "guardrail/models/pcw"}


def logit(p) -> np.ndarray:
    p = np.clip(np.asarray(p, float), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def metrics(rows, flags, scores) -> dict:
    """What the proxy would do, as `guardrail judge eval` reports it."""
    m = _group_report(rows, list(flags), list(scores))
    return {"answers": m["answers"], "hallucinated": m["hallucinated_answers"],
            **{k: round(float(m[k]), 3) for k in ("example_f1", "example_auroc",
                                                  "supported_kept", "unsupported_stopped")}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=Path("runs/ensemble/rows.json"))
    args = ap.parse_args()
    dets = {n: Detector.from_pretrained(p) for n, p in MODELS.items()}
    judges = {n: SentenceJudge.from_json(d.meta["judge"]) for n, d in dets.items()}
    out = {}
    for split in ("calib", "dev"):
        rows = {n: _rows(d, [f"{RT}@{split}"], [4], None, "", args.cache) for n, d in dets.items()}
        both = pair(rows["h2"], rows["pcw"])
        res, margin = {}, {}
        for name, part in (("h2", both.a), ("pcw", both.b)):
            flags, probs = decisions(part, judges[name])
            margin[name] = logit(probs) - logit(judges[name].head(4, False).threshold)
            res[name] = metrics(part, flags, probs)
        claim = np.array([r.claim for r in both.a])
        for name, z in (("sum", margin["h2"] + margin["pcw"]),
                        ("either", np.maximum(margin["h2"], margin["pcw"])),
                        ("both", np.minimum(margin["h2"], margin["pcw"]))):
            z = np.where(claim, z, -50.0)
            res[name] = metrics(both.a, z >= 0, 1 / (1 + np.exp(-z)))  # a probability
        out[split] = res
        for name, m in res.items():
            print(split, f"{name:7s}", m)
    Path(__file__).with_name("ensemble.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
