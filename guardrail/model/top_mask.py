"""The top-window read over windows and query concatenated: training reads as serving does.

A check over more than ``top`` windows reads, at every layer, in each block of its query
(the question, a sentence) only the ``top`` windows that block's tokens give the most
attention (``attention.top_window_attention``).  Over the concatenation -- the reference
forward and training -- the same choice is a mask: at each layer, each query token's
attention over the context keys is summed per window, over the heads and the block's
tokens, and the block's rows keep only the keys of its best ``top`` windows.  The share
of a token's attention that falls in a window is the softmax over windows of the
per-window log-sum-exps that serving reads, so the two choose the same windows
(``tests/test_top_mask.py`` holds them equal).  The choice is not differentiated; the
attention over what was chosen is.  A shortlist (``TopWindows.shortlist``) is not
modelled: it is off by default and a serving-side saving.

Without it a model trained on its few windows with full attention is served reading
its top 4 of dozens; docs/context-states.md measures what that costs at 8K and 32K.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

PAD_SEGMENT = -(1 << 40)
"""The segment of a padding token: below every query block's (``QUERY - 1 - b``)."""


@dataclass(frozen=True, eq=False)
class WindowRead:
    """What every layer of a concatenated forward reads: the PCW ``mask`` (``[B, 1, L, L]``,
    True = may attend), each token's ``segments`` (``[B, L]``: window index >= 0, the
    query's blocks < 0, padding ``PAD_SEGMENT``; an item's windows come first) and how
    many windows each block reads (``top`` > 0)."""

    mask: torch.Tensor
    segments: torch.Tensor
    top: int


def top_window_mask(q: torch.Tensor, k: torch.Tensor, read: WindowRead) -> torch.Tensor:
    """``read.mask`` where each query block of an item with more than ``read.top`` windows
    keeps, of the context, only the keys of the windows its tokens attend to most at this
    layer.  ``q, k``: ``[B, H, L, d]``, this layer's queries and keys."""
    mask = read.mask
    scale = q.shape[-1] ** -0.5
    with torch.no_grad():
        for b in range(q.shape[0]):
            seg = read.segments[b]
            n_windows = int(seg.max()) + 1
            if n_windows <= read.top:
                continue
            n_ctx = int((seg >= 0).sum())
            rows = torch.nonzero((seg < 0) & (seg > PAD_SEGMENT)).squeeze(1)
            share = ((q[b][:, rows] @ k[b][:, :n_ctx].transpose(-1, -2)).float() * scale
                     ).softmax(-1).sum(0)                                  # [rows, n_ctx]
            mass = torch.zeros(len(rows), n_windows, device=q.device).index_add_(
                1, seg[:n_ctx], share)
            blocks = seg[rows]
            for block in torch.unique(blocks).tolist():
                mine = blocks == block
                chosen = mass[mine].sum(0).topk(read.top).indices
                unread = ~torch.isin(seg[:n_ctx], chosen)
                if mask is read.mask:
                    mask = mask.clone()
                mask[b, 0, rows[mine].unsqueeze(1), torch.nonzero(unread).squeeze(1)] = False
    return mask
