"""The amounts of the few records a sentence names, added up and said otherwise.

    named_sum(sentence, missing, about, numeric)  "The child seat and the toll pass add
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

from guardrail.evidence.columns import Numeric, lines
from guardrail.evidence.field import MONEY_KEY
from guardrail.evidence.misadded import written
from guardrail.evidence.resummed import OTHER, a_rate
from guardrail.evidence.stored import names_cents
from guardrail.evidence.totals import LINE
from guardrail.evidence.values import CURRENCY_SIGNS, Number, sort_of

NEAR = 0.1
"""How far off the sum of the named records' amounts a total said of them may be and
still be read as that sum said wrongly."""

_TOGETHER = re.compile(r"\b(?:together|between them|combined|altogether|all told|in all|"
                       r"add(?:s|ed)? up|sum)\b", re.I)


def named_sum(sentence: str, missing: Sequence[Number], about: Optional[Collection[int]],
              numeric: Numeric) -> Optional[str]:
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
    sums = _amounts(about, numeric)
    if not sums or any(abs(sum(p) - n.value) <= n.precision for p in sums):
        return None
    parts = min(sums, key=lambda p: abs(sum(p) - n.value))
    total = sum(parts)
    if not 0 < abs(n.value - total) <= NEAR * total:
        return None
    return " + ".join(map(written, parts)) + f" = {written(round(total, 2))}"


def _amounts(about: Collection[int], numeric: Numeric) -> list[list[float]]:
    """Per money key that every record of ``about`` holds, and per line total of a money
    amount each (columns.lines: ``qty x unit price cents``), those records' amounts in
    whole units, in record order."""
    out = []
    for key, held in {**numeric, **lines(numeric)}.items():
        amount = key.rpartition(LINE)[2].lower()
        if MONEY_KEY.search(amount) and set(about) <= held.keys():
            scale = 0.01 if names_cents(amount) else 1.0
            out.append([round(held[r] * scale, 2) for r in sorted(about)])
    return out
