"""What each claim of labelled sets would rest on if flagged (docs/model-card.md, "Worked-out
values the rules cannot reproduce").

    .venv/bin/python scripts/claim_bases.py dump OUT.json [SET.jsonl ...]
    .venv/bin/python scripts/claim_bases.py counts OUT.json [--every]
    .venv/bin/python scripts/claim_bases.py compare BEFORE.json AFTER.json

``dump`` reads every `turns*.jsonl` of docs/model-card/paraphrases (or the sets named:
any span-labelled JSONL with ``context``, ``question``, ``response`` and ``sentences``)
with the evidence of the checkout on PYTHONPATH (an older one too: run it with
PYTHONPATH at a worktree) and writes, per claim, its label and ``judge.basis`` of its
evidence, whether or not the judge would flag it.  ``counts`` tallies value_changed,
value_missing and value_worked_out (``--every``: every basis) by label, hand-written
sets (ids ``turns-*`` and ``paraphrases-*``) apart from the others; ``compare`` prints
the claims whose basis moved.  Runs no model.
"""

import collections
import json
import sys
from pathlib import Path

P = Path(__file__).resolve().parent.parent / "docs" / "model-card" / "paraphrases"
VALUES = ("value_changed", "value_missing", "value_worked_out")


def dump(out: str, sets: list[str]) -> None:
    from guardrail.evidence.claims import is_claim
    from guardrail.evidence.features import ContextEvidence
    from guardrail.evidence.judge import basis

    got = {}
    for path in sets or sorted(str(p) for p in P.glob("turns*.jsonl")):
        for d in map(json.loads, open(path, encoding="utf-8")):
            ev = ContextEvidence.build([d["context"]], d.get("question", ""))
            for s in d["sentences"]:
                text = d["response"][s["start"]:s["end"]]
                if is_claim(text):
                    f = ev.features(text, d["response"][:s["start"]])
                    got[f"{d['id']}|{text.strip()}"] = [s["label"], basis(f)]
    json.dump(got, open(out, "w", encoding="utf-8"), indent=0)


def _family(key: str) -> str:
    return "hand-written" if key.startswith(("turns", "paraphrases")) else "other"


def counts(path: str, every: bool = False) -> None:
    c = collections.Counter()
    for key, (label, b) in json.load(open(path, encoding="utf-8")).items():
        if every or b in VALUES:
            c[(_family(key), b, "supported" if label == "supported" else "unsupported")] += 1
    for (family, b, label), n in sorted(c.items()):
        print(f"{family:13s} {b:17s} {label:12s} {n}")


def compare(before: str, after: str) -> None:
    a = json.load(open(before, encoding="utf-8"))
    b = json.load(open(after, encoding="utf-8"))
    moved = collections.Counter()
    for key in sorted(a.keys() & b.keys()):
        if a[key][1] != b[key][1]:
            moved[(a[key][0] == "supported", a[key][1], b[key][1])] += 1
            print(f"{a[key][0]:12s} {a[key][1]:16s} -> {b[key][1]:16s} {key[:110]}")
    for (supported, x, y), n in sorted(moved.items()):
        print(f"{'supported' if supported else 'unsupported'}: {x} -> {y}: {n}")


if __name__ == "__main__":
    verb, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 2 else ("", [])
    if verb == "dump":
        dump(args[0], args[1:])
    elif verb == "counts":
        counts(args[0], "--every" in args[1:])
    elif verb == "compare" and len(args) == 2:
        compare(*args)
    else:
        sys.exit(__doc__)
