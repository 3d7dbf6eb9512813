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

from guardrail.evidence.keys import pairs
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import Number
from guardrail.evidence.words import WORD, stem

_PER = re.compile(r"\bper\s+([A-Za-z]+)", re.I)
_RECORDS = 15  # records whose quotients are tried, at most
_AMOUNT = re.compile(r"[-+]?[$€£¥]?\d[\d,]*(?:\.\d+)?%?")
Table = dict[int, list[tuple[frozenset[str], tuple[float, ...]]]]


def table(lines: Sequence[str], records: Sequence[int]) -> Table:
    """Each record's keys (as stems) with the numbers of their values."""
    out: Table = {}
    for line, r in zip(lines, records):  # (-1: the result's own, outside every record)
        out.setdefault(r, []).extend(  # plain amounts: no date's year, no code's digits
            (frozenset(stem(w) for w in WORD.findall(k)), StoredValues.of(v, key=k).numbers)
            for k, v in pairs(line) if _AMOUNT.fullmatch(v.strip()))
    return out


def per_key(sentence: str, n: Number, amounts: Table, about: Optional[set[int]]) -> bool:
    """``n`` is a number of a record, or of the result outside its records, over that
    record's value of a key the sentence says the value is per ("Per acre, Mill Brook
    led with roughly 211 barrels" for ``barrels: 1350`` and ``acres: 6.4``; "Per round,
    the petrol buggies used about 0.72 litres" for ``energy > petrol litres: 212`` and
    the petrol record's ``rounds: 296``)."""
    per = {stem(m[1]) for m in _PER.finditer(sentence)}
    if not per or n.kind in ("date", "time"):
        return False
    chosen = [fs for r, fs in amounts.items() if r != -1 and (not about or r in about)]
    top = [v for key, vs in amounts.get(-1, ()) if not key & per for v in vs]
    if len(chosen) > _RECORDS or len(top) > _RECORDS:
        return False
    tolerance = max(n.precision, 1e-9)
    return any(abs(v / a - n.value) <= tolerance
               for fs in chosen
               for a in (x for key, xs in fs if key & per for x in xs if x)
               for v in [v for key, vs in fs if not key & per for v in vs] + top)
