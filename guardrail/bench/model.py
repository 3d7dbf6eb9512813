"""``guardrail bench model``: what one check costs, per length, batch size and exit.

Four measurements, each interleaved so the configurations they compare share the
machine's noise:

* throughput: ``Detector.forward`` on ``batch`` sequences of ``seq_len`` tokens at
  every exit; ms per check, checks/s, and the speed-up of each exit over full depth;
* headline (at 512 tokens, or the model's maximum if smaller): the raw Hugging Face
  backbone forward vs our whole check (prepare + forward + finish, context prepared
  as the proxy's cache holds it) at full depth and at every exit;
* memory: peak RSS of a fresh process that only loads the detector (and then runs
  one check), so this benchmark's own allocations do not count;
* context cache: cold ``prepare_context`` vs a hit in the in-process LRU tier (and
  the Redis tier when ``redis_url`` is given).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

from guardrail.bench import (SCHEMA_VERSION, Target, Timing, bench_documents, find_data_dir,
                             interleaved, machine_info, ratio)

QUESTION = "What do the documents say?"
RESPONSE = ("The passage describes how the project was planned, who paid for it and when "
            "the work was finished, and it lists the main results reported by the team.")


@dataclass(frozen=True)
class ModelBenchConfig:
    model: Optional[str] = None          # None: the shipped default detector
    device: Optional[str] = None         # None: CUDA when present, else CPU
    seq_lens: tuple[int, ...] = ()       # empty: 128 ... the model's maximum
    batch_sizes: tuple[int, ...] = (1, 4, 16)
    exits: tuple[int, ...] = ()          # empty: every exit and full depth
    warmup: int = 2
    repeats: int = 7
    max_batch_tokens: int = 16384        # skip batch x length beyond this (batch 1 always runs)
    headline_tokens: int = 512
    context_tokens: tuple[int, ...] = (512, 4096)
    cache_repeats: int = 30
    redis_url: Optional[str] = None
    raw_model: Optional[str] = None      # None: MiniLM for the default model, else the model
    measure_rss: bool = True
    data_dir: Optional[str] = None

    @classmethod
    def quick(cls, **kw: Any) -> "ModelBenchConfig":
        base = cls(seq_lens=(64, 128), batch_sizes=(1, 2), warmup=1, repeats=2,
                   headline_tokens=128, context_tokens=(256,), cache_repeats=3)
        return replace(base, **kw)


def default_seq_lens(max_length: int) -> tuple[int, ...]:
    ladder = (128, 256, 512) if max_length <= 512 else \
        (128, 512, 2048, 4096, 8192, 16384, 32768)
    lens = [n for n in ladder if n < max_length] + [max_length]
    return tuple(dict.fromkeys(lens))


# -- inputs -------------------------------------------------------------------------------

def synthetic_sequences(det, seq_len: int, batch: int, seed: int = 0) -> list:
    """``batch`` model inputs of exactly ``seq_len`` tokens, the last quarter the response."""
    from guardrail.model.inputs import Sequence_

    rng = np.random.default_rng(seed)
    vocab = int(det.model.backbone.config.vocab_size)
    cls_id, sep_id = det.builder.cls_id, det.builder.sep_id
    out = []
    for _ in range(batch):
        ids = rng.integers(min(1000, vocab // 2), vocab, size=seq_len).astype(np.int64)
        r0 = max(2, seq_len - seq_len // 4)
        ids[0], ids[r0 - 1], ids[-1] = cls_id, sep_id, sep_id
        types = None
        if det.use_token_types:
            types = np.zeros(seq_len, np.int64)
            types[r0:] = 1
        out.append(Sequence_(ids, types, slice(r0, seq_len - 1), 0, 0))
    return out


def context_of(det, documents: list[str], n_tokens: int):
    """A PreparedContext of exactly ``n_tokens`` tokens cut from ``documents`` (repeated
    as needed), and the text whose tokenization gives it."""
    from guardrail.model.inputs import PreparedContext, Tokenized

    text = ""
    i = 0
    while True:
        while len(text) < n_tokens * 6:
            text += ("\n\n" if text else "") + documents[i % len(documents)]
            i += 1
        prep = det.prepare_context(text)
        if prep.n_tokens >= n_tokens:
            break
        text += "\n\n" + documents[i % len(documents)]
        i += 1
    cut = int(prep.tokens.offsets[n_tokens - 1][1])
    tokens = Tokenized(prep.tokens.ids[:n_tokens], prep.tokens.offsets[:n_tokens])
    return PreparedContext(prep.key + f":{n_tokens}", prep.text[:cut], tokens,
                           prep.tokenizer_name), prep.text[:cut]


# -- measurements ---------------------------------------------------------------------------

def _exit_arg(det, layer: int) -> Optional[int]:
    return None if layer >= det.n_layers else layer


def throughput(det, cfg: ModelBenchConfig, exits: list[int]) -> list[dict]:
    rows = []
    for seq_len in cfg.seq_lens or default_seq_lens(det.max_length):
        seq_len = min(seq_len, det.max_length)
        for batch in cfg.batch_sizes:
            if batch > 1 and batch * seq_len > cfg.max_batch_tokens:
                continue
            seqs = synthetic_sequences(det, seq_len, batch, seed=seq_len * 31 + batch)
            fns = {str(e): (lambda e=e: det.forward(seqs, _exit_arg(det, e))) for e in exits}
            timings = interleaved(fns, warmup=cfg.warmup, repeats=cfg.repeats)
            full = timings[str(det.n_layers)].median_ms if str(det.n_layers) in timings else None
            for e in exits:
                t = timings[str(e)]
                rows.append({"seq_len": seq_len, "batch_size": batch, "exit_layer": e,
                             "full_depth": e >= det.n_layers, "batch": t.to_json(),
                             "ms_per_check": round(t.median_ms / batch, 4),
                             "checks_per_s": round(batch * 1000.0 / t.median_ms, 3),
                             "tokens_per_s": round(batch * seq_len * 1000.0 / t.median_ms, 1),
                             "speedup_vs_full": ratio(full, t.median_ms)})
    return rows


def raw_model_source(det, cfg: ModelBenchConfig) -> str:
    if cfg.raw_model:
        return cfg.raw_model
    if cfg.model is None:
        try:
            from guardrail.train.train import minilm_path

            return minilm_path()
        except ImportError:
            pass
    from guardrail.model.sources import model_source

    return str(model_source(cfg.model))


def load_raw(det, source: str):
    """The plain Hugging Face encoder (no head, no exits) in the detector's dtype/device."""
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    p = next(det.model.parameters())
    attn = getattr(det.model.backbone.config, "_attn_implementation", None) or "sdpa"
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        raw = AutoModel.from_pretrained(source, dtype=p.dtype, attn_implementation=attn)
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()
    return raw.to(p.device).eval()


def headline(det, cfg: ModelBenchConfig, exits: list[int], documents: list[str]) -> dict:
    """Raw backbone forward vs our check at ``headline_tokens`` tokens, interleaved."""
    import torch

    from guardrail.model.detector import DetectInput

    n = min(cfg.headline_tokens, det.max_length)
    q_tokens = len(det.builder.question_tokens(QUESTION))
    r_tokens = len(det.tokenizer(RESPONSE, add_special_tokens=False)["input_ids"])
    ctx, ctx_text = context_of(det, documents, max(16, n - 4 - q_tokens - r_tokens))
    prep = det.prepare(DetectInput(ctx, QUESTION, RESPONSE))
    seqs = list(prep.sequences)
    source = raw_model_source(det, cfg)
    raw = load_raw(det, source)
    batch = det.collate(seqs)
    raw_inputs = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask",
                                                          "token_type_ids")}
    sync = torch.cuda.synchronize if det.device.type == "cuda" else (lambda: None)

    def raw_forward() -> None:
        with torch.inference_mode():
            raw(**raw_inputs)
        sync()

    fns: dict[str, Callable[[], object]] = {"raw_forward": raw_forward}
    for e in exits:
        fns[f"check@{e}"] = lambda e=e: det.detect(ctx, QUESTION, RESPONSE,
                                                    exit_layer=_exit_arg(det, e))
        fns[f"forward@{e}"] = lambda e=e: det.forward(seqs, _exit_arg(det, e))
    fns["check_cold@full"] = lambda: det.detect(ctx_text, QUESTION, RESPONSE)
    timings = interleaved(fns, warmup=cfg.warmup, repeats=max(cfg.repeats, 3))
    full = timings[f"check@{det.n_layers}"].median_ms
    raw_ms = timings["raw_forward"].median_ms
    return {
        "tokens": int(sum(len(s) for s in seqs)), "sequences": len(seqs), "raw_model": source,
        "timings": {k: v.to_json() for k, v in timings.items()},
        "full_check_over_raw": ratio(full, raw_ms),
        "cold_check_over_raw": ratio(timings["check_cold@full"].median_ms, raw_ms),
        "check_speedup_vs_full": {str(e): ratio(full, timings[f"check@{e}"].median_ms)
                                  for e in exits},
        "forward_speedup_vs_full": {
            str(e): ratio(timings[f"forward@{det.n_layers}"].median_ms,
                          timings[f"forward@{e}"].median_ms) for e in exits},
    }


_RSS_SCRIPT = r"""
import json, resource, sys, psutil
from guardrail.model import Detector
det = Detector.from_pretrained(sys.argv[1] or None, device=sys.argv[2] or None)
kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rss = psutil.Process().memory_info().rss
det.detect(" ".join(["The bridge over the river was opened in 1932 by the mayor."] * 60),
           "When was the bridge opened?", "The bridge was opened in 1932.")
kib2 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"peak_rss_mib_loaded": kib / 1024, "rss_mib_loaded": rss / 2**20,
                  "peak_rss_mib_after_check": kib2 / 1024}))
"""


def detector_rss(cfg: ModelBenchConfig) -> dict:
    """Peak RSS of a fresh process that loads the detector and runs one check."""
    proc = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, cfg.model or "", cfg.device or ""],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:] or ["failed"]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return {k: round(v, 1) for k, v in out.items()}


async def _cache_rounds(det, cfg: ModelBenchConfig, docs: list[str], redis) -> dict[str, Timing]:
    from guardrail.config import CacheConfig
    from guardrail.engine.prepared import PreparedContextCache

    model_key = det.tokenizer.name_or_path

    async def prepare(documents):
        return det.prepare_context(list(documents))

    warm = PreparedContextCache(CacheConfig())
    await warm.get_or_prepare("bench", docs, prepare, model=model_key)
    shared = None
    if redis is not None:
        shared = PreparedContextCache(CacheConfig(), redis=redis)
        await shared.get_or_prepare("bench", docs, prepare, model=model_key)
        await shared.flush()
    samples: dict[str, list[float]] = {"cold": [], "local_hit": []}
    if redis is not None:
        samples["redis_hit"] = []
    for r in range(cfg.cache_repeats + 1):
        t0 = time.perf_counter()
        det.prepare_context(docs)
        t1 = time.perf_counter()
        await warm.get_or_prepare("bench", docs, prepare, model=model_key)
        t2 = time.perf_counter()
        if r:
            samples["cold"].append(t1 - t0)
            samples["local_hit"].append(t2 - t1)
        if redis is not None:
            fresh = PreparedContextCache(CacheConfig(), redis=redis)  # empty local tier
            t3 = time.perf_counter()
            await fresh.get_or_prepare("bench", docs, prepare, model=model_key)
            if r:
                samples["redis_hit"].append(time.perf_counter() - t3)
        await asyncio.sleep(0)
    stats = warm.stats()
    if stats.misses != 1:
        raise RuntimeError(f"the in-process tier missed {stats.misses - 1} repeated lookups")
    return {k: Timing.of(v) for k, v in samples.items()}


def context_cache(det, cfg: ModelBenchConfig, documents: list[str]) -> list[dict]:
    from guardrail.contexts import RedisStore
    from guardrail.engine.prepared import KIND
    from guardrail.model.inputs import context_key

    rows = []
    for n in cfg.context_tokens:
        _ctx, text = context_of(det, documents, n)
        docs = [text]
        redis = RedisStore(cfg.redis_url, prefix="guardrail-bench") if cfg.redis_url else None

        async def run() -> dict[str, Timing]:
            try:
                return await _cache_rounds(det, cfg, docs, redis)
            finally:
                if redis is not None:
                    await redis.delete(KIND, "bench", context_key(docs,
                                       det.tokenizer.name_or_path))
                    await redis.aclose()

        t = asyncio.run(run())
        row = {"context_tokens": n, **{k: v.to_json() for k, v in t.items()},
               "speedup_local": ratio(t["cold"].median_ms, t["local_hit"].median_ms),
               "speedup_redis": ratio(t["cold"].median_ms, t["redis_hit"].median_ms)
               if "redis_hit" in t else None}
        if redis is not None and redis.errors:
            row["redis_errors"] = redis.errors
        rows.append(row)
    return rows


# -- the benchmark ----------------------------------------------------------------------------

def targets(result: dict, n_layers: int, exits: list[int]) -> list[Target]:
    out = []
    h = result["headline"]
    t = {k: v["median_ms"] for k, v in h["timings"].items()}
    full = f"check@{n_layers}"
    out.append(Target(
        f"full-depth check at {h['tokens']} tokens vs raw forward", h["full_check_over_raw"],
        1.10, "<=", "x",
        f"'about the time' read as at most 10% more. Check (prepare + forward + finish) "
        f"{t[full]:.1f} ms, its model forward alone {t[f'forward@{n_layers}']:.1f} ms, raw "
        f"HF forward {t['raw_forward']:.1f} ms"))
    shallow = [e for e in exits if e < n_layers]
    if shallow:
        e = min(shallow)
        out.append(Target(
            f"exit {e} check vs full depth", h["check_speedup_vs_full"][str(e)], 2.5, ">=", "x",
            f"{h['tokens']}-token check, same run; {e} of {n_layers} layers bounds it at "
            f"{n_layers / e:.1f}x; forward alone: {h['forward_speedup_vs_full'][str(e)]:.2f}x"))
    mem = result.get("memory", {})
    if "peak_rss_mib_after_check" in mem:
        out.append(Target("peak RSS of a loaded detector", mem["peak_rss_mib_after_check"],
                          1024.0, "<=", "MiB", "fresh process: load + one check"))
    rows = result.get("context_cache") or []
    if rows:
        row = max(rows, key=lambda r: r["context_tokens"])
        out.append(Target(f"repeated {row['context_tokens']}-token context vs cold",
                          row["speedup_local"], 20.0, ">=", "x", "in-process LRU hit"))
        if row.get("speedup_redis") is not None:
            out.append(Target(f"repeated {row['context_tokens']}-token context vs cold (Redis)",
                              row["speedup_redis"], 20.0, ">=", "x", "Redis hit, empty LRU"))
    return out


def run(cfg: ModelBenchConfig, *, log: Callable[[str], None] = lambda s: None) -> dict:
    from guardrail.config import redact_url
    from guardrail.model import Detector

    det = Detector.from_pretrained(cfg.model, device=cfg.device)
    exits = sorted(set(cfg.exits or (*det.exit_layers, det.n_layers)))
    exits = [min(e, det.n_layers) for e in exits]
    documents, doc_source = bench_documents(find_data_dir(cfg.data_dir))
    p = next(det.model.parameters())
    log(f"model: {det.name} on {det.device} ({p.dtype}), exits {exits}")
    result: dict = {
        "kind": "model", "schema": SCHEMA_VERSION,
        "machine": machine_info(str(det.device)),
        "settings": {**{k: (list(v) if isinstance(v, tuple) else v)
                        for k, v in cfg.__dict__.items()},
                     "redis_url": redact_url(cfg.redis_url),
                     "model": det.name, "device": str(det.device), "dtype": str(p.dtype),
                     "attention": getattr(det.model.backbone.config, "_attn_implementation",
                                          None),
                     "n_layers": det.n_layers, "exits": exits, "max_length": det.max_length,
                     "documents": doc_source},
    }
    log("throughput: seq_len x batch x exit")
    result["throughput"] = throughput(det, cfg, exits)
    log(f"headline: raw forward vs check at {min(cfg.headline_tokens, det.max_length)} tokens")
    result["headline"] = headline(det, cfg, exits, documents)
    log("context cache: cold vs hit")
    result["context_cache"] = context_cache(det, cfg, documents)
    if cfg.measure_rss:
        log("memory: a fresh process loading the detector")
        result["memory"] = detector_rss(cfg)
    result["targets"] = [t.to_json() for t in targets(result, det.n_layers, exits)]
    return result


def summary(result: dict) -> str:
    lines = [f"{'len':>6}{'batch':>6}{'exit':>5}{'ms/check':>10}{'checks/s':>10}{'x full':>8}"]
    for r in result["throughput"]:
        lines.append(f"{r['seq_len']:>6}{r['batch_size']:>6}{r['exit_layer']:>5}"
                     f"{r['ms_per_check']:>10.2f}{r['checks_per_s']:>10.1f}"
                     f"{(r['speedup_vs_full'] or 0):>8.2f}")
    return "\n".join(lines)


__all__ = ["ModelBenchConfig", "run", "summary"]
