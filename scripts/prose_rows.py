"""The judge's prose rows under two versions of the code (docs/model-card.md, "Generated
tool turns read back with their own labels", its last part).

    PYTHONPATH=WORKTREE .venv/bin/python scripts/prose_rows.py dump OUT.json
    .venv/bin/python scripts/prose_rows.py compare OLD.json NEW.json

``dump`` scores, with the checkout on PYTHONPATH (a worktree of an older commit too),
the default detector's in-flight rows (layer 4) of RAGTruth's calibration and dev splits
and of HaluEval QA's and VitaminC's calibration splits (300 answers each), as ``guardrail
judge fit`` reads them, and writes each sentence's features.  ``compare`` prints, per
set, how many sentences' features differ between two dumps, feature by feature.  About
four minutes a dump on 2 cores; no cache.
"""

from __future__ import annotations

import json
import sys

X = "data/external"
RT = "runs/ragtruth/derived_ragtruth_format"
SETS = [(f"{RT}@calib", 300, ""), (f"{RT}@dev", None, ""),
        (f"{X}/halueval-qa.jsonl@calib", 300, "halueval-qa"),
        (f"{X}/vitaminc.jsonl@calib", 300, "vitaminc")]


def dump(out: str) -> None:
    from guardrail.commands.judge import _rows
    from guardrail.evidence.judge import FEATURES
    from guardrail.model import Detector

    det = Detector.from_pretrained(None)
    rows = {spec: [[r.example_id, r.sentence, r.gold, r.claim, list(r.x)]
                   for r in _rows(det, [spec], [4], limit, whole, None)]
            for spec, limit, whole in SETS}
    json.dump({"features": list(FEATURES), "rows": rows}, open(out, "w", encoding="utf-8"))


def compare(old: str, new: str) -> None:
    a, b = (json.load(open(p, encoding="utf-8")) for p in (old, new))
    shared = [f for f in a["features"] if f in b["features"]]
    for spec, rows in a["rows"].items():
        theirs = {(r[0], r[1]): r for r in b["rows"].get(spec, [])}
        diff: dict[str, list[bool]] = {}
        for r in rows:
            o = theirs.get((r[0], r[1]))
            if o is None:
                continue
            xa, xb = dict(zip(a["features"], r[4])), dict(zip(b["features"], o[4]))
            for f in shared:
                if abs(xa[f] - xb[f]) > 1e-3:
                    diff.setdefault(f, []).append(r[2])
            if r[3] != o[3]:
                diff.setdefault("claim", []).append(r[2])
        print(f"{spec}: {len(rows)} sentences")
        for f, gold in sorted(diff.items(), key=lambda t: -len(t[1])):
            print(f"  {f:26s} differs for {len(gold):4d} ({sum(gold)} unsupported)")


if __name__ == "__main__":
    {"dump": dump, "compare": compare}[sys.argv[1]](*sys.argv[2:])
