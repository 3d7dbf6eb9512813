"""Several tool results: each sentence is read against the results it speaks of.

An agent's grounding is often many tool results (one per call), and an answer's
sentence speaks of one or two of them.  Read against all of them at once, almost any
word or number of a sentence stands somewhere: a city, a count, a year of another tool's
records.  So a changed value or an added fact about *this* package or *this* hotel
passes because some other result happens to hold it.  In an 8K-token grounding of 15-32
tool results, the shipped default stopped 0.26-0.30 of the unsupported sentences it
stopped 0.45 of with the one result alone (`guardrail data longtool`, docs/model-card.md).

``evidence_for(documents, question)`` returns plain ``ContextEvidence`` unless two or more
documents are tool results (structured).  Then each sentence reads the evidence of:

* every prose document (passages of a RAG context are read together, as before);
* the tool results it names: those holding its first *name* (``Sakura Garden Ryokan``,
  ``LX905198278``: runs of capitalised words and identifiers, not the first word), where
  no other result holds it (``SPECIFIC``: a city two results hold anchors neither), and
  any result holding one of its identifiers ("..., and parcel LX905198278 ...") or two
  of its names and values ("..., and Sakura Garden Ryokan has 38 rooms" names a second
  result; "... is headquartered in Kuala Lumpur" names only a city that another result
  happens to hold);
* without a name of its own, if it opens with a pronoun ("It is travelling by air
  freight."), the results the sentence the pronoun refers to named (the nearest before
  it with a name, through sentences that open with pronouns too); if it speaks of "the
  trail" or "the hotel", those of them whose field names hold that noun
  (``trail_name``), so "The lookup returned three hotels." still reads all;
* and with these, the results the question names;
* with none of these, all of them, as before ("Three companies matched your request."
  counts a result it does not name; the question may name only some of the results).

So a supported sentence that joins two tool results keeps its evidence, and what is
stated only in results the sentence does not speak of no longer counts for it.
``copied`` still reads everything.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Optional, Sequence, Union

from guardrail.evidence import listing as L
from guardrail.evidence.blocks import unfenced
from guardrail.evidence.features import ContextEvidence, SentenceEvidence, index
from guardrail.evidence.render import render
from guardrail.evidence.words import STOPWORDS, WORD

SPECIFIC = 1
"""A name anchors the results holding it when at most this many do: a name two
results hold (a city, a shared supplier) says neither is the one a sentence means."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PRONOUN = re.compile(r"\W*(?:it|its|it's|they|their|them|he|she|his|her|this|these|that|"
                      r"those)\b", re.I)  # opens a sentence about what was named before
_DEFINITE = re.compile(r"\bthe\s+([a-z][a-z\-]+)", re.I)  # "the trail": its noun
_STRUCTURE = frozenset("item result data value name id type of".split())
_CACHED = 32  # the evidence of so many sets of results, per grounding


def names(text: str) -> list[list[str]]:
    """The names of ``text``, lower-cased, each a run of words: capitalised words and
    identifiers (a word with a digit: ``LX905198278``, ``B42``), a sentence's first word
    left out unless it holds a digit."""
    runs: list[list[str]] = []
    last = -2
    for i, m in enumerate(WORD.finditer(text)):
        w = m[0]
        ident = any(c.isdigit() for c in w) and any(c.isalpha() for c in w)
        if ident or (i > 0 and w[0].isupper() and w.lower() not in STOPWORDS and len(w) > 1):
            w = w.lower().removesuffix("'s").removesuffix("’s")  # "Ryokan's": its name
            if i == last + 1 and runs:
                runs[-1].append(w)
            else:
                runs.append([w])
            last = i
    return runs


def is_tool_result(document: str) -> bool:
    """A tool result, as the evidence reads one: structured (JSON, a table, CSV) or
    text whose lines are mostly ``key: value``."""
    return render(document).structured or L.is_key_value(unfenced(document))


def _nouns(text: str) -> set[str]:
    """The words after "the" in ``text``, singular too."""
    words = {m[1].lower() for m in _DEFINITE.finditer(text)}
    return words | {w.removesuffix("s") for w in words}


def _key_words(document: str) -> frozenset[str]:
    """The words of a tool result's field names and paths (``hotels[0].check_in``:
    hotel, check, in), singular too, less the words every structure has (item, result,
    name, ...)."""
    keys = " ".join(seg.split(": ", 1)[0] for x in render(document).lines
                    for seg in x.text.split("; ") if ": " in seg)
    words = {m[0] for m in WORD.finditer(keys.lower().replace("_", " ")) if m[0].isalpha()}
    words |= {w[:-1] for w in words if w.endswith("s")}
    return frozenset(words - _STRUCTURE)


class Named:
    """Which of several documents a sentence speaks of, by the names it holds (see the
    module docstring); what the judge's evidence and the detector's windows share."""

    def __init__(self, documents: tuple[str, ...], tool: Sequence[bool]):
        self.documents, self.tool = documents, tuple(tool)
        self.lower = [d.lower() for d in documents]
        self.words = [frozenset(w for m in WORD.finditer(d)  # "Tinsmith's": its name too
                                for w in (m[0], m[0].removesuffix("'s").removesuffix("’s")))
                      for d in self.lower]
        self.prose = frozenset(i for i, t in enumerate(self.tool) if not t)
        self.keys = [_key_words(d) if t else frozenset() for d, t in zip(documents, self.tool)]
        self._fields = frozenset().union(*self.keys)
        self._anchors: dict[str, frozenset[int]] = {}  # every check re-reads the answer so far
        self._lock = threading.Lock()

    def anchors(self, text: str) -> frozenset[int]:
        """The tool results ``text`` speaks of: those holding its first name that at most
        ``SPECIFIC`` results hold, those holding such an identifier of it ("..., and
        parcel LX905198278 ..."), and any other that holds two of its names and values
        (one of them such a name): "..., and Sakura Garden Ryokan has 38 rooms" names a
        second result, "... is headquartered in Kuala Lumpur" a city another result
        happens to hold, not that result."""
        known = self._anchors.get(text)
        if known is not None:
            return known
        runs = names(text)
        held: dict[int, set[int]] = {}  # run -> the one result holding it
        for k, run in enumerate(runs):  # a result holds a name holding all its words
            docs = {i for i, words in enumerate(self.words)
                    if self.tool[i] and words.issuperset(run)}
            if 0 < len(docs) <= SPECIFIC:
                held[k] = docs
        out: set[int] = set(held[min(held)]) if held else set()
        for k, docs in held.items():  # an identifier names its record wherever it stands
            if any(c.isdigit() for w in runs[k] for c in w):
                out |= docs
        values = [m[0] for m in WORD.finditer(text) if m[0][0].isdigit() and len(m[0]) > 1]
        for i in set().union(*held.values()) - out:
            found = sum(i in docs for docs in held.values()) + sum(  # "T09:15" holds 09:15
                bool(re.search(rf"(?<![\d.]){re.escape(v)}(?!\d)", self.lower[i]))
                for v in values)
            if found >= 2:
                out.add(i)
        with self._lock:
            if len(self._anchors) >= 4096:
                self._anchors.clear()
            self._anchors[text] = frozenset(out)
        return frozenset(out)

    def focus(self, sentence: str, before: str = "", asked: frozenset[int] = frozenset()
              ) -> Optional[frozenset[int]]:
        """The documents ``sentence`` is read against; None: all of them.  A sentence
        that names no result and opens with a pronoun ("It is travelling by air
        freight.") reads what the sentence its pronoun refers to named: the nearest one
        before it that names a result, through sentences that open with pronouns too;
        one that speaks of "the trail" reads those of them with a ``trail`` field
        (``_carried``).  Any other sentence without a name ("Three companies matched
        your request.") reads all of them.  A sentence that reads some reads ``asked``
        too, the results the question names (never only those: a question may name one
        of the results an answer uses), and every prose document."""
        found = self.anchors(sentence) or self._carried(sentence, before)
        return found | asked | self.prose if found else None

    def _carried(self, sentence: str, before: str) -> frozenset[int]:
        """What a nameless sentence refers back to: with a pronoun first, all the
        results the nearest sentence before it that names some named; else, through a
        definite description ("Most walkers finish the trail in 390 minutes."), those
        of them whose fields are named by its noun (a ``trail_name`` key holds
        ``trail``; "The lookup returned three hotels." names none, so it reads every
        result; a word of a value is no field: "the bar" of a guest's review).  The
        nearest is looked for through sentences that refer back too (a pronoun first,
        or "the" and a word of some result's field names)."""
        pronoun, nouns = bool(_PRONOUN.match(sentence)), _nouns(sentence)
        if not (pronoun or nouns):
            return frozenset()
        found: frozenset[int] = frozenset()
        for earlier in reversed(_SENTENCE_END.split(before.strip())):
            found = self.anchors(earlier)
            if found or not (_PRONOUN.match(earlier) or self._fields & _nouns(earlier)):
                break
        return found if pronoun else frozenset(i for i in found if nouns & self.keys[i])


@functools.lru_cache(maxsize=64)  # one per grounding checked at once (a few MB at 32K)
def named(documents: tuple[str, ...], tool: tuple[bool, ...]) -> Optional[Named]:
    """``Named`` over ``documents`` (``tool``: which are tool results); None unless two
    or more are."""
    return Named(documents, tool) if sum(tool) >= 2 else None


class _Results(Named):
    """What every answer over the same documents shares: which are tool results, their
    text for names, and the evidence of each set of them a sentence was read against."""

    def __init__(self, documents: tuple[str, ...], parts: Sequence[ContextEvidence]):
        super().__init__(documents, [p.structured for p in parts])
        self.parts = tuple(parts)  # each document's evidence
        self._sets: dict[frozenset[int], ContextEvidence] = {}

    def of(self, docs: frozenset[int]) -> ContextEvidence:
        """The evidence of the documents ``docs`` (no question), built once."""
        if len(docs) == 1:  # indexed already, to tell tool results from prose
            return self.parts[next(iter(docs))]
        with self._lock:
            ev = self._sets.get(docs)
        if ev is None:
            ev = index(tuple(self.documents[i] for i in sorted(docs)))
            with self._lock:
                if len(self._sets) >= _CACHED:
                    self._sets.pop(next(iter(self._sets)))
                self._sets[docs] = ev
        return ev


@functools.lru_cache(maxsize=8)
def _results(documents: tuple[str, ...]) -> Optional[_Results]:
    """None unless two or more of ``documents`` are tool results."""
    parts = [index((d,)) for d in documents] if len(documents) >= 2 else []
    return _Results(documents, parts) if sum(p.structured for p in parts) >= 2 else None


class FocusedEvidence:
    """``ContextEvidence``'s reading (``features``, ``copied``, ``structured``) over
    several tool results, each sentence read against the results it names."""

    def __init__(self, results: _Results, question: str = ""):
        self._results, self.question = results, question
        self.whole = ContextEvidence.build(results.documents, question)
        self.structured, self.asks_value = self.whole.structured, self.whole.asks_value
        self._asked = results.anchors(question)
        self._views: dict[frozenset[int], ContextEvidence] = {}

    def focus(self, sentence: str, before: str = "") -> Optional[frozenset[int]]:
        """The documents ``sentence`` is read against (``Named.focus``); None: all."""
        return self._results.focus(sentence, before, self._asked)

    def evidence(self, sentence: str, before: str = "") -> ContextEvidence:
        """The evidence ``sentence`` reads (see ``focus``)."""
        docs = self.focus(sentence, before)
        if docs is None or len(docs) == len(self._results.documents):
            return self.whole
        if docs not in self._views:
            self._views[docs] = self._results.of(docs).asking(self.question)
        return self._views[docs]

    def features(self, sentence: str, before: str = "") -> SentenceEvidence:
        return self.evidence(sentence, before).features(sentence, before)

    def copied(self, sentence: str) -> bool:
        return self.whole.copied(sentence)


def evidence_for(documents: Sequence[str], question: str = ""
                 ) -> Union[ContextEvidence, FocusedEvidence]:
    """The evidence of a grounding: focused per sentence where it holds two or more
    tool results, else ``ContextEvidence.build``."""
    results = _results(tuple(documents))
    if results is None:
        return ContextEvidence.build(documents, question)
    return FocusedEvidence(results, question)
