"""Parallel Context Windows: encode a context once, let every check read all of it.

The context (rendered, tokenized) is cut into windows of ``window`` positions, each
``[CLS] tokens [SEP]`` at positions ``0..window-1``, each attending only to itself.
The query, ``question [SEP] response [SEP]``, sits at positions ``window..`` and
attends to every window and to itself (Ratner et al., 2023): a 512-position model
reads a context of any length, with no minimum over windows.  Over more than
``top_windows`` windows, each block of the query (the question, a sentence) scores
every window at every layer and reads the ones it attends to most
(``attention.top_window_attention``): this model, trained on a few windows at a
time, spreads its attention thin over dozens.

Two ways to run the same function, which tests hold equal:

* **reference / training** (``PcwSequence``): windows and query concatenated, one
  forward of the Hugging Face layers with the boolean mask ``queries.pcw_mask`` and
  restarting position ids.  ``train_detector`` and ``train_exits`` use it unchanged.
* **serving** (``QuerySequence``): the windows are encoded once per context
  (:meth:`PcwDetector.encode_context`, kept in a ``StateCache``) and a check runs
  only the query tokens, attending to the cached keys and values
  (``guardrail.model.attention``).  A shallow exit reads the cached states up to its
  layer; the end-of-stream pass reuses them at full depth.

A directory's ``guardrail.json`` says ``"attention": "pcw"`` (with ``"pcw": {"window",
"overlap"}``) and ``Detector.from_pretrained`` returns a ``PcwDetector``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch

from guardrail.errors import ContextError, InputError, ModelLoadError
from guardrail.model.attention import SHORTLIST_FROM, bert_layer
from guardrail.model.detector import DetectInput, Detector, PreparedInput
from guardrail.model.inputs import (IGNORE, PreparedContext, Tokenized, Window, clean_text,
                                    cut_windows, tokenize)
from guardrail.model.layers import BertLoop
from guardrail.model.prefixes import prefix_key
from guardrail.model.queries import (QUERY, QuerySequence, block_segments, forward_queries,
                                     padded)
from guardrail.model.states import ContextStates, StateCache
from guardrail.model.top_mask import PAD_SEGMENT
from guardrail.model.windows import TopBlocks, TopKWindows

COLD_WINDOWS = 4  # most windows a check reads while its context is being encoded
TOP_WINDOWS = 4
"""Windows each block of a check's query reads at each layer, those it attends to most
(0: all of them; ``attention.top_window_attention``), unless the model's ``pcw`` names
another number.  Measured in docs/context-states.md, "Reading the windows a sentence
attends to most"."""


@dataclass(frozen=True, eq=False)
class PcwSequence:
    """Windows and query concatenated: the reference forward and training."""

    input_ids: np.ndarray
    token_type_ids: Optional[np.ndarray]
    position_ids: np.ndarray
    segments: np.ndarray          # window index per token, QUERY for the query
    response_slice: slice
    piece: int
    window: int = 0
    labels: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


class PcwDetector(Detector, attention="pcw"):
    def __init__(self, model, tokenizer, *, state_bytes: int = 2 << 30,
                 prefix_bytes: int = 256 << 20, **kwargs):
        super().__init__(model, tokenizer, **kwargs)
        if not isinstance(self.model.loop, BertLoop):
            raise ModelLoadError("Parallel Context Windows need a BERT-family model "
                                 f"(got {self.model.backbone.config.model_type!r})")
        geometry = self.meta.get("pcw", {})
        self.window = int(geometry.get("window", 192))
        self.overlap = int(geometry.get("overlap", 32))
        if not 16 <= self.window <= self.max_length - 64:
            raise ModelLoadError(f"pcw window {self.window} leaves no room for the query "
                                 f"in {self.max_length} positions")
        self.meta = {**self.meta, "attention": "pcw",
                     "pcw": {"window": self.window, "overlap": self.overlap}}
        self.answer = str(geometry.get("answer", "whole"))
        self.top_windows = int(geometry.get("top_windows", TOP_WINDOWS))
        self.shortlist = int(geometry.get("shortlist", 0))
        if "shortlist_from" in geometry:
            self.meta["pcw"]["shortlist_from"] = int(geometry["shortlist_from"])
        self.sharpen = float(geometry.get("sharpen", 1.0))
        self.long_offset = {str(k): float(v) for k, v in geometry.get("long_offset", {}).items()}
        self.states = StateCache(state_bytes)
        self.prefixes = StateCache(prefix_bytes)  # answers so far (answer blocks only)
        self.state_dtype: Optional[torch.dtype] = None  # None: the model's dtype
        # the concatenated forward (training, the reference) reads each block's top
        # windows as a check does (``model.top_mask``); off: it reads every window
        self.concat_reads_top = False

    def state_bytes_per_token(self) -> int:
        """Bytes of encoded state per cached position (keys and values of every layer)."""
        cfg = self.model.backbone.config
        dtype = self.state_dtype or next(self.model.parameters()).dtype
        return 2 * cfg.num_hidden_layers * cfg.hidden_size * dtype.itemsize

    def prepare_context(self, documents) -> PreparedContext:
        """As for any detector, and refused (``context_too_large``) when its encoded
        states could not be kept: encoding it again for every sentence would cost each
        check what caching saves."""
        ctx = super().prepare_context(documents)
        n = ctx.n_tokens + 2 * len(self.windows(ctx))
        if n * self.state_bytes_per_token() > self.states.max_bytes:
            raise ContextError(
                f"the context's encoded states ({n} positions, "
                f"{n * self.state_bytes_per_token() / 2**20:.0f} MiB) exceed "
                f"cache.states_max_bytes ({self.states.max_bytes / 2**20:.0f} MiB); raise "
                "it or set cache.states_dtype: bfloat16", code="context_too_large")
        return ctx

    # -- geometry ------------------------------------------------------------------------
    def windows(self, context: PreparedContext) -> list[Window]:
        return cut_windows(context.n_tokens, self.window - 2, self.overlap)

    def _window_ids(self, context: Tokenized, w: Window) -> np.ndarray:
        b = self.builder
        return np.concatenate([[b.cls_id], w.take(context.ids), [b.sep_id]])

    @property
    def answer(self) -> str:
        """How the query reads the answer: ``whole`` (one block) or ``sentences``."""
        return self.meta["pcw"]["answer"]

    @answer.setter
    def answer(self, mode: str) -> None:
        if mode not in ("whole", "sentences"):
            raise ModelLoadError(f"pcw answer {mode!r}: 'whole' or 'sentences'")
        self.meta["pcw"]["answer"] = mode

    @property
    def top_windows(self) -> int:
        """Windows each block of a check's query reads (0: every window)."""
        return self.meta["pcw"]["top_windows"]

    @top_windows.setter
    def top_windows(self, n: int) -> None:
        if n < 0:
            raise ModelLoadError(f"pcw top_windows {n}: 0 (read every window) or more")
        self.meta["pcw"]["top_windows"] = int(n)

    @property
    def shortlist(self) -> int:
        """Windows each block keeps scoring from layer ``shortlist_from`` on, those
        it attended to most in the layer before (0: every window at every layer)."""
        return self.meta["pcw"].get("shortlist", 0)

    @shortlist.setter
    def shortlist(self, n: int) -> None:
        if n < 0:
            raise ModelLoadError(f"pcw shortlist {n}: 0 (score every window) or more")
        if n:
            self.meta["pcw"]["shortlist"] = int(n)
        else:
            self.meta["pcw"].pop("shortlist", None)

    @property
    def shortlist_from(self) -> int:
        """The first layer that reads only the shortlist."""
        return self.meta["pcw"].get("shortlist_from", SHORTLIST_FROM)

    @property
    def sharpen(self) -> float:
        """The power each token raises the chosen windows' attention mass to, to weigh
        them (1: the mass itself; ``attention.TopWindows``)."""
        return self.meta["pcw"].get("sharpen", 1.0)

    @sharpen.setter
    def sharpen(self, g: float) -> None:
        if not 1.0 <= g <= 16.0:
            raise ModelLoadError(f"pcw sharpen {g}: between 1 (the mass itself) and 16")
        self.meta["pcw"].pop("sharpen", None)
        self.meta["pcw"].update({"sharpen": float(g)} if g != 1.0 else {})

    @property
    def long_offset(self) -> dict[str, float]:
        """Per layer, what is added to the hallucination logit of a check that reads
        fewer windows than its context holds (fitted on long calibration sets)."""
        return self.meta["pcw"].get("long_offset", {})

    @long_offset.setter
    def long_offset(self, by_layer: dict[str, float]) -> None:
        self.meta["pcw"].pop("long_offset", None)
        self.meta["pcw"].update({"long_offset": by_layer} if any(by_layer.values()) else {})

    def answer_stats(self):
        """The kept answers' ``StateStats`` (hits: reused), or None without answer blocks."""
        return self.prefixes.stats() if self.answer_blocks else None

    @property
    def deepens_answer(self) -> bool:
        """Whether a check deeper than its kept answer so far runs only the missing
        layers over it (``queries``): every entry keeps its exits' inputs."""
        return self.answer_blocks and not self.shortlist

    @property
    def answer_blocks(self) -> bool:
        """Whether the answer is read block-causally by sentence (and kept per check)."""
        return self.answer == "sentences"

    def _query(self, q: Tokenized, r: Tokenized, piece: tuple[int, int], cuts=()):
        """ids, token types, positions, segments and the response slice of the query:
        ``q [SEP] r [SEP]`` in one block, or with answer blocks ``q [SEP] r`` with the
        question a block and a new block at every answer token index in ``cuts``."""
        b = self.builder
        rr = r.ids[piece[0]:piece[1]]
        end = [] if self.answer_blocks else [b.sep_id]
        ids = np.concatenate([q.ids, [b.sep_id], rr, end]).astype(np.int64)
        types = None
        if self.use_token_types:
            types = np.zeros(len(ids), np.int64)
            types[len(q) + 1:] = 1
        pos = np.arange(self.window, self.window + len(ids), dtype=np.int64)
        segments = np.full(len(ids), QUERY, np.int64)
        if self.answer_blocks:
            segments[len(q) + 1:] = block_segments(
                len(rr), [c - piece[0] for c in cuts if piece[0] < c < piece[1]])
        return ids, types, pos, segments, slice(len(q) + 1, len(q) + 1 + len(rr))

    # -- stage 1: prepare ----------------------------------------------------------------
    def inputs(self, inp: DetectInput):
        """The context, the cleaned response, question and response tokens, and the
        response pieces that each fit one query."""
        if not isinstance(inp.response, str) or not inp.response.strip():
            raise InputError("the response is empty: there is nothing to check")
        context = inp.context if isinstance(inp.context, PreparedContext) \
            else self.prepare_context(inp.context)
        response = clean_text(inp.response)
        q = self.builder.question_tokens(inp.question or "")
        r = tokenize(self.tokenizer, response)
        if len(r) == 0:
            raise InputError("the response has no tokens the model can read")
        room = self.max_length - self.window - len(q) - 2
        return context, response, q, r, [(s, min(s + room, len(r)))
                                         for s in range(0, len(r), room)]

    def prepare(self, inp: DetectInput, selector=None,
                labels: Optional[np.ndarray] = None) -> PreparedInput:
        """Query pieces of the response; with ``labels`` (training) each piece is a full
        ``PcwSequence`` over every window, else a ``QuerySequence`` on the encoded
        context (built now on a cache miss)."""
        context, response, q, r, pieces = self.inputs(inp)
        windows = self.windows(context)
        cuts = self._cuts(r, inp)
        if labels is not None:
            seqs = tuple(self.training_sequence(context.tokens, windows, q, r, p, i, labels,
                                                cuts=cuts) for i, p in enumerate(pieces))
        else:
            states = self.context_states(context)
            seqs = tuple(self._query_sequence(context, states, q, r, p, i, cuts, len(pieces),
                                              inp.keep) for i, p in enumerate(pieces))
        return PreparedInput(response, context, r, seqs, len(windows), len(windows),
                             len(pieces) > 1)

    def prepare_cold(self, inp: DetectInput, selector) -> PreparedInput:
        """A check while its context is still being encoded: the query reads only the
        windows ``selector`` picks (e.g. the BM25 top 3), encoded together with it in one
        ``PcwSequence`` (the reference path), so the first sentences of a stream need
        not wait for a long context's encoding.  The Detection says
        ``context_truncated``; once the states are ready checks read every window."""
        context, response, q, r, pieces = self.inputs(inp)
        windows = self.windows(context)
        if isinstance(selector, TopBlocks):  # trained on plain windows: read the top ones
            selector = TopKWindows(min(selector.whole, COLD_WINDOWS), cache=selector.cache)
        if not isinstance(selector, TopKWindows) or selector.k > COLD_WINDOWS:
            selector = TopKWindows(COLD_WINDOWS)  # a few windows, or it costs more than waiting
        chosen = selector.select(context, windows, inp.question, response) or windows[:1]
        cuts = self._cuts(r, inp)
        seqs = tuple(self.training_sequence(context.tokens, chosen, q, r, p, i, cuts=cuts)
                     for i, p in enumerate(pieces))
        return PreparedInput(response, context, r, seqs, len(windows), len(chosen),
                             len(pieces) > 1)

    def _cuts(self, r: Tokenized, inp: DetectInput) -> list[int]:
        """With answer blocks, the answer tokens where the checked sentence begins (the
        text before it is the answer so far, a block of its own) and where each of
        ``inp.blocks`` begins."""
        if not self.answer_blocks:
            return []
        at = [a for a in (inp.target_start, *inp.blocks) if a > 0]
        cuts = {int(c) for c in np.searchsorted(r.offsets[:, 0], at)}
        return sorted(c for c in cuts if 0 < c < len(r))

    def _query_sequence(self, context: PreparedContext, states: ContextStates, q: Tokenized,
                        r: Tokenized, piece: tuple[int, int], index: int, cuts: list[int],
                        n_pieces: int, keep: bool = True) -> QuerySequence:
        """A check's query on the encoded context; with answer blocks and an answer that
        fits one query, also the answer so far if a check kept it, and its own key (to
        keep it under unless ``keep`` is False)."""
        ids, types, pos, segments, rs = self._query(q, r, piece, cuts)
        if not self.answer_blocks or n_pieces > 1:
            return QuerySequence(ids, types, pos, rs, index, states)
        cut = cuts[0] if cuts else 0
        lookup = prefix_key(context.key, q.ids, r.ids[:cut]) if cut else None
        own = prefix_key(context.key, q.ids, r.ids)
        return QuerySequence(ids, types, pos, rs, index, states, segments=segments,
                             prefix=self.prefixes.peek(lookup) if lookup else None,
                             tail=len(q) + 1 + cut, lookup=lookup, own=own,
                             keep=own if keep else None)

    def training_sequence(self, context: Tokenized, windows: Sequence[Window], q: Tokenized,
                          r: Tokenized, piece: tuple[int, int], index: int,
                          labels: Optional[np.ndarray] = None,
                          extra: Sequence[np.ndarray] = (), cuts: Sequence[int] = ()
                          ) -> PcwSequence:
        """Every window (then ``extra`` windows' ids, e.g. distractors) and the query
        (with answer blocks, a new block at each answer token index in ``cuts``)."""
        parts = [self._window_ids(context, w) for w in windows] + [np.asarray(e) for e in extra]
        ids, types, pos, query_segments, rs = self._query(q, r, piece, cuts)
        n_ctx = sum(len(p) for p in parts)
        all_ids = np.concatenate([*parts, ids]).astype(np.int64)
        segments = np.concatenate([np.full(len(p), i) for i, p in enumerate(parts)]
                                  + [query_segments]).astype(np.int64)
        positions = np.concatenate([np.arange(len(p)) for p in parts] + [pos]).astype(np.int64)
        all_types = None if types is None else np.concatenate([np.zeros(n_ctx, np.int64), types])
        lab = None
        if labels is not None:
            lab = np.full(len(all_ids), IGNORE, np.int64)
            lab[n_ctx + rs.start:n_ctx + rs.stop] = labels[piece[0]:piece[1]]
        return PcwSequence(all_ids, all_types, positions, segments,
                           slice(n_ctx + rs.start, n_ctx + rs.stop), index, 0, lab)

    # -- the encoded context -----------------------------------------------------------------
    def context_states(self, context: PreparedContext) -> ContextStates:
        return self.states.get(context.key, lambda: self.encode_context(context))

    @torch.inference_mode()
    def encode_context(self, context: PreparedContext, batch_windows: int = 16) -> ContextStates:
        """Every window through every layer, once; keys and values of each kept."""
        windows = [self._window_ids(context.tokens, w) for w in self.windows(context)]
        base, layers = self.model.loop.base, self.model.loop.layers
        keys: list[list[torch.Tensor]] = [[] for _ in layers]
        values: list[list[torch.Tensor]] = [[] for _ in layers]
        for start in range(0, len(windows), batch_windows):
            group = windows[start:start + batch_windows]
            n = max(len(w) for w in group)
            ids = np.full((len(group), n), self.pad_id, np.int64)
            real = np.zeros((len(group), n), bool)
            for i, w in enumerate(group):
                ids[i, :len(w)], real[i, :len(w)] = w, True
            dev = self.device
            ids_t = torch.from_numpy(ids).to(dev)
            real_t = torch.from_numpy(real).to(dev)
            pos = torch.arange(n, device=dev).expand(len(group), n)
            types = torch.zeros_like(ids_t) if self.use_token_types else None
            hidden = base.embeddings(input_ids=ids_t, token_type_ids=types, position_ids=pos)
            mask = (real_t[:, None, None, :] | torch.eye(n, dtype=torch.bool, device=dev))
            for i, layer in enumerate(layers):
                hidden, k, v = bert_layer(layer, hidden, mask=mask)
                for j, w in enumerate(group):
                    keys[i].append(k[j, :, :len(w)])
                    values[i].append(v[j, :, :len(w)])
        dtype = self.state_dtype or next(self.model.parameters()).dtype
        return ContextStates(context.key, sum(len(w) for w in windows), len(windows),
                             tuple(torch.cat(k, 1).to(dtype).contiguous() for k in keys),
                             tuple(torch.cat(v, 1).to(dtype).contiguous() for v in values))

    # -- stage 2: forward ----------------------------------------------------------------
    def collate(self, seqs) -> dict[str, torch.Tensor]:
        """``PcwSequence``s (windows and query concatenated) with the PCW mask."""
        batch, _, mask = padded(self, [(s.input_ids, s.position_ids, s.token_type_ids,
                                        s.segments) for s in seqs], masked=True)
        if not (self.concat_reads_top and self.top_windows):
            return {**batch, "attention_mask": mask}
        segments = np.full(mask.shape[::3], PAD_SEGMENT, np.int64)
        for i, s in enumerate(seqs):
            segments[i, :len(s)] = s.segments
        return {**batch, "attention_mask": mask, "top_windows": self.top_windows,
                "window_segments": torch.from_numpy(segments).to(self.device)}

    @torch.inference_mode()
    def forward(self, seqs, exit_layer: Optional[int] = None) -> list[np.ndarray]:
        """Query sequences read their cached contexts; ``PcwSequence``s (training, cold
        checks) run over the concatenation.  A batch may mix both."""
        cached = [i for i, s in enumerate(seqs) if isinstance(s, QuerySequence)]
        if len(cached) == len(seqs):
            return self._forward_cached(seqs, exit_layer)
        if not cached:
            return super().forward(seqs, exit_layer)
        whole = sorted(set(range(len(seqs))) - set(cached))
        out: list = [None] * len(seqs)
        for idx, probs in ((cached, self._forward_cached([seqs[i] for i in cached], exit_layer)),
                           (whole, super().forward([seqs[i] for i in whole], exit_layer))):
            for i, p in zip(idx, probs):
                out[i] = p
        return out

    def _forward_cached(self, seqs, exit_layer: Optional[int]) -> list[np.ndarray]:
        return forward_queries(self, seqs, self.model.resolve(exit_layer))
