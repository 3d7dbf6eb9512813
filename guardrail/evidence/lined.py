"""Counts of the lines of a line-shaped grounding: a log, one event or row per line.

    tallies(fields, lines, stem)        a structured grounding's ``Tallies`` (spans.py), or
                                        a log's counter
    LineTallies.of(lines)               the counter of a grounding whose lines mostly start
                                        alike ("10.0.0.5 - - [12/Mar/2024:...", "2024-03-12
                                        14:02:11 ERROR ..."), None for any other
    tallies.counts(sentence, n, ...)    ``n`` is how many of those lines hold what the
                                        sentence says it counts

Assistants count what a log shows: "There were two /api/users requests", "Three requests
returned 200", "four requests in total".  No line states the count, so it reads as a
value the grounding lacks.  Here the lines holding the tokens of what the sentence counts
("/api/users", "200", "10.0.0.5", "error") are counted; a sentence naming none of them
counts every line where it says it is the total ("four requests in total").  One count
is tried per count the sentence states, so a changed count ("three /api/users requests"
of two) stays missing.  Prose paragraphs are not counted: their lines do not start alike
with digits.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Collection, Optional, Sequence, Union

from guardrail.evidence.arithmetic import SUM
from guardrail.evidence.spans import Tallies
from guardrail.evidence.values import Number
from guardrail.evidence.words import STOPWORDS

_TOKEN = re.compile(r"[\w/.:-]*\w")  # "/api/users", "10.0.0.5", "HTTP/1.1", "500"
_LEAD = re.compile(r"\S+")
_CLAUSE = re.compile(r"[,;:!?()]|\.(?:\s|$)|\b(?:and|but|while|which|who|so)\b", re.I)
MIN_LINES = 3
"""Lines of one shape a grounding holds, at least, to be counted."""
SHARE = 0.6
"""The share of the grounding's lines that share the commonest shape, at least."""
MAX_LINES = 2000  # no answer counts the lines of a longer log one by one


def _shape(line: str) -> str:
    """How a line starts: its first token with letters as ``a`` and digits as ``9``, each
    run as one ("[12/Mar/2024:14:02:11" -> "[9/a/9:9:9:9")."""
    m = _LEAD.match(line.strip())
    lead = m[0] if m else ""
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", lead))


class LineTallies:
    """The lines of one shape of a grounding, each as its set of tokens (lower case, words
    stemmed)."""

    def __init__(self, lines: Sequence[frozenset[str]], stem: Callable[[str], str]):
        self.lines, self.stem = lines, stem
        self.tokens = frozenset().union(*lines)

    @classmethod
    def of(cls, lines: Sequence[str], stem: Callable[[str], str]) -> Optional["LineTallies"]:
        """The counter of ``lines`` where at least ``MIN_LINES`` and ``SHARE`` of them
        start alike with a number, a time or an address (a log), None otherwise."""
        kept = [x for x in lines if x.strip()]
        if not MIN_LINES <= len(kept) <= MAX_LINES:
            return None
        shapes = [_shape(x) for x in kept]
        common = max(set(shapes), key=shapes.count)
        alike = [x for x, s in zip(kept, shapes) if s == common]
        if "9" not in common or len(alike) < MIN_LINES or len(alike) < SHARE * len(kept):
            return None
        return cls([_tokens(x, stem) for x in alike], stem)

    def counts(self, sentence: str, n: Number, stems: Collection[str] = (),
               said: Sequence[Number] = ()) -> bool:
        """``n`` is how many lines hold every token that some line holds of what the
        sentence says it counts, from ``n`` to the end of its clause: "two /api/users
        requests", "two errors, both timeouts" (``error``), "four requests in total"."""
        if n.kind not in ("number", "count") or n.hedged or n.percent \
                or not n.value.is_integer() or not 1 <= n.value <= len(self.lines):
            return False
        cut = _CLAUSE.search(sentence, n.end)
        named = _tokens(sentence[n.end:cut.start() if cut else len(sentence)],
                        self.stem) & self.tokens
        if not named and not SUM.search(sentence):
            return False  # "4 errors" of a log that never says "error" is no count of it
        return sum(named <= line for line in self.lines) == n.value


def tallies(fields: Any, lines: Sequence[str], stem: Callable[[str], str]
            ) -> Union[Tallies, LineTallies, None]:
    """How many records hold each value of a structured grounding's ``fields``
    (fields.py's ``Fields``), or how many lines of a log hold what a sentence names."""
    if fields:
        return Tallies(fields.fields, stem, [c.values for c in fields.columns])
    return LineTallies.of(lines, stem)


def _tokens(text: str, stem: Callable[[str], str]) -> frozenset[str]:
    out = set()
    for t in _TOKEN.findall(text.lower()):
        t = t.rstrip(".:-")
        if t and t not in STOPWORDS:
            out.add(stem(t) if t.isalpha() else t)
    return frozenset(out)
