"""A sentence that restates one line of its grounding.

    Restatements(lines, negated).line_of("The Eiffel Tower is in Paris.", False)
        -> the index of "The Eiffel Tower is a wrought-iron lattice tower on the Champ de
           Mars in Paris, France.", or None

A sentence restates a line when the line holds every content word (by stem) and every
number of the sentence, in the sentence's order, and is negated as the sentence is.
Nothing of such a sentence is new to the grounding and nothing in it is turned around:
``SentenceJudge.judge`` passes it without asking the model, as it passes a sentence
copied word for word.  Order matters: "the Chrysler Building is taller than the tower"
does not restate "the tower is taller than the Chrysler Building".
"""

from __future__ import annotations

from typing import Optional, Sequence

from guardrail.evidence.values import PARTS
from guardrail.evidence.words import STOPWORDS, WORD, content_words, negated, stem

_ZERO = ("0", "0.0")  # a field's value that says "none"
MIN_TERMS = 3
"""Fewer content words and numbers than this, and a sentence says too little to be read
as a restatement ("It is open." restates any line with "open" in it)."""


def terms(text: str) -> tuple[str, ...]:
    """The stems of ``text``'s content words and its numbers (without thousands
    separators), in order."""
    out = []
    for w in WORD.findall(text):
        if w[0].isdigit():
            out.append(w.replace(",", ""))
        elif w.lower().replace("’", "'") not in STOPWORDS:
            out.append(stem(w))
    return tuple(out)


def _holds(line: Sequence[str], wanted: Sequence[str]) -> bool:
    rest = iter(line)
    return all(t in rest for t in wanted)  # a subsequence: in order, gaps allowed


class Restatements:
    """The grounding's lines as term sequences, indexed by term (once per grounding);
    ``negated[i]``: whether line ``i`` holds a negation (``ContextEvidence`` reads it)."""

    def __init__(self, lines: Sequence[str], negated: Sequence[bool]):
        self.terms = [terms(x) for x in lines]
        self.negated = negated
        self.postings: dict[str, list[int]] = {}
        for i, ts in enumerate(self.terms):
            for t in set(ts):
                self.postings.setdefault(t, []).append(i)

    def line_of(self, sentence: str, negated: bool) -> Optional[int]:
        """The first line that ``sentence`` (``negated``: holding a negation) restates."""
        wanted = terms(sentence)
        if len(wanted) < MIN_TERMS:
            return None
        rarest = min(wanted, key=lambda t: len(self.postings.get(t, ())))
        return next((i for i in self.postings.get(rarest, ())
                     if self.negated[i] == negated and _holds(self.terms[i], wanted)), None)


def says_negated(line: str, as_written: bool, sentence: str, structured: bool) -> bool:
    """``line`` of a grounding says something negated (``as_written``: ``negated(line)``,
    read once): of a row ("species: Red maple; ...; drought tolerant: no"), only a field
    whose key the sentence names; a 0 under such a key ("tubs: 0", a row or a line)
    agrees with "no tubs" and with "0 tubs" alike."""
    parts = PARTS.split(line) if structured else ()
    if len(parts) < 2 and not (parts and parts[0].rpartition(": ")[2].strip() in _ZERO):
        return as_written  # neither a row nor one ``key: 0``: as written
    stems = {stem(w) for w in content_words(sentence.replace("-", " "))}
    return any((negated(value)
                or value.strip() in _ZERO and negated(sentence)) and (not key or {
                    stem(w) for w in content_words(key)} & stems)  # "no shorts": said
               for key, _, value in (p.rpartition(": ") for p in parts))
