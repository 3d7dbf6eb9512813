"""What a tool result stores, normalised for matching the values a sentence states.

    StoredValues.of(line, key)    the numbers, times and dates a rendered line holds; an
                                  amount in cents also in units, a span written as a
                                  clock value (``elapsed: 06:52``) also as a span
    StoredValues.has(n)           a sentence's value ``n`` is one of them, as written or,
                                  hedged, within 10 % (``hedge``: less where written to
                                  three digits or more)
    names_cents(key), in_cents()  which keys and values are in minor units
    stored_times(t)               ``values.times``, plus ISO date-times
                                  ("2024-02-04T09:10:00+12:00" -> 9:10, the local time as
                                  written: the time an assistant reads out) and a log
                                  line's ("12/Mar/2024:14:02:11 +0000" -> 14:02)

The sentence side, how answers write values, is values.py.
"""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Collection, Sequence

from guardrail.evidence.eras import eras
from guardrail.evidence.values import (ANY_VALUE, ISO_DATE, LOG_DATE, PARTS, Number, masked,
                                       numbers, times)

def stored_times(text: str) -> set[float]:
    found = {v for _, _, v in times(text)}
    found |= {int(m[4]) * 60 + int(m[5]) + int(m[6] or 0) / 60
              for m in ISO_DATE.finditer(text) if m[4]}
    found |= {int(m["h"]) * 60 + int(m["mi"]) for m in LOG_DATE.finditer(text) if m["h"]}
    return found


def date_matches(d: tuple[int, int, int], stored: set[tuple[int, int, int]]) -> bool:
    y, mo, day = d  # month 0: a day said by its ordinal alone, of any month; a month
    #                 stored without its day ("2025-03") holds no day of it
    return any(mo in (sm, 0) and (not day or day == sd) and (not y or not sy or y == sy)
               for sy, sm, sd in stored)


# an hour of the day as a number (hourly prices, forecasts): the key's own word says so
_HOUR_OF_DAY = re.compile(r"(?:^|>\s)(?:(?!per\b)[a-z]+[\s_])?hour(?:[\s_](?:ending|beginning|"
                          r"starting|of day))?:"
                          r"\s*(\d{1,2})\s*$", re.I)
_SPAN_KEY = re.compile(r"(?:elapsed|duration|remaining|run ?time|pace(?: per \w+)?|(?:chip|net|gun|finish|"
                       r"finishing|moving|total|race|split|lap) time|(?:splits?|laps?|legs?)\b"
                       r"[^:>]*>\s*time)\s*:", re.I)  # ``runner > splits 2 > time: 1:53:17``
# an elapsed time: a clock reading of no hours with seconds (``time: 00:21:48``, a race's,
# a call's) or ISO 8601 (``duration: PT1H2M5S``), said "21 minutes 48 seconds" or "21:48"
_ZERO_HOUR = re.compile(r"(?<![\dT:])00:([0-5]\d):([0-5]\d)(?![\d:])")
_ISO_SPAN = re.compile(r"\bPT(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?\b")
# digits a code or a key writes after letters ("F30-34", "EANx32", "basic_60_cents_per_lb",
# "last_72h"): numbers too, but not those of hashes and ids in hex digits
_IN_CODE = re.compile(r"(?<=[A-Za-z_])(?<!\d[Tt])(\d+)(?![\d.]*\d)(_?cents?(?![a-z]))?",
                      re.I)  # not a version, nor the hour of an ISO time ("2023-11-01T10:35")
_HEX_ID = re.compile(r"\b[0-9a-f]*\d[0-9a-f-]{7,}\b", re.I)
_CENTS_KEY = re.compile(r"(?:^|[\s_>])(?:cents|pence)(?:$|:|\s+(?:per|each)\b|\s+>)", re.I)
# a span in seconds that answers write as minutes and seconds ("3:10" for ``leg_s: 190``)
_SECONDS = re.compile(r"\b(?:time|leg|split|lap|elapsed|duration|finish|length)\s"
                      r"(?:s|sec|secs|seconds):\s*(\d+(?:\.\d+)?)\s*$", re.I)
# (a parent may say so for its children: ``price breakdown cents > adult fares: 9800``)
# how long an event lasts, in minutes or hours: ``duration_min: 120``, ``length hours: 2``
_LENGTH = re.compile(r"\b(?:duration|length|runtime|run time)\s(min|mins|minutes|h|hr|hrs|"
                     r"hours)\s*:\s*(\d+(?:\.\d+)?)\s*$", re.I)
# a time of day written as four digits under a key that says so (``utc_time: 1402``,
# ``dep hhmm: 0930``): 2:02 PM, 9:30 AM
_HHMM = re.compile(r"\b(?:time|utc|zulu|hhmm)\b[^:>]*:\s*([01]\d|2[0-3])([0-5]\d)\s*$", re.I)
# a unit that names a scale (lab results: ``unit: 10^3/uL``, ``x10^9/L``, ``K/uL``): the
# record's numbers are in thousands (millions, ...), as "11.8 thousand per microliter" says
_SCALED_UNIT = re.compile(r"\bunits?\s*:\s*(?:x\s*|×\s*)?(?:10\^?([369])|10([³⁶⁹])|"
                          r"((?-i:[KM]))/(?:u|µ|mc)?l\b)", re.I)  # not m/s
_SUPERSCRIPT = {"³": 3, "⁶": 6, "⁹": 9}
_ENDS_FROM = 3
"""A record with more times than this says nothing of which of them an event starts at."""
# how often a record's event recurs, under a key that says so (``rebook_interval_weeks:
# 8``, ``service every months: 6``): its dates that far on are dates it states
_INTERVAL = re.compile(r"\b(?:interval|every|period|cycle|frequency|recurrence)\b[^:>]*?"
                       r"\b(day|week|month)s?\s*:\s*(\d{1,3})\s*$", re.I)


def names_cents(key: str) -> bool:
    """The key says its value is in cents (``amount_due_cents``)."""
    return bool(_CENTS_KEY.search(key))


def in_cents(text: str, key: str = "") -> list[float]:
    """The numbers of ``text`` stored in cents: the value of a ``... cents: N`` part of a
    rendered line, or every number when ``key`` (the value's own key) names cents."""
    if _CENTS_KEY.search(key):
        return [n.value for n in numbers(text) if n.kind == "number"]
    out = []
    for part in PARTS.split(text):
        k, sep, value = part.rpartition(": ")
        if sep and _CENTS_KEY.search(k + ":"):  # its key, or a parent of it
            out += [n.value for n in numbers(value) if n.kind == "number"]
    return out


@dataclass(frozen=True)
class StoredValues:
    """What a text stores, normalised for matching: numbers, times, dates, counts."""

    numbers: tuple[float, ...]
    times: frozenset[int]
    dates: frozenset[tuple[int, int, int]]
    counts: frozenset[int]
    clocks: frozenset[float] = frozenset()  # spans in seconds, as "m:ss" reads them
    lengths: frozenset[float] = frozenset()  # how long its events last, in minutes
    ends: frozenset[int] = frozenset()  # the times they end (``ended``), read as stated
    intervals: frozenset[tuple[str, int]] = frozenset()  # how often they recur ("week", 8)
    dues: frozenset[tuple[int, int, int]] = frozenset()  # their dates one interval on (``due``)
    coded: frozenset[float] = frozenset()  # numbers inside codes and keys ("F30-34"): matched
    #                                        as said, never an operand of arithmetic

    def exact(self, said: Sequence[Number]) -> list[Number]:
        """The stored value behind each rounded one of ``said``, where one alone is near
        it ("about $1.28M" for 1284500): an answer works out "up $106,700" from those."""
        out = []
        for m in said:
            if m.kind == "number" and (m.hedged or m.precision >= 1):
                near = {c for c in self.numbers if c != m.value and abs(c - m.value) <= m.precision}
                if len(near) == 1:
                    out.append(replace(m, value=near.pop(), precision=0.0))
        return out

    @classmethod
    def of(cls, text: str, key: str = "") -> "StoredValues":
        """The numbers, times and dates ``text`` holds (counts: ``counts``, per document).
        A money amount in cents (``amount_due_cents: 480000``, the key's last word, or
        ``key`` for a bare value) is also held in units: an answer says "$4,800"."""
        if not ANY_VALUE.search(text):  # most lines of a large tool result: no digit
            return cls((), frozenset(), frozenset(), frozenset())
        found = numbers(text)
        days = {(int(n.value) // 10000, int(n.value) // 100 % 100, int(n.value) % 100)
                for n in found if n.kind == "date"}
        nums = {n.value for n in found if n.kind in ("number", "count")}
        if _CENTS_KEY.search(key) or _CENTS_KEY.search(text):
            nums |= {v / 100 for v in in_cents(text, key)}
        nums |= {v for n in found if n.kind == "duration" for v in (n.value, n.value / 60)}
        spans = _elapsed(text)  # seconds
        nums |= {v for t in spans for v in (t / 60, t / 3600)}
        if _SPAN_KEY.search(text):  # ``elapsed: 06:52`` is 6 hours 52 minutes too
            nums |= {v for t in stored_times(text) for v in (t, t / 60)}
        nums |= {float(y) for y, _, _ in days if y}
        nums |= {n.value % 100 for n in found if n.kind == "date"  # "December 6, 13 and 20":
                 and text[n.start:n.end].isdigit()}  # "the 13th" is said of it too
        hour = _HOUR_OF_DAY.search(text)  # ``hour ending: 18`` is 6 PM
        hours = {int(hour[1]) % 24 * 60} if hour and int(hour[1]) <= 24 else set()
        parts = PARTS.split(text)  # read once for the keyed values below
        hours |= {int(m[1]) * 60 + int(m[2]) for part in parts if (m := _HHMM.search(part))}
        clocks = {float(m[1]) for part in parts if (m := _SECONDS.search(part))} | spans
        lengths = {float(m[2]) * (60 if m[1][0] in "hH" else 1) for part in parts
                   if (m := _LENGTH.search(part))}
        intervals = {(m[1].lower(), int(m[2])) for part in parts if (m := _INTERVAL.search(part))}
        coded = masked(text, [m.span() for m in _HEX_ID.finditer(text)])
        return cls(tuple(sorted(nums)), frozenset(stored_times(text) | hours), frozenset(days),
                   frozenset(), frozenset(clocks), frozenset(lengths), frozenset(),
                   frozenset(intervals), coded=frozenset(
                       float(m[1]) / (100 if m[2] else 1)
                       for m in _IN_CODE.finditer(coded)) | {
                           float(first) for _, _, first, _ in eras(text)})

    @classmethod
    def union(cls, parts: Sequence["StoredValues"], counts: frozenset[int] = frozenset()
              ) -> "StoredValues":
        return cls(tuple(sorted({v for p in parts for v in p.numbers})),
                   frozenset().union(*(p.times for p in parts)),
                   frozenset().union(*(p.dates for p in parts)), counts,
                   frozenset().union(*(p.clocks for p in parts)),
                   frozenset().union(*(p.lengths for p in parts)),
                   frozenset().union(*(p.ends for p in parts)),
                   frozenset().union(*(p.intervals for p in parts)),
                   frozenset().union(*(p.dues for p in parts)),
                   frozenset().union(*(p.coded for p in parts)))

    @classmethod
    def record(cls, parts: Sequence["StoredValues"], texts: Sequence[str]) -> "StoredValues":
        """A record's values (``parts``, of its lines ``texts``), with the times its events
        end (``ended``), the dates it recurs on next (``due``) and, where its unit names a
        scale (``unit: 10^3/uL``), its numbers in units too: "11.8 thousand per
        microliter" for ``value: 11.8``."""
        values = cls.union(parts).ended().due()
        scale = next((m for t in texts if (m := _SCALED_UNIT.search(t))), None)
        if scale is None:
            return values
        power = int(scale[1]) if scale[1] else _SUPERSCRIPT[scale[2]] if scale[2] else \
            3 if scale[3].upper() == "K" else 6
        return replace(values, numbers=tuple(sorted(set(values.numbers) | {
            v * 10 ** power for v in values.numbers})))

    def ended(self) -> "StoredValues":
        """A record's values with the times its events end: a start and how long the
        event lasts (``start: 09:00``, ``duration_min: 120``) give "from 9:00 to 11:00
        AM".  Only for a record of at most ``_ENDS_FROM`` times and two lengths, so
        that an end is one of a few, as a stored time is.  An end is a time the record
        states, not one to measure spans from (those are the lengths themselves)."""
        if not self.lengths or not 0 < len(self.times) <= _ENDS_FROM or len(self.lengths) > 2:
            return self
        ends = {round(t + d) % 1440 for t in self.times for d in self.lengths}
        return replace(self, ends=frozenset(ends))

    def due(self) -> "StoredValues":
        """A record's values with its dates one interval on, where it says how often its
        event recurs (``last_groom: 2025-04-28``, ``rebook_interval_weeks: 8``: "due on
        June 23").  Only for one interval and at most ``_ENDS_FROM`` dates, as ``ended``."""
        if len(self.intervals) != 1 or not 0 < len(self.dates) <= _ENDS_FROM:
            return self
        (unit, k), = self.intervals
        dues = set()
        for y, m, d in self.dates:
            try:  # (a date no calendar has, "2025-02-30", has no next one)
                if unit == "month":
                    y2, m2 = divmod(m - 1 + k, 12)
                    y2, m2 = y + y2, m2 + 1
                    on = datetime.date(y2, m2, min(d, calendar.monthrange(y2, m2)[1]))
                else:
                    on = datetime.date(y, m, d) + datetime.timedelta(
                        days=k * (7 if unit == "week" else 1))
            except (ValueError, OverflowError):
                continue
            dues.add((on.year, on.month, on.day))
        return replace(self, dues=frozenset(dues))

    def has(self, n: Number) -> bool:
        if n.kind == "time":  # "just after 5 PM" for 17:02; "3:17 PM", not "3:17:44", for 15:17:42
            return n.value in self.times or n.value in self.clocks or n.value in self.ends or \
                n.value.is_integer() and any(
                int(t) == n.value for t in self.times) or n.hedged and any(
                abs(n.value - t) <= 15 for t in self.times)
        if n.kind == "date":
            v = int(n.value)
            return date_matches((v // 10000, v // 100 % 100, v % 100), self.dates | self.dues) \
                or v < 100 and float(v) in self.numbers  # "on the 20th" for ``renewal_day: 20``
        if n.kind == "duration":  # minutes, hours, seconds or ms ("about 1.2 h": 4410388.1 ms)
            return any(_matches(replace(n, value=n.value * k, precision=n.precision * k),
                                self.numbers) for k in (1.0, 1 / 60, 60.0, 60000.0)) \
                or n.value / 60 in self.coded  # "72 hours" for ``rainfall_last_72h_mm``
        if n.kind == "count" and int(n.value) in self.counts:
            return True
        if n.kind == "era":  # a year of it, or an era starting within it ("the 1100s")
            return any(abs(c - n.value) <= n.precision for c in (*self.numbers, *self.coded))
        # a negative value is written as its size ("down 10.2%" for ``-10.2``); a date's
        # year is no quantity said roughly ("more than 2,000 deliveries" is no 2025)
        return _matches(n, self.numbers, self._years) or n.value > 0 and _matches(
            replace(n, value=-n.value), [c for c in self.numbers if c < 0]) \
            or n.kind == "number" and not n.hedged and n.value in self.coded and (
                n.value >= 10 or not n.value.is_integer())  # not "three" for a "V3"

    @cached_property
    def _years(self) -> frozenset[float]:
        """The years of its dates, read once (each value checked against them)."""
        return frozenset(float(y) for y, _, _ in self.dates)

    @property
    def any(self) -> bool:
        return bool(self.numbers or self.times or self.dates)


def hedge(n: Number) -> float:
    """How far off a hedged value may lie, as a share of the value: 10 % for one of two
    significant digits or fewer ("about 1,100 feet", "about 4.5%"), less for one written
    to more ("about 1,208 MWh" is 1,208 rounded, not 1,290)."""
    digits = len(str(round(abs(n.value) / (2 * n.precision))).rstrip("0")) \
        if n.precision > 0 and n.kind == "number" else 1  # a duration's is in minutes
    return 0.1 if digits <= 2 else 0.05 if digits == 3 else 0.02


def _matches(n: Number, values: Sequence[float], exact: Collection[float] = ()) -> bool:
    """``n`` is one of ``values`` as written, or within its hedge where hedged (not
    those of ``exact``)."""
    off = hedge(n) if n.hedged else 0.0
    for c in values:
        for cand in (c, c * 100) if n.percent else (c,):
            if abs(cand - n.value) <= max(n.precision, 1e-9) + 1e-9 * abs(cand):
                return True
            if off and cand and c not in exact and abs(cand - n.value) <= off * abs(cand):
                return True
    return False


def _elapsed(text: str) -> set[float]:
    """The elapsed times ``text`` writes as a clock of no hours or in ISO 8601, in
    seconds."""
    found = {int(m[1]) * 60.0 + int(m[2]) for m in _ZERO_HOUR.finditer(text)}
    return found | {int(m[1] or 0) * 3600.0 + int(m[2] or 0) * 60 + float(m[3] or 0)
                    for m in _ISO_SPAN.finditer(text) if m[1] or m[2] or m[3]}
