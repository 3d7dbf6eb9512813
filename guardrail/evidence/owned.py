"""Which record a clause of a sentence speaks of.

    Owned(words, stopwords, values)      once per grounding: the words only one record holds
    owned.elsewhere(stems, record)       a clause names another record's words, not its own
    owned.said_of_others(...)            a yes/no said only of other records
    said_no(clause, key), both_ways(clauses, key)
                                         a clause says a yes/no key negated; clauses say it
                                         both ways ("which is paid, ... which is outstanding")
"""

from __future__ import annotations

import collections
from typing import Collection, Iterable, Optional, Sequence

from guardrail.evidence.field import Field
from guardrail.evidence.keys import Stem, clause_negated, has, naming
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import Number


def said_no(clause: str, key: Iterable[str], stem: Stem) -> Optional[bool]:
    """Whether a clause naming the whole yes/no ``key`` says it negated ("which is still
    outstanding" for ``paid``); None where it does not name all of it."""
    stems, negated, _ = naming(clause, stem)
    if not all(has(k, stems | negated) for k in key):
        return None
    return any(has(k, negated) and not has(k, stems - negated) for k in key) \
        or clause_negated(clause, key, stem)


def both_ways(clauses: Sequence[str], key: Iterable[str], stem: Stem) -> bool:
    """Of the ``clauses`` naming the whole yes/no ``key``, one says it and one negates
    it: "$645 for the first week, which is paid, and $460 ..., which is unpaid"."""
    return len({said_no(c, key, stem) for c in clauses} - {None}) > 1


class Owned:
    """The words only one record of a grounding holds (``own``; ``top``: those only the
    result holds outside its records), read once: ``elsewhere(stems, record)``, a clause
    (its stems) names some of another record's and none of ``record``'s ("the Gruyère is
    the only raw-milk cheese" is no other cheese's).  ``values``: each record's values."""

    def __init__(self, words: dict[int, set[str]], stopwords: Collection[str],
                 values: Optional[dict[int, StoredValues]] = None):
        every = collections.Counter(w for r, ws in words.items() if r >= 0 for w in ws)
        self.own = {r: {w for w in ws if every[w] == 1 and w not in stopwords and len(w) > 2}
                    for r, ws in words.items() if r >= 0}
        self.top = {w for w in words.get(-1, ()) if not every[w] and w not in stopwords
                    and len(w) > 2}  # the result's own, outside its records
        self.values = {r: v for r, v in (values or {}).items() if r >= 0}

    def elsewhere(self, stems: set[str], record: int) -> bool:
        return record in self.own and not self.own[record] & stems and any(
            ws & stems for r, ws in self.own.items() if r != record)

    def said_of_others(self, sentence: str, parts: Sequence[tuple[int, int, set[str]]],
                       f: Field, stem: Stem, nums: Sequence[Number] = ()) -> bool:
        """Every clause (``parts``: ``clauses(sentence)``) naming the whole key of the
        yes/no field ``f`` names only another record's words; or they say the key both
        ways, none naming a word of its record's own says it otherwise, and one does say
        it as it is or the sentence gives values (``nums``) of two records or more ("$645
        for the first week, which is paid, and $460 ..., which is still outstanding")."""
        whole = [(sentence[a:b], st) for a, b, st in parts if all(has(k, st) for k in f.key)]
        if whole and all(self.elsewhere(st, f.record) for _, st in whole):
            return True
        said = [(no, st) for a, b, st in parts
                if (no := said_no(sentence[a:b], f.key, stem)) is not None]  # "unpaid" too
        if len({no for no, _ in said}) < 2:
            return False  # not said both ways
        own = self.own.get(f.record, set()) if f.record >= 0 else self.top
        mine = [no for no, st in said if own & st]
        return f.flag not in mine and (bool(mine) or sum(
            any(v.has(n) for n in nums if n.kind != "count") for v in self.values.values()) > 1)
