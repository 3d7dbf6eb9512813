"""The markdown-table turns of a generated tool-turn file, with each table written as
CSV: the same records, questions, answers and labels in another format
(docs/model-card.md, "Totals over records without a cue word ...").

    .venv/bin/guardrail data toolctx --family holdout --n 400 --seed 11 \
        --out runs/holdout400.jsonl
    .venv/bin/python scripts/tables_as_csv.py runs/holdout400.jsonl \
        runs/holdout-csv.jsonl runs/holdout-md.jsonl

Writes the CSV turns (dataset ``csv-<family>``) and, for comparison, the same turns as
they were.  Turns whose context holds anything but the table are skipped.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}")


def as_csv(table: str) -> str | None:
    lines = [x for x in table.split("\n") if x.strip()]
    if not lines or not all(x.strip().startswith("|") for x in lines):
        return None
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for x in lines:
        if not _SEPARATOR.match(x):
            writer.writerow([c.strip() for c in x.strip().strip("|").split("|")])
    return buf.getvalue()


def main(source: str, csv_out: str, md_out: str) -> None:
    kept = 0
    with open(csv_out, "w", encoding="utf-8") as c, open(md_out, "w", encoding="utf-8") as m:
        for line in open(source, encoding="utf-8"):
            d = json.loads(line)
            if d.get("format") != "markdown-table" or (text := as_csv(d["context"])) is None:
                continue
            family = d["dataset"].split("/")[1] if "/" in d["dataset"] else d["dataset"]
            c.write(json.dumps({**d, "context": text, "format": "csv", "id": f"csv-{d['id']}",
                                "dataset": f"csv-{family}"}) + "\n")
            m.write(line if line.endswith("\n") else line + "\n")
            kept += 1
    print(f"{kept} turns -> {csv_out}, {md_out}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
