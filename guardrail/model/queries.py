"""A check's query over cached states: the serving forward of a PCW model.

A Parallel Context Windows check (``guardrail.model.pcw``) runs only its query tokens:
at every layer they attend to the cached keys and values of every context window
(``model.states``; where a context has more windows than ``det.top_windows``, each
block of the query reads those it attends to most), to the answer so far where an
earlier check of the same answer kept it (``model.prefixes``, answer blocks only), and
to each other, block-causally when the query holds the answer so far and its sentence
as separate blocks.  ``pcw_mask`` is the pattern they all follow, in training (over the
concatenation) and here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np
import torch

from guardrail.model.attention import TopWindows, bert_layer, varlen_kernel
from guardrail.model.prefixes import PrefixStates
from guardrail.model.states import ContextStates

QUERY = -1  # the segment of the query (the question's; answer block b is QUERY - 1 - b)


@dataclass(frozen=True, eq=False)
class QuerySequence:
    """The query tokens of one check and the encoded context they read.  With answer
    blocks, also the answer so far where an earlier check kept it (``prefix``: the
    check then runs only ``input_ids[tail:]``, its sentence; ``lookup``: its key, looked
    up again when the check runs, in case the check before finished meanwhile), this
    query's own key (``own``: where a shallower check of exactly it kept its states)
    and the key to keep them under for the next sentence (``keep``; None: not kept)."""

    input_ids: np.ndarray
    token_type_ids: Optional[np.ndarray]
    position_ids: np.ndarray
    response_slice: slice
    piece: int
    states: ContextStates
    window: int = 0
    segments: Optional[np.ndarray] = None  # the query's blocks (None: one block)
    prefix: Optional[PrefixStates] = None
    tail: int = 0
    keep: Optional[str] = None
    lookup: Optional[str] = None
    own: Optional[str] = None

    def __len__(self) -> int:  # what the forward runs, for batching budgets
        return int(self.input_ids.shape[0]) - (self.tail if self.prefix is not None else 0)


@dataclass(frozen=True, eq=False)


class Run:
    """What one query runs at a given depth: all its tokens, or those after its prefix."""

    ids: np.ndarray
    types: Optional[np.ndarray]
    pos: np.ndarray
    segments: Optional[np.ndarray]
    response_slice: slice
    prefix: Optional[PrefixStates]

    @classmethod
    def of(cls, s: QuerySequence, layer: int) -> "Run":
        p = s.prefix
        if p is None or p.depth < layer:
            return cls(s.input_ids, s.token_type_ids, s.position_ids, s.segments,
                       s.response_slice, None)
        t, rs = s.tail, s.response_slice
        return cls(s.input_ids[t:], None if s.token_type_ids is None else s.token_type_ids[t:],
                   s.position_ids[t:], None if s.segments is None else s.segments[t:],
                   slice(rs.start + len(p.probs) - t, rs.stop - t), p)


def pcw_mask(segments: np.ndarray) -> np.ndarray:
    """``[L, L]`` boolean, True where token i may attend to token j: a window token
    (segment >= 0) to its own window; a query token to every window and to the query
    tokens of its own block and of the blocks before it (segments ``QUERY``,
    ``QUERY - 1``, ...).  A query in one segment sees all of itself; with answer blocks
    it is block-causal: the question sees no answer, a sentence no later sentence."""
    seg = np.asarray(segments)
    i, j = seg[:, None], seg[None, :]
    return (i == j) | ((i < 0) & ((j >= 0) | (j >= i)))


def block_segments(n_tokens: int, cuts: Sequence[int]) -> np.ndarray:
    """The segment of each of ``n_tokens`` answer tokens: a new block starts at every
    index in ``cuts``; the first block is ``QUERY - 1``."""
    return QUERY - 1 - np.searchsorted(np.sort(np.asarray(cuts, np.int64)),
                                       np.arange(n_tokens), side="right")


def block_ranges(segments: Optional[np.ndarray]) -> tuple[tuple[int, int], ...]:
    """The query's blocks as ``(start, end)`` token ranges (empty: one block)."""
    if segments is None:
        return ()
    edges = [0, *(np.flatnonzero(np.diff(segments)) + 1).tolist(), len(segments)]
    return tuple(zip(edges[:-1], edges[1:]))


def forward_queries(det, seqs: Sequence[QuerySequence], layer: int) -> list[np.ndarray]:
    """Hallucination probabilities of each query's answer tokens at ``layer``: the
    query tokens (or those after a kept prefix) read their cached parts at every layer;
    queries with a ``keep`` key leave their states for the next check.

    A query whose answer so far another query of the batch is about to keep (a stream's
    next sentence queued behind its last) runs after it, in a second forward, and reads
    only its own sentence: the same probabilities, block-causal as the answer is, for
    a fraction of the tokens.  A query that an earlier, shallower check already ran
    whole (its ``keep`` entry, e.g. the end-of-stream pass over a stream's last check)
    resumes from that check's exit (:func:`resumable`); one whose answer so far was
    kept at a shallower exit deepens it (:func:`_deepen`) rather than reading it again."""
    if not seqs:
        return []
    resumed = [resumable(det, s, layer) for s in seqs]
    if any(e is not None for e in resumed):
        rest = iter(forward_queries(det, [s for s, e in zip(seqs, resumed) if e is None],
                                    layer))
        done = iter(_resume(det, [(s, e) for s, e in zip(seqs, resumed) if e is not None],
                            layer))
        return [next(rest) if e is None else next(done) for e in resumed]
    seqs = [replace(s, prefix=det.prefixes.peek(s.lookup))
            if s.prefix is None and s.lookup is not None else s for s in seqs]
    keeps = {s.keep for s in seqs if s.keep is not None}
    later = [s.prefix is None and s.lookup in keeps for s in seqs]
    if any(later) and not all(later):
        first = [s for s, w in zip(seqs, later) if not w]
        done = iter(forward_queries(det, first, layer))
        rest = iter(forward_queries(det, [s for s, w in zip(seqs, later) if w], layer))
        return [next(rest) if w else next(done) for w in later]
    deeper = [s.prefix is not None and s.prefix.depth < layer and s.prefix.resumable
              for s in seqs]
    if any(deeper):
        rest = iter(_forward(det, [s for s, w in zip(seqs, deeper) if not w], layer)
                    if not all(deeper) else ())
        done = iter(_deepen(det, [s for s, w in zip(seqs, deeper) if w], layer))
        return [next(done) if w else next(rest) for w in deeper]
    return _forward(det, seqs, layer)


def resumable(det, s: QuerySequence, layer: int) -> Optional[PrefixStates]:
    """The entry a shallower check kept of exactly this query (the same context,
    question and answer tokens), if ``layer`` can start from it: its keys and values
    below its exit and what its last layer handed on are this query's own, so the
    layers from its exit up are all that is left to run."""
    if not layer or s.own is None:
        return None
    e = det.prefixes.peek(s.own)
    if e is None or not e.resumable or e.depth >= layer or e.n_tokens != len(s.input_ids):
        return None
    return e


def _resume(det, pairs: Sequence[tuple[QuerySequence, PrefixStates]], layer: int
            ) -> list[np.ndarray]:
    """Each query from its entry's exit to ``layer`` over all its tokens (block-causal
    by the entry's blocks), one forward per exit.  The entry is dropped: the deeper
    pass is the last that reads it (the stream has ended)."""
    out: dict[int, np.ndarray] = {}
    for depth in sorted({e.depth for _, e in pairs}):
        group = [(i, s, e) for i, (s, e) in enumerate(pairs) if e.depth == depth]
        seqs, segments = [s for _, s, _ in group], [e.segments for *_, e in group]
        probs, _ = _layers(det, seqs, segments, [None] * len(group),
                           *_handed(det, seqs, segments, [e.hidden[depth] for *_, e in group]),
                           depth, layer, ())
        for b, (i, s, e) in enumerate(group):
            out[i] = probs[b, s.response_slice]
            det.prefixes.drop(s.own, resumed=True)
    return [out[i] for i in range(len(pairs))]


def _deepen(det, seqs: Sequence[QuerySequence], layer: int) -> list[np.ndarray]:
    """Queries over an answer so far kept at a shallower exit ``d``: the sentence's
    tokens run the layers below ``d``, reading the kept keys and values; then every
    token runs from ``d`` up, the kept ones from their layer-``d`` input.  The same
    probabilities as reading the whole query, for ``d`` fewer layers over the answer so
    far.  One pair of forwards per ``d``."""
    if not seqs:
        return []
    out: dict[int, np.ndarray] = {}
    for d in sorted({s.prefix.depth for s in seqs}):
        idx = [i for i, s in enumerate(seqs) if s.prefix.depth == d]
        group = [seqs[i] for i in idx]
        runs = [Run.of(s, d) for s in group]
        _, tails = _layers(det, group, [r.segments for r in runs], [r.prefix for r in runs],
                           *_embedded(det, runs), 0, d, range(len(group)))
        segments = [_after(r.prefix.segments, r) for r in runs]
        hidden, real, mask = _handed(det, group, segments, [
            torch.cat([r.prefix.hidden[d], tails[b][1][d]]) for b, r in enumerate(runs)])
        keeping = [b for b, s in enumerate(group) if s.keep is not None]
        probs, kept = _layers(det, group, segments, [None] * len(group), hidden, real, mask,
                              d, layer, keeping)
        for b, (i, s) in enumerate(zip(idx, group)):
            out[i] = probs[b, s.response_slice]
        for b in keeping:
            kv, low = _joined(runs[b].prefix, *tails[b])
            _store(det, group[b].keep, kv + kept[b][0], {**low, **kept[b][1]}, out[idx[b]],
                   layer, segments[b])
            det.prefixes.demote(runs[b].prefix.key)
        det.prefixes.reused(len(group))
    return [out[i] for i in range(len(seqs))]


def _forward(det, seqs: Sequence[QuerySequence], layer: int) -> list[np.ndarray]:
    """One forward of ``seqs`` (prefixes already looked up) at ``layer``."""
    runs = [Run.of(s, layer) for s in seqs]
    if reused := sum(r.prefix is not None for r in runs):
        det.prefixes.reused(reused)
    keeping = [b for b, s in enumerate(seqs) if s.keep is not None]
    probs, kept = _layers(det, seqs, [r.segments for r in runs], [r.prefix for r in runs],
                          *_embedded(det, runs), 0, layer, keeping)
    out = []
    for b, r in enumerate(runs):
        p = probs[b, r.response_slice]
        out.append(p if r.prefix is None else np.concatenate([r.prefix.probs, p]))
    for b in keeping:
        r = runs[b]
        segments = r.segments if r.prefix is None else _after(r.prefix.segments, r)
        _keep(det, seqs[b].keep, r.prefix, kept[b], out[b], layer, segments)
    return out


def _embedded(det, runs: Sequence[Run]) -> tuple:
    """``(hidden, real, mask)`` of runs that start at the first layer: their embeddings,
    real tokens and block-causal mask (None when every run is one block)."""
    blocks = any(r.segments is not None and len(set(r.segments.tolist())) > 1 for r in runs)
    batch, real, mask = padded(det, [(r.ids, r.pos, r.types, r.segments) for r in runs],
                               masked=blocks)
    return det.model.loop.base.embeddings(input_ids=batch["input_ids"],
                                          token_type_ids=batch.get("token_type_ids"),
                                          position_ids=batch["position_ids"]), real, mask


def _handed(det, seqs: Sequence[QuerySequence], segments: Sequence[np.ndarray],
            handed: Sequence[torch.Tensor]) -> tuple:
    """``(hidden, real, mask)`` of whole queries that start at a later layer, from what
    the layer before handed on to each of their tokens, block-causal by ``segments``."""
    _, real, mask = padded(det, [(s.input_ids, s.position_ids, s.token_type_ids, g)
                                 for s, g in zip(seqs, segments)], masked=True)
    hidden = torch.zeros(*real.shape, handed[0].shape[-1], dtype=handed[0].dtype,
                         device=real.device)
    for b, h in enumerate(handed):
        hidden[b, :len(h)] = h.to(real.device)
    return hidden, real, mask


def _layers(det, seqs: Sequence[QuerySequence], segments: Sequence[Optional[np.ndarray]],
            prefixes: Sequence[Optional[PrefixStates]], hidden: torch.Tensor,
            real: torch.Tensor, self_mask: Optional[torch.Tensor], start: int, layer: int,
            keeping: Sequence[int]) -> tuple[np.ndarray, dict[int, tuple]]:
    """Layers ``start..layer-1`` over the running tokens (``hidden``, the input of layer
    ``start``), each reading its context's windows and its prefix, then the head of
    ``layer``: the probabilities ``[B, L]`` and, per row in ``keeping``, the keys and
    values of each layer run and the input of each exit layer and of ``layer``
    (``(kv, {layer: hidden})``)."""
    loop = det.model.loop
    varlen = hidden.device.type == "cuda" and varlen_kernel() is not None
    windows = [TopWindows(s.states.n_windows, det.top_windows, block_ranges(seg),
                          det.shortlist, det.shortlist_from, det.sharpen)
               for s, seg in zip(seqs, segments)]
    n = real.sum(1).tolist() if keeping else []  # real tokens per row, read once
    kv: dict[int, list] = {b: [] for b in keeping}
    handed: dict[int, dict] = {b: {} for b in keeping}
    for i in range(start, layer):
        for b in keeping if i in det.exit_layers else ():
            handed[b][i] = hidden[b, :n[b]].clone()
        parts = [[s.states.layer(i)] + ([p.layer(i)] if p is not None else [])
                 for s, p in zip(seqs, prefixes)]
        hidden, k, v = bert_layer(loop.layers[i], hidden, query_mask=real, varlen=varlen,
                                  contexts=parts, self_mask=self_mask, windows=windows)
        for b in keeping:
            kv[b].append((k[b, :, :n[b]].clone(), v[b, :, :n[b]].clone()))
    logits = (loop.head(hidden) if layer == det.n_layers
              else det.model.exits[str(layer)](hidden)).float()
    if offset := det.long_offset.get(str(layer), 0.0):  # checks that chose their windows
        rows = [b for b, w in enumerate(windows) if w.selects]
        logits[rows, :, det.hallucinated_label] += offset
    probs = torch.softmax(logits, -1)[..., det.hallucinated_label].cpu().numpy()
    for b in keeping:
        handed[b][layer] = hidden[b, :n[b]].clone()
    return probs, {b: (kv[b], handed[b]) for b in keeping}


def _after(kept: Optional[np.ndarray], r: Run) -> Optional[np.ndarray]:
    """The blocks of a prefix's tokens and then of the tokens run after it, numbered on
    from the prefix's last block."""
    if kept is None:
        return None
    tail = np.zeros(len(r.ids), np.int64) if r.segments is None else r.segments - r.segments[0]
    return np.concatenate([kept, tail + kept.min() - 1])


def padded(det, rows: Sequence[tuple], masked: bool):
    """Batch tensors of ``rows`` = ``(ids, positions, token types or None, segments or
    None)``: ``(batch, real, mask)`` with ``batch`` the ids, positions and (if the model
    reads them) token types, ``real`` ``[B, L]`` True on real tokens, and with
    ``masked`` the boolean attention mask ``[B, 1, L, L]`` from each row's segments
    (``pcw_mask``; None segments: the whole row; padding sees itself, so no row is
    empty), else None."""
    n = max(len(r[0]) for r in rows)
    ids = np.full((len(rows), n), det.pad_id, np.int64)
    pos = np.zeros((len(rows), n), np.int64)
    types = np.zeros((len(rows), n), np.int64)
    real = np.zeros((len(rows), n), bool)
    mask = np.zeros((len(rows), 1, n, n), bool) if masked else None
    for i, (r_ids, r_pos, r_types, r_seg) in enumerate(rows):
        m = len(r_ids)
        ids[i, :m], pos[i, :m], real[i, :m] = r_ids, r_pos, True
        if r_types is not None:
            types[i, :m] = r_types
        if mask is not None:
            mask[i, 0, :m, :m] = True if r_seg is None else pcw_mask(r_seg)
            mask[i, 0, np.arange(m, n), np.arange(m, n)] = True
    dev = det.device
    batch = {"input_ids": torch.from_numpy(ids).to(dev),
             "position_ids": torch.from_numpy(pos).to(dev)}
    if det.use_token_types:
        batch["token_type_ids"] = torch.from_numpy(types).to(dev)
    return (batch, torch.from_numpy(real).to(dev),
            None if mask is None else torch.from_numpy(mask).to(dev))


def _keep(det, key: str, prefix: Optional[PrefixStates], run: tuple, probs: np.ndarray,
          layer: int, segments: Optional[np.ndarray]) -> None:
    """Keep a query's keys and values (its prefix's and its own) for the next check,
    with what its layers handed on at each exit where a deeper pass can resume from it
    (the prefix kept that layer's too); the prefix goes first."""
    kv, hidden = run if prefix is None else _joined(prefix, *run)
    _store(det, key, kv, hidden, probs, layer, segments)
    if prefix is not None:
        det.prefixes.demote(prefix.key)  # all of it is in the new entry: the first to go


def _joined(p: PrefixStates, kv: Sequence[tuple], hidden: dict) -> tuple[list, dict]:
    """A prefix's states, then those of the tokens run after it: the keys and values
    of each layer they ran, and the layer inputs both hold."""
    had = p.hidden or {}
    return ([(torch.cat([p.keys[i], k], 1), torch.cat([p.values[i], v], 1))
             for i, (k, v) in enumerate(kv)],
            {i: torch.cat([had[i], h]) for i, h in hidden.items() if i in had})


def _store(det, key: str, kv: Sequence[tuple], hidden: Optional[dict], probs: np.ndarray,
           layer: int, segments: Optional[np.ndarray]) -> None:
    """Keep one query's states; what its layers handed on only where a deeper pass can
    start from it (its blocks known, no shortlist: that is chosen layer by layer)."""
    if det.shortlist or segments is None:
        hidden = None
    keys, values = tuple(k for k, _ in kv), tuple(v for _, v in kv)
    det.prefixes.put(key, PrefixStates(key, int(keys[0].shape[1]) if keys else 0, keys,
                                       values, np.asarray(probs, np.float32), layer,
                                       hidden, None if hidden is None else segments))
