"""Redactions that leave part of a value beside the marker, in `guardrail bench verdicts`
runs (docs/model-card.md, "Values read as answers write them").

    .venv/bin/python scripts/redacted_values.py RUN_DIR ...

For each run (its sentences.jsonl): the sentences stopped, those redacted by a span
rather than whole, and those whose released text still holds a piece of a value or a
word joined to the marker ("$6,[unsupported].50", "[unsupported].61", "$[unsupported]",
"[unsupported]-check"), printed.
"""

import json
import re
import sys
from pathlib import Path

MARKER = r"\[unsupported\]"
PIECE = re.compile(rf"[$£€¥₪₺]\s?{MARKER}|{MARKER}[.,]\d|\d[.,]{MARKER}|\w{MARKER}|"
                   rf"{MARKER}\w|{MARKER}-\w|\w-{MARKER}|{MARKER}\s?%")

for run in sys.argv[1:]:
    rows = [json.loads(line) for line in open(Path(run) / "sentences.jsonl", encoding="utf-8")]
    spans = [r for r in rows if r["stopped"] and r["released"].strip() != "[unsupported]"]
    pieces = [r for r in spans if PIECE.search(r["released"])]
    print(f"{run}: stopped {sum(r['stopped'] for r in rows)}, redacted by a span "
          f"{len(spans)}, a piece of a value left {len(pieces)}")
    for r in pieces:
        print("   ", r["released"].strip()[:150])
