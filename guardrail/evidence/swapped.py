"""Another record's number given to the record a sentence is about.

    swapped_value(fields, sentence, nums, about)   the line of a field of the record the
                                                   sentence is about, where it gives that
                                                   record another record's number unnamed

"Paper Kites came out in 1987" where its year is 1974 and another film's 1987.  Not where
the number is left of a whole in its record, several records' values stand in the
sentence, the number adds up or bounds the records, the joined clause holding it
(``keys.joined``) names the record that holds it and none of those the sentence is about
("the cabinet was denied, and the kitchen flooring was approved at $5,850"), or it lies
within the record's own range of the key ("classes that take 9-year-olds" beside
``age_min: 7`` and ``age_max: 10``).
"""

from __future__ import annotations

import re
from typing import Optional, Protocol, Sequence

from guardrail.evidence.field import Field, comparable, over_records
from guardrail.evidence.keys import Stem, denied, joined
from guardrail.evidence.owned import Owned
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import Number


class Fields(Protocol):
    """What of ``fields.Fields`` the reading reads."""

    fields: list[Field]
    lines: Sequence[str]
    columns: Sequence
    remainders: dict[int, tuple[float, ...]]
    stem: Stem

    @property
    def record_values(self) -> dict[int, StoredValues]: ...

    @property
    def owned(self) -> Owned: ...

    def of_key(self, record: int, name: str) -> list[int]: ...


_BOUND = re.compile(r"\b(?:min|max|minimum|maximum)\b")
_OTHER_END = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum"}


def swapped_value(fields: Fields, sentence: str, nums: Sequence[Number], about: set[int]
                  ) -> Optional[str]:
    """The line of a field of a record in ``about`` given another record's number."""
    parts = None
    for n in nums:  # a time or date often says which record ("the 5 PM reading")
        if n.kind in ("count", "time", "date") or n.hedged or denied(sentence, n.start) \
                or any(r in fields.record_values and fields.record_values[r].has(n)
                       or n.value in fields.remainders.get(r, ()) for r in about | {-1}):
            continue
        holders = [f for f in fields.fields if f.record not in about and not f.listed
                   and f.values.has(n) and comparable(n, f, sentence)]  # "40-minute"
        mine = [fields.fields[k] for f in holders for r in about
                for k in fields.of_key(r, f.name)]
        # "the biggest being $82.40 ... and $64.18": several records' values; "3
        # agricultural tyres" in all, "from 13.6 to 15.1 g": over the records
        if not (holders and mine and len({f.name for f in holders}) == 1) or any(
                m.start != n.start and g.values.has(m) for m in nums for g in mine + holders
        ) or over_records(n, nums, fields.columns, holders[0].name) \
                or any(_within(n, g, fields.fields) for g in mine):
            continue
        parts = parts or joined(sentence, fields.stem)
        own = next((st for a, b, st in parts if a <= n.start < b), set())
        if not any(all(fields.owned.elsewhere(own, r) for r in about)  # its clause names the
                   and (fields.owned.own.get(f.record, set()) - f.words) & own  # holder, not by
                   for f in holders):  # the value's own words ("6.80 TRY")
            return fields.lines[mine[0].line]
    return None


def _within(n: Number, f: Field, every: Sequence[Field]) -> bool:
    """``n`` lies between the bound ``f`` holds and the other bound of its record."""
    if not (m := _BOUND.search(f.name)) or not f.values.numbers:
        return False
    other = f.name[:m.start()] + _OTHER_END[m[0]] + f.name[m.end():]
    ends = [g.values.numbers[0] for g in every if g.record == f.record and g.name == other
            and g.values.numbers] + [f.values.numbers[0]]
    return len(ends) == 2 and min(ends) <= n.value <= max(ends)

