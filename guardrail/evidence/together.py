"""The amounts of the few records a sentence names, added up and said otherwise.

    named_sum(sentence, missing, about, fields)   "The child seat and the toll pass add
                                                  another $83.92 between them" where the
                                                  two extras' ``total_cents`` are 5596 and
                                                  2396: "55.96 + 23.96 = 79.92"

A sentence that names two to four records of a list and says what they come to
together adds up one amount of each: a money key every one of them holds, or its
quantity times its price.  A right sum is found where the values are read
(arithmetic.py); a sum that none of these gives, within ``NEAR`` of one of them, is that
sum worked out wrongly.  Further off, or where the sentence names anything else that
takes part (a fee, a discount, "if"), it may be some other total, and is left alone.
"""

from __future__ import annotations

import re
from typing import Collection, Optional, Sequence

from guardrail.evidence.field import MONEY_KEY, Field
from guardrail.evidence.misadded import written
from guardrail.evidence.resummed import OTHER, a_rate
from guardrail.evidence.stored import names_cents
from guardrail.evidence.values import CURRENCY_SIGNS, Number, numbers, sort_of

NEAR = 0.1
"""How far off the sum of the named records' amounts a total said of them may be and
still be read as that sum said wrongly."""

_TOGETHER = re.compile(r"\b(?:together|between them|combined|altogether|all told|in all|"
                       r"add(?:s|ed)? up|sum)\b", re.I)
_QUANTITY = re.compile(r"(?<![a-z])(?:qty|quantity|count|units|number)(?![a-z])")
_PER_UNIT = re.compile(r"(?<![a-z])(?:unit|each|per|price)(?![a-z])")


def named_sum(sentence: str, missing: Sequence[Number], about: Optional[Collection[int]],
              fields: Sequence[Field]) -> Optional[str]:
    """The sum, as an equation, of the amounts of the records the sentence is about
    (``about``, two to four of them) that a money value it says they come to together
    misses by more than its written digits and at most ``NEAR``; None where one of those
    sums gives it, or it says no such total."""
    if not about or not 2 <= len(about) <= 4 or not _TOGETHER.search(sentence) \
            or OTHER.search(sentence):
        return None
    said = [n for n in missing if n.kind == "number" and not n.percent and n.value > 0
            and not n.hedged and sort_of(sentence, n) in CURRENCY_SIGNS
            and not a_rate(sentence, n)]
    if len(said) != 1:
        return None
    (n,) = said
    sums = [parts for parts in _amounts(about, fields) if len(parts) == len(about)]
    if not sums or any(abs(sum(p) - n.value) <= n.precision for p in sums):
        return None
    parts = min(sums, key=lambda p: abs(sum(p) - n.value))
    total = sum(parts)
    if not 0 < abs(n.value - total) <= NEAR * total:
        return None
    return " + ".join(map(written, parts)) + f" = {written(round(total, 2))}"


def _amounts(about: Collection[int], fields: Sequence[Field]) -> list[list[float]]:
    """Per money key, the amount each record of ``about`` holds under it (in whole
    units), in record order; and each record's quantity times its price per unit."""
    by_key: dict[str, dict[int, float]] = {}
    counts: dict[int, float] = {}
    for f in fields:
        held = [m.value for m in numbers(f.value) if m.kind == "number"]
        if f.record not in about or f.listed or f.flag is not None or len(held) != 1:
            continue
        name, v = f.name.lower().replace("_", " "), held[0]
        if MONEY_KEY.search(name):
            by_key.setdefault(name, {})[f.record] = v / 100 if names_cents(name) else v
        elif _QUANTITY.search(name) and v == int(v):
            counts[f.record] = v
    out = [[amounts[r] for r in sorted(amounts)] for amounts in by_key.values()]
    for name, amounts in by_key.items():
        if _PER_UNIT.search(name) and set(amounts) <= set(counts):
            out.append([round(amounts[r] * counts[r], 2) for r in sorted(amounts)])
    return out
