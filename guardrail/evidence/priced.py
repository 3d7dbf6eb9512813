"""What an answer prices: quantities it states times a price it states.

    priced(sentence, n, anchored)    "20 skeins of Foxglove and 15 of Low Tide at $14 each
                                     come to $490": two or three quantities added, times
                                     one price; "310 grams at $1,800 per kilo come to
                                     $558": a quantity in grams, millilitres or metres
                                     times a price per kilo, litre or kilometre; "At
                                     $4.10 a head, the work so far comes to $5,908.10":
                                     a key's total over the records times a price

``anchored`` are the sentence's values that the grounding states, so both the
quantities and the price are the tool result's; only the result is worked out.  A price
needs its word ("each", "per", "a", "at"), the result is of the price's sort (the same
currency sign) and exact to its written digits, and few results are tried
(``totals.rarely``), so a changed total seldom passes.
"""

from __future__ import annotations

import itertools
import re
from typing import Sequence

from guardrail.evidence.totals import Column, rarely
from guardrail.evidence.values import CURRENCY_SIGNS, Number, sort_of

_EACH = re.compile(r"\b(?:each|apiece|per|a piece)\b|\bat\s+\S+\s+an?\b", re.I)
_PER_THOUSAND = re.compile(r"\b(?:per|a|an|each|/)\s*(?:kilo(?:gram)?|kg|lit(?:er|re)|l|"
                           r"kilomet(?:er|re)|km)s?\b", re.I)
_SMALL_UNIT = re.compile(r"\s*(?:g|grams?|ml|millilit(?:er|re)s?|m|met(?:er|re)s?)\b", re.I)
_QUANTITIES = 6  # quantities a sum of two or three is looked for among


def priced(sentence: str, n: Number, anchored: Sequence[Number],
           columns: Sequence[Column] = ()) -> bool:
    """``n`` (an amount) is quantities the sentence states, or one key's whole numbers
    added up over the records (``columns``), times a price it states."""
    sort = sort_of(sentence, n)
    if n.hedged or n.percent or sort not in CURRENCY_SIGNS:
        return False
    prices = [m.value for m in anchored if m.start != n.start and not m.percent
              and sort_of(sentence, m) == sort and m.value > 0]
    quantities = [m for m in anchored if m.start != n.start and m.kind in ("number", "count")
                  and not m.percent and sort_of(sentence, m) not in CURRENCY_SIGNS
                  and m.value > 0 and m.value == int(m.value)]
    if not prices or len(quantities) > _QUANTITIES:
        return False
    results: set[float] = set()
    each = bool(_EACH.search(sentence))
    if each:
        values = [q.value for q in quantities]
        sums = {sum(c) for k in (2, 3) for c in itertools.combinations(values, k)}
        results |= {s * p for s in sums for p in prices}
    if _PER_THOUSAND.search(sentence):
        small = [q.value for q in quantities if _SMALL_UNIT.match(sentence, q.end)]
        results |= {q * p / 1000 for q in small for p in prices}
    totals = {sum(c.values) * p for c in columns if len(c.values) >= 2 and all(
        v > 0 and v == int(v) for v in c.values) for p in prices} if each else set()
    return rarely(n, results) or rarely(n, totals)  # "at $4.10 a head" over the records
