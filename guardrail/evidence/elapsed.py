"""Time elapsed from a moment a tool result states to its own "as of" moment.

    Moments(fields)              the result's date-times, and which of them say when it
                                 holds (``as_of``, ``fetched_at``, ``generated``), read once
    moments.elapsed(sentence, n) ``n`` ("has now been down for almost 39 hours",
                                 "opened about 26 hours ago") is the time from one of
                                 the others to one of those
    period_days(fields), in_period(sentence, n, days)
                                 ``n`` days ("over the 30 days") are a period's the
                                 result states by its start and end, both counted

A status report states when each thing began (``since``, ``opened_at``) and when the
report was made; an answer says how long it has been.  Only spans that end at a moment
of the report's own are tried, and only those within a factor of two of the value count
as tries (a changed span lies near the true one): their number times the width of the
value must be at most ``CHANCE`` of it.  A span in hours is as wide as an hour, one said
"almost" the hour below it ("almost 39 hours" for 38 hours 50 minutes), one said "over"
the hour above it.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Optional, Sequence

from guardrail.evidence.field import Field
from guardrail.evidence.keys import pairs
from guardrail.evidence.totals import CHANCE
from guardrail.evidence.values import Number

_MOMENT = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                     r"(?:Z|[+-]\d{2}:?\d{2})?")
# a key of the moment the whole result holds at (not ``updated`` of one record)
_AS_OF = re.compile(r"(?:^|[\s>_])(?:as[\s_]+(?:of|at)|fetched|generated|retrieved|snapshot|"
                    r"now|current[\s_]+time|report(?:ed)?[\s_]+at)(?:$|[\s_])", re.I)
_HOURS = re.compile(r"\b(?:hours?|hrs?)\s*$", re.I)
_BELOW = re.compile(r"\b(?:almost|nearly|just under|under|less than)\s+$", re.I)
_ABOVE = re.compile(r"\b(?:just over|over|more than)\s+$", re.I)
MAX_MOMENTS = 40  # moments of a result tried, at most


def _moment(value: str) -> Optional[dt.datetime]:
    m = _MOMENT.search(value)
    try:
        return dt.datetime.fromisoformat(m[0].replace(" ", "T")) if m else None
    except ValueError:
        return None


class Moments:
    """The date-times of a tool result's rendered lines (``records[i]``: line ``i``'s
    record, -1 outside any), those of its own "as of" keys apart."""

    def __init__(self, lines: Sequence[str], records: Sequence[int]):
        self.ends: list[dt.datetime] = []
        self.starts: list[dt.datetime] = []
        for line, r in zip(lines, records):
            for key, value in pairs(line):
                if (at := _moment(value)) is not None:
                    own = r == -1 and _AS_OF.search(key)
                    (self.ends if own else self.starts).append(at)
        if len(self.starts) > MAX_MOMENTS:
            self.starts = []

    def __bool__(self) -> bool:
        return bool(self.ends and self.starts)

    def elapsed(self, sentence: str, n: Number) -> bool:
        """``n``, a span of time in minutes, is the time from a moment of the result to
        its as-of moment, to the hour where it is said in hours."""
        if n.kind != "duration" or n.value <= 0:
            return False
        half = 30.0 if _HOURS.search(sentence, n.start, n.end) else max(n.precision, 0.5)
        if n.hedged and half < 30:
            half = max(half, 0.05 * n.value)  # "about 95 minutes": within a twentieth
        before = sentence[max(0, n.start - 16):n.start]
        mid = n.value - half if _BELOW.search(before) else n.value + half \
            if _ABOVE.search(before) else n.value  # "almost 39 hours": 38 to 39
        spans = [(end - start).total_seconds() / 60 for end in self.ends for start in self.starts
                 if (end.tzinfo is None) == (start.tzinfo is None) and end > start]
        near = [s for s in spans if n.value / 2 <= s <= 2 * n.value]
        return bool(near) and len(near) * 2 * half <= CHANCE * n.value and any(
            abs(s - mid) <= half for s in near)


_START = re.compile(r"(?:^|[\s_])(?:start|starts|from|begin|begins|first|opens)(?:$|[\s_])", re.I)
_END = re.compile(r"(?:^|[\s_])(?:end|ends|to|until|through|last|closes)(?:$|[\s_])", re.I)
_DAYS = re.compile(r"\s(?:calendar\s+)?days?\b", re.I)


def period_days(fields: Sequence[Field]) -> frozenset[int]:
    """The days of each period an object of the result states by a start and an end
    date (``billing period > start: 2025-06-01``, ``end: 2025-06-30``: 30), both ends
    counted."""
    ends: dict[tuple[int, str], dict[bool, list[dt.date]]] = {}
    for f in fields:
        parent, _, key = f.path.rpartition(" > ")
        for edge in (True, False):
            if (_START if edge else _END).search(key) and len(f.values.dates) == 1:
                y, m, d = next(iter(f.values.dates))
                if y and m and d:
                    ends.setdefault((f.record, parent), {}).setdefault(edge, []).append(
                        dt.date(y, m, d))
    return frozenset((b - a).days + 1 for held in ends.values()
                     for a in held.get(True, ()) for b in held.get(False, ()) if b > a)


def in_period(sentence: str, n: Number, days: frozenset[int]) -> bool:
    """``n`` days are the days of one of those periods."""
    return n.kind in ("number", "count") and n.value in days and bool(
        _DAYS.match(sentence, n.end))
