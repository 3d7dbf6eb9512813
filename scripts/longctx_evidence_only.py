"""A `guardrail data longctx` set with each context cut to the item's own passages.

    .venv/bin/python scripts/longctx_evidence_only.py runs/longctx8 runs/longctx8e

The same items, questions, answers and labels, with the evidence alone as grounding
(``evidence_start`` / ``evidence_end`` of each item's record): what a long context
costs a check is the difference between the two sets, measured with the same command
(docs/benchmarks.md, "Measured offline as the proxy reads").
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path


def main(src: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "response.jsonl", out / "response.jsonl")
    with (src / "source_info.jsonl").open(encoding="utf-8") as f, \
            (out / "source_info.jsonl").open("w", encoding="utf-8") as w:
        for line in f:
            row = json.loads(line)
            a, z = int(row["evidence_start"]), int(row["evidence_end"])
            info = row["source_info"]
            info["passages"] = info["passages"][a:z]
            row.update(evidence_start=0, evidence_end=z - a, n_tokens=None)
            w.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
