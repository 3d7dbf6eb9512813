"""A value per a key of its record: "about 145 barrels per acre" where a record holds
``barrels: 2210`` and ``acres: 15.2``.

    table(lines, records)               each record's keys and amounts, read once
    per_key(sentence, n, table, about)  ``n`` is one of a record's numbers over the
                                        value of the key the sentence says "per"

Only the records the sentence is about are read (all of them when it is about none, up
to ``_RECORDS``), only keys the sentence names after "per", and the quotient must be
``n`` to its written digits, so a changed rate seldom passes by chance.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from guardrail.evidence import units
from guardrail.evidence.keys import pairs
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import Number
from guardrail.evidence.words import WORD, stem

_PER = re.compile(r"\b(?:per|each|every)\s+([A-Za-z]+)", re.I)
_RECORDS = 15  # records whose quotients are tried, at most
_AMOUNT = re.compile(r"[-+]?[$€£¥]?\d[\d,]*(?:\.\d+)?%?")
Table = dict[int, list[tuple[frozenset[str], tuple[float, ...], Optional[units.Unit]]]]


def table(lines: Sequence[str], records: Sequence[int]) -> Table:
    """Each record's keys (as stems) with the numbers of their values and the unit the
    key names."""
    out: Table = {}
    for line, r in zip(lines, records):  # (-1: the result's own, outside every record)
        out.setdefault(r, []).extend(  # plain amounts: no date's year, no code's digits
            (frozenset(stem(w) for w in WORD.findall(k)), StoredValues.of(v, key=k).numbers,
             units.key_unit(k)) for k, v in pairs(line) if _AMOUNT.fullmatch(v.strip()))
    return out


def _in(said: Optional[units.Unit], unit: Optional[units.Unit], v: float) -> Optional[float]:
    """``v`` of a key in ``unit`` in the unit written after the value, if any; None in
    another dimension ("6.6 miles" is no quotient of ``distance km``)."""
    if said is None or unit is None:
        return v
    return unit.to(v, said) if unit.dim == said.dim else None


def per_key(sentence: str, n: Number, amounts: Table, about: Optional[set[int]]) -> bool:
    """``n`` is a number of a record, or of the result outside its records, over that
    record's value of a key the sentence says the value is per ("Per acre, Mill Brook
    led with roughly 211 barrels" for ``barrels: 1350`` and ``acres: 6.4``; "Per round,
    the petrol buggies used about 0.72 litres" for ``energy > petrol litres: 212`` and
    the petrol record's ``rounds: 296``; "Each kilowatt of your share produced about 136
    kWh" for a result's own ``share kw: 4.5`` and ``production kwh: 612``: a unit named
    names the keys in it)."""
    said = [m[1].lower() for m in _PER.finditer(sentence)]  # a unit's name: its keys' too
    per = {stem(w) for w in said} | {u.name for w in said if (u := units.UNITS.get(w))}
    if not per or n.kind in ("date", "time"):
        return False
    chosen = [fs for r, fs in amounts.items() if r != -1 and (not about or r in about)] or [
        amounts.get(-1, [])]  # a result of no records: its own amounts
    said = units.unit_after(sentence, n)
    top = [(v, unit) for key, vs, unit in amounts.get(-1, ()) if not key & per for v in vs]
    if len(chosen) > _RECORDS or len(top) > _RECORDS:
        return False
    tolerance = max(n.precision, 1e-9)
    for fs in chosen:  # (a word every key of the record holds names the record: "for
        #                every courier" over ``couriers 3 > ...``)
        mine = per - frozenset.intersection(*(key for key, _, _ in fs)) if fs else per
        if any(abs(w / a - n.value) <= tolerance
               for a in (x for key, xs, _ in fs if key & mine for x in xs if x)
               for v, unit in [(v, u) for key, vs, u in fs if not key & mine for v in vs] + top
               if (w := _in(said, unit, v)) is not None):
            return True
    return False
