"""Which documents of a grounding a check reads, where it holds several tool results.

An agent's grounding is often many tool results, one per call, and an answer's sentence
speaks of one or two of them.  The detector reads a long context by the passages BM25
picks for a sentence, and among many tool results those are often other results'
passages sharing its words and values, which then pass for its evidence.  So a sentence
that names some results (``evidence.focus.Named``, the judge's rule) is read against
those documents: ``focused`` gives their token ranges, ``focus_groups`` groups the
sentences checked together by what they read, and ``cut`` / ``clip`` make the packed
windows (``Window.pieces``) that hold them.
"""

from __future__ import annotations

from typing import Optional

from guardrail.evidence.focus import named
from guardrail.model.bm25 import sentence_spans
from guardrail.model.inputs import PreparedContext, Window


def focused(context: PreparedContext, question: str, response: str, start: int = 0,
            end: Optional[int] = None) -> Optional[list[tuple[int, int]]]:
    """The token ranges of the documents that the sentences of ``response`` between
    ``start`` and ``end`` speak of, where the context holds two or more tool results
    (``evidence.focus.Named``: the results a sentence names, or its pronoun's, with the
    question's and every prose document, looked up in the documents as given, as the
    judge's evidence looks them up), merged where adjacent.  None: read the
    context as a whole, because it is not such a grounding, or a sentence names no
    result, or they name every document."""
    tool = tuple(t for _, _, t in context.parts)
    if sum(tool) < 2:
        return None
    given = context.sources if len(context.sources) == len(tool) else tuple(
        context.text[a:b] for a, b, _ in context.parts)
    who = named(given, tool)
    asked = who.anchors(question) if question else frozenset()
    docs: set[int] = set()
    for a, b in sentence_spans(response):
        if b <= start or (end is not None and a >= end):
            continue
        found = who.focus(response[a:b], response[:a], asked)
        if found is None:
            return None
        docs |= found
    if not docs or len(docs) == len(tool):
        return None
    out: list[tuple[int, int]] = []
    for i in sorted(docs):
        a, b = context.token_range(*context.parts[i][:2])
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        elif b > a:
            out.append((a, b))
    return out or None


def focus_groups(context: PreparedContext, question: str, response: str, start: int = 0
                 ) -> dict[Optional[tuple[tuple[int, int], ...]], tuple[tuple[int, int], ...]]:
    """The checked sentences of ``response`` (from ``start``) grouped by what they read
    (:func:`focused` of each: token ranges, or None for the whole context), each group
    with its sentences' character ranges.  Empty where the context holds fewer than two
    tool results."""
    if sum(t for *_, t in context.parts) < 2:
        return {}
    groups: dict[Optional[tuple[tuple[int, int], ...]], list[tuple[int, int]]] = {}
    for a, b in sentence_spans(response):
        if b > start:
            ranges = focused(context, question, response, a, b)
            groups.setdefault(None if ranges is None else tuple(ranges), []).append((a, b))
    return {k: tuple(v) for k, v in groups.items()}


def clip(windows: list[Window], ranges: list[tuple[int, int]]) -> list[Window]:
    """``windows`` (packed) holding only their tokens inside ``ranges``."""
    out = []
    for w in windows:
        pieces = [(max(a, c), min(z, d)) for a, z in (w.pieces or ((w.start, w.end),))
                  for c, d in ranges if max(a, c) < min(z, d)]
        if pieces:
            out.append(Window(len(out), pieces[0][0], pieces[-1][1], tuple(pieces)))
    return out


def cut(ranges: list[tuple[int, int]], size: int) -> list[Window]:
    """Packed windows of at most ``size`` tokens holding the token ``ranges`` in order."""
    out: list[Window] = []
    pieces: list[tuple[int, int]] = []
    used = 0
    for a, z in ranges:
        while a < z:
            if used == size:
                out.append(Window(len(out), pieces[0][0], pieces[-1][1], tuple(pieces)))
                pieces, used = [], 0
            b = min(z, a + size - used)
            pieces.append((a, b))
            used, a = used + b - a, b
    out.append(Window(len(out), pieces[0][0], pieces[-1][1], tuple(pieces)))
    return out
