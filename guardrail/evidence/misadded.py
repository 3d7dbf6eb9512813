"""A total over a tool result's records, said otherwise.

    misadded(sentence, missing, columns)   the line "the records' <key> add up to <total>"
                                           where the sentence says it added the records up
                                           ("altogether", "add up to", "combined") and
                                           gives a value near that total and not it
    Holders(keys).holding(sentence, n)     the keys that may hold a value: what a total
                                           named by a key says (claims.works_out)
    misgrouped(sentence, missing, named)   the same over a group of records it names
    rescaled(sentence, missing, columns)   the key whose total a value gives in digits (in
                                           the key's unit or one a thousand times it), in
                                           another unit of the key's dimension

"Before the discount, the items add up to $628.00." over four order lines whose
quantities times their unit prices add up to $608.00: the rules of arithmetic.py and
totals.py reproduce neither, so the value is one the result lacks, which most often is
arithmetic no rule reproduced (claims.works_out) and is only marked.  But where the
sentence says it adds up all the records, states one amount in a key's unit, and lands
within ``NEAR`` of that key's total without reaching it, the total is miscounted: a
total over some of the records is found among the partial sums (totals.totalled), and
one with a discount, a fee or another amount added states that amount beside it, which
the reading here declines.  Measured on the hand-written tool turns (docs/model-card.md,
"A total over the records said otherwise, and a change that does not add up").
"""

from __future__ import annotations

import functools
import re
from itertools import combinations
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from guardrail.evidence import units
from guardrail.evidence.claims import part_of
from guardrail.evidence.counted import singular
from guardrail.evidence.field import MONEY_KEY
from guardrail.evidence.keys import has, naming
from guardrail.evidence.totals import Column, Group
from guardrail.evidence.values import CURRENCY_SIGNS, Number, numbers, sort_of, word_after
from guardrail.evidence.words import stem

if TYPE_CHECKING:
    from guardrail.evidence.fields import Fields

NEAR = 0.1
"""How far from a key's total a value said as that total may be to count as miscounted."""
RECORDS = 3  # a total over fewer records is read, not added up
_NAMED = 8  # amounts of one object a sentence names, at most, for their sums to be tried
_UNIT_STEMS = frozenset(stem(w) for w in ("cents", "cent", "pence", "usd", "eur", "gbp", "amount"))


def _singular(word: str) -> str:
    return stem(singular(word))  # "fees" and "fee" alike


_SHARED = {_singular(w) for w in ("cents", "pence", "usd", "eur", "gbp", "qty", "quantity",
                                  "unit", "price", "total", "amount")}  # words of many keys

# the sentence says it adds up every record: "altogether", "in all", "add up to", "the
# charges come to", "the class has collected"
_WHOLE = re.compile(r"\b(?:altogether|in all|in total|combined|together|between them|all told|"
                    r"adds? up|added up|adding up|totals?|totall?ed|totall?ing|"
                    r"comes? to|came to|coming to|(?:has|have|had) (?:collected|raised|taken in|"
                    r"brought in))\b", re.I)
# what it leaves out says nothing of what it adds: "before the discount", "excluding tax"
_LEFT_OUT = re.compile(r"\b(?:before|excluding|not counting|not including|without)\b"
                       r"(?: the| any| your)?(?: [\w-]+){1,2}", re.I)
# something else added or taken off: the total is not the key's alone
_ADJUSTED = re.compile(r"\b(?:after|minus|less|off|discount\w*|credits?|net|plus|shipping|"
                       r"subtract\w*|deduct\w*|except|apart from|other than|"
                       r"postage|tax\w*|vat|deposit|tips?|includ\w*|surcharge|refund\w*|"
                       r"if|would|could|per|each)\b", re.I)
_COUNT_KEY = re.compile(r"^(?:count|number|qty|quantity|tally)$")  # a key of things counted
_NO_TOTAL = re.compile(r"(?<![a-z])(?:per|rate|rates|each|unit|avg|average|mean|min|max|"
                       r"minimum|maximum|limit|capacity|target|threshold|id|no|number|"
                       r"rank|year)(?![a-z])")  # a key whose values do not add up to a whole


def _no_total(key: str) -> bool:
    """The key's values add up to no whole (``_NO_TOTAL``); its "min" is minutes where
    the key is in a unit of time (``duration_min``, ``stop_min``), not a minimum."""
    words = key.lower()
    held = units.key_unit(key)
    if held is not None and held.dim == "time" and held.name == "min":
        words = re.sub(r"(?<![a-z])min(?![a-z])", " ", words)
    return bool(_NO_TOTAL.search(words))


def written(v: float) -> str:
    """``v`` as a total or a difference is written: "4,027", "144.95"."""
    return f"{v:,.2f}".removesuffix(".00")


def _in_kind(sentence: str, n: Number, key: str) -> Optional[float]:
    """What one of ``key``'s units is in the value's (1.0 for money and counted things),
    None where the value is no amount of the key: money of a money key, a unit of the
    key's dimension, or a noun that the key names ("231 bales" of ``bales``)."""
    words = key.lower().replace("_", " ")
    if sort_of(sentence, n) in CURRENCY_SIGNS:
        return 1.0 if MONEY_KEY.search(words) else None
    said, held = units.unit_after(sentence, n), units.key_unit(key)
    if said is not None or held is not None:
        return held.to(1.0, said) if said and held and said.dim == held.dim \
            and said.dim != "temperature" else None
    noun = word_after(sentence, n).lower()
    return 1.0 if noun and stem(noun) in {stem(w) for w in re.findall(r"[a-z]+", words)} \
        or _COUNT_KEY.search(words) else None  # "153 individual birds" of ``count``


class Holders:
    """The stems of a grounding's keys by what they may hold, read once per grounding:
    ``holding(sentence, n)`` gives those that may hold ``n``, money for an amount of
    money, a unit of the dimension of one said (a span of time: a time), any for a bare
    number.  "That adds up to 9 hours of training in total" names no ``spots total``."""

    def __init__(self, keys: Mapping[str, frozenset[str]]):
        """``keys``: each key as written, with its stems."""
        self.every = frozenset().union(*keys.values())
        self.money = frozenset().union(*(st for k, st in keys.items() if MONEY_KEY.search(k)))
        self.of_dim: dict[str, frozenset[str]] = {}
        for k, st in keys.items():
            if (unit := units.key_unit(k)) is not None:
                self.of_dim[unit.dim] = self.of_dim.get(unit.dim, frozenset()) | st

    def holding(self, sentence: str, n: Number) -> frozenset[str]:
        if sort_of(sentence, n) in CURRENCY_SIGNS:
            return self.money
        said = units.UNITS["min"] if n.kind == "duration" else units.unit_after(sentence, n)
        return self.every if said is None else self.of_dim.get(said.dim, frozenset())


def _named(sentence: str, columns: Sequence[Column], n: Number) -> list[Column]:
    """Of the columns that hold amounts of the value's kind, those whose key the
    sentence names a word of ("the fees", "the alterations"); where it names none, those
    of money for an amount of money ("Together they came to £83.50"), and none for other
    values ("your squat, bench and deadlift total" adds no key of the records).  Two
    keys named: it adds keys ("$143 for labor and parts together"), not records.  A unit
    written after the value names the one key in that unit's dimension ("2,150 nautical
    miles" of ``distance nm``), none where two keys are ("4,857 kg" of two in kg)."""
    alike = [c for c in columns if _in_kind(sentence, n, c.key)]
    named = [c for c in alike if _names(sentence, c.key)]
    if len({c.key.partition(" x ")[0] for c in named}) > 1 or not named and \
            sort_of(sentence, n) not in CURRENCY_SIGNS and not (units.unit_after(
                sentence, n) and len({c.key for c in alike}) == 1):
        return []
    return named or alike


def _names(sentence: str, key: str) -> bool:
    """The sentence names a word of the key that few keys share, in the singular or the
    plural ("the fees" of ``fee_eur``, "the entries" of ``entry_fee_cents``)."""
    said = {_singular(w) for w in re.findall(r"[a-z]+", sentence.lower())}
    return bool(said & {_singular(w) for w in re.findall(r"[a-z]+", key.lower()) if len(w) > 2}
                - _SHARED)



def _added(sentence: str, n: Number) -> bool:
    """The sentence says it added ``n`` up ("altogether", "add up to") with nothing else
    added or taken off, and no other amount of its kind stands beside it (an operand, or
    a part)."""
    if n.kind != "number" or n.percent or n.value <= 0:
        return False
    a, z = part_of(sentence, n.start)
    part = sentence[a:z]
    if not _WHOLE.search(part) or _ADJUSTED.search(_LEFT_OUT.sub(" ", part)):
        return False
    kind = sort_of(sentence, n)
    return not any(m.start != n.start and m.kind == "number" and not m.percent
                   and sort_of(sentence, m) == kind for m in numbers(sentence) if a <= m.start < z)


def misgrouped(sentence: str, missing: Sequence[Number], named: Sequence[Group],
               before: str = "") -> Optional[str]:
    """The total of a group of records that the sentence, or the one before it that it
    points back at (``before``: the answer up to it), names (totals.groups), which a
    value it says it added up gives within ``NEAR`` and not: "Altogether that comes to
    41,900 fish for the Lune" where the four releases into the River Lune add up to
    39,900 ("the fish count of the Lune records add up to 39,900")."""
    for n in missing:
        keys = {c.key for c in _named(sentence, [g.total for g in named  # no "invoice id"
                                                 if not _no_total(g.total.key)], n)}
        for g in named if _added(sentence, n) else ():
            key = g.total.key  # a key the sentence names, money, or its unit's (``_named``)
            total = g.total.values[0] * (_in_kind(sentence, n, key) or 0.0)
            if g.size >= 2 and total > 0 and not _no_total(key) and key in keys \
                    and n.precision < abs(n.value - total) <= NEAR * total:
                return f"the {key} of the {_said(f'{before} {sentence}', g.named)} " \
                    f"records add up to {written(total)}"
    return None


def misnamed(sentence: str, missing: Sequence[Number], fields: Optional[Fields]
             ) -> Optional[str]:
    """The amounts of one object of the result whose keys the sentence names, added up,
    where it says it added them ("Principal and interest together account for
    $2,178.14" beside ``principal_cents: 59214`` and ``interest_cents: 159500``: "592.14
    + 1,595 = 2,187.14"): a value it says so, within ``NEAR`` of one such sum and equal to
    none."""
    said = [n for n in missing if _added(sentence, n) and sort_of(sentence, n) in CURRENCY_SIGNS]
    if fields is None or len(said) != 1:
        return None
    (n,) = said
    stems = naming(sentence, fields.stem)[0]
    objects: dict[tuple[str, int], list] = {}  # the money fields it names, by object
    for f in fields.fields:
        name = f.key - _UNIT_STEMS
        if name and f.values.numbers and MONEY_KEY.search(f.path.rsplit(" > ", 1)[-1]) \
                and all(has(k, stems) for k in name):
            objects.setdefault((f.path.rpartition(" > ")[0], f.record), []).append(f)
    sums = [(sum(f.values.numbers[0] for f in group), group) for fs in objects.values()
            if len(fs) <= _NAMED for size in range(2, min(len(fs), 4) + 1)
            for group in combinations(fs, size)]
    if any(abs(total - n.value) <= n.precision for total, _ in sums):
        return None
    near = [(total, group) for total, group in sums
            if n.precision < abs(n.value - total) <= NEAR * total]
    if len(near) != 1:
        return None
    total, group = near[0]
    return " + ".join(f"{fields.lines[f.line].rsplit(' > ', 1)[-1].split(':')[0]} "
                      f"{written(f.values.numbers[0])}" for f in group) + f" = {written(total)}"


def _said(text: str, stems: frozenset[str]) -> str:
    """The words of ``text`` that name a group by its ``stems``, as written ("snooker"
    for the stem "snooke", "Doctors Without Borders" for "doctor" and "border"); the
    stems where the text names only some of them."""
    hits, seen = [], set()
    for m in re.finditer(r"[A-Za-z][A-Za-z'-]*", text):
        if (s := stem(m[0])) in stems and s not in seen:
            hits.append(m)
            seen.add(s)
    if seen != stems:
        return " ".join(sorted(stems))
    span = text[hits[0].start():hits[-1].end()]
    return span if len(span.split()) <= 2 * len(stems) else " ".join(m[0] for m in hits)


# a key of an amount that a bill's total adds or takes off: its records' sum is no total
_ADJUSTING = re.compile(r"(?<![a-z])(?:discount\w*|tax\w*|vat|fees?|surcharge\w*|tips?|"
                        r"gratuity|service charge|shipping|delivery|postage|credits?|"
                        r"promo\w*|coupons?|voucher\w*|rebates?|refund\w*)(?![a-z])")


def adjusting(keys: Sequence[str]) -> bool:
    """A grounding of these keys holds an amount that its bill adds or takes off."""
    return any(_ADJUSTING.search(k.lower().replace("_", " ")) for k in keys)


def misadded(sentence: str, missing: Sequence[Number], columns: Sequence[Column],
             adjusted: bool = False) -> Optional[str]:
    """The total a value that ``missing`` holds (values the grounding lacks) miscounts:
    "the records' <key> add up to <total>", or None.  ``adjusted``: the grounding holds
    a discount, a tax or a fee (``adjusting``), so an amount of money the sentence names
    no key of ("the quote comes to $577.60") is read as the records' total only where it
    says it leaves those out ("Before the discount, the charges come to $516")."""
    columns = [c for c in columns if " x " in c.key or not _no_total(c.key)]
    for n in missing if columns else ():
        if not _added(sentence, n):
            continue
        named = _named(sentence, columns, n)
        if adjusted and sort_of(sentence, n) in CURRENCY_SIGNS \
                and not any(_names(sentence, c.key) for c in named) \
                and not _LEFT_OUT.search(sentence[slice(*part_of(sentence, n.start))]):
            continue
        for c in named:
            total = sum(c.values) * (_in_kind(sentence, n, c.key) or 0.0)
            if len(c.values) >= RECORDS and total > 0 \
                    and n.precision < abs(n.value - total) <= NEAR * total:
                return f"the records' {c.key} add up to {written(total)}"
        if not named and (both := _in_unit(sentence, n, columns)):
            total = sum(sum(c.values) * (_in_kind(sentence, n, c.key) or 0.0) for c in both)
            if n.precision < abs(n.value - total) <= NEAR * total:
                return f"the records' {' and '.join(c.key for c in both)} add up to " \
                    f"{written(total)}"
    return None


def _in_unit(sentence: str, n: Number, columns: Sequence[Column]) -> list[Column]:
    """The two or three keys of the records in the dimension of the unit written after
    the value, none named ("131.6 kWh in total" of ``day kwh`` and ``night kwh``): a total
    in that unit is theirs together."""
    if units.unit_after(sentence, n) is None:
        return []
    alike = [c for c in columns if " x " not in c.key and _in_kind(sentence, n, c.key)]
    return alike if 2 <= len(alike) <= 3 and all(
        len(c.values) == len(alike[0].values) >= RECORDS for c in alike) else []


def rescaled(sentence: str, missing: Sequence[Number], columns: Sequence[Column]
             ) -> Optional[str]:
    """The key whose total over the records a value the grounding lacks gives in digits,
    in another unit of the key's dimension ("about 332 kilograms" where ``waste tonnes``
    add up to 331.6; "about 44.8 miles" where ``distance m`` adds up to 44,790, 44.79
    km): the unit changed."""
    for n in missing:
        said = units.unit_after(sentence, n)
        for c in columns if said else ():
            held = units.key_unit(c.key)
            if held and held.dim == said.dim and any(
                    u.name != said.name and abs(held.to(sum(c.values), u) - n.value) <= n.precision
                    for u in _siblings(held)):
                return c.key
    return None


@functools.lru_cache(maxsize=64)  # per unit, not per value read
def _siblings(unit: units.Unit) -> tuple[units.Unit, ...]:
    """The unit and those a thousand times it or a thousandth of it ("44.8" of
    ``distance m`` adding up to 44,790 is kilometres)."""
    return (unit, *(u for u in {*units.UNITS.values()} if u.dim == unit.dim and any(
        abs(u.factor / unit.factor - r) < 1e-9 * r for r in (1e3, 1e-3))))
