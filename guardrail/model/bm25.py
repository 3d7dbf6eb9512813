"""BM25 over a prepared context cut into fixed token blocks, and the rough sentence
split its queries use (one query per sentence of the checked text).

Why blocks and not the windows themselves: the window size depends on the length
of the response piece (``InputBuilder.context_size``), so every sentence of a
stream cuts the same context into slightly different windows.  An index over the
windows would be rebuilt for nearly every sentence; an index over blocks is built
once per context (cached by ``PreparedContext.key``, :class:`IndexCache`) and a
window's score is the sum of the block scores it covers (a block cut by a window
edge counts pro rata).
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from guardrail.model.inputs import PreparedContext, Window

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
