"""The records of a rendered tool result: which record each line belongs to.

    numbered(lines, first)       the record of each rendered line (-1: outside any), and
                                 the record each nested one stands in
    enclosing(records, parents)  those records and every record they are nested in
    INDEX                        a record's number inside a key path

Records are the items of a JSON array of objects (``rooms 2 of 3:`` and the lines under
it), the rows of a markdown table, or the blocks of a ``key: value`` text; records.py
reads which of them a sentence speaks of.
"""

from __future__ import annotations

import re
from typing import Collection, Sequence

_HEAD = re.compile(r"^(.*\S \d+) of \d+:$")  # "rooms 2 of 3:", opening record "rooms 2"
INDEX = re.compile(r" \d+(?= >|$)")
"""A record's number inside a key path ("rooms 2 > name"): ``INDEX.sub("", path)`` is
the key every record of the array shares."""


def numbered(lines: Sequence[str], first: int, rows: bool = False
             ) -> tuple[list[int], int, dict[int, int]]:
    """The record of each rendered line, records numbered from ``first``, the next free
    number, and the record each nested record stands in.  A record opens at its head
    (``rooms 2 of 3:``) and holds the lines under its path (``rooms 2 > name: Birch``)
    up to a record nested in it (``machines 5 > open faults 1 of 1:``, whose record
    stands in ``machines 5``'s); a line past its last (``approver: ...`` after the
    array) is outside it.  ``rows``: a markdown table, whose rows of three cells or more
    are records of their own."""
    out: list[int] = []
    current, following = -1, first
    opened: list[tuple[str, int]] = []  # the records a line stands in, innermost last
    parents: dict[int, int] = {}
    for text in lines:
        head = _HEAD.match(text)
        while opened and not text.startswith((opened[-1][0] + " > ", opened[-1][0] + ": ")):
            opened.pop()
            current = opened[-1][1] if opened else -1
        if head or rows and text.count("; ") >= 2:
            current, following = following, following + 1
            if head:
                if opened:
                    parents[current] = opened[-1][1]
                opened.append((head[1], current))
        out.append(current)
    return out, following, parents


def enclosing(records: Collection[int], parents: dict[int, int]) -> set[int]:
    """``records`` and every record they are nested in: a sentence about a machine's
    open fault speaks of the machine too ("TVM-0618 is out of service because its card
    reader went offline" names the fault's words and the machine's ``in service``)."""
    out = set(records)
    for r in records:
        while (r := parents.get(r, -1)) != -1 and r not in out:
            out.add(r)
    return out
