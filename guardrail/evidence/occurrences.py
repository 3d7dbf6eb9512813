"""How many different things a tool result's records hold, and how often it names one.

    Occurrences(lines, records, lower)  once per rendered grounding
    occurrences.agrees(sentence, n)     ``n`` counts them: "four different vehicles" over
                                        the records' four ``vehicle id`` values
    occurrences.changed(sentence, nums) the line a count says more than: "Five different
                                        vehicles" where the records hold four; "ULT-B2
                                        and LN2-02 each alarmed twice" where each stands
                                        in one alarm record

A count of records is read by counted.py and totals.py; these are counts of something
else.  "N different vehicles" counts the values of the key that names vehicles, not the
records (seven charging sessions of four cars), and "X alarmed twice" counts the records
that hold X.  Both are found as a value by chance easily (a 5 in an id, five completed
sessions), so they are read here against what they count.  Only a count above what
the records hold is changed: fewer is most often a part ("three different vehicles
charged in the morning", "Route 7 was late three times" of its ten runs).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from guardrail.evidence.field import HANDLE
from guardrail.evidence.keys import pairs
from guardrail.evidence.numbering import INDEX
from guardrail.evidence.values import Number, numbers
from guardrail.evidence.words import WORD, stem

_DIFFERENT = re.compile(r"\s+(?:different|distinct|unique|separate|individual)\s+"
                        r"([A-Za-z]+)", re.I)
# "twice", "three times" (not "three times as many", "twice the price", "twice a week",
# "twice what she took", "four times Long Pond's rate", "two times on Tuesday": slots)
_TIMES = re.compile(r"\b(?:(once)|(twice)|(thrice)|(\S+)\s+times)\b(?!\s+(?:as|more|less|"
                    r"the|a|an|per|each|every|over|that|its|their|his|her|our|your|what|"
                    r"on|at|in|for|from|to|between|during|[a-z]+er\b|(?-i:[A-Z])))", re.I)
_ONCE = {1: 1.0, 2: 2.0, 3: 3.0}  # which group of _TIMES: the count it says
_COUNT = re.compile(r"\d[\d,]*(?:\.\d+)?")
_EACH = re.compile(r"\b(?:each|both|every one|apiece)\b", re.I)


class Occurrences:
    """Per key of the records (its path without their indices), every value it holds."""

    def __init__(self, lines: Sequence[str], records: Sequence[int], lower: str):
        """``lower``: the grounding's text in lower case (``ContextEvidence.lower``)."""
        self._by_key: dict[str, list[tuple[int, str]]] = {}  # (record, value); -1: outside
        self._named: dict[str, set[int]] = {}  # a handle's records ("ult-b2" -> {1})
        self._outside: set[str] = set()        # handles said outside every record too
        self._lower = lower
        for line, r in zip(lines, records):
            for key, value in pairs(line):
                value = value.strip()
                self._by_key.setdefault(INDEX.sub("", key), []).append((r, value))
                if HANDLE.fullmatch(value):
                    (self._outside.add(value.lower()) if r < 0 else
                     self._named.setdefault(value.lower(), set()).add(r))

    def _different(self, sentence: str, n: Number) -> Optional[tuple[str, int]]:
        """The key that "``n`` different NOUN" counts the values of, and their number
        (None: no such words, or no key or several of them name the noun)."""
        m = _DIFFERENT.match(sentence, n.end)
        if m is None or n.value != int(n.value):
            return None
        noun = stem(m[1].lower())
        keys = [k for k in self._by_key
                if noun in {stem(w) for w in WORD.findall(k.rsplit(" > ", 1)[-1])}]
        if any(_COUNT.fullmatch(v) and float(v.replace(",", "")) == n.value
               for k in keys for _, v in self._by_key[k]):
            return None  # a key counts them ("unique artists: 212")
        # the key names them where its values are names ("EV-118"), not counts, in two
        # records or more and outside none
        keys = [k for k in keys if len(held := {r for r, _ in self._by_key[k]}) >= 2
                and -1 not in held and not any(_COUNT.fullmatch(v) for _, v in self._by_key[k])]
        counts = {len({v.lower() for _, v in self._by_key[k]}) for k in keys}
        return (keys[0], counts.pop()) if len(counts) == 1 else None

    def agrees(self, sentence: str, n: Number) -> bool:
        got = self._different(sentence, n)
        return got is not None and got[1] == n.value

    def changed(self, sentence: str, nums: Sequence[Number]) -> Optional[str]:
        for n in nums:
            got = self._different(sentence, n)
            if got is not None and n.value > got[1]:
                return f"{got[0]}: {got[1]} different values"
        return self._times(sentence)

    def _times(self, sentence: str) -> Optional[str]:
        """A name said to occur more times than records hold it ("ULT-B2 and LN2-02
        each alarmed twice" against one alarm record each), where no record says that
        many times of it in words."""
        for m in _TIMES.finditer(sentence):
            said = next((_ONCE[g] for g in _ONCE if m[g]), None)
            if said is None:
                said = next((x.value for x in numbers(m[4]) if x.value == int(x.value)), None)
            if said is None or m[0].lower() in self._lower:
                continue  # a record says it in words ("restarted twice overnight")
            clause = sentence[:m.start()].rsplit(";", 1)[-1]
            names = [h.lower() for h in HANDLE.findall(clause)]
            if not names or any(h not in self._named or h in self._outside for h in names):
                continue
            per_name = [len(self._named[h]) for h in dict.fromkeys(names)]
            mine = set().union(*(self._named[h] for h in names))
            if any(r in mine and v == f"{said:g}" for values in self._by_key.values()
                   for r, v in values):
                continue  # a record counts them itself ("alarms: 2")
            if any(c < said for c in per_name) if len(per_name) == 1 or _EACH.search(
                    sentence) else sum(per_name) < said:
                h = names[0]
                key, value = next((k, v) for k, values in self._by_key.items()
                                  for r, v in values if r >= 0 and v.lower() == h)
                count = len(self._named[h])
                return f"{key}: {value} ({count} record{'s' if count > 1 else ''})"
        return None
