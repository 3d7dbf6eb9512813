"""What the evidence rules read in each sentence of hand-written tool turns, and what a
change of the rules changed (docs/model-card.md, "Totals over records without a cue
word ...").

    .venv/bin/python scripts/evidence_diff.py dump OUT.json SET.jsonl ...
    .venv/bin/python scripts/evidence_diff.py diff BEFORE.json AFTER.json [--list]

``dump`` writes, per sentence, its label and the evidence the judge's rules read: the
values the tool result lacks, the field or closest line it states otherwise, values
swapped between records.  To dump with older code, run it from a worktree of that
commit with ``PYTHONPATH`` set to the worktree.  ``diff`` counts, for supported and for
unsupported sentences, how many had a value the tool result lacks before and none after
(or the reverse), and how many gained or lost a changed field or line; ``--list`` prints
each.  Runs no model (seconds).
"""

from __future__ import annotations

import collections
import json
import sys

from guardrail.evidence.features import ContextEvidence


def dump(out: str, sets: list[str]) -> None:
    rows = {}
    for path in sets:
        for line in open(path, encoding="utf-8"):
            d = json.loads(line)
            evidence = ContextEvidence.build([d["context"]], d["question"])
            for s in d["sentences"]:
                text = d["response"][s["start"]:s["end"]].strip()
                ev = evidence.features(text, d["response"][:s["start"]])
                rows[f"{d['id']}@{s['start']}"] = {
                    "label": s["label"], "text": text,
                    "missing": [text[n.start:n.end] for n in ev.missing_numbers],
                    "changed": ev.field_changed or ev.line_changed,
                    "swapped": bool(ev.swapped)}
    json.dump(rows, open(out, "w", encoding="utf-8"), indent=0)
    print(f"{len(rows)} sentences -> {out}")


def diff(before: str, after: str, show: bool) -> None:
    a, b = json.load(open(before)), json.load(open(after))
    tally: collections.Counter = collections.Counter()
    for key in a.keys() & b.keys():
        x, y = a[key], b[key]
        side = "supported" if x["label"] == "supported" else "unsupported"
        tally[side, "sentences"] += 1
        tally[side, "missing before"] += bool(x["missing"])
        for what, was, now in (("a value lacking", x["missing"], y["missing"]),
                               ("a changed field or line", x["changed"], y["changed"]),
                               ("values swapped", x["swapped"], y["swapped"])):
            if bool(was) != bool(now):
                tally[side, f"{what}: {'lost' if was else 'gained'}"] += 1
                if show:
                    print(f"{side[:3]} {key}: {x['text'][:110]}\n    {what}: {was!r} -> {now!r}")
    for side in ("supported", "unsupported"):
        print(f"{side}: " + ", ".join(f"{k[1]} {v}" for k, v in sorted(tally.items())
                                      if k[0] == side))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "diff":
        diff(sys.argv[2], sys.argv[3], "--list" in sys.argv[4:])
    else:
        sys.exit(__doc__)
