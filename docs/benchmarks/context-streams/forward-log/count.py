"""Sum a forward log's token-layers by what each query read (docs/context-states.md,
"Fewer re-reads of the answer so far").

    git apply docs/benchmarks/context-streams/forward-log/forward-log.patch
    GUARDRAIL_FORWARD_LOG=/tmp/forward.jsonl .venv/bin/guardrail bench stream --model pcw \\
        --warm-contexts --streams 16 --context-tokens 4096 --naive-streams '' \\
        --ablations '' --data-dir ../shared/data --out /tmp/sb
    git apply -R docs/benchmarks/context-streams/forward-log/forward-log.patch
    python3 docs/benchmarks/context-streams/forward-log/count.py /tmp/forward.jsonl

Per (layer, kind): "reused" read a kept answer so far at least as deep; "reused-shallow"
found one too shallow and read its whole query; "no-lookup" had no answer so far to look
up (first sentences, the bench's one-check probes, end-of-stream passes); "never kept" /
"kept later" / "kept before" looked one up that no forward kept, or kept after it ran.
"""

import collections
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
kept_at = {}
for i, r in enumerate(rows):
    if r.get("keep"):
        kept_at.setdefault(r["keep"], []).append(i)
count, cost = collections.Counter(), collections.Counter()
for i, r in enumerate(rows):
    if r["prefix"]:
        kind = "reused" if r["depth"] >= r["layer"] else "reused-shallow"
    elif not r["lookup"]:
        kind = "no-lookup"
    else:
        at = kept_at.get(r["lk"], [])
        kind = "never kept" if not at else "kept later" if min(at) > i else "kept before"
    count[r["layer"], kind] += 1
    cost[r["layer"], kind] += r["n"] * r["layer"]
total = sum(cost.values())
for key in sorted(count):
    print(key, count[key], "queries,", cost[key], f"token-layers ({100 * cost[key] / total:.0f} %)")
print("total token-layers", total)
