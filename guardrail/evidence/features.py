"""What a sentence claims, and whether its grounding holds it: cheap evidence features.

    ContextEvidence.build(documents, question)   once per grounding (rendered, indexed)
    is_claim(sentence)                           False: nothing to check ("Here is what I found:")
    evidence.features(sentence)                  -> SentenceEvidence (numbers, words, lines)

The detector reads tokens; these features read values.  A sentence whose every number
is in the context (after normalisation: ``1,200`` = ``1200``, ``about 1.2 million`` ~
``1,234,567``, ``25%`` = ``0.25``) and whose content words stand together in one line
of the context is very likely supported, whatever its wording; a sentence with a number
the context lacks is very likely not.  The judge (judge.py) weighs these against the
detector's token probabilities.  RAGulator uses the same kind of features in its
sentence-level meta-classifier.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from typing import Optional, Sequence

from guardrail.evidence.render import render

STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can cannot could did do does doing don't down during
each few for from further had has have having he her here hers herself him himself his how i
if in into is isn't it it's its itself just let me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should so some such than that
that's the their theirs them themselves then there there's these they this those through to
too under until up very was wasn't we were what when where which while who whom why will with
would you your yours yourself yourselves s t can will just don should now i'm i've i'd i'll
you're we're they're it'll one's may might must shall also however therefore thus overall
""".split())
NEGATIONS = frozenset("not no never none nothing nobody neither nor without isn't wasn't "
                      "aren't weren't doesn't don't didn't cannot can't won't hasn't haven't "
                      "hadn't false".split())
META_WORDS = frozenset("""
here found find information info result results detail details help helps helpful know look
looking looked need needs anything else question questions following data search searched
summary tool tools check checked hope happy glad assist like want please feel free ask more
sure certainly course great thanks thank welcome let below above shows show provided based
available answer let's okay ok alright interesting note noted quick overview request
""".split())
_FILLER_START = re.compile(
    r"^\s*(here(?:'s| is| are)|let me|sure|certainly|of course|absolutely|great|okay|ok|"
    r"i hope|hope this|i'm happy|i am happy|i'd be happy|feel free|let me know|is there|"
    r"if you (?:have|need)|thanks|thank you|based on|according to|below|in summary|to summarize)\b",
    re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d+(?:[.,:]\d+)*")
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−])?[$€£¥]?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s*(?P<scale>thousand|million|billion|trillion)\b|(?P<abbr>k|bn|mn)\b)?"
    r"(?P<pct>\s*%| percent)?",
    re.I)
_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9,
           "bn": 1e9, "trillion": 1e12}
_WORD_NUMBERS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split()) if i >= 2}
_WORD_NUMBERS.update(thirty=30.0, forty=40.0, fifty=50.0, hundred=100.0, dozen=12.0)
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.I)
_HEDGES = re.compile(r"\b(about|around|approximately|roughly|nearly|almost|over|under|"
                     r"more than|less than|some|close to|just over|just under|~)\s*$", re.I)


def stem(word: str) -> str:
    """A crude, fast stem: lower case, no possessive, the first six letters."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[:-len(suffix)]
            break
    return w[:6]


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text)
            if not w[0].isdigit() and w.lower().replace("’", "'") not in STOPWORDS]


@dataclass(frozen=True)
class Number:
    value: float
    start: int
    end: int
    precision: float   # half a unit of the last written digit, scaled
    hedged: bool       # "about 1.2 million"
    percent: bool


def numbers(text: str) -> list[Number]:
    out = []
    for m in _NUMBER.finditer(text):
        raw = m["num"].replace(",", "")
        try:
            v = float(raw)
        except ValueError:
            continue
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        unit = 10.0 ** -decimals
        scale = m["scale"] or m["abbr"]
        if scale:
            f = _SCALES[scale.lower()]
            v, unit = v * f, unit * f
        if m["sign"]:
            v = -v
        hedged = bool(_HEDGES.search(text[max(0, m.start() - 16):m.start()]))
        out.append(Number(v, m.start(), m.end(), unit / 2, hedged, bool(m["pct"])))
    for m in _NUMBER_WORD.finditer(text):  # "four events" (not "one": "one of the ...")
        if not text[m.end():m.end() + 3].startswith((" of", "-")):
            out.append(Number(_WORD_NUMBERS[m[1].lower()], m.start(), m.end(), 0.5, False,
                              False))
    return sorted(out, key=lambda n: n.start)


def _matches(n: Number, values: Sequence[float]) -> bool:
    for c in values:
        for cand in (c, c * 100) if n.percent else (c,):
            if abs(cand - n.value) <= max(n.precision, 1e-9) + 1e-9 * abs(cand):
                return True
            if n.hedged and cand and abs(cand - n.value) <= 0.1 * abs(cand):
                return True
    return False


def is_claim(sentence: str) -> bool:
    """Does the sentence say something the context could support or not?  Greetings,
    hedges, offers and lead-ins ("Here is what I found:") do not; anything with a
    number or a word outside the small talk vocabulary does."""
    text = sentence.strip()
    if not any(c.isalnum() for c in text):
        return False
    if any(c.isdigit() for c in text):
        return True
    words = content_words(text)
    rest = [w for w in words if w.lower() not in META_WORDS]
    if not rest:
        return False
    if text.endswith("?") and len(words) <= 12:
        return False  # "Would you like the full itinerary?"
    if _FILLER_START.match(text) and text.endswith(":") and len(rest) <= 3:
        return False  # "Here are the flights I found for Monday:"
    return True


@dataclass(frozen=True)
class SentenceEvidence:
    """What the context says about one sentence's numbers and words."""

    n_numbers: int
    missing_numbers: tuple[Number, ...]
    n_words: int
    word_precision: float     # share of its content words found anywhere in the grounding
    best_line_recall: float   # the most of its content words that one context line holds
    best_line: Optional[str]
    n_names: int
    missing_names: int        # capitalised words (not first) the context lacks
    negation_mismatch: bool   # negated where its best line is not, or the other way round
    context_has_numbers: bool


class ContextEvidence:
    """A grounding indexed once for every sentence checked against it.

    ``build`` indexes the documents once per process for all the answers that share
    them (a tenant's stored context, a tool result re-sent each turn): a 185 KB JSON
    result takes about 0.3 s to render and index on one core.  The question is added
    per answer on top of the shared index."""

    def __init__(self, lines: list[str], question: str, structured: bool):
        self.lines, self.structured = lines, structured
        self._line_stems = [frozenset(stem(w) for w in content_words(x)) for x in lines]
        self._negated = [any(w.lower() in NEGATIONS for w in _WORD.findall(x)) for x in lines]
        self.stems = frozenset().union(*self._line_stems) if lines else frozenset()
        text = "\n".join(lines)
        self.lower = text.lower()
        self._context_values = {n.value for n in numbers(text)}
        self._postings: dict[str, list[int]] = {}
        for i, st in enumerate(self._line_stems):
            for s in st:
                self._postings.setdefault(s, []).append(i)
        self._ask(question)

    def _ask(self, question: str) -> None:
        self.question_stems = frozenset(stem(w) for w in content_words(question))
        self.values = sorted(self._context_values | {n.value for n in numbers(question)})

    @classmethod
    def build(cls, documents: Sequence[str], question: str = "") -> "ContextEvidence":
        ev = copy.copy(_indexed(tuple(documents)))  # shares the index, not the question
        ev._ask(question)
        return ev

    def features(self, sentence: str) -> SentenceEvidence:
        nums = numbers(sentence)
        missing = tuple(n for n in nums if not _matches(n, self.values))
        words = content_words(sentence)
        stems = [stem(w) for w in words]
        known = self.stems | self.question_stems
        found = sum(1 for s in stems if s in known)
        best, best_i = 0.0, None
        if stems:
            votes: dict[int, int] = {}
            for s in set(stems):
                for i in self._postings.get(s, ()):
                    votes[i] = votes.get(i, 0) + 1
            if votes:
                best_i = max(votes, key=lambda i: (votes[i], -i))
                best = votes[best_i] / len(set(stems))
        names = [w for i, w in enumerate(_WORD.findall(sentence))
                 if i > 0 and w[0].isupper() and w.lower() not in STOPWORDS]
        missing_names = sum(1 for w in names if w.lower() not in self.lower
                            and stem(w) not in known)
        neg = any(w.lower() in NEGATIONS for w in _WORD.findall(sentence))
        mismatch = best_i is not None and neg != self._negated[best_i]
        return SentenceEvidence(
            len(nums), missing, len(words), found / len(stems) if stems else 1.0, best,
            self.lines[best_i] if best_i is not None else None, len(names), missing_names,
            mismatch, bool(self.values))


def _units(text: str) -> list[str]:
    """Prose cut into sentence-sized units (lines, then sentence ends)."""
    out = []
    for line in text.split("\n"):
        for piece in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", line):
            if piece.strip():
                out.append(piece.strip())
    return out


@functools.lru_cache(maxsize=8)
def _indexed(documents: tuple[str, ...]) -> ContextEvidence:
    lines, structured = [], False
    for doc in documents:
        r = render(doc)
        structured |= r.structured
        lines += [x.text for x in r.lines] if r.structured else _units(doc)
    return ContextEvidence(lines, "", structured)
