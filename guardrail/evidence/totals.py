"""Totals over a tool result's records, counted where chance seldom makes one.

    totalled(sentence, n, columns)   the sentence's value ``n`` is the sum or the mean of
                                     one key over the records, or the sum of some of them,
                                     in the key's unit or in the one written after ``n``
    (columns.py: each key's numbers over the records, line totals, groups)
    key_total(sentence, n, columns)  the total of the key named by the word after ``n``
                                     ("six unexcused absences"), over a group it names
    within_record, across            two numbers of one record combined; one number of
                                     each of the records it names, added
    apart_from                       how far apart a value it states and one of the
                                     records it is about are
    share_of, counted_of             a share it states of a number of its record; a
                                     count it states times one
    whole_of                         the whole of a part it counts, made up by the
                                     part and the rest of its record

"Your system produced about 262.4 kWh" over seven days of ``energy_wh``; "Taxes took
$597.72 in total:" for four of six deductions in cents, before the list that names them;
"Parts came to $178.19" over the lines of a repair order; "Doctors Without Borders: $450
over four donations" over the gifts whose ``charity`` it names.  Assistants add up a key
over the records far more often than they say so with a cue word, and the rules of
arithmetic.py, which need one, read such a sentence as stating a value the result lacks.

Any value is the sum of some records of a large enough result, and a changed total must
not pass as one.  So a total counts without a cue word only where chance seldom gives it:
the number of sums tried (the totals of the groups the sentence names, then two per key,
then every partial sum of a key of at most ``SUBSETS`` values) times the width of the
written digits must be at most ``CHANCE`` of the value; of a key's total and mean, only
those within a factor of two of the value are tries (a changed value lies near the true
one, and "about 24 minutes" is no six-track playlist's mean of four).  "$597.72"
against the 64 sums of six deductions passes (0.1 %); "8 of them left" against the
partial sums of a few small counts does not, nor does "just over 4,000" (a hedged round
number is as wide as its rounding).  A partial sum is never read from a hedged value.
Measured on the hand-written tool turns in docs/model-card.md ("Totals over records
without a cue word").
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from typing import Collection, NamedTuple, Sequence

from guardrail.evidence import units
from guardrail.evidence.values import CURRENCY_SIGNS, Number, parts_of, sort_of


class Column(NamedTuple):
    """One key's numbers over a tool result's records (arithmetic.py's ``columns``)."""
    key: str                    # the key as written ("signups", "amount due cents")
    values: tuple[float, ...]   # one per record


_SPANS = ("hours", "hrs", "minutes", "mins")  # a key's last words: ``hours logged``
CHANCE = 0.05
"""Sums tried x width of the written digits / value: at most this, or no total counts."""
ACROSS = 2000
"""Sums of one value of each record tried at most (cents make the bound loose for large
amounts, and each sum costs time on the stream)."""
NEAR_CHANCE = 0.2
"""A difference the sentence announces: those tried near the value x the width of its
digits / the window, at most this (``apart_from``)."""
_HELD = 40  # numbers of the records a sentence is about, at most, for their differences
# a key of years ("vintage", "year built", "model year"; not "term years"), its values
# all years (not ``visitors prev year``)
_YEARS = re.compile(r"\b(?:year|vintage|season|founded|established|built|born)\b", re.I)
_MAKE_UP = 4  # the other counts a part's record may hold, at most, to make up its whole
_PERCENT = re.compile(r"(?:^|[\s_])(?:pct|percent|percentage)(?:$|[\s_])", re.I)
_LEVEL = re.compile(r"\b(?:down|up) to\s+\S*$", re.I)
SUBSETS = 12
"""Partial sums are tried over keys of 3 to this many positive values (4,082 sums)."""


@functools.lru_cache(maxsize=512)  # one result's columns are read for every sentence
def _partials(values: tuple[float, ...]) -> dict[int, tuple[float, ...]]:
    """Per size from one to all but one, the sorted sums of that many of ``values``."""
    return {k: tuple(sorted(sum(c) for c in itertools.combinations(values, k)))
            for k in range(1, len(values))}


def _scale(sentence: str, n: Number, column: Column) -> float:
    """What one of the key's units is in the unit written after ``n`` (1 where either
    names none), or 0 where a total of the key cannot be ``n``: another dimension ("kWh"
    is no total of a key in minutes), or temperatures or years, which do not add.  A span
    of time ("7 hours 45 minutes", in minutes) adds up only a key that names its unit."""
    if _YEARS.search(column.key) and all(v.is_integer() and 1800 <= v <= 2100
                                         for v in column.values):
        return 0.0  # years do not add up either: the mean of 2019, 2020 and 2023 is no vintage
    unit = units.key_unit(column.key) or next(
        (units.UNITS[w] for w in column.key.lower().split() if w in _SPANS), None)
    if n.kind == "duration":
        return unit.to(1.0, units.UNITS["min"]) if unit and unit.dim == "time" else 0.0
    if (said := units.unit_after(sentence, n)) and unit and said.dim != unit.dim \
            or unit and unit.dim == "temperature":
        return 0.0
    return unit.to(1.0, said) if said and unit else 1.0


def _read(sentence: str, n: Number, column: Column, *totals: float) -> bool:
    """One of ``totals`` of the key, in the unit written, is ``n`` to its written digits."""
    return bool(scale := _scale(sentence, n, column)) and any(
        abs(t * scale - n.value) <= n.precision for t in totals)


def is_total(sentence: str, n: Number, column: Column) -> bool:
    """``n`` is the key's total over the records, in the unit written after it ("6.5
    hours" over ``hours`` 4.5 and 2.0, a span read in minutes)."""
    return _read(sentence, n, column, sum(column.values))


def _width(n: Number) -> float:
    """The width of the written digits (a count in words: one)."""
    return max(2 * n.precision, 1.0 if n.kind == "count" else 1e-9)


def rarely(n: Number, results: Collection[float], near_only: bool = False) -> bool:
    """``n`` is one of ``results`` to its written digits, and so few were tried that
    chance seldom gives one: their number times the width of the digits is at most
    ``CHANCE`` of the value.  ``near_only``: only those within a factor of two of the
    value count, where each result is a whole the grounding or the sentence names (an
    object's sum, a share the sentence states of a record's amount): a changed value
    lies near the true one.  Not for results no word of the sentence picks (every ratio
    of a record's numbers), where a value invented from nothing may land on any."""
    near = [r for r in results if not near_only or n.value / 2 <= r <= 2 * n.value]
    return bool(near) and len(near) * _width(n) <= CHANCE * n.value \
        and any(abs(r - n.value) <= n.precision for r in near)


def _positive(column: Column) -> tuple[float, ...]:
    return tuple(v for v in column.values if v > 0)


def _sizes(column: Column, counted: Sequence[int]) -> dict[int, int]:
    """How many partial sums of each size are tried: of every size, or of the sizes the
    sentence counts before the value ("two open invoices totaling ..."); one record's
    line total too ("The two copies come to $53.98"), which the result does not state."""
    k = len(_positive(column))
    if not 3 <= k <= SUBSETS:
        return {}
    line = LINE in column.key  # (the count a line total's sentence states is its quantity)
    return {j: math.comb(k, j) for j in range(1 if line else 2, k)
            if not counted or j in counted or line and j == 1}


class Group(NamedTuple):
    """A key added up over the records sharing a value of another key."""
    named: frozenset[str]   # the stems of the shared value ("doctor", "border")
    total: Column           # the key and its total, one value
    size: int               # how many records share the value
    flag: bool = False      # the value is a yes/no key's yes, named by the key's words


_HYPHENED = re.compile(r"\s*([A-Za-z]+(?:-[A-Za-z]+)*)")
LINE = " x "  # a line-total column's key: its quantity key, this, its amount-each key
QUANTITY = frozenset({"qty", "quantity", "units", "count", "pieces", "pcs", "sold", "present",
                      "ordered", "stock"})
"""Words of a key that counts things (``qty``, ``units sold``)."""
def totalled(sentence: str, n: Number, columns: Sequence[Column],
             counted: Sequence[int] = (), named: Sequence[Group] = (),
             parts: Sequence[int] = ()) -> bool:
    """``n`` is one key's total or mean over the records of ``columns``, or a sum of some
    of its values, exact to the digits written, converted to the unit written after
    ``n`` where the key names another, and only where the sums
    tried seldom hit a value of its width by chance: the totals and means are tried
    first, on their own count, then the partial sums on the count of all.  ``counted``:
    the counts in words the sentence states before ``n``, the only sizes of a partial
    sum or a group then tried; ``named``: the groups the sentence names (``groups``),
    tried before all others; ``parts``: the sizes of the parts it counts before ``n``
    ("Three of your six claims were denied, totalling $860.30"), a group's size too.  A
    share is only a key of shares added up or averaged ("the average charge is about
    42%" over ``battery pct``), and no other value is one of theirs."""
    if n.kind not in ("number", "count", "duration") or n.value <= 0:
        return False
    columns = [c for c in columns if _scale(sentence, n, c)  # no other dimension is tried,
               and bool(_PERCENT.search(c.key)) == n.percent]  # a share of a key in shares
    if n.percent:  # "the average charge is about 42%" over ``battery pct``
        return rarely(n, [t for c in columns for t in (sum(c.values), sum(c.values) / len(
            c.values))], near_only=True)
    said = units.unit_after(sentence, n)  # "1.13 million gallons": the keys in a volume,
    of_dim = [c for c in columns if said and getattr(units.key_unit(c.key), "dim", "") == said.dim]
    columns = of_dim or columns  # where there are some, are those it totals
    width = _width(n)
    named = [g for g in named if not counted or g.size in counted or g.size in parts]
    if named and len(named) * width <= CHANCE * n.value and any(
            _read(sentence, n, g.total, g.total.values[0]) for g in named):
        return True
    near = [c for c in columns for t in (sum(c.values), sum(c.values) / len(c.values))
            if n.value / 2 <= t * _scale(sentence, n, c) <= 2 * n.value]
    if (len(near) + len(named)) * width <= CHANCE * n.value and any(
            _read(sentence, n, c, sum(c.values), sum(c.values) / len(c.values)) for c in near):
        return True  # a total and a mean a tenth of it: only the one near ``n`` is a try
    tried = 2 * len(columns) + len(named)
    if tried * width > CHANCE * n.value:
        return False
    sizes = [_sizes(c, counted) if not n.hedged else {} for c in columns]
    tried += sum(sum(s.values()) for s in sizes)
    partial = tried * width <= CHANCE * n.value
    for column, of_size in zip(columns, sizes):
        values = column.values
        if _read(sentence, n, column, sum(values), sum(values) / len(values)):
            return True
        scale = _scale(sentence, n, column)
        if partial and of_size and scale:  # the partial sums near it, found in sorted lists
            lo, hi = (n.value - n.precision) / scale, (n.value + n.precision) / scale
            sums = _partials(_positive(column))
            if any(bisect.bisect_right(sums[k], hi) > bisect.bisect_left(sums[k], lo)
                   for k in of_size):
                return True
    return False


def within_record(n: Number, records: Sequence[Sequence[float]]) -> bool:
    """``n`` is the difference, product or ratio of two numbers of one record the
    sentence is about ("$6,240 over its $65,000 budget": the milestone's cost less its
    budget), exact to its written digits and never hedged, where chance seldom gives
    one: three results of each pair of each record tried, times the width of the written
    digits, at most ``CHANCE`` of the value.  Not a sum: an answer that adds a fee the
    total already holds makes one ("the total payable is £2,420.20")."""
    if n.kind not in ("number", "count") or n.percent or n.hedged or n.value <= 0:
        return False
    width = _width(n)
    kept = [sorted({abs(v) for v in record if v}) for record in records]
    tried = sum(3 * len(values) * (len(values) - 1) // 2 for values in kept)
    if not tried or tried * width > CHANCE * n.value:
        return False
    return any(abs(c - n.value) <= n.precision for values in kept
               for a, b in itertools.combinations(values, 2) if not (_year(a) and _year(b))
               for c in (b - a, a * b, b / a))  # years apart: spans.py, with a word of age


def _year(v: float) -> bool:
    return v.is_integer() and 1800 <= v <= 2100


def apart_from(sentence: str, n: Number, anchored: Sequence[Number],
               records: Sequence[Sequence[float]]) -> bool:
    """``n`` is how far apart a value the sentence states and one of the records it is
    about are ("0.12 feet under the 11.5-foot flood level" for a crest of 11.38; "1,312
    minutes, 267 more than Khruangbin"), exact to its written digits; the caller asks for
    a word announcing a difference.  Two values it leaves unsaid are not enough ("It
    still has 44 seats" is no $49 less 5 seats), and a level is no difference ("down to
    14 seats").  Chance is bounded near the value: the differences tried within half to
    twice it, times the width of its digits, at most ``NEAR_CHANCE`` of that window (1.5
    times the value)."""
    if n.kind not in ("number", "count") or n.percent or n.value <= 0 \
            or _LEVEL.search(sentence, 0, n.start):
        return False
    held = sorted({abs(v) for record in records for v in record if v})
    if not held or len(held) > _HELD:
        return False
    sign = _sign(sentence, n)  # money from money; no count ("two of the three flights")
    said = {m.value for m in anchored if m.start != n.start and m.value > 0
            and m.kind != "count" and _sign(sentence, m) == sign}
    tried = {round(abs(a - b), 9) for a in said for b in held if a != b}
    near = [v for v in tried if n.value / 2 <= v <= 2 * n.value]
    return len(near) * _width(n) <= NEAR_CHANCE * 1.5 * n.value and any(
        abs(v - n.value) <= n.precision for v in near)


def _sign(sentence: str, n: Number) -> str:
    return sort if (sort := sort_of(sentence, n)) in CURRENCY_SIGNS else ""


def across(n: Number, records: Sequence[Sequence[float]], counted: Sequence[int] = ()) -> bool:
    """``n`` is one number of each of the two to four records the sentence is about,
    added up ("1,380 gallons between the two lines" for 750 and 630), exact to its
    written digits and never hedged, where the sums tried times the width of the digits
    stay under ``CHANCE`` of the value.  Of three or four records, also one number of
    each of some of them ("Harbour Wren and Kittiwake together give 97 tonnes, ... while
    Kittiwake and Tern reach only 80"), their own: a number all of them share is the
    result's, and is left out (with two records it may be both their prices).  The
    caller asks for a word saying it adds up; ``counted``: the counts it states before
    ``n``, one of which must be the number of records added."""
    if n.kind not in ("number", "count") or n.percent or n.hedged or n.value <= 0 \
            or not 2 <= len(records) <= 4:
        return False
    kept = [sorted({v for v in record if v > 0}) for record in records]
    common = set.intersection(*map(set, kept)) if len(kept) > 2 else set()
    own = [[v for v in k if v not in common] for k in kept]
    return any(_added(n, groups) for groups in (
        [kept] if not counted or len(kept) in counted else [],
        [c for k in range(2, len(own) + 1) if common and (not counted or k in counted)
         for c in itertools.combinations(own, k)]))


def _added(n: Number, groups: Sequence[Sequence[Sequence[float]]]) -> bool:
    """``n`` is one number of each record of one of ``groups`` added up, where the sums
    tried (a bound on the distinct ones, before any is formed) stay under chance."""
    tried = sum(math.prod(len(k) for k in group) for group in groups)
    if not tried or tried > ACROSS or tried * _width(n) > CHANCE * n.value:
        return False
    return any(abs(sum(c) - n.value) <= n.precision
               for group in groups for c in itertools.product(*group))


_GROWN = re.compile(r"\b(?:bonus|tax|tip|gratuity|surcharge|markup|interest|premium|plus|"
                    r"added|on top)\b", re.I)


def share_of(n: Number, shares: Sequence[float], records: Sequence[Sequence[float]],
             columns: Sequence[Column] = (), sentence: str = "") -> bool:
    """``n`` is a share the sentence states (``shares``, in percent) of a number of the
    record it is about or of one key's total, what is left after taking it off, or,
    where the sentence says it is added, the number with it ("a 25% deposit of $1,215"
    on a $4,860 quote; "took 10% off, so the total is $183.60"; "the 10% bonus would
    make it $182.71" on $166.10),
    exact to its written digits, where chance seldom gives one: the results tried times
    the width of the digits at most ``CHANCE`` of the value."""
    if n.percent or n.value <= 0 or not shares:
        return False
    bases = {v for record in records for v in record if v > 0}
    bases |= {sum(c.values) for c in columns if sum(c.values) > 0}
    grown = _GROWN.search(sentence) is not None
    results = {f * b for p in shares if 0 < p < 100 for b in bases
               for f in (p / 100, 1 - p / 100, *((1 + p / 100,) if grown else ()))}
    return rarely(n, results, near_only=True)


def whole_of(sentence: str, n: Number, records: Sequence[Sequence[float]]) -> bool:
    """``n`` is the whole of a part the sentence counts, and one record holds the part
    and what makes up the rest ("Eleven of the twelve checks passed" on ``passed: 11,
    failed: 1``): the part plus one other count of the record, or plus all of them.  A
    whole the part and the record do not make ("Eleven of the fifteen") stays missing,
    and so does any whole of a record of more than ``_MAKE_UP`` other counts, which
    would make nearly every whole."""
    if n.hedged or n.percent or not n.value.is_integer():
        return False
    for part, whole, end in parts_of(sentence):
        if end != n.end or whole != n.value:
            continue
        for record in records:
            counts = [v for v in record if v > 0 and v.is_integer() and v < whole]
            if part not in counts:
                continue
            counts.remove(part)
            if len(counts) > _MAKE_UP:
                continue
            if part + sum(counts) == whole or whole - part in counts:
                return True
    return False


def counted_of(n: Number, counts: Sequence[float], records: Sequence[Sequence[float]]) -> bool:
    """``n`` is a number of the record the sentence is about times a count the sentence
    states ("Your two seats came to $558" at $279 a seat; "the entry fees for the three
    lots add another $1,050"), exact to its written digits and never hedged, where
    chance seldom gives one: the products tried times the width of the digits at most
    ``CHANCE`` of the value."""
    if n.kind != "number" or n.percent or n.hedged or n.value <= 0 or not counts:
        return False
    bases = {v for record in records for v in record if v > 0}
    results = {k * b for k in counts for b in bases}
    return rarely(n, results)


def key_total(sentence: str, n: Number, columns: Sequence[Column],
              named: Sequence[Group] = ()) -> bool:
    """``n`` is the total of the one key whose name starts with the word right after it
    ("six unexcused absences": ``unexcused`` over the records), over the records of a
    group the sentence names ("Eastside Depot ... 699 kg from 13 bins": ``bins emptied``
    over Eastside's pickups) or over all, exact: a sum or two tried, the key the sentence
    names, so a changed count is no total of another key.  Where no key is so named, the
    one key counting things (``QUANTITY``) over all the records counts the noun."""
    m = _HYPHENED.match(sentence, n.end)  # "12 e-bikes" names ``ebikes available``
    after = m[1].lower().replace("-", "")[:5] if m else ""
    if n.hedged or n.percent or len(after) < 4 or not n.value.is_integer():
        return False

    def names(key: str) -> bool:  # a line total (``bales x cost per bale``) is of its amount
        return any(w.startswith(after) for w in key.lower().rpartition(LINE)[2].split())

    keyed = [c for c in columns if names(c.key)]
    totals = [g.total.values[0] for g in named if names(g.total.key)]
    totals += [sum(keyed[0].values)] if len(keyed) == 1 else []
    # or of the one key that counts things, a noun after it ("six bottles" over the records'
    # ``qty``: 2, 1, 1, 1, 1)
    counting = [] if keyed else [c for c in columns if LINE not in c.key
                                 and not QUANTITY.isdisjoint(c.key.lower().split())]
    totals += [sum(counting[0].values)] if len(counting) == 1 and units.unit_after(
        sentence, n) is None else []
    return any(abs(t - n.value) <= n.precision for t in totals)
