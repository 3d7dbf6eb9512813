"""The CUDA varlen path of a cached check (``attention.varlen_attention``).

On every machine: the packing, unpacking and log-sum-exp merge around the kernel, with
the kernel replaced by packed attention written out in full, against
``cached_attention`` (itself checked against the reference over the concatenation in
test_pcw.py): items with different context lengths and parts, padded queries, and the
block-causal answer pattern.  On a GPU machine: the real kernel (flash-attn's, else
PyTorch's), and whole checks of the shipped answer-blocks model on CUDA against the
same checks on CPU.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from guardrail.model import attention
from guardrail.model.attention import (TopWindows, cached_attention, varlen_attention,
                                       varlen_kernel)
from guardrail.model.queries import QUERY, pcw_mask

CUDA = torch.cuda.is_available() and varlen_kernel() is not None
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA and a varlen kernel "
                                                 "(PyTorch >= 2.10 or flash-attn)")


def _packed_reference(q, k, v, cu_q, cu_k, max_q, max_k):
    """Packed attention item by item: ``[Tq, H, d]`` and its log-sum-exp ``[Tq, H]``."""
    outs, lses = [], []
    for i in range(len(cu_q) - 1):
        qi = q[cu_q[i]:cu_q[i + 1]].transpose(0, 1).float()
        ki = k[cu_k[i]:cu_k[i + 1]].transpose(0, 1).float()
        vi = v[cu_k[i]:cu_k[i + 1]].transpose(0, 1).float()
        s = qi @ ki.transpose(-1, -2) / math.sqrt(q.shape[-1])
        lse = s.logsumexp(-1)
        outs.append((torch.softmax(s, -1) @ vi).transpose(0, 1).to(q.dtype))
        lses.append(lse.transpose(0, 1))
    return torch.cat(outs), torch.cat(lses)


def _batch(device="cpu", dtype=torch.float32, blocks=False):
    """Three items: 2, 1 and 3 cached parts of different lengths; 7, 4 and 9 real query
    tokens padded to 9; with ``blocks`` the answer read block-causally."""
    g = torch.Generator().manual_seed(0)
    H, d, L = 4, 16, 9

    def r(*shape):
        return torch.randn(*shape, generator=g).to(device, dtype)

    q, k, v = r(3, H, L, d), r(3, H, L, d), r(3, H, L, d)
    lens = [7, 4, 9]
    real = torch.zeros(3, L, dtype=torch.bool, device=device)
    for b, n in enumerate(lens):
        real[b, :n] = True
    contexts = [[(r(H, 40, d), r(H, 40, d)), (r(H, 13, d), r(H, 13, d))],
                [(r(H, 70, d), r(H, 70, d))],
                [(r(H, 5, d), r(H, 5, d)), (r(H, 31, d), r(H, 31, d)), (r(H, 2, d), r(H, 2, d))]]
    self_mask = None
    if blocks:
        m = np.zeros((3, 1, L, L), bool)
        for b, n in enumerate(lens):
            seg = np.array([QUERY] * 2 + [QUERY - 1] * (n - 2 - n // 3) + [QUERY - 2] * (n // 3))
            m[b, 0, :n, :n] = pcw_mask(seg)
            m[b, 0, np.arange(n, L), np.arange(n, L)] = True
        self_mask = torch.from_numpy(m).to(device)
    return q, k, v, real, contexts, self_mask


def _top_windows():
    """Item 0 reads 2 of its first part's 5 windows (of 8 keys), per block of its 7
    tokens; item 1 3 of its 7 windows (of 10), as one block; item 2 everything."""
    return [TopWindows(5, 2, ((0, 2), (2, 5), (5, 7))), TopWindows(7, 3), None]


@pytest.mark.parametrize("blocks", [False, True])
@pytest.mark.parametrize("top", [False, True])
def test_packing_and_merge_around_the_kernel_equal_cached_attention(monkeypatch, blocks, top):
    q, k, v, real, contexts, self_mask = _batch(blocks=blocks)
    windows = _top_windows() if top else ()
    seen = []

    def kernel(*args):
        seen.append(args[3:])
        return _packed_reference(*args)

    monkeypatch.setattr(attention, "_varlen", kernel)
    got = varlen_attention(q, k, v, real, contexts, self_mask, windows)
    want = cached_attention(q, k, v, real, contexts, self_mask, windows)
    for b, n in enumerate(real.sum(1).tolist()):  # padding rows are read by nobody
        torch.testing.assert_close(got[b, :, :n], want[b, :, :n], atol=1e-5, rtol=1e-5)
    cu_k, max_q, max_k = seen[0][1].tolist(), seen[0][2], seen[0][3]
    if not top:
        assert cu_k == [0, 53, 123, 161] and (max_q, max_k) == (9, 70)  # nothing padded
        return
    # the batch's call holds item 0's other part and item 2's; a second one each
    # window of items 0 and 1 as a key segment of its own
    assert cu_k == [0, 13, 51] and (max_q, max_k) == (9, 38)
    assert seen[1][1].tolist() == list(range(0, 41, 8)) + list(range(50, 111, 10))
    assert not torch.allclose(got[0, :, :7], varlen_attention(
        q, k, v, real, contexts, self_mask)[0, :, :7])  # reading 2 windows is not all 5


def test_a_float32_model_gives_the_kernel_half_precision(monkeypatch):
    """Both kernels take fp16/bf16 only; a float32 model on CUDA (training keeps float32
    weights, and its calibration pass runs outside autocast) crashed with "FlashAttention
    only support fp16 and bf16" before ``_varlen`` cast its inputs.  PyTorch's kernel is
    replaced by the packed reference, recording what it was given."""
    varlen = pytest.importorskip("torch.nn.attention.varlen")
    q, k, v, real, contexts, self_mask = _batch(blocks=True)
    dtypes = []

    def kernel(q, k, v, cu_q, cu_k, max_q, max_k, return_aux=None):
        dtypes.append({q.dtype, k.dtype, v.dtype})
        return _packed_reference(q, k, v, cu_q, cu_k, max_q, max_k)

    monkeypatch.setattr(attention, "varlen_kernel", lambda: "torch")
    monkeypatch.setattr(varlen, "varlen_attn", kernel)
    got = varlen_attention(q, k, v, real, contexts, self_mask)
    want = cached_attention(q, k, v, real, contexts, self_mask)
    assert dtypes == [{torch.bfloat16}] and got.dtype == torch.float32
    for b, n in enumerate(real.sum(1).tolist()):
        torch.testing.assert_close(got[b, :, :n], want[b, :, :n], atol=3e-2, rtol=3e-2)


@needs_cuda
@pytest.mark.gpu
@pytest.mark.parametrize("blocks", [False, True])
def test_the_cuda_kernel_equals_cached_attention(blocks):  # pragma: no cover - GPU only
    q, k, v, real, contexts, self_mask = _batch("cuda", torch.bfloat16, blocks)
    got = varlen_attention(q, k, v, real, contexts, self_mask).float()
    want = cached_attention(q.float(), k.float(), v.float(), real,
                            [[(a.float(), b.float()) for a, b in parts] for parts in contexts],
                            self_mask)
    for b, n in enumerate(real.sum(1).tolist()):
        torch.testing.assert_close(got[b, :, :n], want[b, :, :n], atol=3e-2, rtol=3e-2)


@needs_cuda
@pytest.mark.gpu
def test_checks_on_cuda_equal_checks_on_cpu():  # pragma: no cover - GPU machines only
    """The shipped answer-blocks model, three streams' checks on different contexts in
    one batch, in flight (the answer so far kept, then reused) and at full depth."""
    from guardrail.model import DetectInput, PcwDetector

    from test_pcw import ANSWER, FILLER, PARIS, QUESTION

    cpu = PcwDetector.from_pretrained("pcw", device="cpu")
    gpu = PcwDetector.from_pretrained("pcw", device="cuda", dtype=torch.float16)
    assert gpu.answer_blocks
    items = [(FILLER * 30 + PARIS, QUESTION, ANSWER),
             (PARIS + FILLER * 3, "", "It was completed in 1889. It is 330 metres tall."),
             (FILLER * 8, "What opens on Saturdays?", "A market opens on Saturdays.")]
    for exit_layer in (4, None):
        for det in (cpu, gpu):
            det.prefixes = type(det.prefixes)()
        firsts = [DetectInput(c, q, a[:a.find(". ") + 1] if ". " in a else a) for c, q, a in items]
        whole = [DetectInput(c, q, a, a.find(". ") + 2 if ". " in a else 0) for c, q, a in items]
        for batch in (firsts, whole):  # the second batch reads the answer the first kept
            a = cpu.detect_batch(batch, exit_layer=exit_layer)
            b = gpu.detect_batch(batch, exit_layer=exit_layer)
            for x, y in zip(a, b):
                np.testing.assert_allclose(y.token_probs, x.token_probs, atol=3e-2)
        assert gpu.prefixes.stats().hits >= 2
