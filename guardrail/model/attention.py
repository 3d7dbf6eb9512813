"""Attention of a check's query tokens over cached context keys and values.

A Parallel Context Windows check (``guardrail.model.pcw``) reads a context that was
encoded once: its keys and values at every layer, for all windows, lie in one
contiguous tensor per layer.  The query tokens (question and response) attend to
*all* of those plus to each other.  Concatenating the two key sets per check would
copy the whole context (hundreds of MB at 32K tokens) for every sentence, so the two
parts are attended separately and merged by their log-sum-exp (the flash-attention
split-K identity):

    o = (o_ctx * exp(lse_ctx - lse) + o_q * exp(lse_q - lse)),  lse = logaddexp(lse_ctx, lse_q)

Reading the windows a sentence attends to most.  A 512-position model was trained on a
few windows at a time; over dozens of unrelated windows its attention spreads thin and
every score drops (docs/context-states.md, "Long contexts").  With ``TopWindows``, each
block of a check's query (the question; an answer sentence, or the whole answer) scores
*every* window of its context at every layer by the attention its tokens give it (the
softmax over windows of each token's log-sum-exp there, summed over the block's tokens
and heads) and reads only the ``top`` windows it attends to most: block-sparse attention
whose blocks are the windows, chosen per answer block, so a sentence reads the same
whether it is checked alone on its kept answer so far or within the whole answer.  With
at most ``top`` windows nothing changes.  (Chosen per token instead, each hallucinated
token finds the windows that resemble it most and every score falls; measured in the
docs.)

Cached keys and values may be bfloat16 (half the bytes, and faster on CPUs with
bfloat16 matrix units); the query is then read against them in bfloat16 and the
merge is done in float32.  Kernels: on CPU PyTorch's fused flash kernel
(``_scaled_dot_product_flash_attention_for_cpu``, which returns the log-sum-exp) with a
plain fallback; on CUDA, a varlen flash kernel (flash-attn's, else PyTorch's own) over
the whole batch, each item with its own context length (:func:`varlen_attention`).
``bert_layer`` runs one BERT layer around this attention with the layer's own modules;
tests check it against the Hugging Face layer given the equivalent mask over the
concatenation (the reference).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from guardrail.model.top_mask import WindowRead, top_window_mask


def _lse_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                   mask: Optional[torch.Tensor] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(output, logsumexp)`` of softmax attention, ``q`` ``[B, H, Lq, d]``; ``mask``
    (boolean, True = may attend) broadcasts to ``[B, H, Lq, Lk]``."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    if q.device.type == "cpu":
        # The fused kernel takes an additive mask only; it gives a row that may read
        # nothing output 0 and log-sum-exp 0, where the log-sum-exp must be -inf (that
        # row then weighs nothing in a merge).
        bias = None if mask is None else torch.zeros(mask.shape, dtype=q.dtype).masked_fill_(
            ~mask, float("-inf"))
        try:
            out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                q, k, v, 0.0, False, attn_mask=bias, scale=scale)
        except (RuntimeError, AttributeError, TypeError):  # another torch: the plain path
            pass
        else:
            if mask is not None:
                lse = lse.masked_fill(~mask.any(-1), float("-inf"))
            return out, lse
    scores = torch.matmul(q, k.transpose(-1, -2)).float() * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.exp(scores - lse.unsqueeze(-1)).nan_to_num_(0.0)
    return torch.matmul(probs.to(v.dtype), v), lse


def merge(o_a: torch.Tensor, lse_a: torch.Tensor, o_b: torch.Tensor,
          lse_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention over the union of two key sets from the attention over each: the
    output (in ``o_b``'s dtype) and its log-sum-exp."""
    lse = torch.logaddexp(lse_a.float(), lse_b.float())
    out = (o_a.float() * torch.exp(lse_a - lse).unsqueeze(-1)
           + o_b.float() * torch.exp(lse_b - lse).unsqueeze(-1)).to(o_b.dtype)
    return out, lse


Parts = Sequence[tuple[torch.Tensor, torch.Tensor]]


def _selects(windows: Sequence[Optional[TopWindows]], b: int) -> bool:
    return b < len(windows) and windows[b] is not None and windows[b].selects


SHORTLIST_FROM = 3
"""The first layer a shortlist applies to, by default (earlier ones lose the ranking)."""


@dataclass(frozen=True, eq=False)
class TopWindows:
    """How one check reads its context: the first cached part holds ``count`` windows
    of one length back to back; each block of the check's query tokens reads the
    ``top`` of them it attends to most.  ``blocks``: the blocks as ``(start, end)``
    ranges of the real query tokens (empty: all one block); plain ints, so choosing
    windows never waits on the device.  ``shortlist`` (> ``top``; CPU path only): from
    layer ``shortlist_from`` on, each block scores only the ``shortlist`` windows it
    attended to most in the layer before (one object per forward counts the layers and
    holds them), so the deeper layers of a check over many windows cost about
    ``shortlist / count`` of scoring them all.  Chosen at the first layer, the shortlist
    loses the ranking (docs/context-states.md).  ``sharpen``: each token weighs the
    windows its block chose by their attention mass raised to this power (1: the mass
    itself), the total against its own keys unchanged."""

    count: int
    top: int
    blocks: tuple[tuple[int, int], ...] = ()
    shortlist: int = 0
    shortlist_from: int = SHORTLIST_FROM  # the first layer that reads only the shortlist
    sharpen: float = 1.0
    short: dict = field(default_factory=dict, repr=False)  # block -> its shortlisted windows
    layers: list = field(default_factory=list, repr=False)  # one entry per layer read

    @property
    def selects(self) -> bool:
        return 0 < self.top < self.count

    @property
    def narrows(self) -> bool:
        return self.selects and self.top < self.shortlist < self.count


def per_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, count: int
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of ``q`` (``[H, n, d]``) over each of the ``count`` windows of ``k, v``
    (``[H, N, d]``, windows of one length back to back) on its own: outputs ``[H, count,
    n, d]`` and log-sum-exps ``[H, count, n]``, in one fused call with the heads as the
    batch and the windows as the kernel's heads (a view of the cache, nothing copied)."""
    H, N, d = k.shape
    size = N // count
    if size * count != N:
        raise ValueError(f"{N} cached positions are not {count} windows of one length")
    qw = q.to(k.dtype).unsqueeze(1).expand(H, count, q.shape[1], d)
    return _lse_attention(qw, k.view(H, count, size, d), v.view(H, count, size, d))


def top_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                         pick: TopWindows) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of ``q`` (``[1, H, n, d]``) over its context ``k, v`` (``[H, N, d]``)
    where each block of its tokens reads only the ``pick.top`` windows its tokens give
    the most attention.  Returns the output and its log-sum-exp over what was read,
    for :func:`merge`."""
    blocks = pick.blocks or ((0, q.shape[2]),)
    layer = len(pick.layers)  # this runs once per layer of a forward
    pick.layers.append(layer)
    if pick.narrows and layer >= pick.shortlist_from:  # the windows each block shortlisted
        union = torch.unique(torch.cat([pick.short[j] for j in range(len(blocks))]))
        H, N, d = k.shape
        kw, vw = (x.view(H, pick.count, N // pick.count, d)[:, union].reshape(H, -1, d)
                  for x in (k, v))
        o, lse = per_window_attention(q[0], kw, vw, len(union))
        allowed = [torch.searchsorted(union, pick.short[j]) for j in range(len(blocks))]
        out, total = _read_top(o, lse, pick, allowed)
        return out.unsqueeze(0), total.unsqueeze(0)
    o, lse = per_window_attention(q[0], k, v, pick.count)
    if pick.narrows and layer == pick.shortlist_from - 1:  # each block keeps its best
        mass = lse.float().softmax(1).sum(0)
        for j, (a, b) in enumerate(blocks):
            pick.short[j] = mass[:, a:b].sum(1).topk(pick.shortlist).indices.sort().values
    out, total = _read_top(o, lse, pick)
    return out.unsqueeze(0), total.unsqueeze(0)


def _read_top(o: torch.Tensor, lse: torch.Tensor, pick: TopWindows,
              allowed: Optional[Sequence[torch.Tensor]] = None
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """From each window's attention (``o`` ``[H, W, n, d]``, ``lse`` ``[H, W, n]``), what
    each block reads: the windows its tokens give the most mass (each token's softmax
    over windows of its log-sum-exp there, summed over the block's tokens and the
    heads), merged by log-sum-exp; ``allowed[j]``: the windows block ``j`` may choose
    from (default: all).  ``[H, n, d]`` float32 and ``[H, n]``.  With ``pick.sharpen``
    g, each token weighs the chosen windows by their mass to the power g: the softmax
    of g times its log-sum-exps there, with the same total against its own keys."""
    lse = lse.float()
    mass = lse.softmax(1).sum(0)                                # [W, n]
    H, _, n, d = o.shape
    out = torch.empty(H, n, d, device=o.device)
    total = torch.empty(H, n, device=o.device)
    for j, (a, b) in enumerate(pick.blocks or ((0, n),)):
        score = mass[:, a:b].sum(1)
        if allowed is not None:
            score = torch.full_like(score, -1.0).index_copy_(0, allowed[j], score[allowed[j]])
        chosen = score.topk(pick.top).indices
        o_b, lse_b = o[:, chosen, a:b].float(), lse[:, chosen, a:b]
        total[:, a:b] = lse_b.logsumexp(1)
        weight = torch.exp(lse_b - total[:, a:b].unsqueeze(1)) if pick.sharpen == 1.0 \
            else (pick.sharpen * lse_b).softmax(1)
        out[:, a:b] = (o_b * weight.unsqueeze(-1)).sum(1)
    return out, total


def cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, query_mask: torch.Tensor,
                     contexts: Sequence[Parts],
                     self_mask: Optional[torch.Tensor] = None,
                     windows: Sequence[Optional[TopWindows]] = ()) -> torch.Tensor:
    """Each query item attends to its own cached parts and to the batch's query keys.

    ``q, k, v``: ``[B, H, L, d]`` of the query tokens; ``query_mask``: ``[B, L]``, True
    on real tokens; ``contexts[b]``: item ``b``'s cached parts (its context's windows,
    then the answer so far where it was kept), each ``(keys, values)`` ``[H, N, d]``
    (N differs per part and item; nothing is padded or copied).  ``self_mask``
    (``[B, 1, L, L]``, boolean): which query keys each query token may read, for
    block-causal answers; default every real token of its item.  ``windows[b]``: where
    given and selecting, item ``b``'s blocks read only their top windows of its first
    part (:func:`top_window_attention`).
    """
    key_mask = query_mask[:, None, None, :] if self_mask is None else self_mask
    o_q, lse_q = _lse_attention(q, k, v, key_mask)
    out = o_q.clone()  # padding rows keep these (nobody reads them)
    for b, parts in enumerate(contexts):  # a bfloat16 part is read in bfloat16
        n = int(query_mask[b].sum())  # only the item's real tokens read its parts
        o, lse = o_q[b:b + 1, :, :n], lse_q[b:b + 1, :, :n]
        for j, (ck, cv) in enumerate(parts):
            if j == 0 and _selects(windows, b):
                o_c, lse_c = top_window_attention(q[b:b + 1, :, :n], ck, cv, windows[b])
            else:
                o_c, lse_c = _lse_attention(q[b:b + 1, :, :n].to(ck.dtype), ck.unsqueeze(0),
                                            cv.unsqueeze(0))
            o, lse = merge(o_c, lse_c, o, lse)
        out[b:b + 1, :, :n] = o
    return out


@functools.lru_cache(maxsize=None)
def varlen_kernel() -> Optional[str]:
    """The CUDA varlen kernel at hand: ``flash_attn`` (flash-attn's
    ``flash_attn_varlen_func``) when installed, else ``torch`` (PyTorch's own
    ``torch.nn.attention.varlen.varlen_attn``, 2.10 and newer), else None."""
    try:
        import flash_attn  # noqa: F401
        return "flash_attn"
    except ImportError:
        pass
    try:
        from torch.nn.attention.varlen import varlen_attn  # noqa: F401
        return "torch"
    except ImportError:
        return None


def _varlen(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_q: torch.Tensor,
            cu_k: torch.Tensor, max_q: int, max_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Packed attention (``q`` ``[Tq, H, d]``, ``k, v`` ``[Tk, H, d]``, item ``i`` holding
    rows ``cu[i]:cu[i+1]``): the output ``[Tq, H, d]`` and its log-sum-exp ``[Tq, H]``."""
    H, Tq = q.shape[1], q.shape[0]
    half = q.dtype if q.dtype in (torch.float16, torch.bfloat16) else torch.bfloat16
    q, k, v = (x.to(half) for x in (q, k, v))  # both kernels take half precision only
    if varlen_kernel() == "flash_attn":
        from flash_attn import flash_attn_varlen_func

        out, lse, _ = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k,
                                             softmax_scale=1.0 / math.sqrt(q.shape[-1]),
                                             return_attn_probs=True)
        return out, lse.transpose(0, 1).float()  # flash-attn's lse is [H, Tq]
    from torch.nn.attention.varlen import AuxRequest, varlen_attn

    out, lse = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, return_aux=AuxRequest(lse=True))
    if lse.shape != (Tq, H):  # documented as [Tq, H]; the raw flash op gives [H, Tq]
        lse = lse.transpose(0, 1)
    return out, lse.float()


def _varlen_top_windows(items: Sequence[tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                              TopWindows]]
                        ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """:func:`top_window_attention` with the varlen kernel, for ``(q [n, H, d], k, v,
    pick)`` items: one call in which each item's query, repeated per window, reads each
    of its windows as a key segment of the cache as it lies; per item ``[n, H, d]`` and
    ``[n, H]``."""
    dev = items[0][0].device
    cu_q, cu_k = [0], [0]
    for q, k, _, pick in items:
        for _ in range(pick.count):
            cu_q.append(cu_q[-1] + q.shape[0])
            cu_k.append(cu_k[-1] + k.shape[1] // pick.count)
    o, lse = _varlen(torch.cat([q.repeat(pick.count, 1, 1) for q, _, _, pick in items]),
                     torch.cat([k.transpose(0, 1) for _, k, _, _ in items]),
                     torch.cat([v.transpose(0, 1) for _, _, v, _ in items]),
                     torch.tensor(cu_q, dtype=torch.int32, device=dev),
                     torch.tensor(cu_k, dtype=torch.int32, device=dev),
                     max(q.shape[0] for q, *_ in items),
                     max(k.shape[1] // p.count for _, k, _, p in items))
    out, at = [], 0
    for q, _, _, pick in items:
        n, H, d = q.shape
        rows = slice(at, at + pick.count * n)
        at = rows.stop
        o_i, lse_i = _read_top(o[rows].view(pick.count, n, H, d).permute(2, 0, 1, 3),
                               lse[rows].view(pick.count, n, H).permute(2, 0, 1), pick)
        out.append((o_i.transpose(0, 1), lse_i.transpose(0, 1)))
    return out


def varlen_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, query_mask: torch.Tensor,
                     contexts: Sequence[Parts],
                     self_mask: Optional[torch.Tensor] = None,
                     windows: Sequence[Optional[TopWindows]] = ()) -> torch.Tensor:
    """:func:`cached_attention` on CUDA with a varlen kernel (:func:`varlen_kernel`): one
    call for the whole batch reads every item's cached parts (cu_seqlens per item: its
    real query tokens against its own context, whatever its length); the query tokens'
    attention among themselves (block-causal with ``self_mask``) is the short padded
    part, merged by log-sum-exp.  An item's parts are joined on the device (bandwidth
    there is cheap); nothing is padded to the longest context.  Items that read only
    their top windows read their contexts in a second call, each window a key segment
    (:func:`_varlen_top_windows`), and their other parts in the first."""
    B, H, L, d = q.shape
    lens = query_mask.sum(1).tolist()
    picks = [windows[b] if _selects(windows, b) else None for b in range(B)]
    packed = [(b, parts[1:] if picks[b] else parts) for b, parts in enumerate(contexts)]
    packed = [(b, parts) for b, parts in packed if parts]
    dev = q.device
    o_ctx = q.new_zeros(B, L, H, d)
    lse_ctx = torch.full((B, L, H), float("-inf"), device=dev)
    if packed:
        qs, ks, vs, cu_q, cu_k = [], [], [], [0], [0]
        for b, parts in packed:
            n = int(lens[b])
            qs.append(q[b, :, :n].transpose(0, 1))
            ks.append(torch.cat([ck.to(q.dtype) for ck, _ in parts], 1).transpose(0, 1))
            vs.append(torch.cat([cv.to(q.dtype) for _, cv in parts], 1).transpose(0, 1))
            cu_q.append(cu_q[-1] + n)
            cu_k.append(cu_k[-1] + ks[-1].shape[0])
        o_packed, lse_packed = _varlen(
            torch.cat(qs).contiguous(), torch.cat(ks).contiguous(), torch.cat(vs).contiguous(),
            torch.tensor(cu_q, dtype=torch.int32, device=dev),
            torch.tensor(cu_k, dtype=torch.int32, device=dev), int(max(lens)),
            max(cu_k[i + 1] - cu_k[i] for i in range(len(packed))))
        for i, (b, _) in enumerate(packed):  # padding rows read no context
            o_ctx[b, :int(lens[b])] = o_packed[cu_q[i]:cu_q[i + 1]].to(q.dtype)
            lse_ctx[b, :int(lens[b])] = lse_packed[cu_q[i]:cu_q[i + 1]]
    reading = [b for b, pick in enumerate(picks) if pick is not None]
    if reading:
        read = _varlen_top_windows([(q[b, :, :int(lens[b])].transpose(0, 1), *contexts[b][0],
                                     picks[b]) for b in reading])
        for b, (o_w, lse_w) in zip(reading, read):
            n = int(lens[b])
            o_ctx[b, :n], lse_ctx[b, :n] = merge(o_w, lse_w, o_ctx[b, :n], lse_ctx[b, :n])
    key_mask = query_mask[:, None, None, :] if self_mask is None else self_mask
    o_q, lse_q = _lse_attention(q, k, v, key_mask)
    out, _ = merge(o_ctx.transpose(1, 2), lse_ctx.transpose(1, 2), o_q, lse_q)
    return out


def _heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    B, L, D = x.shape
    return x.view(B, L, n_heads, D // n_heads).transpose(1, 2)


def bert_layer(layer: nn.Module, hidden: torch.Tensor, *, mask: Optional[torch.Tensor] = None,
               query_mask: Optional[torch.Tensor] = None,
               contexts: Optional[Sequence[Parts]] = None, self_mask: Optional[torch.Tensor] = None,
               varlen: bool = False, windows: Sequence[Optional[TopWindows]] = (),
               read: Optional[WindowRead] = None
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One BERT-family encoder layer with its own modules (attention dropout in
    training mode).

    Either a plain forward (``mask``: boolean ``[B, 1, L, L]`` or None), used to encode
    context windows; or over windows and query concatenated, each query block reading
    its top windows (``read``, ``model.top_mask``); or a query forward that also reads
    ``contexts`` (cached keys and values per item, see :func:`cached_attention`) with
    ``query_mask`` marking real tokens, ``self_mask`` the block-causal pattern among
    them, and ``windows`` which windows each item's blocks read
    (:func:`cached_attention`).  Returns the new hidden states and this layer's keys and
    values ``[B, H, L, d]`` (what a context keeps).
    """
    sa = layer.attention.self
    n_heads = sa.num_attention_heads
    q, k, v = (_heads(proj(hidden), n_heads) for proj in (sa.query, sa.key, sa.value))
    if contexts is None:
        mask = mask if read is None else top_window_mask(q, k, read)
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                             dropout_p=sa.dropout.p if layer.training else 0.0)
    elif varlen:
        ctx = varlen_attention(q, k, v, query_mask, contexts, self_mask, windows)
    else:
        ctx = cached_attention(q, k, v, query_mask, contexts, self_mask, windows)
    B, _, L, _ = ctx.shape
    attended = layer.attention.output(ctx.transpose(1, 2).reshape(B, L, -1), hidden)
    return layer.output(layer.intermediate(attended), attended), k, v
