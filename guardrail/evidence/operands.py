"""The numbers of each record that a worked-out value may be made of.

    record_operands(lines, records)   per record, the numbers of its values

A rendered record carries numbers that are none of its values: its heading ("tugs 3 of
5:") and the index in every key path ("tugs 3 > bollard pull t: 42").  Arithmetic over
a record's numbers (arithmetic.py, totals.py) counts every number as a try, so these
would make a record of one value look like a record of three: chance gates would close
on right answers, and a coincidence with an index ("a 60% success rate" as 3 of 5) would
pass.  Only values count here: the value of each ``key: value`` pair, in units too where
its key says cents; a line of no pair (prose) counts whole, a heading not at all.
"""

from __future__ import annotations

import re
from typing import Sequence

from guardrail.evidence.keys import pairs
from guardrail.evidence.stored import StoredValues

_HEADING = re.compile(r"\s\d+ of \d+:$")


def record_operands(lines: Sequence[str], records: Sequence[int]) -> dict[int, tuple[float, ...]]:
    """Per record (``records[i]``: line ``i``'s, -1 outside any), the sorted numbers of
    its values."""
    out: dict[int, set[float]] = {}
    for line, r in zip(lines, records):
        if _HEADING.search(line):
            continue
        found = pairs(line)
        values = [StoredValues.of(v, key=k).numbers for k, v in found] if found else \
            [StoredValues.of(line).numbers]
        out.setdefault(r, set()).update(v for numbers in values for v in numbers)
    return {r: tuple(sorted(vs)) for r, vs in out.items()}
