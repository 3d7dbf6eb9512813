"""``guardrail bench stream``: the proxy end to end, on loopback, under N concurrent streams.

    bench process                                     proxy process (one, several apps)
    clients (httpx, N streams) --- POST ---------->   guarded | naive | ablations ...
        ^  receipt time of every read                 (create_app + build_verifier(config),
        |                                              one shared Detector, /bench/* probes)
        |   direct (no proxy) <---------------------------------+  |
    fake upstream (uvicorn thread) <--- POST ---------------------+
        send time of every SSE event (``TimedUpstream``)

The fake upstream is the scripted one (``guardrail.fake_upstream``), wrapped so the
time each SSE event leaves it is recorded; the client records when each read
arrives.  Both live in this process, so the clocks agree.  The proxy runs in its own
process, as in production, so its CPU% and RSS are its own; it serves every variant
on its own port and only one variant is driven at a time.

Per configuration (variant x streams x context size) we get the release delay of
every sentence (last token of the sentence leaves the upstream -> the released
sentence reaches the client), TTFT and chunk throughput, checks/s, batch sizes,
exits used, queue depth, CPU% and peak RSS.  "Direct" reads the same upstream
without the proxy; "passthrough" goes through the proxy without a context.  The
cost of one shallow check is measured in the proxy process (``/bench/probe``) at the
start and the end of the run.  Sentence ends come from the proxy's own segmenter
(the ``guardrail`` report of each stream); a stream cut at the deadline is aligned
by text instead.

Modules: ``stream_workload`` (contexts, answers, the timed fake upstream),
``stream_proxy`` (the proxy process and each variant's config), ``stream_clients``
(the load driver), ``stream_delays`` (the analysis); this one runs the whole and
states the targets.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Optional

from guardrail.bench import (SCHEMA_VERSION, Target, bench_documents, filler_documents,
                             find_data_dir, machine_info, ratio)
from guardrail.bench.stream_clients import Harness
from guardrail.bench.stream_config import StreamBenchConfig
from guardrail.bench.stream_delays import BEHIND_GROWTH_S, BEHIND_SLOPE
from guardrail.bench.stream_proxy import ABLATIONS, VARIANTS, ProxyProcess
from guardrail.bench.stream_workload import (TimedUpstream, Workload, build_workloads,
                                             fake_script, probe_body)


# -- the benchmark ----------------------------------------------------------------------------

async def _probe(h: Harness, size: str, exits: list[int]) -> dict:
    port = h.proxy.hello["ports"]["guarded"]
    body = probe_body(h.workloads[size][0], exits, h.cfg.probe_repeats,
                      h.proxy.hello["scheduler"]["left_context_chars"])
    r = await h.client.post(f"http://127.0.0.1:{port}/bench/probe", json=body, timeout=600)
    return r.json()


def _pick(values: tuple[int, ...], wanted: int) -> int:
    return min(values, key=lambda v: (abs(v - wanted), -v))


def mechanisms(configs: list[dict]) -> list[dict]:
    """Each variant against the guarded proxy at the same streams and context size."""
    base = {(c["streams"], c["context_tokens"]): c for c in configs
            if c["variant"] == "guarded" and c["throttled"]}
    rows = []
    for c in configs:
        g = base.get((c["streams"], c["context_tokens"]))
        if g is None or c["variant"] in ("direct", "passthrough", "guarded"):
            continue
        d, gd = c["release_delay_ms"], g["release_delay_ms"]
        rows.append({
            "variant": c["variant"], "streams": c["streams"], "context_tokens": c["context_tokens"],
            "what": VARIANTS[c["variant"]], "p50_ms": d["p50"], "p99_ms": d["p99"],
            "p50_vs_guarded": ratio(d["p50"], gd["p50"]),
            "p99_vs_guarded": ratio(d["p99"], gd["p99"]),
            "sentences_checked_per_s": c["checks"]["sentences_checked_per_s"],
            "guarded_throughput_gain": ratio(g["checks"]["sentences_checked_per_s"],
                                             c["checks"]["sentences_checked_per_s"]),
            "streams_behind": c["streams_behind"], "streams_cut": c["streams_cut"]})
    return rows


def targets(result: dict, cfg: StreamBenchConfig) -> list[Target]:
    out = []
    cs = result["configs"]

    def find(variant, n, size, throttled=True):
        return next((c for c in cs if c["variant"] == variant and c["streams"] == n and
                     c["context_tokens"] == size and c["throttled"] == throttled), None)

    tput, cap, ttft = [], [], []
    size = cfg.context_tokens[0]
    for n in cfg.streams:
        d, p = find("direct", n, None, False), find("passthrough", n, None, False)
        if d and p:
            cap.append((ratio(p["chunks_per_s"], d["chunks_per_s"]), n, p["chunks_per_s"]))
        d, p = find("direct", n, size), find("passthrough", n, size)
        if d and p:
            tput.append((ratio(p["chunks_per_s"], d["chunks_per_s"]), n, p["chunks_per_s"]))
            if d["ttft_ms"]["p50"] is not None and p["ttft_ms"]["p50"] is not None:
                ttft.append((p["ttft_ms"]["p50"] - d["ttft_ms"]["p50"], n))
    if tput:
        v, n, _ = min(tput, key=lambda x: x[0] or 0.0)
        out.append(Target("pass-through chunk throughput vs direct (worst stream count)", v,
                          0.95, ">=", "x", f"{_n(n)} at {cfg.rate:g} tok/s"))
    if cap:
        v, n, got = min(cap, key=lambda x: x[0] or 0.0)
        out.append(Target("pass-through capacity vs direct, unthrottled upstream", v, 0.95,
                          ">=", "x", f"{_n(n)}; the proxy relayed {got:g} chunks/s, the "
                          "in-process fake upstream read directly is bounded only by itself"))
    if ttft:
        v, n = max(ttft)
        d, p = find("direct", n, size), find("passthrough", n, size)
        out.append(Target("pass-through added TTFT p50 (worst stream count)", v, 5.0, "<=", "ms",
                          f"{_n(n)} at {cfg.rate:g} tok/s: direct {d['ttft_ms']['p50']:.1f} "
                          f"ms, through the proxy {p['ttft_ms']['p50']:.1f} ms"))
    n, size = _pick(cfg.streams, 16), _pick(cfg.context_tokens, 4096)
    g = find("guarded", n, size)
    shallow = result["shallow_check_ms"].get(str(size))
    if g and shallow:
        d, chk = g["release_delay_ms"], g["checks"]
        where = f"{_n(n)} x {cfg.rate:g} tok/s, {size}-token contexts"
        load = chk["sentences_checked_per_s"] * shallow / 1000
        why = (f"{where}. Offered load: {chk['sentences_checked_per_s']:.1f} sentences/s x "
               f"{shallow:.0f} ms per shallow check alone = {load:.2f} s of model time per s "
               f"before batching (mean batch {(chk.get('batches') or {}).get('mean_size')}; "
               f"in-flight checks by exit: " + ", ".join(
                   f"{k}: {v}" for k, v in chk["exits"].get("in_flight", {}).items()) +
               f"; proxy CPU {g['proxy_cpu_percent']:.0f}%)")
        out.append(Target("release delay p50 / one shallow check", ratio(d["p50"], shallow), 2.0,
                          "<=", "x", why))
        out.append(Target("release delay p99 / one shallow check", ratio(d["p99"], shallow), 6.0,
                          "<=", "x", where))
        out.append(Target("streams that fell behind their upstream", float(g["streams_behind"]),
                          0.0, "<=", "streams",
                          f"{where}: {g['streams_behind']} of {n} ({g['streams_cut']} cut at the "
                          f"{cfg.deadline_s:g} s deadline); behind = cut, or delay growing "
                          f"> {BEHIND_SLOPE} s/s by > {BEHIND_GROWTH_S} s"))
    return out + engine_targets(result, cfg)


def engine_targets(result: dict, cfg: StreamBenchConfig) -> list[Target]:
    """Engine v2's gate at each context size: the most streams against one stream of
    the same run, and against the upstream's time per sentence; the end of each answer
    ([DONE] after the upstream's, which the end-of-stream pass delays)."""
    out = []
    for size in cfg.context_tokens:
        runs = sorted((c for c in result["configs"] if c["variant"] == "guarded"
                       and c["context_tokens"] == size and c["throttled"]),
                      key=lambda c: c["streams"])
        if not runs or not runs[-1]["sentences_released"]:
            continue
        one, many = runs[0], runs[-1]
        d, where = many["release_delay_ms"], f"{_n(many['streams'])} x {size}-token contexts"
        sentence_ms = 1000 * cfg.answer_tokens / cfg.rate / (
            many["sentences_released"] / many["streams"])
        if len(runs) > 1 and one["streams"] == 1:
            out.append(Target("release delay p50 / one stream's p50", ratio(
                d["p50"], one["release_delay_ms"]["p50"]), 2.0, "<=", "x", where))
        for q, bound in (("p50", 0.5), ("p99", 1.5)):
            out.append(Target(f"release delay {q} / upstream time per sentence", ratio(
                d[q], sentence_ms), bound, "<=", "x",
                f"{where}: one sentence every {sentence_ms:.0f} ms at {cfg.rate:g} tok/s"))
        if many.get("done_delay_ms") and many["done_delay_ms"]["p99"] is not None:
            out.append(Target("[DONE] after the upstream's, p99 (end-of-stream pass)",
                              many["done_delay_ms"]["p99"], 2000.0, "<=", "ms", where))
    return out


async def _run(cfg: StreamBenchConfig, log: Callable[[str], None]) -> dict:
    import httpx
    from transformers import AutoTokenizer

    from guardrail.model.sources import model_source
    from guardrail.testing.fake_upstream import (ServerThread, create_fake_upstream,
                                                 split_pieces)

    tokenizer = AutoTokenizer.from_pretrained(str(model_source(cfg.model)))
    tokenizer.model_max_length = 1 << 30
    docs, doc_source = bench_documents(find_data_dir(cfg.data_dir))
    n_max = max((*cfg.streams, *cfg.naive_streams, *cfg.ablation_streams))
    workloads = {str(size): build_workloads(tokenizer, docs, n_max, size, cfg.answer_tokens,
                                            cfg.hallucination_rate, cfg.seed)
                 for size in cfg.context_tokens}
    long_text = " ".join(filler_documents(1 + cfg.throughput_tokens // 200, cfg.seed))
    long_text = "".join(split_pieces(long_text)[:cfg.throughput_tokens])
    workloads["tp"] = [Workload(f"tp-s{i}", (), long_text, 0) for i in range(max(cfg.streams))]
    upstream = TimedUpstream(create_fake_upstream(fake_script(workloads)))
    variants = ["guarded", *(["naive"] if cfg.naive_streams else []), *cfg.ablations]
    limits = httpx.Limits(max_connections=4 * n_max + 8, max_keepalive_connections=4 * n_max)
    timeout = httpx.Timeout(cfg.deadline_s + 60, connect=10)
    with ServerThread(upstream) as up:
        spec = {"upstream": f"http://127.0.0.1:{up.port}/v1", "model": cfg.model,
                "device": cfg.device, "variants": variants, "windows": cfg.windows,
                "top_k": cfg.top_k, "final_pass": cfg.final_pass, "admission": cfg.admission,
                "check_timeout_s": cfg.deadline_s + 30, "config": cfg.config}
        log(f"starting the proxy process ({', '.join(variants)})")
        async with ProxyProcess(spec) as proxy, \
                httpx.AsyncClient(limits=limits, timeout=timeout) as client:
            h = Harness(cfg, client, upstream, f"http://127.0.0.1:{up.port}", proxy, workloads)
            hello = proxy.hello
            shallow = hello["info"].get("shallow_exit_layer") or hello["n_layers"]
            exits = sorted({shallow, *hello["exit_layers"][:1], hello["n_layers"]})
            log("warm-up: one stream through each variant")
            await h.run("direct", 1, "tp", throttled=False)
            await h.run("passthrough", 1, "tp", throttled=False)
            for variant in variants:
                await h.run(variant, 1, str(cfg.context_tokens[0]), throttled=False)
            probes: dict[str, dict] = {}
            for size in map(str, cfg.context_tokens):
                log(f"probe: one check alone, {size}-token context, exits {exits}")
                probes[size] = {"start": await _probe(h, size, exits)}
            configs = []
            for n in cfg.streams:
                for variant in ("direct", "passthrough"):
                    log(f"{variant}: {_n(n)}, unthrottled")
                    configs.append(await h.run(variant, n, "tp", throttled=False))
            for size in map(str, cfg.context_tokens):
                for n in cfg.streams:
                    for variant in ("direct", "passthrough", "guarded"):
                        log(f"{variant}: {_n(n)} x {cfg.rate:g} tok/s, {size}-token contexts")
                        configs.append(await h.run(variant, n, size))
                for variant, counts in [("naive", cfg.naive_streams)] + \
                        [(a, cfg.ablation_streams) for a in cfg.ablations]:
                    for n in counts:
                        log(f"{variant}: {_n(n)} x {cfg.rate:g} tok/s, {size}-token contexts")
                        configs.append(await h.run(variant, n, size))
            for size in map(str, cfg.context_tokens):
                probes[size]["end"] = await _probe(h, size, exits)
    shallow_ms = {}
    for size, p in probes.items():
        samples = [p[when][str(shallow)]["median_ms"] for when in ("start", "end")]
        shallow_ms[size] = round(sum(samples) / len(samples), 3)
    for c in configs:
        s = shallow_ms.get(str(c["context_tokens"]))
        if c.get("release_delay_ms") and c["release_delay_ms"]["p50"] is not None and s:
            c["delay_over_shallow_check"] = {q: ratio(c["release_delay_ms"][q], s)
                                             for q in ("p50", "p95", "p99", "max")}
    settings = {**{k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.__dict__.items()},
                "documents": doc_source, "variants": {v: VARIANTS[v] for v in variants},
                "shallow_exit_layer": shallow, "n_layers": hello["n_layers"],
                # how checks ran: the guarded variant's scheduler section (the shipped
                # defaults plus the overrides above) and each variant's change to it
                "windows": hello["scheduler"]["in_flight_windows"],
                "top_k": hello["scheduler"]["in_flight_top_k"],
                "final_windows": hello["scheduler"]["final_windows"],
                "final_top_k": hello["scheduler"]["final_top_k"],
                "scheduler": hello["scheduler"], "variant_overrides": hello["overrides"],
                "settle_restated": False,  # stream_proxy.base_overrides: every sentence checked
                "proxy_rss_mib_at_start": round(hello["ru_maxrss_mib"], 1),
                "tokens": "word pieces of the fake upstream (one SSE event each)"}
    result = {"kind": "stream", "schema": SCHEMA_VERSION, "machine": machine_info(cfg.device),
              "settings": settings, "probes": probes, "shallow_check_ms": shallow_ms,
              "configs": configs, "mechanisms": mechanisms(configs)}
    result["targets"] = [t.to_json() for t in targets(result, cfg)]
    return result


def run(cfg: StreamBenchConfig, *, log: Callable[[str], None] = lambda s: None) -> dict:
    unknown = set(cfg.ablations) - set(ABLATIONS)
    if unknown:
        raise ValueError(f"unknown ablations {sorted(unknown)}; ablations: {list(ABLATIONS)}")
    if cfg.windows not in (None, "all", "topk"):
        raise ValueError(f"windows must be all or topk, got {cfg.windows!r}")
    if cfg.top_k is not None and cfg.top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {cfg.top_k}")
    return asyncio.run(_run(cfg, log))


def summary(result: dict) -> str:
    head = f"{'variant':<14}{'N':>4}{'ctx':>6}{'p50 ms':>9}{'p99 ms':>9}{'x check':>8}" \
           f"{'TTFT':>8}{'chunk/s':>9}{'chk/s':>7}{'behind':>7}{'CPU%':>6}"
    lines = [head]
    for c in result["configs"]:
        d = c.get("release_delay_ms") or c.get("transport_delay_ms") or {}
        x = (c.get("delay_over_shallow_check") or {}).get("p50")
        chk = (c.get("checks") or {}).get("sentences_checked_per_s")
        lines.append(
            f"{c['variant'] + ('' if c['throttled'] else '*'):<14}{c['streams']:>4}"
            f"{c['context_tokens'] or '-':>6}{_f(d.get('p50')):>9}{_f(d.get('p99')):>9}"
            f"{_f(x, 2):>8}{_f(c['ttft_ms']['p50']):>8}{_f(c['chunks_per_s']):>9}"
            f"{_f(chk):>7}{c.get('streams_behind') if c.get('streams_behind') is not None else '-':>7}"
            f"{_f(c['proxy_cpu_percent'], 0):>6}")
    lines.append("* unthrottled upstream")
    return "\n".join(lines)


def _n(streams: int) -> str:
    return f"{streams} stream" + ("" if streams == 1 else "s")


def _f(x: Optional[float], digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


__all__ = ["StreamBenchConfig", "run", "summary"]