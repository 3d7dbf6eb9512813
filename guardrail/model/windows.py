"""Which context windows to score for a response.

A response token counts as supported if *any* scored window supports it (the
hallucination probability is the minimum over windows), so scoring fewer windows
can only make the detector stricter, never let more through.  Selection is
pluggable: score all windows (exact), only the first (plain truncation, the
baseline), or the ``k`` most relevant ones (:class:`TopKWindows`, BM25).

Why BM25 runs over fixed token *blocks* and not over the windows themselves: the
window size depends on the length of the response piece
(``InputBuilder.context_size``), so every sentence of a stream cuts the same
context into slightly different windows.  An index over the windows would be
rebuilt for nearly every sentence; an index over blocks is built once per context
(cached by ``PreparedContext.key``) and a window's score is the sum of the block
scores it covers (a block cut by a window edge counts pro rata).
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional, Protocol, Sequence

import numpy as np

from guardrail.model.inputs import PreparedContext, Window


class WindowSelector(Protocol):
    def select(self, context: PreparedContext, windows: Sequence[Window], question: str,
               response: str) -> list[Window]:
        """Return the windows to score (a non-empty subset, in any order)."""
        ...


class AllWindows:
    """Score every window: exact any-window semantics."""

    name = "all"

    def select(self, context, windows, question, response):
        return list(windows)


class FirstWindow:
    """Score only the first window: what truncating the context to the model does."""

    name = "truncate"

    def select(self, context, windows, question, response):
        return [windows[0]]


# -- BM25 over blocks ---------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’')\]]*\s+|\n+")
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves also may might must
shall passage
""".split())


def terms(text: str) -> list[str]:
    """Lower-cased word terms of ``text``, minus stopwords and one-letter words."""
    out = []
    for m in _WORD.finditer(text):
        w = m.group().lower()
        if len(w) > 1 and w not in STOPWORDS:
            out.append(w)
    return out


def split_sentences(text: str) -> list[str]:
    """Rough sentence split (enough to form one query per sentence)."""
    return [text[a:z] for a, z in sentence_spans(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The character ranges of :func:`split_sentences`' sentences, in order."""
    out, pos = [], 0
    for end, nxt in [(m.start(), m.end()) for m in _SENTENCE_END.finditer(text)] \
            + [(len(text), len(text))]:
        seg = text[pos:end]
        if seg.strip():
            a = pos + len(seg) - len(seg.lstrip())
            out.append((a, a + len(seg.strip())))
        pos = nxt
    return out


@dataclass(frozen=True)
class BlockIndex:
    """BM25 over a context cut into consecutive blocks of ``block_tokens`` tokens.

    Postings are stored by term (CSR): term ``t`` occurs in ``blocks[ptr[t]:ptr[t+1]]``
    with the BM25 weights ``weights[ptr[t]:ptr[t+1]]`` (idf times saturated tf).
    """

    block_tokens: int
    n_tokens: int
    vocab: dict[str, int]
    ptr: np.ndarray      # int64 [V + 1]
    blocks: np.ndarray   # int32 [postings]
    weights: np.ndarray  # float32 [postings]

    @property
    def n_blocks(self) -> int:
        return max(1, math.ceil(self.n_tokens / self.block_tokens))

    @classmethod
    def build(cls, context: PreparedContext, block_tokens: int = 64, k1: float = 1.2,
              b: float = 0.75) -> "BlockIndex":
        if block_tokens <= 0:
            raise ValueError(f"block_tokens must be positive, got {block_tokens}")
        n = context.n_tokens
        n_blocks = max(1, math.ceil(n / block_tokens))
        first_char = context.tokens.offsets[::block_tokens, 0] if n else np.zeros(1, np.int32)
        vocab: dict[str, int] = {}
        starts, ids = [], []
        for m in _WORD.finditer(context.text):
            w = m.group().lower()
            if len(w) > 1 and w not in STOPWORDS:
                starts.append(m.start())
                ids.append(vocab.setdefault(w, len(vocab)))
        n_terms = len(vocab)
        if not ids:
            return cls(block_tokens, n, vocab, np.zeros(1, np.int64), np.zeros(0, np.int32),
                       np.zeros(0, np.float32))
        block_of = np.searchsorted(first_char, np.asarray(starts), side="right") - 1
        block_of = np.clip(block_of, 0, n_blocks - 1)
        pairs, tf = np.unique(block_of.astype(np.int64) * n_terms + np.asarray(ids), return_counts=True)
        blk, term = pairs // n_terms, pairs % n_terms
        dl = np.bincount(block_of, minlength=n_blocks).astype(np.float64)
        df = np.bincount(term, minlength=n_terms).astype(np.float64)
        idf = np.log1p((n_blocks - df + 0.5) / (df + 0.5))  # Lucene's idf: never negative
        norm = k1 * (1 - b + b * dl[blk] / max(dl.mean(), 1.0))
        weights = idf[term] * tf * (k1 + 1) / (tf + norm)
        order = np.argsort(term, kind="stable")
        ptr = np.concatenate([[0], np.cumsum(np.bincount(term, minlength=n_terms))])
        return cls(block_tokens, n, vocab, ptr.astype(np.int64), blk[order].astype(np.int32),
                   weights[order].astype(np.float32))

    def block_scores(self, query: str) -> np.ndarray:
        """BM25 score of every block for ``query`` (each distinct term counted once)."""
        out = np.zeros(self.n_blocks, np.float64)
        for term in set(terms(query)):
            t = self.vocab.get(term)
            if t is not None:
                a, z = self.ptr[t], self.ptr[t + 1]
                np.add.at(out, self.blocks[a:z], self.weights[a:z])
        return out

    def window_scores(self, block_scores: np.ndarray, windows: Sequence[Window]) -> np.ndarray:
        """Sum of the block scores a window covers; a block cut by an edge counts pro rata."""
        bt = self.block_tokens
        sizes = np.full(self.n_blocks, bt, np.float64)
        sizes[-1] = max(1, self.n_tokens - bt * (self.n_blocks - 1))
        cum = np.concatenate([[0.0], np.cumsum(block_scores)])

        def upto(pos: np.ndarray) -> np.ndarray:  # total score of tokens [0, pos)
            blk = np.minimum(pos // bt, self.n_blocks - 1)
            part = np.minimum((pos - blk * bt) / sizes[blk], 1.0)
            return cum[blk] + part * block_scores[blk]

        starts = np.fromiter((w.start for w in windows), np.int64, len(windows))
        ends = np.fromiter((w.end for w in windows), np.int64, len(windows))
        return upto(ends) - upto(starts)


class IndexCache:
    """A small thread-safe LRU of :class:`BlockIndex` by ``(context.key, block_tokens)``.

    The same context is checked once per streamed sentence, so its index is built
    once and reused; ``builds`` counts the indexes built (for tests and stats).
    """

    def __init__(self, maxsize: int = 64):
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self.builds = 0
        self._items: OrderedDict[tuple[str, int], BlockIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, context: PreparedContext, block_tokens: int) -> BlockIndex:
        key = (context.key, block_tokens)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        index = BlockIndex.build(context, block_tokens)  # outside the lock: may take ms
        with self._lock:
            self.builds += 1
            self._items[key] = index
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return index

    def __len__(self) -> int:
        return len(self._items)


def query_blocks(index: BlockIndex, question: str, response: str, question_weight: float,
                 max_queries: int) -> tuple[Optional[np.ndarray], list[np.ndarray]]:
    """The block scores a selector ranks by: the question's (None when it has none or
    no weight) and each sentence's of ``response``, the last one first, at most
    ``max_queries``."""
    asked = index.block_scores(question) if question and question_weight else None
    queries = split_sentences(response)[::-1][:max_queries]
    return asked, [index.block_scores(q) for q in queries]


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

    def select(self, context, windows, question, response):
        if len(windows) <= self.k:
            return list(windows)
        index = self.cache.get(context, self.block_tokens)
        asked, per_query = query_blocks(index, question, response, self.question_weight,
                                        self.max_queries)
        base = np.zeros(len(windows))
        if asked is not None:
            base = self.question_weight * index.window_scores(asked, windows)
        scores = [index.window_scores(b, windows) + base for b in per_query]
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
    is read as its windows.
    """

    name = "blocks"

    def __init__(self, k: int = 1, *, whole: Optional[int] = None, question_weight: float = 0.5,
                 block_tokens: int = 32, span: int = 4, max_queries: int = 32,
                 cache: Optional[IndexCache] = None):
        if k < 1 or span < 1:
            raise ValueError(f"k and span must be at least 1, got {k}, {span}")
        self.k, self.whole = k, max(k, whole or k)
        self.question_weight, self.block_tokens = question_weight, block_tokens
        self.span, self.max_queries = span, max_queries
        self.cache = cache if cache is not None else IndexCache()

    def select(self, context, windows, question, response):
        if len(windows) <= self.whole:
            return list(windows)
        index = self.cache.get(context, self.block_tokens)
        bt, n = self.block_tokens, index.n_blocks
        size = max(w.end - w.start for w in windows)
        room = self.k * (size // bt)  # whole blocks, so that k windows hold them
        span = min(self.span, n)
        asked, per_query = query_blocks(index, question, response, self.question_weight,
                                        self.max_queries)
        base = np.zeros(n) if asked is None else self.question_weight * asked
        ranked = []
        for b in per_query:
            region = np.convolve(b + base, np.ones(span), "valid")
            ranked.append([int(i) for i in np.argsort(-region, kind="stable") if region[i] > 0])
        taken: set[int] = set()
        while len(taken) < room and any(ranked):
            for r in ranked:
                while r and set(range(r[0], r[0] + span)) <= taken:
                    r.pop(0)
                if r and len(taken) < room:
                    a = r.pop(0)
                    taken.update(b for b in range(a, a + span) if len(taken) < room)
        taken, grown = taken or {0}, True
        while len(taken) < room and grown:
            grown = False
            for side in (-1, 1):
                for b in sorted(taken, reverse=side > 0):
                    nb = b + side
                    if 0 <= nb < n and nb not in taken and len(taken) < room:
                        taken.add(nb)
                        grown = True
        return _pack(sorted(taken), bt, index.n_tokens, size)


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

    def select(self, context, windows, question, response):
        if len(windows) <= self.m:
            return list(windows)
        index = self.cache.get(context, self.block_tokens)
        spans = sentence_spans(response)[::-1][:self.max_queries]
        base = np.zeros(len(windows))
        if question and self.question_weight:
            base = self.question_weight * index.window_scores(index.block_scores(question),
                                                              windows)
        own = []
        for a, z in spans:
            s = index.window_scores(index.block_scores(response[a:z]), windows) + base
            own.append([int(i) for i in np.argsort(-s, kind="stable")[:self.m] if s[i] > 0])
        order: list[int] = []
        for rank in range(self.m):
            order += [o[rank] for o in own if rank < len(o) and o[rank] not in order]
        chosen = set(order[:self.k or len(order)])
        if not chosen:  # nothing matches: the first m windows, as a plain top k fills up
            return list(windows[:self.m])
        serves: dict[int, list[tuple[int, int]]] = {i: [] for i in chosen}
        for span, o in zip(spans, own):
            mine = [i for i in o if i in chosen] or sorted(chosen)
            for i in mine:
                serves[i].append(span)
        return [dataclasses.replace(windows[i], serves=tuple(sorted(serves[i])))
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
