"""Numbers an answer reads off the grounding without arithmetic on its values: the days
between two of its dates, the number of a label, and how many records hold a value.

    days_between(sentence, n, said, dates)   "18 days from receipt to deposit": ``n``
                                             days (or weeks) lie between a date the
                                             sentence states and one of the grounding,
                                             or two of the record it is about
    date_apart(sentence, n, said, dates)     "within 30 days, which means by November
                                             1": the date ``n`` lies a span the
                                             sentence states from one of them
    years_apart(sentence, n, values, ranges) "ruled for 265 years" for "from 1603 until
                                             1868": years between two it states bare
    next_day(sentence, dates)                "harvested on October 13, shipped the next
                                             day": the day after a date it states
    Labels(text).has(sentence, n)            "week-8 retention" for ``w8``, "day 14" for
                                             ``PT-118-D14``, "Category 4" for
                                             ``category_4``: a number the grounding
                                             writes inside a key or an identifier
    Tallies(fields, ...).counts(sentence, n) "three are still open", "Three samples are
                                             above the 10 mg/L limit": how many records
                                             hold a value of a key it names, or lie
                                             beyond a value it states

    timed(sentence, n, times, said)          "It lasts 90 minutes" for 14:00-15:30: a
                                             span between two times, or a time a span
                                             the sentence states away from one
    per_span(sentence, n, said)              "84 people between 9:00 AM and 3:00 PM,
                                             about 14 an hour": a rate over a span it
                                             states
    shifted_dates(fields, record_values)     per record, its dates moved by each of its
                                             fields' numbers of days ("notice is due by
                                             November 1" 30 days before December 1)

Each is exact: a day count off by one, a label the grounding lacks, or a count no key's
values give stays a value the context does not hold.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from typing import Callable, Collection, Optional, Sequence

from guardrail.evidence.totals import CHANCE
from guardrail.evidence.values import Number, numbers

_DAYS_AFTER = re.compile(r"[\s-]?(?:calendar\s+)?(days?|weeks?|nights?)\b", re.I)
_SPAN_AFTER = re.compile(r"[\s-]?(?:calendar\s+)?(day|week|month|year)s?'?(?![\w-])", re.I)
_AGED = re.compile(r"\b(?:age of|aged|at)\s+$", re.I)
_YEARS_AFTER = re.compile(r"[\s-]years?[\s-]old\b", re.I)
_A_SPAN = re.compile(r"\b(?:a|one)\s+(day|week|fortnight|month|year)\b", re.I)
_DAYS = re.compile(r"\bdays?\b", re.I)
_DAYS_IN = {"day": 1, "night": 1, "week": 7, "fortnight": 14}
# approximately so many, not a bound: a count in words is read exact (values.py), and
# values' hedges hold "over" and "under" too
_ABOUT = re.compile(r"\b(?:about|around|roughly|nearly|almost|some)\s+$", re.I)
MAX_DATES = 12
"""More dates than this to pair, and a day count is no evidence of which two it spans."""
MAX_RANGES = 10
"""More spans of years than this, and a number of years is no evidence of which it is."""
_YEAR_RANGE = re.compile(r"\b(1\d{3}|20\d\d)\s*(?:-|–|—|to|until|till|and|through|thru)\s*"
                         r"(1\d{3}|20\d\d)\b", re.I)
"""More dates than this to pair, and a day count is no evidence of which two it spans."""


def _ymd(n: Number) -> tuple[int, int, int]:
    """A date ``n`` (written yyyymmdd, 0 for a part it leaves unsaid) as (y, m, d)."""
    v = int(n.value)
    return v // 10000, v // 100 % 100, v % 100


def _day(d: tuple[int, int, int], year: int) -> dt.date | None:
    y, m, day = d
    try:
        return dt.date(y or year, m, day) if day and (y or year) else None
    except ValueError:
        return None


# a span said in words, counted only for a time worked out from another ("an hour
# beforehand, so from 8:40 AM"): as a value of its own "an hour" is often a rate
_SPAN_WORD = re.compile(r"\b(half an hour|a quarter of an hour|an hour and a half|an hour)\b",
                        re.I)
_SPAN_WORDS = {"half an hour": 30.0, "a quarter of an hour": 15.0, "an hour and a half": 90.0,
               "an hour": 60.0}
_ROUGHLY = re.compile(r"\b(?:about|around|roughly|nearly|almost|approximately|some|over|"
                      r"under)\s+$", re.I)  # before a value in words ("about six minutes")
_SPAN = re.compile(r"[\s-]?(minutes?|mins?|hours?|hrs?)\b", re.I)
_PER_SPAN = re.compile(r"\s?(?:[A-Za-z]+\s+)?(?:an?|per|each)\s+(hour|minute)\b", re.I)


def minutes_of(sentence: str, n: Number) -> Optional[float]:
    """How many minutes ``n`` is, if it is a span of time ("1 hour 30 minutes", "90 min")."""
    if n.kind == "duration":
        return n.value
    span = _SPAN.match(sentence, n.end) if n.kind in ("number", "count") else None
    return None if span is None else n.value if span[1][0] in "mM" else n.value * 60


def timed(sentence: str, n: Number, times: Collection[int], said: Sequence[Number]) -> bool:
    """A span between two times of the context ("It lasts 90 minutes" for 14:00-15:30;
    "just under 15 minutes" for 13:02-13:16), the ranges the sentence states added up
    ("from 9:00 AM to 4:30 PM and from 9:00 AM to 3:00 PM, which is 13.5 hours"), or a
    time a span the sentence states away from one ("45 minutes before closing, so 4:15
    PM"; "an hour beforehand, so 8:40 AM")."""
    minutes = minutes_of(sentence, n)
    stated = [m.value for m in said if m.kind == "time" and m.end <= n.start]
    if minutes is not None and len(stated) >= 4 and len(stated) % 2 == 0 and abs(sum(
            (b - a) % 1440 for a, b in zip(stated[::2], stated[1::2])) - minutes) <= 1e-6:
        return True
    if minutes is not None and 1 < len(times) <= 12:
        rough = n.hedged or _ROUGHLY.search(sentence[max(0, n.start - 14):n.start])
        slack = max(1.0, 0.1 * minutes) if rough else 1e-6  # (seconds: fractions)
        if any(abs((b - a) % 1440 - minutes) <= slack
               for a, b in itertools.permutations(times, 2)):
            return True
    if n.kind == "time" and 0 < len(times) <= 12:
        spans = [d for m in said if m.start != n.start
                 and (d := minutes_of(sentence, m)) is not None]
        spans += [_SPAN_WORDS[w.lower()] for w in _SPAN_WORD.findall(sentence)]
        return any((t + sign * d) % 1440 == round(n.value) for t in times for d in spans
                   for sign in (1, -1))
    return False


def per_span(sentence: str, n: Number, said: Sequence[Number]) -> bool:
    """A rate over a span the sentence states ("screened 84 people between 9:00 AM and
    3:00 PM, about 14 an hour"; "1,390 cfs in 14 hours, roughly 100 cfs an hour"): one
    of its values over the span (a duration, or two times in a row), per hour or per
    minute as written after ``n``, to its rounding (a tenth either way when hedged)."""
    per = _PER_SPAN.match(sentence, n.end)
    if per is None or n.kind not in ("number", "count") or n.percent or n.value <= 0:
        return False
    times = [m.value for m in said if m.kind == "time"]
    spans = [d for m in said if m.start != n.start and (d := minutes_of(sentence, m))] + [
        (b - a) % 1440 for a, b in zip(times, times[1:])]
    size = 60.0 if per[1].lower().startswith("hour") else 1.0
    slack = 0.1 if n.hedged or _ROUGHLY.search(sentence[max(0, n.start - 14):n.start]) \
        else 0.005
    return any(abs(m.value / (d / size) - n.value) <= max(n.precision, slack * n.value)
               for m in said if m.kind in ("number", "count") and not m.percent
               and m.start != n.start for d in spans if d > 0)


def days_between(sentence: str, n: Number, said: Sequence[Number],
                 dates: Collection[tuple[int, int, int]]) -> bool:
    """``n`` ("18 days", "130 days old") is the number of days between a date the
    sentence states and one of ``dates`` (the grounding's, in the records it is about),
    or between two of ``dates`` when the sentence states none; a date the sentence
    writes without its year takes the years of ``dates``.  A date ``n``: ``date_apart``."""
    if n.kind == "date":
        return date_apart(sentence, n, said, dates)
    if n.kind in ("number", "count") and (_AGED.search(sentence[max(0, n.start - 14):n.start])
                                          or _YEARS_AFTER.match(sentence, n.end)) \
            and years_between(n, dates):
        return True
    unit = _DAYS_AFTER.match(sentence, n.end) if n.kind in ("number", "count") else None
    if unit is None or not n.value.is_integer() or n.value < 1:
        return False
    days = n.value * (per := _DAYS_IN[unit[1].lower().rstrip("s")])
    years = {y for y, _, _ in dates if y}
    theirs = {d for d in (_day(x, 0) for x in dates) if d}
    if not theirs or len(theirs) > MAX_DATES:
        return False
    stated = [_ymd(m) for m in said if m.kind == "date" and m.start != n.start]
    mine = {d for x in stated for y in (years or {0}) if (d := _day(x, y))}
    spans = [(a, b) for a in mine for b in theirs | mine] if mine else \
        itertools.combinations(theirs, 2)
    # about so many weeks ("a window of about seven weeks" for 51 days); the days of a
    # range it states, both ends counted ("the five days from October 7 to October 11")
    loose = per == 7 and _ABOUT.search(sentence, max(0, n.start - 12), n.start)
    return any(abs((a - b).days) == days or loose and round(abs((a - b).days) / 7) == n.value
               for a, b in spans) or any(
        abs((a - b).days) + 1 == days for a, b in itertools.combinations(mine, 2))


def years_apart(sentence: str, n: Number, values: Collection[float],
                ranges: Collection[tuple[int, int]] = ()) -> bool:
    """``n`` ("ruled for 265 years", "about 260 years later") is the years between two
    years among ``values`` (those a prose text states bare: "from 1603 until 1868"),
    where so few pairs are tried that chance seldom gives one (``CHANCE`` of a century),
    or the length of one of ``ranges`` (``year_ranges``), where at most ``MAX_RANGES``
    are.  A span said roughly ("about 45 years" for 46) is within a tenth of it, and
    counts as that many tries."""
    unit = _SPAN_AFTER.match(sentence, n.end)
    if unit is None or unit[1].lower() != "year" or n.kind not in ("number", "count") \
            or n.percent or n.value < 1:
        return False
    years = sorted({v for v in values if v.is_integer() and 1000 <= v <= 2100})
    pairs = list(itertools.combinations(years, 2))
    for within in {max(n.precision, 0.5), 0.1 * n.value if n.hedged else 0.5}:
        tries = (pairs if len(pairs) * 2 * within <= CHANCE * 100 else []) + list(
            ranges if len(ranges) * 2 * within <= MAX_RANGES else ())
        if any(abs(b - a - n.value) <= within for a, b in tries):
            return True
    return False


def year_ranges(text: str) -> tuple[tuple[int, int], ...]:
    """The spans of years ``text`` states: "from 1520 to 1566", "(1520-1566)"."""
    return tuple(sorted({(int(m[1]), int(m[2])) for m in _YEAR_RANGE.finditer(text)
                         if int(m[1]) < int(m[2])}))


def years_between(n: Number, dates: Collection[tuple[int, int, int]]) -> bool:
    """``n`` ("at the age of 67", "nine years old") is the whole years between two of
    ``dates`` (those of the records the sentence is about), where so few pairs are
    tried that chance seldom gives a span of years: ``CHANCE`` of a century."""
    days = sorted({d for d in (_day(x, 0) for x in dates) if d})
    pairs = list(itertools.combinations(days, 2))
    if not n.value.is_integer() or not pairs or len(pairs) > CHANCE * 100:
        return False
    return any(b.year - a.year - ((b.month, b.day) < (a.month, a.day)) == n.value
               for a, b in pairs)


def _shift(day: dt.date, unit: str, k: int) -> dt.date | None:
    """``day`` moved by ``k`` days, weeks, months or years (a month's last day where the
    day is past it)."""
    if unit in _DAYS_IN:
        return day + dt.timedelta(days=k * _DAYS_IN[unit])
    months = day.year * 12 + day.month - 1 + (12 * k if unit == "year" else k)
    y, m = divmod(months, 12)
    for d in (day.day, 30, 29, 28):
        try:
            return dt.date(y, m + 1, min(day.day, d))
        except ValueError:
            continue
    return None


def date_apart(sentence: str, n: Number, said: Sequence[Number],
               dates: Collection[tuple[int, int, int]]) -> bool:
    """The date ``n`` lies a span the sentence states away from one of ``dates`` or from
    another date it states ("within 30 days, which means by November 1"; "valid for two
    years, until August 14, 2027"; "48 hours' notice, so by Tuesday, June 17"), either
    way, to the day; a date without its year takes the years of the others."""
    if n.kind != "date" or not int(n.value) % 100:
        return False
    year, month, day = _ymd(n)
    spans = {(m[1].lower(), 1) for m in _A_SPAN.finditer(sentence)}
    for m in said:
        if m.kind == "duration" and m.value and m.value % 1440 == 0:  # "48 hours"
            spans.add(("day", int(m.value // 1440)))
        elif m.kind in ("number", "count") and m.value.is_integer() and 1 <= m.value <= 366 \
                and (unit := _SPAN_AFTER.match(sentence, m.end)):
            spans.add((unit[1].lower(), int(m.value)))
    stated = [_ymd(m) for m in said if m.kind == "date" and m.start != n.start]
    years = {y for y, _, _ in [*dates, *stated] if y}
    bases = {d for x in [*dates, *stated] for y in (years or {year} - {0}) if (d := _day(x, y))}
    if not spans or not bases or 2 * len(bases) * len(spans) > CHANCE * 365:
        return False  # the dates tried, against the days of a year a changed one hits
    return any((s.month, s.day) == (month, day) and year in (0, s.year)
               for base in bases for unit, k in spans for sign in (1, -1)
               if (s := _shift(base, unit, sign * k)) is not None)


_NEXT_DAY = re.compile(r"\b(?:the (?:next|following) day|a day later|the day after)\b", re.I)


def next_day(sentence: str, dates: Collection[tuple[int, int, int]]) -> bool:
    """One of ``dates`` is the day after a date the sentence states before "the next day"
    ("harvested on October 13, shipped the next day" for ``shipped: 2025-10-14``); a date
    without its year takes the years of ``dates``."""
    last = max((cue.start() for cue in _NEXT_DAY.finditer(sentence)), default=None)
    if last is None or not dates:  # read only where the sentence says "the next day"
        return False
    years = {y for y, _, _ in dates if y}
    return any(m.kind == "date" and m.end <= last and _ymd(m)[2]
               and (d := _day(_ymd(m), y)) is not None
               and ((d := d + dt.timedelta(days=1)).year, d.month, d.day) in dates
               for m in numbers(sentence) for y in years)


_LABEL_BEFORE = re.compile(r"\b([A-Za-z]{1,12})[\s-]$")


class Labels:
    """The numbers a grounding writes inside keys and identifiers (``w8``, ``D14``,
    ``category_4``), each with the letters before it, read once per grounding."""

    def __init__(self, text: str):
        self.labels = frozenset((a.lower(), int(d)) for a, d in re.findall(
            r"(?<![A-Za-z\d.])([A-Za-z]{1,12})[_-]?(\d{1,3})(?![\w.])", text))

    def has(self, sentence: str, n: Number) -> bool:
        """``n`` is written right after a word ("week-8", "day 14", "Category 4") and the
        grounding writes it after that word or the word's first letters (``w8``,
        ``D14``, ``category_4``)."""
        if n.kind != "number" or n.hedged or not n.value.is_integer():
            return False
        m = _LABEL_BEFORE.search(sentence, 0, n.start)
        if m is None:
            return False
        word, v = m[1].lower(), int(n.value)
        return any(v == d and word.startswith(a) for a, d in self.labels)


_WORD = re.compile(r"[\s-]*([A-Za-z]+)")
_ID = re.compile(r"[A-Za-z][\w-]*\d|\d[\w-]*[A-Za-z]")  # "S-0871", "V8", "12B": no quantity
_BEYOND = re.compile(r"\b(?:above|over|more than|exceed(?:s|ed|ing)?|higher than|"
                     r"below|under|less than|lower than)\b", re.I)
_OVER = {"above", "over", "more than", "exceed", "exceeds", "exceeded", "exceeding",
         "higher than"}


class Tallies:
    """How many records of a tool result hold each value of each key (``checked in:
    yes`` in 6 of 8 rows), read once per grounding from its ``Field``s (fields.py)."""

    def __init__(self, fields: Sequence, stem: Callable[[str], str],
                 columns: Sequence[Sequence[float]] = ()):
        """``columns``: one key's number in each record (``Fields.columns``), what a
        count beyond a value reads."""
        self.stem, self.columns = stem, columns
        held: dict[tuple[str, str], set[int]] = {}
        # the words of keys holding numbers: "2 delivery attempts" is that key's value
        self.numeric = frozenset().union(*(f.key for f in fields if f.values.numbers
                                           and not _ID.search(f.value)))
        names: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
        for f in fields:
            # values in words ("open", "yes"): a number held by so many records is more
            # likely that number said again ("2 delivery attempts") than a count
            if f.record >= 0 and not f.listed and f.value.strip() \
                    and not any(c.isdigit() for c in f.value):
                k = (f.name, f.value.strip().lower())
                held.setdefault(k, set()).add(f.record)
                names[k] = (f.key, frozenset(w for w in f.words if len(w) > 2))
        self.tallies = [(*names[k], len(r)) for k, r in held.items()]

    def counts(self, sentence: str, n: Number, stems: Collection[str],
               said: Sequence[Number] = ()) -> bool:
        """``n`` is how many records hold one value of a key, and the sentence names the
        key ("Six volunteers checked in": ``checked in``) or the value
        ("three are still open": ``status: open``)."""
        if n.kind not in ("number", "count") or n.hedged or not n.value.is_integer() \
                or n.value < 2 or sentence[n.end:n.end + 1].isalpha():
            return False  # one record holding a value tells nothing; "1Gi" is no count
        after = _WORD.match(sentence, n.end)
        if after and self.stem(after[1]) in self.numeric:
            return False  # "2 delivery attempts": a value of ``delivery attempts``
        if any(k == n.value and (key <= stems or words & stems)
               for key, words, k in self.tallies):
            return True
        return self._beyond(sentence, n, said)

    def _beyond(self, sentence: str, n: Number, said: Sequence[Number]) -> bool:
        """``n`` records of one key lie beyond a value the sentence states after it
        ("Three samples are above the 10 mg/L limit")."""
        for m in said:
            if m.start <= n.end or m.kind != "number":
                continue
            word = _BEYOND.search(sentence, n.end, m.start)
            if word is None:
                continue
            over = word[0].lower() in _OVER
            if any(sum(v > m.value if over else v < m.value for v in col) == n.value
                   for col in self.columns):
                return True
        return False


def shifted_dates(fields: Sequence, record_values: dict
                  ) -> dict[int, frozenset[tuple[int, int, int]]]:
    """Per record, its dates moved by each of its fields' numbers of days (a key naming
    days), or by those of the result's own fields outside every record ("should hatch
    around February 24" for a batch's ``set_date: 2025-02-03`` and the result's
    ``standard_incubation_days: 21``), either way: read once per grounding."""
    days: dict[int, set[int]] = {}
    for f in fields:
        if _DAYS.search(f.path) and len(f.values.numbers) == 1 \
                and f.values.numbers[0] in range(1, 367):
            days.setdefault(f.record, set()).add(int(f.values.numbers[0]))
    out = {}
    for r in set(days) | (set(record_values) if -1 in days else set()):
        ks, found = days.get(r, set()) | days.get(-1, set()), set()
        for y, m, d in record_values[r].dates if r in record_values else ():
            try:  # a date without its year or day, or at the calendar's ends: none
                base = dt.date(y, m, d)
                found |= {(t.year, t.month, t.day) for k in ks for sign in (-1, 1)
                          for t in [base + dt.timedelta(sign * k)]}
            except (ValueError, OverflowError):
                continue
        out[r] = frozenset(found)
    return out
