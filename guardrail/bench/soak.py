"""``guardrail bench soak``: N guarded streams against ``guardrail serve`` for minutes.

    bench process                                          proxy process
    N client loops (httpx) --- POST, guarded stream --->   guardrail serve: shipped defaults
      200:     read to [DONE]                              (admission on, port 0, loopback)
      503/429: sleep Retry-After (bounded), try again            |
    sampler: proxy RSS every 1 s, /metrics every 5 s             |
    fake upstream (uvicorn thread, TimedUpstream) <--- POST -----+

The proxy is ``guardrail serve`` itself, so its start-up (glibc's mmap threshold) and
shipped ``scheduler.latency_budget_s`` are what is measured; ``GUARDRAIL_*`` variables
here are not passed on, ``SoakConfig.settings`` are.  Each request has its own context
(as each RAG request retrieves its own): the context cache grows, never hits.  Release
delays: ``stream_delays.analyse``.  RSS is flat when the last minute's mean and the
largest sample after the warm-up (first 60 s or 20 %) are within 15 % of the mean of
the warm-up's last 30 s.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional

from guardrail.bench import (SCHEMA_VERSION, Target, bench_documents, find_data_dir,
                             machine_info, percentile, ratio)
from guardrail.bench.stream_delays import Trace, analyse, content_timeline
from guardrail.bench.stream_workload import TimedUpstream, build_workloads, fake_script

BIN_S = 10.0
REFUSED = (429, 503)  # server.overload_status
_NUMBER = re.compile(r"\d+(\.\d+)?")  # masked in reasons, so that they can be counted
_LISTENING = re.compile(rb"Uvicorn running on http://127\.0\.0\.1:(\d+)")
_GAUGES = {"guardrail_queue_depth": "queue_depth", "guardrail_scheduler_drain_seconds":
           "drain_s", "guardrail_context_cache_local_bytes": "context_cache_bytes",
           "guardrail_context_cache_local_entries": "context_cache_entries"}


@dataclass(frozen=True)
class SoakConfig:
    streams: int = 32                     # client loops, each one request at a time
    duration_s: float = 300.0             # new requests start only within this
    warmup_s: Optional[float] = None      # None: the first 60 s or 20 % of the run
    context_tokens: int = 1024            # grounding context of every request
    rate: float = 30.0                    # upstream tokens (word pieces) per second
    answer_tokens: int = 240              # pieces per answer (~8 s at 30 tok/s)
    hallucination_rate: float = 0.1
    stagger_s: float = 2.0                # loop starts spread over this
    max_retry_wait_s: float = 30.0        # a Retry-After is honoured up to this
    rss_tolerance_pct: float = 15.0
    settings: tuple[tuple[str, str], ...] = ()  # proxy config, dotted key -> YAML scalar
    model: Optional[str] = None
    data_dir: Optional[str] = None
    seed: int = 0

    @classmethod
    def quick(cls, **kw: Any) -> "SoakConfig":
        base = cls(streams=4, duration_s=20.0, context_tokens=256, rate=40.0,
                   answer_tokens=60, stagger_s=0.5)
        return replace(base, **kw)

    @property
    def warmup(self) -> float:
        return min(60.0, 0.2 * self.duration_s) if self.warmup_s is None else self.warmup_s

    @property
    def grace_s(self) -> float:  # how long a stream sent near the end may run, then cut
        return 30.0 + 3 * self.answer_tokens / self.rate


def proxy_env(settings: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """This environment without ``GUARDRAIL_*``, plus ``settings`` as config variables."""
    from guardrail.config import ENV_PREFIX

    return {**{k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX)},
            **{ENV_PREFIX + key.upper().replace(".", "__"): value for key, value in settings}}


class ServeProcess:
    """``guardrail serve`` on a free loopback port; SIGTERM (its drain) stops it."""

    def __init__(self, upstream: str, env: dict[str, str], model: Optional[str]):
        self.args = [sys.executable, "-m", "guardrail.cli", "serve", "--upstream", upstream,
                     "--host", "127.0.0.1", "--port", "0", *(["--model", model] if model else [])]
        self.env, self.log, self.proc = env, tempfile.TemporaryFile(mode="a+b"), None

    async def __aenter__(self) -> "ServeProcess":
        self.proc = await asyncio.create_subprocess_exec(
            *self.args, env=self.env, stdin=asyncio.subprocess.DEVNULL, stdout=self.log,
            stderr=asyncio.subprocess.STDOUT)
        deadline = time.monotonic() + 600
        while not (found := _LISTENING.search(text := os.pread(self.log.fileno(), 1 << 20, 0))):
            if self.proc.returncode is not None or time.monotonic() > deadline:
                await self.__aexit__()
                raise RuntimeError("guardrail serve did not start:\n" +
                                   text[-4000:].decode(errors="replace"))
            await asyncio.sleep(0.2)
        self.url = f"http://127.0.0.1:{int(found.group(1))}"
        return self

    async def __aexit__(self, *exc) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 40)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        self.log.close()


async def scrape(client, url: str) -> dict[str, float]:
    """A few gauges of ``/metrics`` and its error counts by type."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, float] = {}
    for family in text_string_to_metric_families((await client.get(url, timeout=3)).text):
        for s in family.samples:
            if s.name in _GAUGES:
                out[_GAUGES[s.name]] = out.get(_GAUGES[s.name], 0.0) + s.value
            elif s.name == "guardrail_errors_total":
                out[f"errors.{s.labels.get('type')}"] = s.value
    return out


async def sample(client, base_url: str, proc, t0: float, rss: list, gauges: list) -> None:
    """Until cancelled: the proxy's RSS (MiB) every second, /metrics gauges every 5 s."""
    import httpx
    import psutil

    for k in itertools.count():
        t = round(time.perf_counter() - t0, 2)
        try:
            rss.append((t, round(proc.memory_info().rss / 2**20, 1)))
            if k % 5 == 0:
                gauges.append((t, await scrape(client, base_url + "/metrics")))
        except (psutil.Error, httpx.HTTPError, ValueError):
            pass  # a missed sample
        await asyncio.sleep(max(0.0, t0 + k + 1 - time.perf_counter()))


@dataclass
class Attempt:
    """One request of one client loop."""

    stream: int
    t: float                              # when it was sent, s after the run began
    status: int = 0                       # 0: no response (transport error)
    retry_after: Optional[float] = None   # refused: the header, in seconds (None: missing)
    waited: float = 0.0                   # refused: the loop's sleep before its next try
    reason: str = ""                      # refused or failed: the message, numbers masked
    trace: Optional[Trace] = field(default=None, repr=False)  # admitted: what was read


async def _loop(i: int, run: dict) -> list[Attempt]:
    """Client loop ``i``: one guarded stream after another until the run ends."""
    import httpx

    cfg, t0, end, deadline = run["cfg"], run["t0"], run["end"], run["deadline"]
    await asyncio.sleep(cfg.stagger_s * i / cfg.streams)
    attempts = []
    while (now := time.perf_counter()) < end:
        cid = f"c{next(run['seq'])}"
        body = run["workloads"][i].body(cid, 1.0 / cfg.rate, checked=True)
        a = Attempt(i, round(now - t0, 3))
        tr = Trace((cid, str(cfg.context_tokens), i), now)  # TimedUpstream's key
        try:
            async with asyncio.timeout(deadline - now):
                async with run["client"].stream("POST", run["url"], json=body) as resp:
                    a.status = tr.status = resp.status_code
                    if resp.status_code == 200:
                        a.trace = tr
                        async for chunk in resp.aiter_raw():
                            tr.reads.append((time.perf_counter(), chunk))
                    else:  # an HTTP-date Retry-After (guardrail never sends one): none
                        await resp.aread()
                        ra = resp.headers.get("retry-after", "").strip()
                        a.retry_after = float(ra) if re.fullmatch(r"\d+(\.\d+)?", ra) else None
                        found = re.search(r'"message":\s*"([^"]*)"', resp.text)
                        a.reason = _NUMBER.sub("N", found.group(1) if found else f"HTTP {a.status}")
        except TimeoutError:
            tr.cut = True
            a.reason = a.reason or "no response before the deadline"
        except httpx.HTTPError as e:
            a.reason = tr.error = _NUMBER.sub("N", f"{type(e).__name__}: {e}")[:160]
        attempts.append(a)
        if a.status != 200:  # honour Retry-After (1 s without one), within the run
            want = min(a.retry_after or 1.0, cfg.max_retry_wait_s)
            a.waited = round(max(0.0, min(want, end - time.perf_counter())), 3)
            await asyncio.sleep(a.waited)
    return attempts


async def _run(cfg: SoakConfig, log: Callable[[str], None]) -> dict:
    import httpx
    import psutil
    from transformers import AutoTokenizer

    from guardrail.config import load_config
    from guardrail.model.sources import DEFAULT_MODEL
    from guardrail.testing.fake_upstream import ServerThread, create_fake_upstream

    tokenizer = AutoTokenizer.from_pretrained(str(cfg.model or DEFAULT_MODEL))
    tokenizer.model_max_length = 1 << 30
    docs, doc_source = bench_documents(find_data_dir(cfg.data_dir))
    workloads = build_workloads(tokenizer, docs, cfg.streams, cfg.context_tokens,
                                cfg.answer_tokens, cfg.hallucination_rate, cfg.seed)
    upstream = TimedUpstream(create_fake_upstream(fake_script({"soak": workloads})))
    env = proxy_env(cfg.settings)
    scheduler = load_config(env=env).scheduler  # what the proxy loads, as it loads it
    limits = httpx.Limits(max_connections=2 * cfg.streams + 8)
    with ServerThread(upstream) as up:
        log("starting guardrail serve (shipped defaults, admission on)")
        async with ServeProcess(f"http://127.0.0.1:{up.port}/v1", env, cfg.model) as proxy, \
                httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(60, connect=10)) as client:
            procs = psutil.Process(proxy.proc.pid), psutil.Process()  # the proxy, this one
            idle, busy0 = procs[0].memory_info().rss / 2**20, _busy(procs)
            log(f"{cfg.streams} streams for {cfg.duration_s:g} s against {proxy.url}")
            t0, rss, gauges = time.perf_counter(), [], []
            run = {"cfg": cfg, "t0": t0, "end": t0 + cfg.duration_s, "seq": itertools.count(),
                   "deadline": t0 + cfg.duration_s + cfg.grace_s, "workloads": workloads,
                   "client": client, "url": proxy.url + "/v1/chat/completions"}
            sampler = asyncio.create_task(sample(client, proxy.url, procs[0], t0, rss, gauges))
            try:
                loops = await asyncio.gather(*(_loop(i, run) for i in range(cfg.streams)))
            finally:
                sampler.cancel()
                await asyncio.gather(sampler, return_exceptions=True)
            cpu = {f"{who}_cpu_percent": round(100 * (b - b0) / (time.perf_counter() - t0), 1)
                   for who, b0, b in zip(("proxy", "bench"), busy0, _busy(procs))}
            final = await scrape(client, proxy.url + "/metrics")
    attempts = sorted((a for loop in loops for a in loop), key=lambda a: a.t)
    logs = {a.trace.key: upstream.sent.pop(a.trace.key, []) for a in attempts if a.trace}
    result = {"kind": "soak", "schema": SCHEMA_VERSION, "machine": machine_info(),
              "settings": {**asdict(cfg), "settings": dict(cfg.settings),
                           "warmup_s": cfg.warmup, "grace_s": cfg.grace_s,
                           "documents": doc_source, "proxy": "guardrail serve, own process",
                           "latency_budget_s": scheduler.latency_budget_s,
                           "scheduler": scheduler.model_dump(mode="json"),
                           "malloc_env": {k: v for k, v in env.items() if "MALLOC_" in k}},
              **summarise(cfg, attempts, logs),
              "rss": {"idle_mib": round(idle, 1), **rss_summary(
                  rss, cfg.duration_s, cfg.warmup, cfg.rss_tolerance_pct)},
              "proxy": {**cpu, "final_metrics": final, "gauges": {"t_s": [t for t, _ in gauges],
                  **{k: [g.get(k) for _, g in gauges] for k in _GAUGES.values()}}}}
    result["targets"] = [t.to_json() for t in targets(result)]
    return result


def _busy(procs) -> list[float]:
    return [sum(p.cpu_times()[:2]) for p in procs]  # user + system seconds


def _dist(values: list[float]) -> dict:
    return {"n": len(values), "min": min(values, default=None), "p50": percentile(values, 50)
            if values else None, "max": max(values, default=None)}


def summarise(cfg: SoakConfig, attempts: list[Attempt], logs: dict) -> dict:
    """Counts, Retry-After, release delay, per stream and per 10 s."""
    admitted = [a for a in attempts if a.trace is not None]
    refused = [a for a in attempts if a.status in REFUSED]
    failed = [a for a in attempts if a.trace is None and a.status not in REFUSED]
    events = [content_timeline(a.trace.reads)[3] for a in admitted]
    delays = analyse([a.trace for a in admitted], logs, checked=True)
    reasons = Counter(a.reason for a in refused + failed)
    n_bins = math.ceil(cfg.duration_s / BIN_S)  # a send rounded up to the end: the last bin
    bins = [{"t_s": b * BIN_S, **{k: sum(min(int(a.t // BIN_S), n_bins - 1) == b for a in group)
                                  for k, group in (("admitted", admitted), ("refused", refused))}}
            for b in range(n_bins)]
    retry = [a.retry_after for a in refused if a.retry_after is not None]
    return {
        "requests": {"total": len(attempts), "admitted": len(admitted), "refused": len(refused),
                     "failed": len(failed), "refused_with_retry_after": len(retry),
                     "refused_share": ratio(len(refused), len(attempts)),
                     "statuses": {str(s): sum(a.status == s for a in attempts)
                                  for s in sorted({a.status for a in attempts})},
                     "reasons": dict(reasons.most_common())},
        "retry_after_s": {**_dist(retry), "values": {f"{v:g}": n for v, n in
                                                     sorted(Counter(retry).items())}},
        "retry_wait_s": _dist([a.waited for a in refused]),
        "admitted_streams": {
            "n": len(admitted), "done": sum(any(e == "[DONE]" for _, e in ev) for ev in events),
            "cut": sum(a.trace.cut for a in admitted),
            "ended_with_error": sum(any(isinstance(e, dict) and e.get("error") for _, e in ev)
                                    for ev in events),
            **{k: delays[k] for k in ("streams_behind", "sentences_released",
                                      "sentences_acted_on", "ttft_ms", "errors")}},
        "release_delay_ms": delays["release_delay_ms"],
        "per_stream": {k: [sum(a.stream == i for a in group) for i in range(cfg.streams)]
                       for k, group in (("admitted", admitted), ("refused", refused))},
        "bins": bins}


def rss_summary(samples: list[tuple[float, float]], duration: float, warmup: float,
                tolerance_pct: float) -> dict:
    """RSS at the end of the warm-up -- the mean of its last 30 s, as RSS swings with the
    queue -- against the mean of the last minute of load and the largest sample after."""
    during = [(t, m) for t, m in samples if t <= duration + 0.5]
    warm = [m for t, m in during if warmup - min(30.0, warmup) <= t <= warmup]
    after = [m for t, m in during if t >= warmup]
    out: dict = {"every_s": 1.0, "warmup_s": warmup, "tolerance_pct": tolerance_pct,
                 "samples": {"t_s": [t for t, _ in samples], "mib": [m for _, m in samples]}}
    if not warm or not after:
        return {**out, "warm_mib": None, "flat": None}
    ref = round(sum(warm) / len(warm), 1)
    last = [m for t, m in during if t >= duration - min(60.0, duration - warmup)] or after
    mean_last = round(sum(last) / len(last), 1)
    drift, top = (round(100 * (x - ref) / ref, 2) for x in (mean_last, max(after)))
    return {**out, "warm_mib": ref, "last_minute_mean_mib": mean_last,
            "max_after_warmup_mib": max(after), "min_after_warmup_mib": min(after),
            "drift_pct": drift, "max_drift_pct": top,
            "flat": abs(drift) <= tolerance_pct and top <= tolerance_pct}


def targets(result: dict) -> list[Target]:
    d, req, adm, rss, st = (result[k] for k in ("release_delay_ms", "requests",
                                                "admitted_streams", "rss", "settings"))
    where = (f"{st['streams']} streams for {st['duration_s']:g} s; {adm['n']} admitted, "
             f"{req['refused']} refused")
    note = (f"from {rss.get('warm_mib')} MiB, the mean of the last 30 s of the "
            f"{rss['warmup_s']:g} s warm-up")
    return [*(Target(f"release delay {q} of admitted streams vs scheduler.latency_budget_s",
                     d[q], 1000 * st["latency_budget_s"], "<=", "ms", where)
              for q in ("p50", "p99")),
            Target("refusals without Retry-After", float(req["refused"] -
                   req["refused_with_retry_after"]), 0.0, "<=", "requests", where),
            Target("admitted streams without [DONE] or ended by an error event", float(
                adm["n"] - adm["done"] + adm["ended_with_error"]), 0.0, "<=", "streams",
                f"{adm['cut']} cut; errors: {', '.join(adm['errors']) or 'none'}"),
            *(Target(f"RSS, {name} after warm-up vs warm-up end", None if rss.get(key) is None
                     else abs(rss[key]), rss["tolerance_pct"], "<=", "%", note)
              for name, key in (("last-minute mean", "drift_pct"),
                                ("largest sample", "max_drift_pct")))]


def run(cfg: SoakConfig, *, log: Callable[[str], None] = lambda s: None) -> dict:
    if min(cfg.streams, cfg.duration_s, cfg.rate, cfg.context_tokens) <= 0 or \
            not 0 <= cfg.warmup < cfg.duration_s:
        raise ValueError(f"need streams, duration, rate, context > 0 and a warm-up shorter "
                         f"than the run; got {cfg.streams}, {cfg.duration_s:g} s, {cfg.rate:g} "
                         f"tok/s, {cfg.context_tokens} tokens, warm-up {cfg.warmup:g} s")
    return asyncio.run(_run(cfg, log))


def write(out: Path, result: dict) -> list[Path]:
    """``OUT/soak.json`` and ``OUT/soak.png``: RSS over time, requests per 10 s."""
    from guardrail.bench.report import _plt, _save, write_json

    write_json(out / "soak.json", result)
    rss, bins, st = result["rss"], result["bins"], result["settings"]
    fig, (a, b) = _plt().subplots(2, 1, figsize=(10, 7), sharex=True)
    a.plot(rss["samples"]["t_s"], rss["samples"]["mib"], lw=1, label="proxy RSS, MiB")
    if rss.get("warm_mib"):
        a.axhspan(*(rss["warm_mib"] * (1 + k * rss["tolerance_pct"] / 100) for k in (-1, 1)),
                  alpha=0.12, color="green", label=f"±{rss['tolerance_pct']:g} % of warm-up end")
    a.axvline(rss["warmup_s"], ls=":", color="grey", label="warm-up end")
    ts, ad = [x["t_s"] + BIN_S / 2 for x in bins], [x["admitted"] for x in bins]
    b.bar(ts, ad, BIN_S * 0.9, label=f"admitted (requests started per {BIN_S:g} s)")
    b.bar(ts, [x["refused"] for x in bins], BIN_S * 0.9, bottom=ad, label="refused (Retry-After)")
    b.set_xlabel("s since the first request")
    g, q = result["proxy"]["gauges"], b.twinx()
    q.plot(g["t_s"], g["queue_depth"], color="black", lw=1, label="checks queued (right)")
    for ax, where in ((a, "best"), (b, "upper left"), (q, "upper right")):
        ax.legend(loc=where, fontsize="small")
    d = result["release_delay_ms"]
    fig.suptitle(f"soak: {st['streams']} streams for {st['duration_s']:g} s; release delay of "
                 f"admitted streams p50 {d['p50'] and round(d['p50'])} ms, p99 "
                 f"{d['p99'] and round(d['p99'])} ms (budget "
                 f"{1000 * st['latency_budget_s']:g} ms)", fontsize="medium")
    return [out / "soak.json", _save(fig, out / "soak.png")]


def summary(result: dict) -> str:
    r, d, a, m = (result[k] for k in ("requests", "release_delay_ms", "admitted_streams", "rss"))
    lines = [f"requests {r['total']}: admitted {r['admitted']}, refused {r['refused']} "
             f"({r['refused_with_retry_after']} with Retry-After), failed {r['failed']}",
             f"admitted streams: {a['done']} ended with [DONE], {a['cut']} cut, "
             f"{a['ended_with_error']} with an error event",
             f"release delay p50 {d['p50']} ms, p99 {d['p99']} ms (budget "
             f"{1000 * result['settings']['latency_budget_s']:g} ms)"]
    if m.get("warm_mib"):
        lines.append(f"RSS {m['warm_mib']:.0f} MiB at warm-up end, last minute "
                     f"{m['last_minute_mean_mib']:.0f} ({m['drift_pct']:+.1f} %), max "
                     f"{m['max_after_warmup_mib']:.0f} ({m['max_drift_pct']:+.1f} %): "
                     f"{'flat' if m['flat'] else 'NOT flat'}")
    return "\n".join(lines)


__all__ = ["SoakConfig", "run", "summary", "write"]
