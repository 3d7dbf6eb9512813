"""On a CUDA machine: a check reading its top windows (``attention.top_window_attention``)
against the written-out reference, and what it costs next to the varlen kernel reading
every window.  Needs only torch: ``python scripts/gpu-top-windows.py [--out FILE]``
(``--device cpu`` runs it here)."""
import argparse
import importlib.util
import json
import math
import sys
import time
from pathlib import Path

import torch

spec = importlib.util.spec_from_file_location(
    "attention", Path(__file__).resolve().parent.parent / "guardrail/model/attention.py")
A = importlib.util.module_from_spec(spec)
sys.modules["attention"] = A  # dataclasses look their module up
spec.loader.exec_module(A)


def reference(q, ck, cv, n_windows, top):
    """Written out, one block: every key scored, the block's top windows by attention
    mass kept, softmax over their keys only."""
    H, N, d = ck.shape
    s = (q[0].float() @ ck.float().transpose(-1, -2)) / math.sqrt(d)
    mass = s.view(H, q.shape[2], n_windows, -1).logsumexp(-1).softmax(-1).sum((0, 1))
    keep = torch.zeros(n_windows, dtype=torch.bool, device=q.device)
    keep[mass.topk(top).indices] = True
    s = s.masked_fill(~keep.repeat_interleave(N // n_windows), float("-inf"))
    return (s.softmax(-1) @ cv.float()).unsqueeze(0)


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn, reps=20):
    fn()
    sync()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t) / reps * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="gpu-top-windows.json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    dev = torch.device(args.device)
    torch.manual_seed(0)
    out = {"device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu",
           "torch": torch.__version__,
           "varlen_kernel": A.varlen_kernel(), "checks": [], "timings_ms": []}
    H, d, size, n = 12, 32, 192, 150
    for dtype in (torch.float32, torch.bfloat16):
        for n_windows, top in ((21, 4), (171, 4), (171, 1)):
            q = torch.randn(1, H, n, d, device=dev)
            ck = torch.randn(H, n_windows * size, d, device=dev)
            # windows of clearly different relevance, so that rounding picks no other
            ck += (torch.rand(n_windows, device=dev) * 0.5).repeat_interleave(size)[None, :, None] \
                * q[0].mean(1, keepdim=True)
            ck = ck.to(dtype)
            cv = torch.randn(H, n_windows * size, d, device=dev).to(dtype)
            got, _ = A.top_window_attention(q.to(dtype), ck, cv, A.TopWindows(n_windows, top))
            want = reference(q.to(dtype), ck, cv, n_windows, top)
            out["checks"].append({"dtype": str(dtype), "windows": n_windows, "top": top,
                                  "max_abs_diff": float((got.float() - want).abs().max())})
    # the varlen path reading the top windows against cached_attention in float32, with
    # 4 windows per context made clearly the most relevant (so rounding picks no other)
    if A.varlen_kernel() and dev.type == "cuda":
        for n_windows in (21, 171):
            B = 3
            q = torch.randn(B, H, n, d, device=dev)
            k, v = torch.randn_like(q), torch.randn_like(q)
            real = torch.ones(B, n, dtype=torch.bool, device=dev)
            ctxs = []
            for b in range(B):
                ck = torch.randn(H, n_windows * size, d, device=dev)
                qm = q[b].mean(1, keepdim=True)
                for w in (1, 5, 9, n_windows - 1):
                    ck[:, w * size:(w + 1) * size] += 8 * qm / qm.norm(dim=-1, keepdim=True)
                ctxs.append([(ck, torch.randn_like(ck))])
            picks = [A.TopWindows(n_windows, 4)] * B
            half = [[(a.half(), c.half()) for a, c in parts] for parts in ctxs]
            got = A.varlen_attention(q.half(), k.half(), v.half(), real, half, None, picks)
            want = A.cached_attention(q, k, v, real, ctxs, None, picks)
            out["checks"].append({"dtype": "varlen fp16 vs cached float32",
                                  "windows": n_windows, "top": 4,
                                  "max_abs_diff": float((got.float() - want).abs().max())})
    # a batch of 8 checks, each on its own 4K or 32K context, one layer's attention
    for n_windows in (21, 171):
        B = 8
        q = torch.randn(B, H, n, d, device=dev, dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        real = torch.ones(B, n, dtype=torch.bool, device=dev)
        ctxs = [[(torch.randn(H, n_windows * size, d, device=dev, dtype=torch.bfloat16),
                  torch.randn(H, n_windows * size, d, device=dev, dtype=torch.bfloat16))]
                for _ in range(B)]
        row = {"context_tokens": n_windows * size, "batch": B, "query_tokens": n}
        if A.varlen_kernel() and dev.type == "cuda":
            row["varlen_every_window"] = timed(
                lambda: A.varlen_attention(q, k, v, real, ctxs), args.reps)
        row["cached_every_window"] = timed(
            lambda: A.cached_attention(q, k, v, real, ctxs), args.reps)
        if A.varlen_kernel() and dev.type == "cuda":
            row["varlen_top4_windows"] = timed(lambda: A.varlen_attention(
                q, k, v, real, ctxs, None, [A.TopWindows(n_windows, 4)] * B), args.reps)
        row["top4_windows"] = timed(lambda: A.cached_attention(
            q, k, v, real, ctxs, windows=[A.TopWindows(n_windows, 4)] * B), args.reps)
        out["timings_ms"].append(row)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    # float32 must match; bfloat16 rounding may pick another of two near-equal windows
    bad = [c for c in out["checks"] if c["max_abs_diff"] > (
        1e-4 if c["dtype"] == "torch.float32" else 2e-2 if "varlen" in c["dtype"] else 1e9)]
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
