"""``guardrail bench context``: a check against an encoded context vs re-encoding it.

For each context length (512 ... 32K tokens of real documents) and each exit:

* ``encode``: encoding the context once (every window through every layer; what a
  Parallel Context Windows model pays on a cache miss);
* ``cached``: one sentence check reading the encoded context (``PcwDetector``:
  the query tokens only, attending to every window's cached keys and values);
  ``cached_bf16`` with the states kept in bfloat16 (``cache.states_dtype``);
  ``kept``: the same check by a model with answer blocks that finds the answer so
  far kept by the check before it (``model.prefixes``): only the sentence's tokens run;
* ``reencode_all`` / ``reencode_top2``: the cross-encoder's check, which encodes
  context windows with the query every time: all windows (the end-of-stream pass) or
  the two BM25-best (the in-flight default); all windows is skipped above
  ``max_all_windows_tokens`` (it is linear in the context and the curve shows it).

``throughput`` (``batch`` > 0; 8 on CUDA by default): ``batch`` sentence checks on as
many different contexts of the length, full depth, in one batch: checks per second
with the contexts cached (``cached_per_s``) and with each check paying for its
context's encoding too (``cold_per_s``, what a cross-encoder reading the whole context
pays every time); the published 32K ModernBERT verifier's full-depth figures are
recorded beside them (``PUBLISHED``).

The weights are in ``dtype`` (default auto: as ``detector.dtype`` serves them, bfloat16
on CUDA and on CPUs that multiply it natively); the states in float32 for ``cached``
and ``kept``, in bfloat16 for ``cached_bf16``, whatever the weights.

The measured configurations of one length are interleaved so they share the noise.
The response read by a check grows as in a stream: ``left_sentences`` sentences
before the one checked.  Bytes per context token of the encoded states are recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from guardrail.bench import (SCHEMA_VERSION, Target, Timing, bench_documents, find_data_dir,
                             interleaved, machine_info, ratio)

QUESTION = "What do the documents say about the project and its results?"
SENTENCES = ("The project was planned by a small team in the north of the country.",
             "It was paid for by the regional government and two private donors.",
             "The work was finished three years later than first announced.",
             "The team reported that the new method halved the cost of each test.")


@dataclass(frozen=True)
class ContextBenchConfig:
    model: Optional[str] = None        # a PCW model; None: the shipped weights read as PCW
    cross_model: Optional[str] = None  # the cross-encoder; None: the shipped default
    context_tokens: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384, 32768)
    exits: tuple[Optional[int], ...] = (2, 4, None)
    left_sentences: int = 3
    warmup: int = 1
    repeats: int = 5
    encode_repeats: int = 2
    max_all_windows_tokens: int = 8192
    redis_url: Optional[str] = None    # also time moving the states through Redis (fp16)
    data_dir: Optional[str] = None
    device: str = "cpu"                # cuda: the varlen kernel
    dtype: str = "auto"                # the weights, as ``detector.dtype`` (auto: as served)
    batch: Optional[int] = None        # checks per batch for throughput (None: 8 on CUDA, off)

    @classmethod
    def quick(cls, **kw: Any) -> "ContextBenchConfig":
        return replace(cls(context_tokens=(256, 1024), exits=(2, None), repeats=2,
                           encode_repeats=1, warmup=0, left_sentences=1), **kw)


# A 32K ModernBERT verifier's published full-depth throughput, sequences per second
# (512 tokens at batch 8; 24K tokens): the figures #13 asks ours to be reported beside.
PUBLISHED = {"source": "32K ModernBERT hallucination verifier (model card figures)",
             "per_s": {"512": 487.0, "24576": 15.0}}


def _context(det, documents: list[str], tokens: int, skip: int = 0):
    """Whole documents joined until the context holds ``tokens`` tokens, then cut."""
    from guardrail.model.inputs import PreparedContext, Tokenized

    text, i = "", skip
    while True:
        text += documents[i % len(documents)].strip() + "\n\n"
        i += 1
        ctx = det.prepare_context(text)
        if ctx.n_tokens >= tokens:
            end = int(ctx.tokens.offsets[tokens - 1, 1])
            t = ctx.tokens
            return PreparedContext(f"{ctx.key}:{tokens}", ctx.text[:end],
                                   Tokenized(t.ids[:tokens], t.offsets[:tokens]),
                                   ctx.tokenizer_name)


def run(cfg: ContextBenchConfig, log: Callable[[str], None] = print) -> dict:
    import torch

    from guardrail.engine.build import model_dtype
    from guardrail.model import DetectInput, Detector, PcwDetector
    from guardrail.model.windows import TopKWindows

    dev = cfg.device
    dtype = model_dtype(cfg.dtype, dev)
    pcw = PcwDetector.from_pretrained(cfg.model, device=dev, dtype=dtype)
    pcw.state_dtype = torch.float32  # whatever the weights: the float32-states rows
    half = PcwDetector(pcw.model, pcw.tokenizer, meta=pcw.meta)  # bfloat16 states
    half.state_dtype = torch.bfloat16
    kept = PcwDetector(pcw.model, pcw.tokenizer,
                       meta={**pcw.meta, "pcw": {**pcw.meta["pcw"], "answer": "sentences"}})
    kept.states, kept.state_dtype = pcw.states, torch.float32  # the same encoded contexts
    cross = Detector.from_pretrained(cfg.cross_model, device=dev, dtype=dtype)
    sync = torch.cuda.synchronize if dev.startswith("cuda") else (lambda: None)
    batch = cfg.batch if cfg.batch is not None else (8 if dev.startswith("cuda") else 0)
    docs, source = bench_documents(find_data_dir(cfg.data_dir))
    n = cfg.left_sentences
    response = " ".join(SENTENCES[i % len(SENTENCES)] for i in range(n + 1))
    start = len(response) - len(SENTENCES[n % len(SENTENCES)])  # the checked sentence
    rows = []
    for size in cfg.context_tokens:
        ctx = _context(pcw, docs, size)
        cross_ctx = _context(cross, docs, size)
        encode = []
        for _ in range(cfg.encode_repeats + (1 if dev.startswith("cuda") else 0)):
            t0 = time.perf_counter()
            states = pcw.encode_context(ctx)
            sync()
            encode.append(time.perf_counter() - t0)
        encode = encode[-cfg.encode_repeats:]  # on CUDA the first one warms the kernels
        pcw.states.get(ctx.key, lambda: states)
        half_states = half.context_states(ctx)
        inp, cross_inp = DetectInput(ctx, QUESTION, response), DetectInput(cross_ctx, QUESTION,
                                                                          response)
        top2 = TopKWindows(2)
        kept_inp = DetectInput(ctx, QUESTION, response, start, keep=False)  # each repeat
        # reads the kept prefix; one that kept its own states would resume from them
        prior = response[:start].rstrip()  # the check before keeps the answer so far
        before = prior.rfind(". ") + 2 if ". " in prior else 0
        kept.detect_batch([DetectInput(ctx, QUESTION, prior, before)])
        fns: dict[str, Callable[[], object]] = {}
        for e in cfg.exits:
            tag = "full" if e is None else f"exit{e}"
            fns[f"cached_{tag}"] = lambda e=e: pcw.detect_batch([inp], exit_layer=e)
            fns[f"cached_bf16_{tag}"] = lambda e=e: half.detect_batch([inp], exit_layer=e)
            fns[f"kept_{tag}"] = lambda e=e: kept.detect_batch([kept_inp], exit_layer=e)
            fns[f"reencode_top2_{tag}"] = lambda e=e: cross.detect_batch(
                [cross_inp], exit_layer=e, selector=top2)
            if size <= cfg.max_all_windows_tokens:
                fns[f"reencode_all_{tag}"] = lambda e=e: cross.detect_batch([cross_inp],
                                                                            exit_layer=e)
        timings = interleaved(fns, warmup=cfg.warmup, repeats=cfg.repeats)
        row = {"context_tokens": size, "windows": states.n_windows,
               "encode": Timing.of(encode).to_json(),
               "state_bytes": states.nbytes,
               "state_bytes_per_token": round(states.nbytes / max(states.n_tokens, 1), 1),
               "state_bytes_per_token_bf16": round(half_states.nbytes / states.n_tokens, 1),
               "checks": {k: v.to_json() for k, v in timings.items()},
               "kept_checks_reused": kept.prefixes.stats().hits}  # all of them, or kept_* lie
        if cfg.redis_url:
            row["redis_fp16"] = _redis_round_trip(cfg.redis_url, states, cfg.encode_repeats)
        if batch:
            row["throughput"] = _throughput(pcw, docs, size, batch, response, cfg, sync)
            log(f"{size:>6} tokens x {batch}: {row['throughput']['cached_per_s']} checks/s "
                f"cached, {row['throughput']['cold_per_s']} with the encoding")
        full = timings.get("cached_full")
        row["encode_over_cached_full"] = ratio(Timing.of(encode).median_ms,
                                               full.median_ms if full else None)
        half.states = type(half.states)()  # keep one context's states at a time
        pcw.states = kept.states = type(pcw.states)()
        kept.prefixes = type(kept.prefixes)()
        rows.append(row)
        log(f"{size:>6} tokens: encode {row['encode']['median_ms']:.0f} ms, "
            + ", ".join(f"{k} {v.median_ms:.0f}" for k, v in timings.items()))
    return {"schema": SCHEMA_VERSION, "benchmark": "context", "machine": machine_info(dev),
            "settings": {**cfg.__dict__, "documents": source, "response_sentences": n + 1,
                         "window": pcw.window, "overlap": pcw.overlap, "batch": batch,
                         "dtype": str(next(pcw.model.parameters()).dtype),
                         "attention": _kernel(dev)},
            "published": PUBLISHED if batch else None,
            "rows": rows, "targets": [t.to_json() for t in targets(rows)]}


def _kernel(device: str) -> str:
    from guardrail.model.attention import varlen_kernel

    if device.startswith("cuda") and varlen_kernel():
        return f"varlen ({varlen_kernel()})"
    return "per-part log-sum-exp merge (CPU flash kernel)"


def _throughput(pcw, docs: list[str], size: int, batch: int, response: str,
                cfg: ContextBenchConfig, sync) -> dict:
    """``batch`` checks, each on its own context of ``size`` tokens, at full depth in
    one batch: per second with the contexts cached, and with their encoding paid too."""
    from guardrail.model import DetectInput

    contexts = [_context(pcw, docs, size, skip=7 * i) for i in range(batch)]
    inputs = [DetectInput(c, QUESTION, response) for c in contexts]
    pcw.states = type(pcw.states)(max_bytes=1 << 40)  # all of them, whatever the bound
    for c in contexts:
        pcw.states.put(c.key, pcw.encode_context(c))
    sync()
    checks, encodes = [], []
    for _ in range(cfg.warmup + cfg.repeats):
        t0 = time.perf_counter()
        pcw.detect_batch(inputs)
        checks.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for c in contexts[:max(1, batch // 4)]:
            pcw.encode_context(c)
        sync()
        encodes.append((time.perf_counter() - t0) / max(1, batch // 4))
    checks, encodes = checks[cfg.warmup:], encodes[cfg.warmup:]
    check_s, encode_s = Timing.of(checks).median_ms / 1000, Timing.of(encodes).median_ms / 1000
    pcw.states = type(pcw.states)()
    return {"batch": batch, "check_batch": Timing.of(checks).to_json(),
            "encode_one": Timing.of(encodes).to_json(),
            "cached_per_s": round(batch / check_s, 1),
            "cold_per_s": round(batch / (check_s + batch * encode_s), 1),
            "context_tokens_per_s_encoded": round(size / encode_s)}


def targets(rows: list[dict]) -> list[Target]:
    """One cached full-depth check against encoding the context, at the largest length,
    with the states in float32 and in bfloat16 (``cache.states_dtype``), and with the
    answer so far kept by the check before (answer blocks)."""
    r = rows[-1]
    encode = r["encode"]["median_ms"]
    return [Target(f"one cached full-depth check ({name} states) costs <= 1/20 of encoding "
                   f"the context ({r['context_tokens']} tokens)",
                   ratio(encode, r["checks"][key]["median_ms"]) if key in r["checks"] else None,
                   20.0, ">=", "x") for name, key in (("float32", "cached_full"),
                                                      ("bfloat16", "cached_bf16_full"),
                                                      ("float32, answer so far kept",
                                                       "kept_full"))]


def _redis_round_trip(url: str, states, repeats: int) -> dict:
    """What sharing encoded states through Redis would cost: the fp16 bytes, one SET,
    and GET + back to float32 tensors (timed), against encoding the context again."""
    import numpy as np
    import redis
    import torch

    client = redis.Redis.from_url(url)
    key = f"guardrail-bench:states:{states.key[:16]}"
    blob = b"".join(t.to(torch.float16).numpy().tobytes() for t in (*states.keys, *states.values))
    if len(blob) > 512 * 2**20:
        return {"bytes": len(blob), "skipped": "over Redis's 512 MB value limit"}
    t0 = time.perf_counter()
    client.set(key, blob, ex=60)
    set_s = time.perf_counter() - t0
    gets = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        data = client.get(key)
        torch.from_numpy(np.frombuffer(data, np.float16).copy()).float()
        gets.append(time.perf_counter() - t0)
    client.delete(key)
    client.close()
    return {"bytes": len(blob), "set_ms": round(1000 * set_s, 1),
            "get_and_decode": Timing.of(gets).to_json()}


def write(out, result: dict) -> list:
    """``OUT/context.json`` and ``OUT/context.png``: ms per check vs context length."""
    from guardrail.bench.report import _plt, _save, write_json

    write_json(out / "context.json", result)
    rows = result["rows"]
    x = [r["context_tokens"] for r in rows]
    fig, ax = _plt().subplots(figsize=(9, 6))
    ax.plot(x, [r["encode"]["median_ms"] for r in rows], "k--", marker="o",
            label="encode the context once (PCW)")
    for name in rows[0]["checks"]:
        pts = [(r["context_tokens"], r["checks"][name]["median_ms"]) for r in rows
               if name in r["checks"]]
        style = "-" if name.startswith("cached") else ":"
        ax.plot(*zip(*pts), style, marker=".", label=name.replace("_", " "))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("context tokens")
    ax.set_ylabel("ms per sentence check (median)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("A sentence check: cached context states vs re-encoding the context")
    return [out / "context.json", _save(fig, out / "context.png")]


def summary(result: dict) -> str:
    lines = []
    for r in result["rows"]:
        c = r["checks"]
        lines.append(f"{r['context_tokens']:>6} tokens ({r['windows']} windows, "
                     f"{r['state_bytes_per_token']:.0f} B/token): encode "
                     f"{r['encode']['median_ms']:.0f} ms; " + ", ".join(
                         f"{k} {v['median_ms']:.0f}" for k, v in c.items()))
        if "get_and_decode" in r.get("redis_fp16", {}):
            lines.append(f"        redis fp16 {r['redis_fp16']['bytes'] / 2**20:.0f} MiB: GET + "
                         f"decode {r['redis_fp16']['get_and_decode']['median_ms']:.0f} ms")
    for t in result["targets"]:
        lines.append(f"{'PASS' if t['reached'] else 'MISS'} {t['name']}: {t['value']}")
    return "\n".join(lines)


__all__ = ["ContextBenchConfig", "run", "summary", "write"]
