"""What is left of a whole in each record of a tool result.

    remainders(fields)   per record: a key naming a whole (``capacity``, ``on_hand``) less
                         one naming what is used of it (``booked``), or less all of those
                         ("485 poles free once reserved and held stock is set aside")
"""

from __future__ import annotations

import re
from typing import Sequence

from guardrail.evidence.values import numbers

WHOLE = re.compile(r"\b(?:capacity|cap|total|limit|max|maximum|quota|allowance|goal|target|budget|"
                   r"package|plan|purchased|included|allotted|"
                   r"needed|required|cost|spaces|seats|slots|places|spots|berths|beds|pitches|"
                   r"size|visits|allowed|on hand|in stock|stock|inventory)\b")
USED = re.compile(r"\b(?:booked|used|occupied|taken|sold|reserved|enrolled|registered|entered|"
                  r"consumed|spent|balance|current|filled|done|completed|attending|hold|held|"
                  r"allocated|assigned|committed)\b")


def remainders(fields: Sequence) -> dict[int, tuple[float, ...]]:
    """Per record, what is left of a whole: a key naming a whole (``capacity``,
    ``points_needed``) minus one naming what is used of it (``booked``, ``balance``), in
    one record or against the grounding's top level (record -1)."""
    wholes: dict[int, list[float]] = {}
    used: dict[int, list[float]] = {}
    for f in fields:
        key = f.path.rsplit(" > ", 1)[-1]
        nums = [n.value for n in numbers(f.value) if n.kind == "number"]
        if len(nums) == 1 and not f.values.dates:
            for pattern, into in ((WHOLE, wholes), (USED, used)):
                if pattern.search(key):
                    into.setdefault(f.record, []).append(nums[0])
    out = {}
    for r in set(wholes) | set(used):
        if r == -1 and len(wholes.get(-1, ())) + len(used.get(-1, ())) < 2:
            continue
        w, u = wholes.get(r, []) + wholes.get(-1, []), used.get(r, []) + used.get(-1, [])
        out[r] = tuple(a - b for a in w for b in u if a > b) + tuple(  # all it uses: "free
            a - sum(u) for a in w if len(u) >= 2 and a > sum(u))  # once reserved and held"
    return out
