"""The kernel and window-scoring measurements quoted in docs/context-states.md
("Fewer re-reads of the answer so far", "bfloat16 weights on the CPU").

    .venv/bin/python scripts/attention_probes.py dtypes      # per-window attention by dtype
    .venv/bin/python scripts/attention_probes.py ffn         # an FFN block, float32 vs bfloat16
    .venv/bin/python scripts/attention_probes.py centroids   # window choice from key centroids

``dtypes``: ``per_window_attention`` of 16 / 64 / 160 query tokens over 26 windows of
192 keys (a 4K context), median ms.  ``ffn``: 384 -> 1536 -> 384 with GELU on 32 / 165 /
512 tokens.  ``centroids``: over six real 4K contexts and a 4-sentence answer read by the
shipped ``pcw``, each window's keys per head and layer clustered (k-means, 6 rounds) into
16 / 48 / 96 centroids; how often the top 4 windows by the estimated mass are the exact
top 4, and how often the exact top 4 lie in the estimate's top 6 / 8.
"""

from __future__ import annotations

import math
import sys
import time

import torch


def _median_ms(fn, repeats: int = 30) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * sorted(times)[len(times) // 2]


def dtypes() -> None:
    from guardrail.model.attention import per_window_attention

    H, d, W, S = 12, 32, 26, 192
    for n in (16, 64, 160):
        q, k, v = torch.randn(H, n, d), torch.randn(H, W * S, d), torch.randn(H, W * S, d)
        for dt in (torch.float32, torch.bfloat16, torch.float16):
            qq, kk, vv = q.to(dt), k.to(dt), v.to(dt)
            ms = _median_ms(lambda: per_window_attention(qq, kk, vv, W))
            print(f"{n} query tokens, {dt}: {ms:.2f} ms")


def ffn() -> None:
    for n in (32, 165, 512):
        for dt in (torch.float32, torch.bfloat16):
            up, down = torch.nn.Linear(384, 1536).to(dt), torch.nn.Linear(1536, 384).to(dt)
            x = torch.randn(n, 384, dtype=dt)
            ms = _median_ms(lambda: down(torch.nn.functional.gelu(up(x))))
            print(f"{n} tokens, {dt}: {ms:.3f} ms")


def _kmeans(x: torch.Tensor, c: int, rounds: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    """Centroids ``[P, c, d]`` and their sizes ``[P, c]`` of ``x`` ``[P, S, d]``."""
    cen = x[:, torch.linspace(0, x.shape[1] - 1, c).long()].clone()
    for _ in range(rounds):
        member = torch.nn.functional.one_hot(torch.cdist(x, cen).argmin(-1), c).float()
        size = member.sum(1)
        cen = torch.where(size[..., None] > 0,
                          torch.bmm(member.transpose(1, 2), x) / size.clamp(min=1)[..., None], cen)
    return cen, size


def centroids() -> None:
    import guardrail.model.attention as attention
    from guardrail.bench import bench_documents, find_data_dir
    from guardrail.bench.context import QUESTION, SENTENCES, _context
    from guardrail.model import DetectInput, PcwDetector

    det = PcwDetector.from_pretrained("pcw", dtype=torch.float32)
    docs, _ = bench_documents(find_data_dir("../shared/data"))
    reads, exact_read = [], attention.top_window_attention

    def spy(q, k, v, pick):
        reads.append((q[0].clone(), k, pick.count, pick.blocks))
        return exact_read(q, k, v, pick)

    attention.top_window_attention = spy
    answer = " ".join(SENTENCES[i % 4] for i in range(4))
    for i in range(6):
        det.detect_batch([DetectInput(_context(det, docs, 4096, skip=5 * i), QUESTION, answer)])
    attention.top_window_attention = exact_read
    for c in (16, 48, 96):
        same = in6 = in8 = blocks = 0
        for q, k, count, ranges in reads:
            H, N, d = k.shape
            kw = k.float().view(H, count, N // count, d)
            exact = (torch.einsum("hnd,hwsd->hnws", q.float(), kw) / math.sqrt(d)).logsumexp(-1)
            cen, size = _kmeans(kw.reshape(H * count, N // count, d), c)
            cen, size = cen.view(H, count, c, d), size.view(H, count, c)
            est = (torch.einsum("hnd,hwcd->hnwc", q.float(), cen) / math.sqrt(d)
                   + size.clamp(min=1e-9).log()[:, None]).logsumexp(-1)
            for a, b in ranges or ((0, q.shape[1]),):
                top = set(exact[:, a:b].softmax(-1).sum((0, 1)).topk(4).indices.tolist())
                mass = est[:, a:b].softmax(-1).sum((0, 1))
                same += len(top & set(mass.topk(4).indices.tolist())) / 4
                in6 += top <= set(mass.topk(6).indices.tolist())
                in8 += top <= set(mass.topk(8).indices.tolist())
                blocks += 1
        print(f"{c} centroids per window: {blocks} block-layers, top 4 the same "
              f"{same / blocks:.2f}, exact top 4 within the top 6 {in6 / blocks:.2f}, "
              f"top 8 {in8 / blocks:.2f}")


if __name__ == "__main__":
    {"dtypes": dtypes, "ffn": ffn, "centroids": centroids}[sys.argv[1]]()
