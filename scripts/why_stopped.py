"""What the judge read against each supported sentence that a `guardrail bench verdicts`
run stopped (docs/model-card.md, "Records named by their labels, ...").

    .venv/bin/python scripts/why_stopped.py RUN_DIR SET.jsonl ... [--list]

RUN_DIR holds the run's sentences.jsonl; the sets are the hand-written tool-turn files it
streamed.  Each wrongly stopped supported sentence is put in the first class that fits:
a field or its closest line states one of its values otherwise (``field_changed``,
``line_changed``); a value the tool result lacks (``missing_numbers``); a value only
another record holds (``record_gap``); none of these (the detector's probability and the
words).  ``--list`` prints each sentence with its evidence.  Runs no model (seconds).
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

from guardrail.evidence.features import ContextEvidence


def classify(ev) -> str:
    if ev.field_changed is not None or ev.line_changed is not None:
        return "a field or line states a value otherwise"
    if ev.missing_numbers:
        return "a value the tool result lacks"
    if ev.record_gap > 0:
        return "a value of another record"
    return "none of these"


def main(run: Path, sets: list[str], show: bool) -> None:
    stopped: dict[str, set[str]] = collections.defaultdict(set)
    for line in open(run / "sentences.jsonl", encoding="utf-8"):
        r = json.loads(line)
        if not r["gold"] and r["stopped"]:
            stopped[r["example"]].add(r["original"].strip())
    tally: collections.Counter = collections.Counter()
    for path in sets:
        for line in open(path, encoding="utf-8"):
            d = json.loads(line)
            if d["id"] not in stopped:
                continue
            evidence = ContextEvidence.build([d["context"]], d["question"])
            for s in d["sentences"]:
                text = d["response"][s["start"]:s["end"]].strip()
                if s["label"] != "supported" or text not in stopped[d["id"]]:
                    continue
                ev = evidence.features(text, d["response"][:s["start"]])
                tally[kind := classify(ev)] += 1
                if show:
                    print(f"{d['id']}: {text}\n    {kind}: missing "
                          f"{[text[n.start:n.end] for n in ev.missing_numbers]}, field "
                          f"{ev.field_changed!r}, line {ev.line_changed!r}, "
                          f"record gap {ev.record_gap:.2f}")
    print(f"{sum(tally.values())} supported sentences stopped:")
    for kind, n in tally.most_common():
        print(f"  {n:4d}  {kind}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--list"]
    if len(args) < 2:
        sys.exit(__doc__)
    main(Path(args[0]), args[1:], "--list" in sys.argv)
