"""Which context windows to score for a response.

A response token counts as supported if *any* scored window supports it (the
hallucination probability is the minimum over windows), so scoring fewer windows
can only make the detector stricter, never let more through.  Selection is
pluggable: score all windows (exact), only the first (plain truncation, the
baseline), the ``k`` most relevant ones (:class:`TopKWindows`, BM25 over blocks:
``model.bm25``), windows packed from the most relevant passages
(:class:`TopBlocks`), or each sentence's own (:class:`OwnWindows`).

A grounding of several tool results (an agent's calls, a ``tool`` message each) is read
by the documents a sentence names (``model.focused``): the packed window of an in-flight
check and a sentence's own window at the end of the stream hold the results it speaks
of, not the passages of other results that happen to share its words.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Protocol, Sequence

import numpy as np

from guardrail.model.bm25 import IndexCache, query_blocks, sentence_spans
from guardrail.model.focused import clip, cut, focus_groups, focused
from guardrail.model.inputs import PreparedContext, Window


class WindowSelector(Protocol):
    def select(self, context: PreparedContext, windows: Sequence[Window], question: str,
               response: str, target_start: int = 0) -> list[Window]:
        """Return the windows to score (a non-empty subset, in any order); the checked
        text is ``response[target_start:]``, what comes before it left context."""
        ...


class AllWindows:
    """Score every window: exact any-window semantics."""

    name = "all"

    def select(self, context, windows, question, response, target_start=0):
        return list(windows)


class FirstWindow:
    """Score only the first window: what truncating the context to the model does."""

    name = "truncate"

    def select(self, context, windows, question, response, target_start=0):
        return [windows[0]]


def query_window_scores(index, windows: Sequence[Window], question: str, response: str,
                        question_weight: float, max_queries: int
                        ) -> tuple[list[np.ndarray], np.ndarray]:
    """Each sentence's score of every window (``query_blocks``' order: the last sentence
    first), each plus ``question_weight`` times the question's, and that question part."""
    asked, per_query = query_blocks(index, question, response, question_weight, max_queries)
    base = np.zeros(len(windows))
    if asked is not None:
        base = question_weight * index.window_scores(asked, windows)
    return [index.window_scores(b, windows) + base for b in per_query], base


class TopKWindows:
    """Score the ``k`` windows most relevant to the response (BM25), at most ``k``.

    Each sentence of the response is one query (plus ``question_weight`` times the
    question's score, which helps sentences that say "it" for the subject).  Sentences
    take turns picking their best window not yet chosen, starting with the LAST one:
    a streamed check's text ends with the sentence being checked (what comes before
    it is left context), so that sentence gets the first pick, and an end-of-stream
    pass over the whole answer still gives every sentence its best window when ``k``
    is at least the number of sentences.  Windows no query matches fill the
    remaining places in order of combined score, so a check always costs ``k``
    windows.  Use a larger ``k`` for the end-of-stream pass than in flight; two
    selectors may share one :class:`IndexCache`.
    """

    name = "topk"

    def __init__(self, k: int = 2, *, question_weight: float = 0.5, block_tokens: int = 64,
                 max_queries: int = 32, cache: Optional[IndexCache] = None):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.k = k
        self.question_weight = question_weight
        self.block_tokens = block_tokens
        self.max_queries = max_queries
        self.cache = cache if cache is not None else IndexCache()

    def select(self, context, windows, question, response, target_start=0):
        if len(windows) <= self.k:
            return list(windows)
        index = self.cache.get(context, self.block_tokens)
        scores, base = query_window_scores(index, windows, question, response,
                                           self.question_weight, self.max_queries)
        ranked = [[int(i) for i in np.argsort(-s, kind="stable") if s[i] > 0] for s in scores]
        chosen: list[int] = []
        taken: set[int] = set()
        while len(chosen) < self.k and any(ranked):
            for r in ranked:
                while r and r[0] in taken:
                    r.pop(0)
                if r and len(chosen) < self.k:
                    chosen.append(r[0])
                    taken.add(r.pop(0))
        total = np.sum(scores, axis=0) if scores else base
        for i in np.argsort(-total, kind="stable"):
            if len(chosen) >= self.k:
                break
            if int(i) not in taken:
                chosen.append(int(i))
                taken.add(int(i))
        return [windows[i] for i in sorted(chosen)]


class TopBlocks:
    """``k`` windows packed from the context's most relevant passages (BM25), in
    context order: as many tokens as ``k`` plain windows hold, but only the parts that
    match.

    A passage is ``span`` consecutive blocks of ``block_tokens`` (128 tokens by
    default), scored as the sum of its blocks.  The queries are :class:`TopKWindows`'
    (each sentence, the last one first, plus ``question_weight`` times the question):
    they take turns picking their best passage that adds a block not yet chosen, until
    the blocks fill ``k`` windows; then each chosen run grows by its neighbours, both
    sides in turn.  The blocks, merged where adjacent and cut at the window size,
    become ``Window.pieces``.  A context of ``whole`` windows or fewer (default ``k``)
    is read as its windows.  ``tokens``: a packed window holds at most this many
    context tokens (default: as many as a plain window), so its sequence is shorter.

    Where the context holds two or more tool results, a checked sentence that names
    some (``model.focused``) reads those documents, whole where they fit ``k`` windows
    (as the result alone would be read), else by their best passages; sentences
    checked together that read different documents each get their own windows
    (``Window.serves``).
    """

    name = "blocks"

    def __init__(self, k: int = 1, *, whole: Optional[int] = None, question_weight: float = 0.5,
                 block_tokens: int = 32, span: int = 4, max_queries: int = 32,
                 tokens: Optional[int] = None, cache: Optional[IndexCache] = None):
        if k < 1 or span < 1 or (tokens is not None and tokens < block_tokens):
            raise ValueError(f"k and span must be at least 1 and tokens at least a block, "
                             f"got {k}, {span}, {tokens}")
        self.k, self.whole, self.tokens = k, max(k, whole or k), tokens
        self.question_weight, self.block_tokens = question_weight, block_tokens
        self.span, self.max_queries = span, max_queries
        self.cache = cache if cache is not None else IndexCache()

    def select(self, context, windows, question, response, target_start=0):
        size = min(max(w.end - w.start for w in windows), self.tokens or 1 << 30)
        groups = focus_groups(context, question, response, target_start)
        if len(groups) <= 1:  # one reading for the whole checked text
            return self._select(context, windows, question, response,
                                next(iter(groups), None), size)
        out: list[Window] = []  # sentences checked together, each read by its own
        for ranges, spans in groups.items():
            for w in self._select(context, windows, question, response, ranges, size):
                out.append(dataclasses.replace(w, index=len(out), serves=spans))
        return out

    def _select(self, context, windows, question, response, ranges, size) -> list[Window]:
        """The windows of one reading: the token ``ranges`` of the documents named, or
        (None) the whole context."""
        if ranges is not None and sum(b - a for a, b in ranges) <= self.k * size:
            return cut(list(ranges), size)
        if len(windows) <= self.whole and ranges is None:
            return list(windows)
        index = self.cache.get(context, self.block_tokens)
        bt, n = self.block_tokens, index.n_blocks
        room = self.k * (size // bt)  # whole blocks, so that k windows hold them
        span = min(self.span, n)
        allowed = np.ones(n, bool)
        if ranges is not None:  # the named documents' passages only
            allowed[:] = False
            for a, b in ranges:
                allowed[a // bt:-(-b // bt)] = True
        asked, per_query = query_blocks(index, question, response, self.question_weight,
                                        self.max_queries)
        base = np.zeros(n) if asked is None else self.question_weight * asked
        ranked = []
        for b in per_query:
            region = np.convolve((b + base) * allowed, np.ones(span), "valid")
            ranked.append([int(i) for i in np.argsort(-region, kind="stable") if region[i] > 0])
        taken: set[int] = set()
        while len(taken) < room and any(ranked):
            for r in ranked:
                while r and set(range(r[0], r[0] + span)) <= taken:
                    r.pop(0)
                if r and len(taken) < room:
                    a = r.pop(0)
                    taken.update(b for b in range(a, a + span)
                                 if len(taken) < room and allowed[b])
        taken, grown = taken or {int(np.argmax(allowed))}, True
        while len(taken) < room and grown:
            grown = False
            for side in (-1, 1):
                for b in sorted(taken, reverse=side > 0):
                    nb = b + side
                    if 0 <= nb < n and allowed[nb] and nb not in taken and len(taken) < room:
                        taken.add(nb)
                        grown = True
        out = _pack(sorted(taken), bt, index.n_tokens, size)
        return out if ranges is None else clip(out, list(ranges))


class OwnWindows:
    """Each sentence of the response is judged by its own ``m`` most relevant windows
    (BM25, plus ``question_weight`` times the question, as :class:`TopKWindows`
    ranks them) and by no other: the windows returned carry ``serves``, the sentences
    that read them, and a token's probability is the minimum over its sentence's
    windows only.  Every extra window a token is read against is another chance for a
    small model to find it "supported" somewhere unrelated, so in a long context
    reading every window lets nearly every hallucination through; this reads few
    windows per sentence and shares them where sentences agree (the union is often
    smaller than ``k``).  At most ``k`` windows in all (the sentences' first picks in
    turn, the last sentence first, then their second ones); a sentence none of
    whose windows fit, or that matches no window, is judged by every window read.
    A context of ``m`` windows or fewer is read whole.
    """

    name = "own"

    def __init__(self, m: int = 2, k: Optional[int] = None, *, question_weight: float = 0.5,
                 block_tokens: int = 64, max_queries: int = 32,
                 cache: Optional[IndexCache] = None):
        if m < 1 or (k is not None and k < 1):
            raise ValueError(f"m and k must be at least 1, got {m}, {k}")
        self.m, self.k = m, k
        self.question_weight, self.block_tokens = question_weight, block_tokens
        self.max_queries = max_queries
        self.cache = cache if cache is not None else IndexCache()

    def capped(self, k: int) -> "OwnWindows":
        """The same selector reading at most ``k`` windows."""
        if self.k is not None and self.k <= k:
            return self
        return OwnWindows(self.m, k, question_weight=self.question_weight,
                          block_tokens=self.block_tokens, max_queries=self.max_queries,
                          cache=self.cache)

    def select(self, context, windows, question, response, target_start=0):
        spans = sentence_spans(response)[::-1][:self.max_queries]  # query_blocks' order
        pool, own = list(windows), [[] for _ in spans]
        size = max(w.end - w.start for w in windows)
        packed: dict[tuple, int] = {}
        for o, (a, b) in zip(own, spans):  # a sentence naming tool results reads them
            ranges = focused(context, question, response, a, b)
            if ranges is not None and sum(z - y for y, z in ranges) <= size:
                if tuple(ranges) not in packed:
                    packed[tuple(ranges)] = len(pool)
                    pool.append(dataclasses.replace(cut(ranges, size)[0], index=len(pool)))
                o.append(packed[tuple(ranges)])
        if len(windows) <= self.m and not packed:
            return list(windows)
        if len(windows) > self.m:
            index = self.cache.get(context, self.block_tokens)
            scores, _ = query_window_scores(index, windows, question, response,
                                            self.question_weight, self.max_queries)
            for o, sc in zip(own, scores):
                o += [] if o else [int(i) for i in np.argsort(-sc, kind="stable")[:self.m]
                                   if sc[i] > 0]
        else:  # a short context: the other sentences read it whole
            for o in own:
                o += [] if o else list(range(len(windows)))
        order: list[int] = []
        for rank in range(self.m):
            for o in own:
                if rank < len(o) and o[rank] not in order:
                    order.append(o[rank])
        chosen = set(order[:self.k or len(order)])
        if not chosen:  # nothing matches: the first m windows, as a plain top k fills up
            return list(windows[:self.m])
        serves: dict[int, list[tuple[int, int]]] = {i: [] for i in chosen}
        for span, o in zip(spans, own):
            mine = [i for i in o if i in chosen] or sorted(chosen)
            for i in mine:
                serves[i].append(span)
        return [dataclasses.replace(pool[i], serves=tuple(sorted(serves[i])))
                for i in sorted(chosen)]


def _pack(blocks: list[int], bt: int, n_tokens: int, size: int) -> list[Window]:
    """Windows of at most ``size`` tokens holding ``blocks`` (sorted), adjacent ones
    merged into one piece."""
    out: list[Window] = []
    pieces: list[tuple[int, int]] = []
    used = 0
    for b in blocks:
        a, z = b * bt, min((b + 1) * bt, n_tokens)
        if used + z - a > size:
            out.append(Window(len(out), pieces[0][0], pieces[-1][1], tuple(pieces)))
            pieces, used = [], 0
        if pieces and pieces[-1][1] == a:
            pieces[-1] = (pieces[-1][0], z)
        else:
            pieces.append((a, z))
        used += z - a
    out.append(Window(len(out), pieces[0][0], pieces[-1][1], tuple(pieces)))
    return out


def make_selector(name: str, k: int = 2, cache: Optional[IndexCache] = None) -> WindowSelector:
    """``all`` | ``truncate`` | ``topk`` | ``blocks`` | ``own`` (with ``k``: windows per
    check, or per sentence for ``own``) by name, as the CLI spells them."""
    if name == "all":
        return AllWindows()
    if name == "truncate":
        return FirstWindow()
    if name == "topk":
        return TopKWindows(k, cache=cache)
    if name == "blocks":
        return TopBlocks(k, cache=cache)
    if name == "own":
        return OwnWindows(k, cache=cache)
    raise ValueError(f"window selection must be all, truncate, topk, blocks or own, "
                     f"got {name!r}")
