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
from guardrail.train.judge import decisions
from guardrail.train.scores import auroc

RT = "../shared/data/ragtruth_qa_test_subset"
MODELS = {"h2": "guardrail/models/default", "pcw": "guardrail/models/pcw"}


def logit(p) -> np.ndarray:
    p = np.clip(np.asarray(p, float), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def metrics(rows, flags, scores) -> dict:
    gold, flagged, top = {}, {}, {}
    for r, f, s in zip(rows, flags, scores):
        gold[r.example_id] = gold.get(r.example_id, False) or r.gold
        flagged[r.example_id] = flagged.get(r.example_id, False) or bool(f)
        top[r.example_id] = max(top.get(r.example_id, -np.inf), s)
    ids = sorted(gold)
    g = np.array([gold[i] for i in ids])
    f = np.array([flagged[i] for i in ids])
    tp = int((g & f).sum())
    p, rc = tp / max(f.sum(), 1), tp / max(g.sum(), 1)
    sg, sf = np.array([r.gold for r in rows]), np.array(flags, bool)
    return {"answers": len(ids), "hallucinated": int(g.sum()),
            "example_f1": round(float(2 * p * rc / max(p + rc, 1e-9)), 3),
            "example_auroc": round(float(auroc(list(g), [top[i] for i in ids])), 3),
            "supported_kept": round(float(1 - sf[~sg].mean()), 3),
            "unsupported_stopped": round(float(sf[sg].mean()), 3)}


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
            res[name] = metrics(both.a, z >= 0, z)
        out[split] = res
        for name, m in res.items():
            print(split, f"{name:7s}", m)
    Path(__file__).with_name("ensemble.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
