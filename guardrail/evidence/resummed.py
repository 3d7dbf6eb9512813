"""Totals and shares of the amounts the sentence before states, said otherwise.

    resummed(sentence, before, missing, nums)   the first of the three below that reads one
    pointed_back(sentence, before, missing, nums)
                                                "That brings the total bill to $98." after
                                                "... which is $70, and the four adults pay
                                                $4.50 each, which is $18.": 70 + 18 = 88
    stepped(sentence, before, missing, nums)    "Once the $45.00 delivery fee is included,
                                                the total comes to $259.00." after "...
                                                that adds up to $204.00": 204 + 45 = 249
    misshared(sentence, before, missing, nums)  "Split across your party of four, that
                                                works out to $12 per person." after "...
                                                came to $42": 42 / 4 = 10.50, no amount
                                                said before nor a sum of some giving $12

Assistants add up in steps and then point back: "That brings the total to ...", "Split
four ways, that's ... each".  The value is in no tool result, and the sentence states
none of its operands, so neither the lookups nor a sentence's own arithmetic
(selfcheck.py) can tell a right one from a wrong one; carried.py finds it where it is a
sum of amounts said earlier.  Here the operands are the sentence before's: where the
sentence points back at it with a total and the amounts it states add up to something
else, or it shares an amount out over a count it states and no amount said before gives
its share, the value is worked out wrongly.  Each reading declines where the sentence
or the one before names something else that takes part (a fee, a discount, "less"), and
where an amount said earlier still could: only values no sum of them gives are read.
A step on from an amount said before (a fee, a tax or a discount the sentence states
added to or taken off it) is read only within ``STEP`` of what it gives: a total further
off has more in it than the one step.
"""

from __future__ import annotations

import itertools
import re
from typing import Optional, Sequence

from guardrail.evidence.carried import amounts_of
from guardrail.evidence.misadded import written
from guardrail.evidence.referred import last_sentence
from guardrail.evidence.selfcheck import HEDGED
from guardrail.evidence.values import Number, sort_of

NEAR = 0.25
"""How far off the sum of the amounts before a total said of them may be and still be
read as that sum said wrongly; further off, it is read as some other total."""

STEP = 0.1
"""How far off one fee, tax or discount added to an amount said before a total said of
them may be and still be read as that step worked wrongly."""

# the sentence opens pointing back at what was said: "That brings ...", "So together those ..."
_BACK = re.compile(r"^\W*(?:(?:so|and|altogether|together|in total|in all|all in|all told|combined)"
                   r",?\s+)?(?:that|this|these|those)\b", re.I)
_TOTAL = re.compile(r"\b(?:total\w*|subtotal|comes? to|came to|brings?|bringing|puts?|makes?|"
                    r"adds? up|in all|altogether|combined|all told)\b", re.I)
# anything else that takes part: a fee, a discount, a share, what is left
OTHER = re.compile(r"\b(?:plus|minus|less|off|after|before|without|excluding|includ\w*|"
                   r"discount\w*|sav\w*|refund\w*|credit\w*|deduct\w*|deposit\w*|"
                   r"fees?|tax\w*|vat|tips?|shipping|delivery|postage|surcharge|leav\w*|"
                   r"left|remain\w*|balance|already|if)\b|%",
                   re.I)
# an amount for each of some people or things, right after the value
_EACH = re.compile(r"\s*(?:per\s+[a-z]+|each|apiece|a\s+(?:head|person|piece))\b", re.I)
# what the one amount a step states does to the total: "the $45.00 delivery fee", "the 5%
# discount"; a step on a part ("the 10% discount on tuition", "not the parking") declines
_ADDS = re.compile(r"\b(?:fees?|charges?|tax\w*|vat|tips?|gratuity|shipping|delivery|postage|"
                   r"surcharges?|insurance|plus|added|adding|on top)\b", re.I)
_TAKES = re.compile(r"\b(?:discount\w*|off|credit\w*|refund\w*|deduct\w*|less|minus|rebate|"
                    r"coupon|voucher|deposit)\b", re.I)
_PART = re.compile(r"\b(?:not|except|only|excluding|but|each|per)\b|"
                   r"\b(?:discount|off|fee|surcharge|tax)\s+(?:on|for|of)\b(?!\s+top)", re.I)
_SPLIT = re.compile(r"\b(?:split|divided|shared|spread)\b", re.I)
_RATE = re.compile(r"\s*(?:per\b|each\b|apiece\b|an?\s+(?!total\b)[a-z]+|/)", re.I)


def a_rate(sentence: str, n: Number) -> bool:
    return bool(_RATE.match(sentence, n.end))


def resummed(sentence: str, before: str, missing: Sequence[Number],
             nums: Sequence[Number]) -> Optional[str]:
    """What a sentence works out of the amounts said before it and gets wrong, as an
    equation: their total (``pointed_back``), one step on from one (``stepped``), a share
    of them (``misshared``); None where it is right, or may be."""
    return pointed_back(sentence, before, missing, nums) \
        or stepped(sentence, before, missing, nums) or misshared(sentence, before, missing, nums)


def pointed_back(sentence: str, before: str, missing: Sequence[Number],
                 nums: Sequence[Number]) -> Optional[str]:
    """The total a sentence pointing back at the one before gives of its amounts and gets
    wrong, as an equation ("70 + 18 = 88"); None where it is right, or may be."""
    if not before or not _BACK.match(sentence) or not _TOTAL.search(sentence) \
            or OTHER.search(sentence):
        return None
    prev = last_sentence(before)
    for n in missing:
        sort = sort_of(sentence, n)
        if n.kind != "number" or n.percent or n.value <= 0 or a_rate(sentence, n) or any(
                m.start != n.start and sort_of(sentence, m) == sort and not a_rate(sentence, m)
                for m in nums):
            continue  # another amount of its sort takes part
        parts = amounts_of(prev, sort)
        if len(parts) < 2 or OTHER.search(prev):
            continue
        total = sum(parts)
        if not _near(n, total) or _any_sum(n, total, amounts_of(before, sort), parts):
            continue
        return " + ".join(map(written, parts)) + f" = {written(total)}"
    return None


def _near(n: Number, total: float) -> bool:
    """``n`` is not ``total`` within its written precision (twice it, or ``HEDGED``, said
    hedged), and within ``NEAR`` of it."""
    tol = max(2 * n.precision, HEDGED * total) if n.hedged else n.precision
    return tol < abs(n.value - total) <= NEAR * total


def _any_sum(n: Number, total: float, earlier: Sequence[float], parts: Sequence[float]
             ) -> bool:
    """``n`` is the sum of the sentence before's amounts and one or two said earlier, or of
    some of them: what it points back at may reach further back."""
    rest = list(earlier)
    for p in parts:
        if p in rest:
            rest.remove(p)
    sums = {total + sum(c) for k in (1, 2) for c in itertools.combinations(rest, k)}
    sums |= {sum(c) for k in range(1, len(earlier) + 1)
             for c in itertools.combinations(earlier[-6:], k)}
    return any(abs(s - n.value) <= max(n.precision, 2 * n.precision * n.hedged) for s in sums)


def stepped(sentence: str, before: str, missing: Sequence[Number],
            nums: Sequence[Number]) -> Optional[str]:
    """A total one fee, tax or discount on from one of the latest amounts said before,
    where the sentence states that step and nothing else ("With 8.875% sales tax added,
    the total comes to $485.38" after "... comes to $455.00": 455 + 8.875% = 495.38), off
    by more than its written digits and at most ``STEP``; None where no such step is
    stated, or some sum of the amounts said before, with or without it, gives the value."""
    if not before or not _TOTAL.search(sentence) or _PART.search(sentence):
        return None
    stated = [m for m in nums if m.kind == "number"]
    if len(stated) != 2 or stated[0].value <= 0:
        return None
    step, n = stated
    if n not in missing or n.percent or n.value <= 0 or a_rate(sentence, n) \
            or not step.percent and sort_of(sentence, step) != sort_of(sentence, n):
        return None
    said = " ".join(sentence[step.end:n.start].split()[:3])  # "fee is included, the"
    sign = 1 if _ADDS.search(said) else -1 if _TAKES.search(said) else 0
    earlier = amounts_of(before, sort_of(sentence, n))
    if not sign or not earlier:
        return None

    def on(base: float) -> float:
        return base * (1 + sign * step.value / 100) if step.percent else base + sign * step.value

    base = min(earlier[-3:], key=lambda b: abs(on(b) - n.value))
    total = on(base)
    tol = max(2 * n.precision, HEDGED * total) if n.hedged else n.precision
    if not tol < abs(n.value - total) <= STEP * total or any(
            abs(r - n.value) <= tol for s in _sums(earlier) for r in (s, on(s))):
        return None
    op = "+" if sign > 0 else "-"
    return f"{written(base)} {op} {step.value:g}{'%' if step.percent else ''} " \
        f"= {written(round(total, 2))}"


def misshared(sentence: str, before: str, missing: Sequence[Number],
              nums: Sequence[Number]) -> Optional[str]:
    """An amount for each of the count a sentence states, shared out of an amount it
    states or of the amounts said before it, that none of them, nor any sum of some of
    them, gives ("42 / 4 = 10.50"); None where one does, or the sentence shares nothing
    out."""
    if not _SPLIT.search(sentence) or OTHER.search(sentence):
        return None
    for n in missing:
        sort = sort_of(sentence, n)
        if n.kind != "number" or n.percent or n.value <= 0 or not _EACH.match(sentence, n.end):
            continue
        counts = [m for m in nums if m.start != n.start and not m.percent
                  and sort_of(sentence, m) != sort and m.value == int(m.value)]
        if len(counts) != 1 or counts[0].value < 2:
            continue
        count = counts[0].value
        wholes = [m.value for m in nums if m.start != n.start and sort_of(sentence, m) == sort
                  and not a_rate(sentence, m)] or list(amounts_of(before, sort))
        if not wholes:
            continue
        tol = max(2 * n.precision, HEDGED * n.value) if n.hedged else n.precision
        if all(abs(w / count - n.value) > tol + 0.005 for w in _sums(wholes)):
            w = max(wholes)  # the whole most likely shared out
            return f"{written(w)} / {written(count)} = {written(round(w / count, 2))}"
    return None


def _sums(amounts: Sequence[float]) -> set[float]:
    """What may be shared out: one of the latest amounts said, or the sum of some."""
    latest = amounts[-6:]
    return {sum(c) for k in range(1, len(latest) + 1) for c in itertools.combinations(latest, k)}

