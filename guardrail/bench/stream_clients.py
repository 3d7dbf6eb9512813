"""The stream benchmark's load driver: N concurrent clients, a monitor, one configuration.

``drive`` starts the streams (spread over ``stagger``), records when every read
arrives and cuts them at the deadline; ``Monitor`` samples the proxy process (CPU,
RSS) and its verifier (queue depth) meanwhile; ``Harness.run`` runs one
configuration (variant x streams x context size) and analyses it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Optional

from guardrail.bench.stream_config import StreamBenchConfig
from guardrail.bench.stream_delays import Trace, analyse, check_stats, diff, upstream_rate
from guardrail.bench.stream_proxy import ProxyProcess
from guardrail.bench.stream_workload import TimedUpstream, Workload



async def _one(client, url: str, body: dict, key, start_at: float, deadline: float) -> Trace:
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    tr = Trace(key, time.perf_counter())
    try:
        async with asyncio.timeout(max(0.1, deadline - time.perf_counter())):
            async with client.stream("POST", url, json=body) as resp:
                tr.status = resp.status_code
                async for chunk in resp.aiter_raw():
                    tr.reads.append((time.perf_counter(), chunk))
    except TimeoutError:
        tr.cut = True
    except Exception as e:  # reported per configuration, the run goes on
        tr.error = f"{type(e).__name__}: {e}"
    return tr


async def drive(client, url: str, bodies: list[tuple[tuple, dict]], stagger: float,
                deadline_s: float) -> tuple[list[Trace], float]:
    t0 = time.perf_counter()
    n = len(bodies)
    deadline = t0 + deadline_s
    traces = await asyncio.gather(*(_one(client, url, b, k, t0 + stagger * i / max(1, n),
                                         deadline) for i, (k, b) in enumerate(bodies)))
    return list(traces), time.perf_counter() - t0


class Monitor:
    """Samples the proxy process (CPU, RSS) and its verifier (queue depth) during a run."""

    def __init__(self, client, stats_url: Optional[str], pid: int, every_s: float = 0.2):
        import psutil

        self.client, self.stats_url, self.every = client, stats_url, every_s
        self.proc, self.me = psutil.Process(pid), psutil.Process()
        self.rss_peak, self.depths, self.queued = 0, [], []

    async def __aenter__(self) -> "Monitor":
        self.t0 = time.perf_counter()
        self.cpu0, self.me0 = self.proc.cpu_times(), self.me.cpu_times()
        self.task = asyncio.create_task(self._sample())
        return self

    async def _sample(self) -> None:
        import httpx
        import psutil

        while True:
            try:
                self.rss_peak = max(self.rss_peak, self.proc.memory_info().rss)
                if self.stats_url:
                    s = (await self.client.get(self.stats_url)).json()
                    self.depths.append(s["queue_depth"])
                    self.queued.append((s.get("scheduler") or {}).get("queued_in_flight") or 0)
            except (httpx.HTTPError, psutil.Error, ValueError):
                pass  # a missed sample; the run goes on
            await asyncio.sleep(self.every)

    async def __aexit__(self, *exc) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        wall = time.perf_counter() - self.t0
        c1, m1 = self.proc.cpu_times(), self.me.cpu_times()
        busy = (c1.user + c1.system) - (self.cpu0.user + self.cpu0.system)
        mine = (m1.user + m1.system) - (self.me0.user + self.me0.system)
        self.result = {
            "proxy_cpu_percent": round(100 * busy / wall, 1),
            "bench_cpu_percent": round(100 * mine / wall, 1),
            "proxy_peak_rss_mib": round(self.rss_peak / 2**20, 1),
            "queue_depth": {"max": max(self.depths, default=0),
                            "mean": round(sum(self.depths) / len(self.depths), 2)
                            if self.depths else 0},
            "queued_in_flight_sequences_max": max(self.queued, default=0),
        }


@dataclass
class Harness:
    cfg: StreamBenchConfig
    client: Any
    upstream: TimedUpstream
    upstream_url: str
    proxy: ProxyProcess
    workloads: dict[str, list[Workload]]
    configs: int = 0

    def url(self, variant: str) -> tuple[str, Optional[str]]:
        if variant == "direct":
            return self.upstream_url + "/v1/chat/completions", None
        port = self.proxy.hello["ports"]["guarded" if variant == "passthrough" else variant]
        base = f"http://127.0.0.1:{port}"
        return base + "/v1/chat/completions", base + "/bench/stats"

    async def stats(self, stats_url: Optional[str]) -> dict:
        return (await self.client.get(stats_url)).json() if stats_url else {}

    async def settle(self, stats_url: Optional[str], timeout_s: float = 120.0) -> dict:
        """Stats once the variant's queue is empty (work of a cut configuration drains)."""
        t0 = time.perf_counter()
        while True:
            s = await self.stats(stats_url)
            if not s or s["queue_depth"] == 0 or time.perf_counter() - t0 > timeout_s:
                return s
            await asyncio.sleep(0.2)

    async def run(self, variant: str, n: int, size: str, *, throttled: bool = True) -> dict:
        self.configs += 1
        cid = f"c{self.configs}"
        delay = 1.0 / self.cfg.rate if throttled else 0.0
        checked = variant not in ("direct", "passthrough")
        url, stats_url = self.url(variant)
        wl = self.workloads[size][:n]
        bodies = [((cid, size, i), w.body(cid, delay, checked=checked)) for i, w in enumerate(wl)]
        if checked and self.cfg.warm_contexts:  # stored first, as a tenant's documents
            for _, body in bodies:
                r = await self.client.put(url.replace("/chat/completions", "/contexts"),
                                          json={"documents": body["guardrail"]["context"]})
                r.raise_for_status()
        before = await self.settle(stats_url)
        async with Monitor(self.client, stats_url if checked else None, self.proxy.pid) as mon:
            traces, wall = await drive(self.client, url, bodies, self.cfg.stagger_s,
                                       self.cfg.deadline_s)
        await asyncio.sleep(0.05)  # the last upstream sends are recorded
        after = await self.stats(stats_url)
        upstream = {k: self.upstream.sent.pop(k, []) for k in [b[0] for b in bodies]}
        result = {"variant": variant, "streams": n, "context_tokens": None if size == "tp"
                  else int(size), "throttled": throttled,
                  "rate_tok_s": self.cfg.rate if throttled else None,
                  "upstream_rate_tok_s": upstream_rate(traces, upstream),
                  **analyse(traces, upstream, checked=checked), **mon.result}
        if checked:
            result["checks"] = check_stats(diff(after, before), result["wall_s"])
        return result
