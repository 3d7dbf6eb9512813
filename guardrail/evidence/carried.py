"""Values an answer carries from one sentence to the next: totals kept in steps.

    carried(sentence, n, said, before)   ``n`` is a value said earlier in the answer plus
                                         or less the values the sentence states, or the
                                         sum of some values said earlier

Assistants add up in steps: "The three lines come to $36.00. With the $4.50 handling
fee, the order totals $40.50."  "$40.50" is in no tool result and is not worked out
from it alone: it is the $36.00 of the sentence before plus a fee this one states.  A
value said earlier is checked where it is said; here it is only an operand, so a
changed earlier total is still stopped in its own sentence.  A changed value seldom
equals one of the few results tried: their number times the width of the written
digits is at most ``CHANCE`` of the value, and the sentence must say it totals or
leaves something ("comes to", "bringing", "so", "left").  Rates said earlier ("$14
each", "at $6 per kilo") are no amounts and are not added.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Sequence

from guardrail.evidence.totals import CHANCE
from guardrail.evidence.values import Number, numbers, sort_of

CUE = re.compile(r"\b(?:total|totals|totalling|totaling|subtotal|comes? to|brings?|bringing|"
                 r"puts?|makes?|leaves?|leaving|left|remaining|balance|adds? up|in all|"
                 r"altogether|so)\b", re.I)
_RATE_AFTER = re.compile(r"\s*(?:each|apiece|per\b|an?\s+(?!total\b))", re.I)
_RATE_BEFORE = re.compile(r"\bat\s+$", re.I)
_SECOND = re.compile(r"\s*[A-Za-z]+\s+([A-Za-z]+)")
RECENT = 8
"""The latest amounts of the answer so far that are tried (2^8 sums of some of them)."""


@functools.lru_cache(maxsize=256)  # the answer so far, read for each value of a sentence
def amounts_of(before: str, sort: str) -> tuple[float, ...]:
    """The amounts of ``sort`` said in ``before``, the latest ``RECENT``, rates left out."""
    out = [m.value for m in numbers(before) if m.kind == "number" and not m.percent
           and not m.hedged and m.value > 0 and sort_of(before, m) == sort
           and not _RATE_AFTER.match(before, m.end)
           and not _RATE_BEFORE.search(before[max(0, m.start - 4):m.start])]
    return tuple(out[-RECENT:])


def carried(sentence: str, n: Number, said: Sequence[Number], before: str) -> bool:
    """``n`` is an amount said earlier in the answer (``before``), or the sum of some,
    plus or less the values of its sort the sentence states ("With $28 for shipping,
    the order totals $1,144.25"; "You've already paid a $150 deposit, so $1,341.50 is
    left"; "$18.00 ... $18.00 ... With the $4.50 handling fee, the order totals
    $40.50"), or the sum of some amounts said earlier ("That puts the yarn subtotal at
    $1,175"), or a share the sentence states of one, or one less or plus that share ("the
    15% resident discount would bring it to $306").  Shares and sums of one amount are
    tried first, then sums of two, and so on, while the results tried stay under the
    bound."""
    if n.kind != "number" or n.percent or n.hedged or n.value <= 0 \
            or not before or not CUE.search(sentence):
        return False
    # what it counts, or past a word that describes it ("128.2 certified acres")
    sorts = [sort_of(sentence, n), *(m[1].lower() for m in [_SECOND.match(sentence, n.end)] if m)]
    sort, earlier = next(((s, e) for s in sorts if s and (e := amounts_of(before, s))), ("", ()))
    if not earlier:
        return False
    stated = {m.value for m in said if m.start != n.start and not m.percent
              and sort_of(sentence, m) == sort}
    added = {sum(stated), *stated} if stated else {0.0}
    shares = [m.value / 100 for m in said if m.percent and 0 < m.value < 100]
    width = max(2 * n.precision, 1e-9)
    # a share of one amount, or one less or plus it ("the 15% discount brings it to $306")
    results = {e * f for e in earlier for p in shares for f in (p, 1 - p, 1 + p)}
    for k in range(1, len(earlier) + 1):  # one amount said earlier, then sums of two, ...
        results |= {sum(c) + sign * a for c in itertools.combinations(earlier, k)
                    for a in added for sign in (1, -1) if a or k > 1}
        if len(results) * width > CHANCE * n.value:
            return False  # the results tried so far, not only this round, count
        if any(abs(r - n.value) <= n.precision for r in results):
            return True
    return False
