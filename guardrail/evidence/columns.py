"""A tool result's numbers by key: what totals over its records add up.

    by_key(fields)                  per key, each record's one number, and the records
                                    holding each short value in words
    columns_of(numeric)             each key's numbers over the records (a key in cents
                                    also in units), and line totals: a quantity times an
                                    amount each (``qty`` x ``unit_price_cents``)
    groups(numeric, shared)         one key added up over the records that share a value
                                    of another ("charity: Doctors Without Borders"), for
                                    the sentences naming it (totals.py, misadded.py)
"""

from __future__ import annotations

import itertools
import re
from typing import Sequence

from guardrail.evidence import units
from guardrail.evidence.stored import names_cents
from guardrail.evidence.totals import LINE, QUANTITY, Column, Group
from guardrail.evidence.values import Number, numbers

_NO = frozenset({" no"})  # the records a yes/no key holds no for: no sentence's words
Numeric = dict[str, dict[int, float]]   # key -> record -> its one number
Shared = dict[str, dict[frozenset[str], set[int]]]   # key -> value's words -> records


def by_key(fields: Sequence) -> tuple[Numeric, Shared]:
    """One pass over a tool result's ``Field``s (field.py): per key, each record's one
    number, and the records holding each short value in words (a yes/no key's yes: the
    key's own words)."""
    numeric: Numeric = {}
    shared: Shared = {}
    for f in fields:
        key = f.path.rsplit(" > ", 1)[-1]
        if f.flag is not None and f.record >= 0 and not f.listed:
            # a yes/no key names the records it holds yes for ("the four stations that
            # are renting": ``renting: yes``); those holding no, no words name
            shared.setdefault(key, {}).setdefault(f.key if f.flag else _NO, set()).add(
                f.record)
        if f.record < 0 or f.listed or f.flag is not None or f.values.dates:
            continue
        nums = [m for m in numbers(f.value) if m.kind == "number"]
        if len(nums) == 1:
            numeric.setdefault(key, {})[f.record] = nums[0].value
        words = f.words if not nums else _beside(f.value, nums, f.words)
        if len(nums) <= 1 and words and len(f.value.split()) <= 5:
            shared.setdefault(key, {}).setdefault(words, set()).add(f.record)
    return numeric, shared


def _beside(value: str, nums: Sequence[Number], stems: frozenset[str]) -> frozenset[str]:
    """The stems of the words a value holds besides its number and unit: "snooker" of
    "12 ft snooker", which names the records of that kind as "pool" names "7 ft pool"."""
    left = re.findall(r"[a-z]+", units.without_units(value, nums).lower())
    return frozenset(s for s in stems if any(w.startswith(s) for w in left))


_EACH = frozenset({"each", "unit", "per", "apiece", "price"})
_PERIODS = {"hourly": "hours", "daily": "days", "nightly": "nights", "weekly": "weeks",
            "monthly": "months", "yearly": "years", "annual": "years"}  # rate x ``weeks``


def columns_of(numeric: Numeric) -> tuple[Column, ...]:
    """The numbers of each key that two records or more hold, one per record (a key in
    cents also in units), and the records' line totals (``lines``): what a total over
    records adds up."""
    out = []
    for key, per_record in {**numeric, **lines(numeric)}.items():
        if len(per_record) >= 2:
            out.append(Column(key, tuple(per_record.values())))
            if names_cents(key):
                out.append(Column(key, tuple(v / 100 for v in per_record.values())))
    return tuple(out)


def lines(numeric: Numeric) -> Numeric:
    """Where records state a quantity (``qty``; a plural's whole numbers, ``bowls``) and
    an amount for each, their products, each record's line total ("a combined catalogue
    value of $2,030" over ``qty`` and ``value each usd``; ``weeks`` and ``weekly rate
    cents``), keyed "<quantity key> x <amount key>"."""
    out: Numeric = {}
    # ``cost per kg``: by ``kg``; ``price per skein``: by ``skeins``, not ``skein weight g``
    rates = {e: r for e in numeric if (r := e.lower().partition(" per ")[2].split()[:1])}
    counting = {e: [k for k in numeric if k.lower() in (r[0], r[0] + "s")]
                for e, r in rates.items()}
    for qty, each in itertools.permutations(numeric, 2):
        rate, counted = rates.get(each), counting.get(each)
        by_rate = rate and (qty in counted if counted else rate[0] in qty.lower().split()) \
            or any(_PERIODS.get(w) in qty.lower().split() for w in each.lower().split())
        counts = re.fullmatch(r"[a-z]{3,}[^s]s", qty.lower()) and all(
            v.is_integer() and v > 0 for v in numeric[qty].values())
        if (QUANTITY.isdisjoint(qty.lower().split()) and not counts
                or _EACH.isdisjoint(each.lower().split())) and not by_rate:
            continue
        records = numeric[qty].keys() & numeric[each].keys()
        if len(records) >= 2:
            out[f"{qty}{LINE}{each}"] = {r: numeric[qty][r] * numeric[each][r]
                                         for r in sorted(records)}
    return out


def groups(numeric: Numeric, shared: Shared) -> tuple[Group, ...]:
    """For each value in words that two records or more share, of a key whose value
    differs between records (``charity``, ``ticker``, ``bike type``), the total of each
    number key over those records (``by_key`` read both), named by the value's words
    that not every value of the key holds ("Lune" for "River Lune" beside "River Esk"),
    and of each line total (``lines``: "Drinks account for CHF 47.00" over the lines of
    ``category: drink``)."""
    out, numeric = [], {**numeric, **lines(numeric)}
    for key, by_value in shared.items():
        if len(by_value) < 2:
            continue  # one value in every record names no group
        flag, common = _NO in by_value, frozenset.intersection(*by_value)
        for named, records in ((v - common or v, r) for v, r in by_value.items()):
            for other, per_record in numeric.items() if len(records) >= 2 else ():
                if records <= per_record.keys():
                    total = sum(per_record[r] for r in records)
                    out.append(Group(named, Column(other, (total,)), len(records), flag))
                    if names_cents(other):
                        out.append(Group(named, Column(other, (total / 100,)), len(records),
                                         flag))
    return tuple(out)
