"""A sentence's own arithmetic, checked against itself: values it states and works out
of each other in one breath, whatever the grounding holds.

    miscalculated(sentence, missing, nums)   "2,240 kg = 2.24 t" where the sentence gives
                                             a value as worked out of others it states
                                             and the arithmetic does not hold; None else
    misworked(sentence, missing, nums)       "465 - 310 = 155": a change between the two
                                             values it states, from one to the other

Assistants restate and combine the values they read: "2,240 kg, or about 2.2 tonnes",
"three payments of $31.50 each, totalling $94.50", "241 of the 375 uses, or about 64%",
"it comes to $677.35, and with the $15.00 delivery charge the order totals $692.35".
Where such a worked-out value is one the grounding lacks, the value lookups cannot tell a
right one from a wrong one (claims.works_out marks it).  But here the operands stand in
the sentence beside the result, so the result is checked: a quantity said again in
another unit of its dimension, a count times an amount each, a part of a whole as a
percentage, an amount added to or taken off a subtotal, a difference, a change as a
percentage of what it changed from.  Each reading asks the sentence's words to say which
value is worked out of which, and declines where another value could take part ("plus
the $30 room fee") or the values are alternatives ("$190 a day or $800 a week").  A
value is miscalculated outside its written precision and its operands' (a hedged one,
"about": twice its precision or ``HEDGED``; one said again in another unit:
``ROUNDED``).  Measured on hand-written tool turns and on prose (docs/model-card.md, "A
sentence's own arithmetic").
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from guardrail.evidence import units
from guardrail.evidence.misadded import written
from guardrail.evidence.values import CURRENCY_SIGNS, Number, sort_of, word_after
from guardrail.evidence.words import stem

ROUNDED = 0.1
"""How far a value said again in another unit may be off ("33 cm (12 inches)"): the
errors read here are gross ("2,240 kg, or about 22.4 tonnes")."""
HEDGED = 0.03
"""The share of a hedged value ("about", "roughly") its worked-out value may be off, beyond
twice its written precision ("about 80 °F" for 78.1 °F)."""
_HEDGES = "about|roughly|around|approximately|nearly|almost|some"
_APPROX = rf"(?:(?:{_HEDGES}|just) )?"
# the same quantity said again: "2,240 kg, or about 2.2 tonnes", "25.6 °C (78 °F)"
_SAID_AGAIN = r"(?:or|which is|which comes to|that's|that is|i\.e\.,?|equal to|the equivalent of)"
# right after the value's unit: "2,240 kg, or about 2.2 tonnes", "610 feet (190 m)"
_AGAIN = re.compile(rf"\s*(?:\(\s*|,\s*{_SAID_AGAIN}\s+|(?:or|which is|that's|i\.e\.,?)\s+"
                    rf"(?=(?:{_HEDGES}|just) ))"
                    rf"{_APPROX}", re.I)  # "30 days or 30 years": two values, not one
_HEDGE = rf"(?:{_HEDGES}) "  # alone after words about it: "96,300 kg of ..., roughly 96 t"
# after words about it: "56,530 kg of material in the week of March 3, which is about 56 t"
_LATER = re.compile(rf"[^();]*,\s*(?:{_SAID_AGAIN}\s+{_APPROX}|{_HEDGE})", re.I)
_RANGE_END = re.compile(r"(?:\d\s*(?:to|-|–|—|and|by|x|×)\s*(?:about |roughly |around )?|"
                        r"\d\s*[a-z]{1,3}\.?\s*,?\s*|[\d⁄/]\s*)$", re.I)
_UNSURE = {"gal", "oz"}  # US or imperial gallons, ounces of mass or of volume
_RANGE_START = re.compile(r"\s*(?:to|-|–|—)\s*\d")
# an amount for each of some things: "$31.50 each", "$12 a tank", "$65 an hour"
_EACH = re.compile(r"\s*(?:each|apiece|a piece|per [a-z]+|an? (?!total|further|extra|"
                   r"additional|combined|sum|one|few|couple|bit)[a-z]+)\b", re.I)
# the whole shared out, after it and its count: "2,250 kg across 50 holes, an average of 45 kg"
_SHARE_EACH = re.compile(rf",\s*(?:an average of|averaging|or|that's|which is|which works out to|"
                         rf"working out to|which comes to)\s+{_APPROX}[$€£¥]?$", re.I)
# the whole: "totalling $94.50", "which comes to $3,480", "for a total of"
_WHOLE = re.compile(r"\b(?:total(?:s|led|ed|ling|ing)?|comes? to|came to|coming to|"
                    r"adds? up to|works? out (?:to|at)|in all|altogether|all told|"
                    r"which is|that's|that is|making|bringing it to|cost(?:s|ing)?|"
                    r"for all|combined)\b[^$€£¥\d]*$", re.I)
# another amount may take part: a fee, a tax, a discount (the sum is not the count's)
_OTHER = re.compile(r"\b(?:plus|with|without|including|includ\w*|excluding|after|before|"
                    r"minus|less|off|discount\w*|fees?|tax\w*|vat|shipping|delivery|"
                    r"postage|deposit|tips?|surcharge|credit\w*|refund\w*|on top|extra|"
                    r"except|besides|beyond|first|then|remaining|rest|another|"
                    r"other|per cent|percent|each of|min(?:imum)?|max(?:imum)?|up to|"
                    r"more|less|over|under|above|below|if|could|or)\b|%", re.I)
# a part of a whole, and that part as a percentage: "241 of the 375 uses, or about 64%"
_PART_OF = re.compile(r"^\s*(?:[a-z]+\s+)?(?:of|out of)\s+(?:the\s+|its\s+|their\s+|your\s+|"
                      r"his\s+|her\s+|all\s+)?$", re.I)
_AS_SHARE = re.compile(rf"^[^\d$€£¥;]*?(?:,\s*(?:or|which is|that's|that is|making)\s+|"
                       rf"\(\s*){_APPROX}$", re.I)
# a subtotal, then one amount added or taken off, then the total:
# "comes to $677.35, and with the $15.00 delivery charge the order totals $692.35"
_ADJUST = re.compile(r"^[^\d$€£¥;]*?\b(?:and|but|so)?\s*(?:with|after|plus|minus|less|"
                     r"adding|taking off|subtracting|deducting)\b(?:\s+(?:the|your|a|an|"
                     r"its|their))?\s*$", re.I)
_RESULT = re.compile(r"\b(?:totals?|total is|total comes to|comes? to|owe|owing|due|"
                     r"pay|payable|balance|would be|will be|is|are|leaves?|leaving)\b"
                     rf"[^\d$€£¥;]*?{_APPROX}$", re.I)


def _money(sentence: str, n: Number) -> bool:
    return n.kind == "number" and not n.percent and sort_of(sentence, n) in CURRENCY_SIGNS


def _off(worked: float, said: Number, slack: float = 0.0, rounding: float = 0.0) -> bool:
    """``said`` is not ``worked`` within its written precision plus ``slack`` (the
    operands' rounding) or the share ``rounding`` of it; said hedged, within twice its
    precision or ``HEDGED`` too."""
    tol = max(said.precision + slack, rounding * abs(worked))
    if said.hedged:
        tol = max(tol, 2 * said.precision + slack, HEDGED * abs(worked))
    return abs(worked - said.value) > tol


def _converted(sentence: str, nums: Sequence[Number], missing: set[int]) -> Optional[str]:
    """The same quantity said again in another unit of its dimension, wrongly: "2,240 kg,
    or about 22.4 tonnes" ("2,240 kg = 2.24 t"); "91 months, or about 6 years and 4
    months".  Said again right after it ("610 feet (190 m)", rounded as written) or
    after words about it (", which is"); no verdict on ranges, a value in two units
    ("5 feet 4 inches") but where "and" joins them, or a temperature's change."""
    quantities = [(n, u) for n in nums if (u := units.unit_after(sentence, n)) is not None
                  and not u.ambiguous and u.name not in _UNSURE]
    for i, ((a, ua), (b, ub)) in enumerate(zip(quantities, quantities[1:])):
        if ua.dim != ub.dim or ua.name == ub.name or not {a.start, b.start} & missing \
                or _declined(sentence, nums, quantities, i):
            continue
        stated = ub.to(_signed(sentence, b), ua)
        nxt = quantities[i + 2] if i + 2 < len(quantities) else None
        if nxt and _joined(sentence, b, ub, nxt[0]):
            if not re.fullmatch(r"\s*[a-z]+,?\s+and\s+", sentence[b.end:nxt[0].start], re.I):
                continue  # "(7 ft 3 in by 4 ft 1 in)"
            stated += nxt[1].to(nxt[0].value, ua)  # "6 years and 4 months"
        slack = abs(ub.to(_rounded(sentence, b), ua) - ub.to(0.0, ua))
        said = Number(stated, b.start, b.end, slack, a.hedged or b.hedged, False)
        value = _signed(sentence, a)
        if not _off(value, said, a.precision, ROUNDED):
            continue
        change = Number(_signed(sentence, b), b.start, b.end, _rounded(sentence, b), said.hedged,
                        False)  # a temperature's change: "risen by 1 °C (about 1.8 °F)"
        if ua.dim != "temperature" or _off(value * ua.factor / ub.factor, change, a.precision,
                                           ROUNDED):
            return f"{written(value)} {ua.name} = {written(ua.to(value, ub))} {ub.name}"
    return None


def _declined(sentence: str, nums: Sequence[Number], quantities, i: int) -> bool:
    """The ``i``-th quantity and the next are no value said again: not said so (", or",
    "which is", "(" right after it), another value between them ("40 kg of flour in 2
    bags, or"), an amount each ("at 750 ml a bottle, that's"; "826.5 kg of feed, about 207
    grams for every egg"), a difference ("which is 23 cm below"), one of several ("520
    bottles of 330 ml, or"), a modifier ("a 2,500-hour lamp"), a range, or a value in two
    units ("5 feet 4 inches (1.63 m)")."""
    (a, _), (b, ub) = quantities[i], quantities[i + 1]
    after_a, after_b = units.unit_end(sentence, a), units.unit_end(sentence, b)
    gap = sentence[after_a:b.start]
    return not (_AGAIN.fullmatch(gap) or _LATER.fullmatch(gap)) \
        or any(n.kind == "number" and a.end <= n.start < b.start for n in nums) \
        or sentence[a.end:a.end + 1] == "-" or bool(_RATE.match(sentence, after_a)) \
        or bool(_RATE.match(sentence, after_b)) \
        or bool(_COMPARED.match(sentence, after_b) or _RANGE_START.match(sentence, b.end)) \
        or bool(_EACH_OF.search(sentence, 0, a.start) or _RANGE_END.search(sentence, 0, a.start)) \
        or re.match(r"\s*\d", sentence[after_b:]) is not None \
        or i > 0 and _joined(sentence, *quantities[i - 1], a) \
        or _restates(quantities[:i], b, ub)


def _rounded(sentence: str, n: Number) -> float:
    """Half a unit of the last figure written that is not a trailing zero: "190" +/- 5,
    "16,000" +/- 500 (values converted in parentheses are rounded so)."""
    digits = re.sub(r"[^\d.]", "", sentence[n.start:n.end])
    if "." in digits or not digits.rstrip("0"):
        return n.precision
    return max(n.precision, 0.5 * 10 ** (len(digits) - len(digits.rstrip("0"))))


def _joined(sentence: str, first: Number, unit, second: Number) -> bool:
    """``second`` goes on the value ``first`` began in a smaller unit: "5 feet 4 inches",
    "6 years and 4 months"."""
    return unit is not None and re.fullmatch(r"\s*-?\s*[a-z°]+\s*,?\s*(?:and\s+)?",
                                             sentence[first.end:second.start], re.I) is not None


_EACH_BEFORE = re.compile(r"\beach\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|costs|was|runs)\s+$", re.I)
_RATE = re.compile(r"\s*(?:(?:a|an|per|each|every|for (?:each|every))\b|/)", re.I)
_COMPARED = re.compile(r"\s*(?:below|above|under|over|short|more|less|fewer|higher|lower|"
                       r"longer|shorter|heavier|lighter|bigger|smaller|up|down|ahead|behind|"
                       r"than|off|too|extra|left|remaining|to go|to spare)\b", re.I)
_EACH_OF = re.compile(r"\d\s+[a-z]+(?:\s+[a-z]+)?\s+of\s+(?:about |roughly |around )?$", re.I)


def _signed(sentence: str, n: Number) -> float:
    """The value with the sign written before it: "minus 12 degrees", "-3 °C"."""
    minus = re.search(r"(?:\bminus\s+|\bnegative\s+|-)$", sentence[max(0, n.start - 9):n.start],
                      re.I)
    return -n.value if minus and n.value > 0 else n.value


def _restates(earlier, b: Number, ub) -> bool:
    """``b`` is an earlier value of its dimension said again (within ``HEDGED``)."""
    return any(u.dim == ub.dim and abs(ub.to(b.value, u) - n.value) <= HEDGED * abs(n.value)
               for n, u in earlier)


def _times_each(sentence: str, nums: Sequence[Number], missing: set[int]) -> Optional[str]:
    """A count times an amount each, said as the whole: "three card payments of $31.50
    each, totalling $104.50" ("3 x 31.50 = 94.50"), "$12 a tank, which is $150 for the
    group's ten tanks".  Only where the sentence states just these three values and names
    nothing else that could take part (a fee, a discount, "more", "or")."""
    amounts = [n for n in nums if n.kind == "number" and not n.percent and _amount(sentence, n)]
    counts = [n for n in nums if n.kind in ("number", "count") and not n.percent
              and n not in amounts]
    if len(amounts) != 2 or len(counts) != 1 or len(nums) != 3 or _OTHER.search(sentence) \
            or _amount(sentence, amounts[0]) != _amount(sentence, amounts[1]):
        return None
    (count,) = counts
    if count.value < 2 or count.value != int(count.value) or count.precision > 0.5:
        return None
    for each, whole in (amounts, amounts[::-1]):
        marker = _EACH.match(sentence, units.unit_end(sentence, each)) or \
            _EACH_BEFORE.search(sentence, 0, each.start)  # "Each class is $32"
        if not marker or not {each.start, whole.start} & missing \
                or marker.start() <= count.start < marker.end() + 4 \
                or _RATE.match(sentence, marker.end()) or not _counts(sentence, count, marker):
            continue
        since = max((n.end for n in nums if n.end <= whole.start), default=0)
        if not (_WHOLE.search(sentence, since, whole.start) or re.fullmatch(
                r"\s*for\s+(?:the\s+|all\s+)?", sentence[whole.end:count.start])
                or whole.start < count.start < each.start and _SHARE_EACH.search(
                    sentence, count.end, each.start)):
            continue
        worked = count.value * each.value
        slack = count.value * each.precision * (1 + each.hedged)
        if _off(worked, whole, slack):
            return f"{written(count.value)} x {written(each.value)} = {written(worked)}"
    return None


def _amount(sentence: str, n: Number) -> Optional[str]:
    """What a value is an amount of: money ("$"), a unit's name ("kg"); None for a count."""
    if _money(sentence, n):
        return sort_of(sentence, n)
    unit = units.unit_after(sentence, n) or units.unit_written(sentence, n)
    return unit.name if unit and not unit.ambiguous else None


def _counts(sentence: str, count: Number, marker: re.Match) -> bool:
    """The count is of what the amount is each of: "$12 a tank" and "ten tanks" (any
    for "each", "apiece"), not "$42 per face" and "four weeks"."""
    per = re.search(r"(?:per|an?)\s+([a-z]+)$", marker[0].strip(), re.I)
    noun = word_after(sentence, count)
    return per is None or not noun or stem(noun) == stem(per[1].lower())


def _share(sentence: str, nums: Sequence[Number], missing: set[int]) -> Optional[str]:
    """A part of a whole the sentence states, as a percentage of it: "241 of the 375
    uses, or about 72%" ("241 / 375 = 64.3%")."""
    for part, whole, pct in zip(nums, nums[1:], nums[2:]):
        if not pct.percent or pct.start not in missing or part.percent or whole.percent \
                or part.kind not in ("number", "count") or whole.kind not in ("number", "count") \
                or not whole.value or part.value > whole.value \
                or not _PART_OF.match(sentence[part.end:whole.start]) \
                or not _AS_SHARE.match(sentence[whole.end:pct.start]) \
                or re.match(r"\s*%?\s*of\b", sentence[pct.end:pct.end + 6]):
            continue
        worked = 100 * part.value / whole.value
        if _off(worked, pct, 100 * part.precision / whole.value):
            return f"{written(part.value)} / {written(whole.value)} = {worked:.1f}%"
    return None


def _adjusted(sentence: str, nums: Sequence[Number], missing: set[int]) -> Optional[str]:
    """A subtotal, one amount added or taken off, and what that leaves: "comes to $677.35,
    and with the $15.00 delivery charge the order totals $697.35" (neither sum nor
    difference: "677.35 + 15 = 692.35")."""
    money = [n for n in nums if _money(sentence, n)]
    if len(money) != 3:
        return None
    a, b, c = money
    if _RATE.match(sentence, a.end) or any(a.end <= n.start < c.start and n not in money
                                           for n in nums):
        return None  # another value takes part: "$50 deposit on 2 of the chairs"
    if c.start not in missing or not _WHOLE.search(sentence, 0, a.start) \
            or not _ADJUST.match(sentence[a.end:b.start]) \
            or not _RESULT.search(sentence, b.end, c.start):
        return None
    slack = a.precision + b.precision
    if not _off(a.value + b.value, c, slack) or not _off(a.value - b.value, c, slack):
        return None
    if re.search(r"\b(?:after|minus|less|taking off|subtracting|deducting)\b",
                 sentence[a.end:b.start], re.I):
        return f"{written(a.value)} - {written(b.value)} = {written(a.value - b.value)}"
    return f"{written(a.value)} + {written(b.value)} = {written(a.value + b.value)}"


# a change announced right before its size: "an increase of", "up by", "grew by"
_CHANGE = re.compile(r"(?:\b(?:increase|decrease|rise|drop|fall|gain|loss|difference|jump|dip|"
                     r"change|growth|reduction|cut|swing)s?\s+of|\b(?:up|down|more|less|fewer|"
                     r"higher|lower|longer|shorter|grew|rose|fell|dropped|climbed|increased|"
                     r"decreased|shrank|gained|lost)\s+by)\s+(?:about |roughly |around |"
                     r"nearly |almost |just )?[$€£¥]?$", re.I)


# the two values it changes between, said as such: "from 310 to 465", "between 12 and 18"
_FROM = re.compile(r"\b(?:from|between)\s+(?:about |roughly |around )?[$€£¥]?$", re.I)
_TO = re.compile(r"\b(?:to|and)\s+(?:about |roughly |around )?[$€£¥]?$", re.I)


def misworked(sentence: str, missing: Sequence[Number], nums: Sequence[Number]
              ) -> Optional[str]:
    """"b - a = d" where the sentence announces the change between the only two other
    values of its kind that it states, from one to the other, both found in the
    grounding ("grew from 310 to 465 square kilometres, an increase of 175"), and gives a
    size ``d`` the grounding lacks that is not their difference.  "Bookings rose by 12 to
    140, against 95 a year ago" changes from a value it does not state: no verdict."""
    for n in missing:
        if n.kind != "number" or n.percent or not _CHANGE.search(sentence[:n.start]):
            continue
        others = [m for m in nums if m.start != n.start and m.kind == n.kind
                  and not m.percent]
        if len(others) == 2 and not set(others) & set(missing) \
                and _FROM.search(sentence, 0, others[0].start) \
                and _TO.search(sentence, others[0].end, others[1].start):
            a, b = sorted(m.value for m in others)
            if abs(b - a - n.value) > n.precision:
                return f"{written(b)} - {written(a)} = {written(b - a)}"
    return None


# the difference between two values said before it: "so you came out ahead by 18.4 kWh"
_BY = re.compile(r"\b(?:(?:ahead|behind|short|up|down|more|less|fewer|over|under|higher|"
                 r"lower|out)\s+by|(?:a|the)\s+(?:difference|gap|margin|lead|shortfall|"
                 r"surplus|deficit|net)\s+of|net(?:ting)?|leaving|leaves|left with)\s+"
                 rf"{_APPROX}[$€£¥]?$", re.I)
_VERSUS = re.compile(r"^[^\d$€£¥;]*?\b(?:and|against|versus|vs\.?|while|but|to)\b[^\d$€£¥;]*$",
                     re.I)


def _kind(sentence: str, n: Number) -> str:
    unit = units.unit_after(sentence, n)
    return unit.dim if unit else sort_of(sentence, n)


def _apart(sentence: str, nums: Sequence[Number], missing: set[int]) -> Optional[str]:
    """The difference between the only two other values of its kind the sentence states,
    said otherwise: "You exported 24.9 kWh and imported 7.5 kWh, so you came out ahead by
    about 18.4 kWh" ("24.9 - 7.5 = 17.4")."""
    for c in nums:
        if c.start not in missing or c.percent or c.kind not in ("number", "duration") \
                or not _BY.search(sentence, 0, c.start):
            continue
        alike = [n for n in nums if n.start < c.start and n.kind == c.kind and not n.percent
                 and _kind(sentence, n) == _kind(sentence, c)]
        if len(alike) != 2 or len([n for n in nums if n.start < c.start]) != 2 \
                or not _VERSUS.match(sentence[alike[0].end:alike[1].start]):
            continue
        a, b = sorted(n.value for n in alike)
        if _off(b - a, c, alike[0].precision + alike[1].precision):
            return f"{written(b)} - {written(a)} = {written(b - a)}"
    return None


# a change said as a percentage: "up about $630 from July's $3,310.54, an increase of 19%"
_PCT_CHANGE = re.compile(r"(?:,\s*|\(\s*)(?:an? |or |which is |that's )?(?:(?:increase|"
                         r"decrease|rise|drop|fall|gain|loss|jump|dip|reduction|cut|growth)"
                         rf"\s+of\s+|up\s+|down\s+){_APPROX}$", re.I)
_FROM_B = re.compile(r"^\s*(?:[a-z]+\s+){0,2}from\s+(?:[A-Z][a-z]+'s\s+|the\s+|its\s+|"
                     r"last\s+[a-z]+'s\s+)?(?:about |roughly |around )?$")


def _changed_by(sentence: str, nums: Sequence[Number], missing: set[int]) -> Optional[str]:
    """A change and the value it changed from, and the change as a percentage of it:
    "up about $630 from July's $3,310.54, an increase of roughly 16%" ("630 / 3,310.54 =
    19.0%"); "from 310 to 465, a rise of 50%" ("155 / 310 = 50.0%")."""
    for a, b, pct in zip(nums, nums[1:], nums[2:]):
        if not pct.percent or pct.start not in missing or a.percent or b.percent \
                or a.kind != "number" or b.kind != "number" or not b.value \
                or not _PCT_CHANGE.search(sentence, b.end, pct.start) \
                or re.search(r"\d", sentence[b.end:pct.start]):
            continue
        if _FROM_B.match(sentence[a.end:b.start]) and _CHANGE_WORD.search(
                sentence, max(0, a.start - 24), a.start):
            change, base = a.value, b.value
        elif re.search(r"\bfrom\s+(?:about |roughly |around )?[$€£¥]?$", sentence[:a.start],
                       re.I) and re.fullmatch(r"\s*(?:[a-z%]+\s+)?to\s+(?:about |roughly )?",
                                              sentence[a.end:b.start]) and a.value:
            change, base = b.value - a.value, a.value
        else:
            continue
        worked = 100 * abs(change) / base
        if _off(worked, pct, 100 * (a.precision + b.precision) / base):
            return f"{written(abs(change))} / {written(base)} = {worked:.1f}%"
    return None


_CHANGE_WORD = re.compile(r"\b(?:up|down|rose|fell|grew|dropped|climbed|increased|decreased|"
                          r"gained|lost|more|less|higher|lower|by)\b[^\d]*$", re.I)


def miscalculated(sentence: str, missing: Sequence[Number], nums: Sequence[Number]
                  ) -> Optional[str]:
    """The arithmetic a sentence states and gets wrong, as an equation, where a value it
    gives as worked out of others it states is one the grounding lacks (``missing``)."""
    if not missing:
        return None
    starts = {n.start for n in missing}
    nums = sorted(nums, key=lambda n: n.start)
    return (misworked(sentence, missing, nums) or _converted(sentence, nums, starts)
            or _times_each(sentence, nums, starts) or _share(sentence, nums, starts)
            or _adjusted(sentence, nums, starts) or _apart(sentence, nums, starts)
            or _changed_by(sentence, nums, starts))
