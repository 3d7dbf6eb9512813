"""How long the evidence index of a large JSON tool result takes to build, and a
sentence's evidence features against it (best of three): a sanity check of the evidence
rules' cost, not a benchmark (those are `guardrail bench ...`).  Run from a checkout's
root to measure that checkout's code: `.venv/bin/python scripts/evidence_cost.py`."""
import json
import random
import sys
import time

sys.path.insert(0, ".")
from guardrail.evidence.features import ContextEvidence, _indexed  # noqa: E402

random.seed(0)
recs = [{"number": 1000 + i, "title": f"Issue about module {i}",
         "state": random.choice(["open", "closed"]),
         "labels": random.sample(["bug", "docs", "perf", "good first issue", "triage"], 2),
         "created_at": f"2025-0{1 + i % 9}-1{i % 9}T10:{i % 60:02d}:00Z",
         "amount_due_cents": 1000 * i, "assignee": None if i % 3 else "lim-wei",
         "milestone": f"v1.{i % 7}.0"} for i in range(400)]
ctx = json.dumps(recs)
sents = ["Issue #1005 is open and labeled bug and docs.", "It was created on May 15, 2025.",
         "There are four issues totaling $120.", "Nobody is assigned to issue #1007.",
         "Issue #1010 is part of the v1.3.0 milestone.", "It is currently closed.",
         "The CEO of the company is Lim Wei.",
         "Last entry is 45 minutes before closing, so 4:15 PM."] * 3
best_b, best_s = 9e9, 9e9
for rep in range(3):
    _indexed.cache_clear()
    t = time.perf_counter()
    ev = ContextEvidence.build([ctx], "Which issues are open?")
    b = time.perf_counter() - t
    t = time.perf_counter()
    before = ""
    for s in sents:
        ev.features(s, before); before += s + " "
    per = (time.perf_counter() - t) / len(sents)
    best_b, best_s = min(best_b, b), min(best_s, per)
print(f"{len(ctx)} chars: build {best_b:.2f} s, per sentence {best_s*1000:.1f} ms")
