"""Two values a sentence names by their keys, apart; a record's few amounts, added.

    named_apart(sentence, n, fields, stems)   ``n`` is how far apart the values of two
                                              fields are, each named by all of its key's
                                              words ("The difference between the upper and
                                              lower water levels was 2.22 metres" for
                                              ``water_level_upper_m: 2.84`` and
                                              ``water_level_lower_m: 0.62``)

A grounding of many numbers holds nearly any small difference of two of them
(arithmetic.py), so the rules there count a difference only with operands the sentence
states or a record it is about.  Here the sentence names the two keys themselves, and
the fields it names so wholly are few: at most ``_NAMED`` of them, one number each,
exact to the written digits in the keys' unit or the one written after ``n``.

    billed(fields), a_bill(n, about, bills)
                     per record, its two to four amounts of money in one unit added ("his
                     $39 bill" for ``labour_cents: 3000`` and ``parts_cents: 900``), where
                     none of its keys holds a total already (the total payable is stated,
                     and a fee added to it would pass as one)
"""

from __future__ import annotations

import itertools
import re
from typing import Collection, Sequence

from guardrail.evidence import units
from guardrail.evidence.field import MONEY_KEY, Field
from guardrail.evidence.stored import names_cents
from guardrail.evidence.keys import has
from guardrail.evidence.values import Number, numbers

_APART = re.compile(r"\b(?:difference|gap|apart|between|more than|less than|higher than|"
                    r"lower than|above|below)\b", re.I)
_NAMED = 4  # fields named wholly, at most (six differences)


def named_apart(sentence: str, n: Number, fields: Sequence[Field], stems: Collection[str]
                ) -> bool:
    if n.kind != "number" or n.percent or not _APART.search(sentence):
        return False
    said = units.unit_after(sentence, n)
    named = []
    for f in fields:
        if f.flag is None and not f.listed and len(f.key) >= 2 and all(has(k, stems)
                                                                      for k in f.key):
            nums = [m.value for m in numbers(f.value) if m.kind == "number"]
            if len(nums) == 1:
                held = f.unit
                if said and held and said.dim != held.dim:
                    continue
                named.append(held.to(nums[0], said) if said and held else nums[0])
    if not 2 <= len(named) <= _NAMED:
        return False
    return any(abs(abs(a - b) - n.value) <= max(n.precision, 1e-9)
               for a, b in itertools.combinations(named, 2))


_TOTAL_KEY = re.compile(r"(?<![a-z])(?:total|subtotal|balance|due|owed|owing|outstanding|net|"
                        r"gross|paid|payable|sum)(?![a-z])")
_AMOUNTS = range(2, 5)


def billed(fields: Sequence[Field]) -> dict[int, tuple[float, ...]]:
    by_record: dict[int, dict[bool, list[float]]] = {}
    totalled: set[int] = set()
    for f in fields:
        if f.record < 0 or f.flag is not None or f.listed or not MONEY_KEY.search(f.name):
            continue
        if _TOTAL_KEY.search(f.name):
            totalled.add(f.record)
        nums = [m.value for m in numbers(f.value) if m.kind == "number"]
        if len(nums) == 1:
            by_record.setdefault(f.record, {}).setdefault(names_cents(f.name), []).append(nums[0])
    return {r: tuple(sum(v) / 100 if cents else sum(v) for cents, v in units_of.items()
                     if len(v) in _AMOUNTS)
            for r, units_of in by_record.items() if r not in totalled}


def a_bill(n: Number, about: Collection[int], bills: dict[int, tuple[float, ...]]) -> bool:
    """``n`` is the amounts of one of the (at most three) records it is about, added."""
    return len(about) <= 3 and any(abs(v - n.value) <= n.precision
                                   for r in about for v in bills.get(r, ()))
