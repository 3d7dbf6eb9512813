"""Which claims of the hand-written tool turns hold a value their grounding seems to lack
(docs/model-card.md, "Values read as answers write them").

    .venv/bin/python scripts/missing_claims.py [SET.jsonl ...] > OUT.json
    .venv/bin/python scripts/missing_claims.py --compare BEFORE.json AFTER.json

The first form reads every `turns*.jsonl` of docs/model-card/paraphrases (or the sets
named) with the evidence of the checkout on PYTHONPATH (an older one too: run it with
PYTHONPATH pointing at a worktree) and writes each claim whose evidence lists a missing
value: its set, label, text and missing values.  ``--compare`` counts, by label, the
claims that lose all their missing values between two such files and those that gain
one, and prints them.  Runs no model.
"""

import collections
import json
import sys
from pathlib import Path

P = Path(__file__).resolve().parent.parent / "docs" / "model-card" / "paraphrases"


def dump(sets: list[str]) -> None:
    try:
        from guardrail.evidence.claims import is_claim
    except ImportError:  # a checkout from before claims.py
        from guardrail.evidence.features import is_claim
    from guardrail.evidence.features import ContextEvidence

    out = []
    for path in sets or sorted(str(p) for p in P.glob("turns*.jsonl")):
        for d in map(json.loads, open(path, encoding="utf-8")):
            ev = ContextEvidence.build([d["context"]], d["question"])
            for s in d["sentences"]:
                text = d["response"][s["start"]:s["end"]]
                if not is_claim(text):
                    continue
                f = ev.features(text, d["response"][:s["start"]])
                if f.missing_numbers:
                    out.append({"id": d["id"], "label": s["label"], "text": text.strip(),
                                "missing": [text[m.start:m.end] for m in f.missing_numbers]})
    json.dump(out, sys.stdout, indent=0)


def compare(before: str, after: str) -> None:
    a = {(r["id"], r["text"]): r for r in json.load(open(before))}
    b = {(r["id"], r["text"]): r for r in json.load(open(after))}
    counts = collections.Counter()
    for k in sorted(a.keys() - b.keys()):
        counts[("no value missing now", a[k]["label"])] += 1
        print(f"cleared  {a[k]['label']:12s} {k[0]:16s} {k[1][:110]}")
    for k in sorted(b.keys() - a.keys()):
        counts[("a value missing now", b[k]["label"])] += 1
        print(f"missing  {b[k]['label']:12s} {k[0]:16s} {k[1][:110]}")
    for (what, label), c in sorted(counts.items()):
        print(f"{what}: {label} {c}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        compare(*sys.argv[2:4])
    else:
        dump(sys.argv[1:])
