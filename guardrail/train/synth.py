"""Synthetic hallucinations injected into real documents, with exact span labels.

A synthetic response is 1-4 consecutive sentences copied from a real context
(leading discourse markers such as "However," dropped), so every word of it is
supported.  Half of them (``p_hallucinated``) then get ONE perturbation, and the
characters that changed become the gold span:

    number     a number, year, percentage or amount gets another plausible value
    entity     a capitalized name becomes a name taken from ANOTHER document
    negation   "is" -> "is not", "can" -> "cannot", "did go" -> "did not go", or a
               "not" is removed; the span is the changed verb phrase
    insertion  a topical sentence from another document (absent from this context)
               is inserted as a new sentence; the span is the whole sentence
    swap       two different names, or two numbers, of one sentence trade places;
               two spans, one on each
    absent     (opt-in) the response stays verbatim but the sentences it was copied
               from are taken out of the context; the span is the whole response
    baseless   (opt-in) the response stays verbatim but ONE of its sentences is taken
               out of the context, the others still stand there: an on-topic claim the
               context does not make (RAGTruth's "baseless info", 87 % of its QA
               subset's spans); the span is that sentence

A perturbation that cannot apply (no number in the response, ...) falls back to
another kind; if none applies the example stays a negative.  Everything draws
from one ``random.Random(seed)``, so a seed gives the same examples every run.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from guardrail.train.data import Example, merge_spans
from guardrail.train.perturb import (NOT_NAMES, PERTURB, Pool, find_names, rephrase,
                                     split_sentences, usable)

Kind = Literal["number", "entity", "negation", "insertion", "swap", "absent", "baseless"]
KINDS: tuple[Kind, ...] = ("number", "entity", "negation", "insertion", "swap")  # the defaults
ALL_KINDS: tuple[Kind, ...] = KINDS + ("absent", "baseless")


_WORD = re.compile(r"[a-z]{4,}")


def documents_from(examples: Sequence[Example]) -> list[tuple[str, str, str]]:
    """``(source_id, context, question)`` of each distinct source, in first-seen order."""
    seen: dict[str, tuple[str, str, str]] = {}
    for ex in examples:
        if ex.source_id not in seen and ex.context.strip():
            seen[ex.source_id] = (ex.source_id, ex.context, ex.question)
    return list(seen.values())


def _pick(n: int, max_sentences: int, rng: random.Random, longest: bool = False) -> tuple[int, int]:
    """``(first, k)``: 1..max_sentences (or exactly max_sentences when ``longest``) consecutive
    sentences out of ``n``."""
    k = min(max_sentences, n) if longest else rng.randint(1, min(max_sentences, n))
    return rng.randint(0, n - k), k


@dataclass(frozen=True)
class _Doc:
    """A document cut into sentences; ``usable[j]`` is ``(index in raw, rephrased text)``."""

    raw: list[str]
    usable: list[tuple[int, str]]

    def text(self, first: int, k: int) -> str:
        return " ".join(s for _, s in self.usable[first:first + k])

    def raw_range(self, first: int, k: int) -> tuple[int, int]:
        """The raw sentences ``[lo, hi)`` that the usable window ``first..first+k`` came from."""
        return self.usable[first][0], self.usable[first + k - 1][0] + 1


def _crop(doc: _Doc, lo: int, hi: int, rng: random.Random, around: int) -> str:
    """Raw sentences ``lo..hi`` with up to ``around`` neighbours on each side."""
    a = max(0, lo - rng.randint(0, around))
    b = min(len(doc.raw), hi + rng.randint(0, around))
    return " ".join(doc.raw[a:b])


def _content(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - NOT_NAMES


def _absent(doc: _Doc, lo: int, hi: int, response: str, rng: random.Random, around: int,
            max_overlap: float) -> Optional[str]:
    """A context from ``doc`` WITHOUT the sentences ``lo..hi`` the response was copied from, or
    ``None`` when what is left still shares too many of the response's content words (the
    document repeats itself, so the response might still be supported)."""
    rest = doc.raw[:lo] + doc.raw[hi:]
    if len(rest) < 2:
        return None
    # a stretch of the rest that straddles the gap, so the context reads as the same document
    at = min(lo, len(rest) - 1)
    a = max(0, at - rng.randint(1, 2 * around + 1))
    b = min(len(rest), at + rng.randint(1, 2 * around + 1))
    context = " ".join(rest[a:b])
    words = _content(response)
    if not words or len(words & _content(context)) > max_overlap * len(words):
        return None
    return context


def _baseless(doc: _Doc, first: int, k: int, rng: random.Random, crop: bool, around: int,
              max_overlap: float) -> Optional[tuple[str, tuple[int, int]]]:
    """The context without one sentence of the response ``first..first+k`` (usable
    sentences, k >= 2), and that sentence's span in the response; ``None`` when every
    sentence's content words stand in what is left (the document repeats itself).  With
    ``crop``, the context is the response's other sentences and a few neighbours."""
    if k < 2:
        return None
    texts = [s for _, s in doc.usable[first:first + k]]
    starts = [sum(len(t) + 1 for t in texts[:i]) for i in range(k)]
    lo, hi = doc.raw_range(first, k)
    for i in rng.sample(range(k), k):
        r = doc.usable[first + i][0]
        rest = doc.raw[:r] + doc.raw[r + 1:]
        if crop:
            a = max(0, lo - rng.randint(0, around))
            rest = rest[a:min(len(rest), hi - 1 + rng.randint(0, around))]
        context = " ".join(rest)
        words = _content(texts[i])
        if words and len(words & _content(context)) <= max_overlap * len(words):
            return context, (starts[i], starts[i] + len(texts[i]))
    return None


def make_synthetic(documents: Sequence[tuple[str, str, str]], n: int, seed: int,
                   kinds: Sequence[str] = KINDS, p_hallucinated: float = 0.5,
                   max_sentences: int = 4, crop: float = 0.0, crop_around: int = 4,
                   absent_max_overlap: float = 0.5) -> list[Example]:
    """``n`` examples built from ``documents`` (``(source_id, context, question)``).

    Each example keeps its document's ``source_id``, so :func:`split_by_source` keeps
    a dev document's synthetic examples in dev.  Documents are visited in a
    shuffled round-robin, so all of them are used before any repeats.

    ``crop`` is the probability that an example's context is cut down to the sentences
    the response came from plus up to ``crop_around`` neighbours on each side: short
    sequences train faster and put the evidence anywhere in the window.  The ``absent``
    kind (not among the defaults) keeps the response verbatim and takes its evidence out
    of the context instead: every response token is then unsupported, which teaches the
    model what a context window WITHOUT the evidence looks like.  ``baseless`` (not among
    the defaults either) takes out one sentence of a response of two or more, so the
    model learns to judge each sentence of an answer on its own evidence.
    """
    unknown = set(kinds) - set(ALL_KINDS)
    if unknown or not kinds:
        raise ValueError(f"kinds must be a non-empty subset of {ALL_KINDS}, got {tuple(kinds)}")
    if not 0.0 <= crop <= 1.0:
        raise ValueError(f"crop is a probability, got {crop}")
    rng = random.Random(seed)
    docs = []
    for _, ctx, _ in documents:
        raw = split_sentences(ctx)
        docs.append(_Doc(raw, [(i, rephrase(s)) for i, s in enumerate(raw) if usable(s)]))
    sentences = [[s for _, s in d.usable] for d in docs]
    pool = Pool(
        names=[(f.text, i) for i, sents in enumerate(sentences) for s in sents
               for f in find_names(s) if not re.search(r"-[a-z]", f.text)],
        sentences=sentences,
        vocab=[frozenset(_WORD.findall(ctx.lower())) for _, ctx, _ in documents])
    usable_docs = [i for i, sents in enumerate(sentences) if sents]
    if not usable_docs:
        return []
    order: list[int] = []
    out = []
    for index in range(n):
        if not order:
            order = usable_docs[:]
            rng.shuffle(order)
        doc = order.pop()
        d = docs[doc]
        source_id, context, question = documents[doc]
        window = _pick(len(d.usable), max_sentences, rng)
        kind, spans, response, new_context = "none", (), d.text(*window), None
        if rng.random() < p_hallucinated:
            wanted = rng.choice(list(kinds))
            rest = [k for k in kinds if k != wanted]
            rng.shuffle(rest)
            # the wanted kind on up to three windows of this document, then the other kinds,
            # so kinds that often cannot apply (numbers, names) are not under-represented
            plan = [(wanted, window), (wanted, None), (wanted, None)] + [(k, window) for k in rest]
            for attempt, fixed in plan:
                tried = fixed or _pick(len(d.usable), max_sentences, rng, longest=True)
                text = d.text(*tried)
                if attempt == "absent":
                    absent = _absent(d, *d.raw_range(*tried), text, rng, crop_around,
                                     absent_max_overlap)
                    if absent is not None:
                        kind, window, response, new_context = attempt, tried, text, absent
                        spans = ((0, len(text)),)
                        break
                    continue
                if attempt == "baseless":
                    cut = _baseless(d, *tried, rng, bool(crop) and rng.random() < crop,
                                    crop_around, absent_max_overlap)
                    if cut is not None:
                        kind, window, response, (new_context, span) = attempt, tried, text, cut
                        spans = (span,)
                        break
                    continue
                result = PERTURB[attempt](text, doc, context, pool, rng)
                if result is not None and result[0] != text:
                    kind, window, (response, spans) = attempt, tried, result
                    break
        if new_context is None and crop and rng.random() < crop:
            new_context = _crop(d, *d.raw_range(*window), rng, crop_around)
        out.append(Example(
            id=f"synthetic/{seed}/{index}", context=new_context or context, question=question,
            response=response, spans=merge_spans(spans, len(response)),
            hallucinated=bool(spans), has_spans=True,
            source_id=source_id, dataset=f"synthetic/{kind}"))
    return out
