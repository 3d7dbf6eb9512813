"""A value that the sentence's closest context line states otherwise: the line rule.

    changed(sentence, missing, line)   "completed in 1950" against "completed in 1889"
"""

from __future__ import annotations

import re
from typing import Sequence

from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import Number, numbers, word_after
from guardrail.evidence.words import stem


def _unit(text: str, n: Number) -> str:
    """The word after a value: its unit or what it counts ("330 metres", "12 stores")."""
    return stem(w) if (w := word_after(text, n)) else ""


def _year(n: Number) -> bool:
    return n.kind == "number" and not n.percent and n.value.is_integer() \
        and 1000 <= n.value <= 2100


def _same_sort(text: str, n: Number, line: str, m: Number) -> bool:
    """Two values of one sort: dates, times, durations, years and percentages by kind;
    other numbers by the word after them (a bare number, as in "passage 1:", has none)."""
    if (n.kind, n.percent, _year(n)) != (m.kind, m.percent, _year(m)):
        return False
    return n.kind != "number" or n.percent or _year(n) or _unit(text, n) == _unit(line, m) != ""


def changed(sentence: str, missing: Sequence[Number], line: str) -> bool:
    """The line holds a value of the sort of one the sentence states and the context
    lacks, and the sentence does not state that one: "completed in 1950" against
    "completed in 1889", "500 metres" against "330 metres tall" -- a changed value,
    where a value the context lacks beside nothing of its sort is more likely added."""
    missing = [n for n in missing if _exact(sentence, n)]
    if not missing:
        return False
    stated = StoredValues.of(sentence)
    return any(_same_sort(sentence, n, line, m) and not stated.has(m)
               for m in numbers(line) if _exact(line, m) for n in missing)


_BOUND = re.compile(r"\b(?:before|after|by|since|until|fewer than|more than|less than|over|"
                    r"under|at least|at most|up to|above|below|nearly|almost)\s*\W?\s*$", re.I)


def _exact(text: str, n: Number) -> bool:
    """A value stated as such: not a bound or a rounding ("more than 450,000", "before
    2000", "about 7 million"), nor a list item's number ("5. Bake the fillets")."""
    enumerator = not text[:n.start].strip() and text[n.end:n.end + 1] in (".", ")")
    return not (n.hedged or enumerator or _BOUND.search(text[max(0, n.start - 16):n.start]))
