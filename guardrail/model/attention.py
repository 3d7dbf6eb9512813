"""Attention of a check's query tokens over cached context keys and values.

A Parallel Context Windows check (``guardrail.model.pcw``) reads a context that was
encoded once: its keys and values at every layer, for all windows, lie in one
contiguous tensor per layer.  The query tokens (question and response) attend to
*all* of those plus to each other.  Concatenating the two key sets per check would
copy the whole context (hundreds of MB at 32K tokens) for every sentence, so the two
parts are attended separately and merged by their log-sum-exp (the flash-attention
split-K identity):

    o = (o_ctx * exp(lse_ctx - lse) + o_q * exp(lse_q - lse)),  lse = logaddexp(lse_ctx, lse_q)

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
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn


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


def cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, query_mask: torch.Tensor,
                     contexts: Sequence[Parts],
                     self_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Each query item attends to its own cached parts and to the batch's query keys.

    ``q, k, v``: ``[B, H, L, d]`` of the query tokens; ``query_mask``: ``[B, L]``, True
    on real tokens; ``contexts[b]``: item ``b``'s cached parts (its context's windows,
    then the answer so far where it was kept), each ``(keys, values)`` ``[H, N, d]``
    (N differs per part and item; nothing is padded or copied).  ``self_mask``
    (``[B, 1, L, L]``, boolean): which query keys each query token may read, for
    block-causal answers; default every real token of its item.
    """
    key_mask = query_mask[:, None, None, :] if self_mask is None else self_mask
    o_q, lse_q = _lse_attention(q, k, v, key_mask)
    out = o_q.clone()  # padding rows keep these (nobody reads them)
    for b, parts in enumerate(contexts):  # a bfloat16 part is read in bfloat16
        n = int(query_mask[b].sum())  # only the item's real tokens read its parts
        o, lse = o_q[b:b + 1, :, :n], lse_q[b:b + 1, :, :n]
        for ck, cv in parts:
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


def varlen_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, query_mask: torch.Tensor,
                     contexts: Sequence[Parts],
                     self_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """:func:`cached_attention` on CUDA with a varlen kernel (:func:`varlen_kernel`): one
    call for the whole batch reads every item's cached parts (cu_seqlens per item: its
    real query tokens against its own context, whatever its length); the query tokens'
    attention among themselves (block-causal with ``self_mask``) is the short padded
    part, merged by log-sum-exp.  An item's parts are joined on the device (bandwidth
    there is cheap); nothing is padded to the longest context."""
    B, H, L, d = q.shape
    lens = query_mask.sum(1).tolist()
    qs, ks, vs, cu_q, cu_k = [], [], [], [0], [0]
    for b, parts in enumerate(contexts):
        n = int(lens[b])
        qs.append(q[b, :, :n].transpose(0, 1))
        ks.append(torch.cat([ck.to(q.dtype) for ck, _ in parts], 1).transpose(0, 1))
        vs.append(torch.cat([cv.to(q.dtype) for _, cv in parts], 1).transpose(0, 1))
        cu_q.append(cu_q[-1] + n)
        cu_k.append(cu_k[-1] + ks[-1].shape[0])
    dev = q.device
    o_packed, lse_packed = _varlen(
        torch.cat(qs).contiguous(), torch.cat(ks).contiguous(), torch.cat(vs).contiguous(),
        torch.tensor(cu_q, dtype=torch.int32, device=dev),
        torch.tensor(cu_k, dtype=torch.int32, device=dev), int(max(lens)),
        max(cu_k[i + 1] - cu_k[i] for i in range(B)))
    o_ctx = q.new_zeros(B, L, H, d)
    lse_ctx = torch.full((B, L, H), float("-inf"), device=dev)
    for b in range(B):  # padding rows read no context: their own attention stands
        o_ctx[b, :int(lens[b])] = o_packed[cu_q[b]:cu_q[b + 1]].to(q.dtype)
        lse_ctx[b, :int(lens[b])] = lse_packed[cu_q[b]:cu_q[b + 1]]
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
               varlen: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One BERT-family encoder layer with its own modules, in eval mode.

    Either a plain forward (``mask``: boolean ``[B, 1, L, L]`` or None), used to encode
    context windows, or a query forward that also reads ``contexts`` (cached keys and
    values per item, see :func:`cached_attention`) with ``query_mask`` marking real
    tokens and ``self_mask`` the block-causal pattern among them.  Returns the new hidden
    states and this layer's keys and values ``[B, H, L, d]`` (what a context keeps).
    """
    sa = layer.attention.self
    n_heads = sa.num_attention_heads
    q, k, v = (_heads(proj(hidden), n_heads) for proj in (sa.query, sa.key, sa.value))
    if contexts is None:
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    elif varlen:
        ctx = varlen_attention(q, k, v, query_mask, contexts, self_mask)
    else:
        ctx = cached_attention(q, k, v, query_mask, contexts, self_mask)
    B, _, L, _ = ctx.shape
    attended = layer.attention.output(ctx.transpose(1, 2).reshape(B, L, -1), hidden)
    return layer.output(layer.intermediate(attended), attended), k, v
