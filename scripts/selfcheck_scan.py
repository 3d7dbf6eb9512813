"""Where a sentence's own arithmetic is read as wrong in prose (docs/model-card.md, "A
sentence's own arithmetic"): every sentence of two values or more in the files named
(JSON or JSON Lines; every string of them is read and cut at sentence ends), with every
value taken as one the grounding lacks, an upper bound on what the proxy would flag.

    .venv/bin/python scripts/selfcheck_scan.py FILE ...

Prints each sentence the readings call wrong with its equation, then the counts.  Runs
no model.
"""

import json
import re
import sys
from pathlib import Path

from guardrail.evidence.selfcheck import miscalculated
from guardrail.evidence.values import numbers

_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def strings(obj):
    if isinstance(obj, str):
        if len(obj) > 20 and re.search(r"\d", obj):
            yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def records(path: str):
    text = Path(path).read_text(encoding="utf-8", errors="ignore")
    for chunk in text.splitlines() if path.endswith((".jsonl", "l")) else [text]:
        try:
            yield json.loads(chunk)
        except ValueError:
            continue


def main(paths: list[str]) -> None:
    seen, read, fired = set(), 0, 0
    for path in paths:
        for sentence in (s for obj in records(path) for t in strings(obj) for s in _SPLIT.split(t)):
            if sentence in seen or len(sentence) > 600:
                continue
            seen.add(sentence)
            nums = numbers(sentence)
            if len(nums) < 2:
                continue
            read += 1
            if (equation := miscalculated(sentence, nums, nums)) is not None:
                fired += 1
                print(f"{Path(path).name} | {sentence[:200]} || {equation}")
    print(f"sentences with two values or more: {read}; read as wrong: {fired}")


if __name__ == "__main__":
    main(sys.argv[1:])
