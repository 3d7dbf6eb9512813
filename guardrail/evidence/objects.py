"""What the objects of a tool result add up to, each to one value.

    object_sums(fields)   per object: its three amounts or more in one unit added (a
                          quote's ``charges > base cents``, ``mileage cents``, ...:
                          "$3,831.80"); its three counts or more added (``plates sold >
                          green: 412``, ``yellow: 268``, ...: "sold 866 plates"); and its
                          counts times the prices another object of its record keys alike
                          (``registrations > early bird: 58`` times ``fees > early bird
                          cents: 4500``, and so on: "$4,895 in entry fees"); and the
                          records' quantities times the prices of the things they name
                          ("the week's harvest is worth about $1,697")

Assistants add up a breakdown without saying so ("Another 70 plates were discarded").
Each object gives one value, and each pair of objects keyed alike one more, so the sums
are few and count only where chance seldom gives one (totals.rarely).  Counts are added
only in a named object (not a record of an array, whose counts measure different
things), and a key that says money is no count.
"""

from __future__ import annotations

import collections
import itertools
from typing import Optional, Sequence

from guardrail.evidence import units
from guardrail.evidence.field import MONEY_KEY, Field
from guardrail.evidence.keys import WORDS
from guardrail.evidence.stored import names_cents
from guardrail.evidence.values import numbers

_CENTS = "cents"
Entry = tuple[float, Optional[str]]  # a value, and its unit's name ("cents"; None: none)


def _bare(key: str) -> str:
    """A key without the words of its unit: ``early bird cents`` and ``early bird`` alike."""
    return " ".join(w for w in WORDS.findall(key.lower())
                    if w not in (_CENTS, "pence") and w not in units.UNITS)


def _objects(fields: Sequence[Field]) -> dict[tuple[int, str], dict[str, Entry]]:
    """Per record and object (its path), each key's one plain number, with its unit."""
    out: dict[tuple[int, str], dict[str, Entry]] = {}
    paths = collections.Counter((f.record, f.path) for f in fields)  # a list's items: one path
    for f in fields:
        parent, _, key = f.path.rpartition(" > ")
        nums = [m.value for m in numbers(f.value) if m.kind == "number"]
        if f.flag is not None or paths[f.record, f.path] > 1 or f.values.dates or len(nums) != 1:
            continue
        unit = _CENTS if names_cents(f.path) else getattr(units.key_unit(f.path), "name", None)
        out.setdefault((f.record, parent), {})[_bare(key) or key] = (nums[0], unit)
    return out


def _counts(parent: str, entries: dict[str, Entry]) -> dict[str, float]:
    """The object's counts: a named object's unitless whole numbers, not money."""
    if not parent or parent[-1].isdigit() or MONEY_KEY.search(parent):
        return {}
    return {k: v for k, (v, unit) in entries.items()
            if unit is None and v.is_integer() and v >= 0 and not MONEY_KEY.search(k)}


def _priced(counts: dict[str, float], prices: dict[str, Entry]) -> list[Entry]:
    """The counts times the prices keyed alike, two or more of them, in the prices' unit."""
    kept = [(v, prices[k]) for k, v in counts.items() if k in prices]
    unit = {u for _, (_, u) in kept}
    if len(kept) < 2 or len(unit) != 1:
        return []
    return [(sum(v * p for v, (p, _) in kept), unit.pop())]


def _records_priced(fields: Sequence[Field], objects: dict[tuple[int, str], dict[str, Entry]]
                    ) -> list[Entry]:
    """Per price object outside the records and per quantity key of the records: each
    record's quantity times the price of the thing it names (``harvests 1 > species:
    blue oyster``, ``weight kg: 18.4`` times ``price per kg cents > blue oyster: 1400``),
    added over the records that name a priced thing, two of them or more."""
    prices = [{k: p for k, (p, u) in entries.items() if u == _CENTS or u is None}
              for (r, parent), entries in objects.items() if r == -1 and MONEY_KEY.search(parent)
              and any(u == _CENTS for _, u in entries.values())]
    named: dict[int, str] = {}  # per record, the value of a field naming a priced thing
    amounts: dict[tuple[int, str], float] = {}  # per record and key, a plain quantity
    for f in fields:
        if f.record < 0 or f.flag is not None or f.values.dates:
            continue
        key = f.path.rpartition(" > ")[2]
        nums = [m.value for m in numbers(f.value) if m.kind == "number"]
        if any(f.value.lower() in p for p in prices):
            named[f.record] = f.value.lower()
        elif len(nums) == 1 and not names_cents(key) and not MONEY_KEY.search(key) \
                and "pct" not in key and "percent" not in key:
            amounts[f.record, key] = nums[0]
    out: list[Entry] = []
    for p in prices:
        for key in {k for _, k in amounts}:
            pairs = [(amounts[r, key], p[thing]) for r, thing in named.items()
                     if thing in p and (r, key) in amounts]
            out += [(sum(q * c for q, c in pairs), _CENTS)] if len(pairs) >= 2 else []
    return out


def object_sums(fields: Sequence[Field]) -> tuple[float, ...]:
    """One sum per object of its amounts in one unit and of its counts, and one per pair
    of objects of a record of counts times prices keyed alike; amounts in cents also in
    whole units."""
    objects = _objects(fields)
    counted = {at: _counts(at[1], entries) for at, entries in objects.items()}
    sums: list[Entry] = []
    for at, entries in objects.items():
        for unit, group in itertools.groupby(sorted(
                (u, v) for v, u in entries.values() if u), key=lambda e: e[0]):
            values = [v for _, v in group]
            sums += [(sum(values), unit)] if len(values) >= 3 else []
        sums += [(sum(counted[at].values()), None)] if len(counted[at]) >= 3 else []
    for (a, _), (b, others) in itertools.permutations(objects.items(), 2):
        if a[0] == b[0] and counted[a]:
            prices = {k: e for k, e in others.items()
                      if e[1] == _CENTS or e[1] is None and MONEY_KEY.search(b[1])}
            sums += _priced(counted[a], prices)
    sums += _records_priced(fields, objects)
    return tuple(t / 100 if unit == _CENTS else t for t, unit in sums) + tuple(
        t for t, unit in sums if unit == _CENTS)
