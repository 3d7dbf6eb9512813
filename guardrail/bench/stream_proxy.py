"""The stream benchmark's proxy process: one app per variant, each built as ``serve`` builds it.

Every variant is a ``GuardrailConfig``: the shipped defaults plus the benchmark's own
settings (``base_overrides``: upstream, timeouts, admission off), plus the variant's
change (``VARIANT_OVERRIDES``, one field of the shipped config per ablation).  Its
verifier comes from ``guardrail.engine.build.build_verifier`` -- exactly what
``guardrail serve`` runs -- so the benchmark measures the shipped configuration, and
a change of a default changes what is measured.  The naive baseline is the same
config with ``verification.engine: local`` at full depth over all windows.

The process loads one Detector shared by every variant, serves each variant on its
own loopback port (``/bench/stats`` and ``/bench/probe`` next to the proxy routes),
prints the ports on stdout and runs until its stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections import Counter
from dataclasses import asdict
from typing import Any, Optional

from guardrail.types import DEFAULT_TENANT

VARIANTS = {
    "guarded": "what `guardrail serve` runs (build_verifier with the shipped scheduler "
               "section): shallow in-flight exit, top-k context windows in flight, "
               "cross-stream batches, prepared-context cache",
    "no_early_exit": "guarded, but in-flight checks at full depth (scheduler.in_flight_exit "
                     "= n_layers, depth_ladder = [])",
    "no_batching": "guarded, but one sequence per forward (scheduler.max_batch_size = 1)",
    "no_cache": "guarded, but no prepared context is kept, so the context is tokenized again "
                "for every check (cache.local_tenant_max_bytes = 1)",
    "all_windows": "guarded, but in-flight checks score every context window "
                   "(scheduler.in_flight_windows = all)",
    "no_coalesce": "guarded, but a stream's sentences waiting in the queue are checked one "
                   "by one (scheduler.coalesce_sentences = 1)",
    "naive": "one check at a time, full depth, all windows, no batching, no cache "
             "(verification.engine = local)",
}
ABLATIONS = tuple(v for v in VARIANTS if v not in ("guarded", "naive"))


def variant_overrides(name: str, n_layers: int) -> dict[str, Any]:
    """Dotted config keys a variant changes in the shipped config.  Turning off early
    exits takes two: the adaptive depth ladder is an early exit too."""
    return {
        "guarded": {},
        "no_early_exit": {"scheduler.in_flight_exit": n_layers, "scheduler.depth_ladder": []},
        "no_batching": {"scheduler.max_batch_size": 1},
        "no_cache": {"cache.local_tenant_max_bytes": 1},
        "all_windows": {"scheduler.in_flight_windows": "all"},
        "no_coalesce": {"scheduler.coalesce_sentences": 1},
        "naive": {"verification.engine": "local", "scheduler.in_flight_exit": n_layers,
                  "scheduler.in_flight_windows": "all", "scheduler.final_windows": "all"},
    }[name]


def base_overrides(spec: dict) -> dict[str, Any]:
    """The benchmark's settings on top of the shipped defaults (None: keep the default).

    Without admission control the backlog may exceed the latency budget: the benchmark
    then measures the delay of every stream instead of refusing some with 503."""
    return {
        "upstream.base_url": spec["upstream"], "upstream.read_timeout_s": 600,
        "server.max_concurrent_requests": 4096,
        "detector.model": spec.get("model"), "detector.device": spec.get("device"),
        "verification.final_pass": spec["final_pass"],
        # the answers here are sentences of their own contexts, word for word: settled
        # by the judge's evidence, they would need no check at all (real answers seldom
        # copy: about a tenth of RAGTruth dev's claims, docs/benchmarks.md), so every
        # sentence is checked
        "verification.settle_restated": False,
        "scheduler.check_timeout_s": spec["check_timeout_s"],
        "scheduler.in_flight_windows": spec.get("windows"),
        "scheduler.in_flight_top_k": spec.get("top_k"),
        **({} if spec["admission"] else {"scheduler.latency_budget_s": 1e9,
                                         "scheduler.max_pending_checks": 1_000_000,
                                         "scheduler.initial_streams": 100_000,
                                         "scheduler.max_streams": 100_000}),
    }


def variant_config(spec: dict, name: str, n_layers: int):
    """The GuardrailConfig of one variant: the shipped defaults, the spec's config file,
    the benchmark's settings (environment variables are not read)."""
    from guardrail.config import load_config

    return load_config(spec.get("config"), env={}, overrides={**base_overrides(spec),
                                          **variant_overrides(name, n_layers)})


class CountingVerifier:
    """Wraps a Verifier; counts finished checks by priority and exit layer."""

    def __init__(self, inner, contexts=None):
        self.inner, self.contexts = inner, contexts
        self.exits: Counter = Counter()
        self.failed = self.rejected = 0

    async def verify(self, req):
        try:
            det = await self.inner.verify(req)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.failed += 1
            raise
        self.exits[f"{req.priority.name.lower()}@{det.exit_layer}"] += 1
        return det

    def abort(self, stream_id: str) -> None:
        self.inner.abort(stream_id)

    async def warm(self, documents, *, tenant: str = DEFAULT_TENANT):
        return await self.inner.warm(documents, tenant=tenant)

    def admit(self, stream_id=None) -> None:
        try:
            self.inner.admit(stream_id)
        except Exception:
            self.rejected += 1
            raise

    def info(self):
        return self.inner.info()

    def stats(self):
        return self.inner.stats()

    async def aclose(self) -> None:
        await self.inner.aclose()
        if self.contexts is not None:
            await self.contexts.aclose()

    def bench_stats(self) -> dict:
        s = self.inner.stats()
        return {"exits": dict(self.exits), "failed": self.failed, "rejected": self.rejected,
                "queue_depth": s.pending_checks, "info": self.inner.info().to_json(),
                "scheduler": {**{k: v for k, v in asdict(s).items() if k != "contexts"},
                              "contexts": asdict(s.contexts) if s.contexts else None}}


def _scheduler(config, info: dict) -> dict:
    """The guarded variant's scheduler section, its left context resolved for the model."""
    if config is None:
        return {}
    budget, step = config.scheduler.left_context(bool(info.get("keeps_answer")))
    return {**config.scheduler.model_dump(mode="json"), "left_context_chars": budget,
            "left_context_step_chars": step}


class BenchApp:
    """The proxy app plus ``GET /bench/stats`` and ``POST /bench/probe``."""

    def __init__(self, app, verifier: CountingVerifier, det, selector):
        self.app, self.verifier, self.det, self.selector = app, verifier, det, selector

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/bench/"):
            return await self.app(scope, receive, send)
        body = b""
        while True:
            m = await receive()
            body += m.get("body", b"")
            if not m.get("more_body"):
                break
        if scope["path"] == "/bench/stats":
            out = self.verifier.bench_stats()
        else:
            out = await asyncio.to_thread(self.probe, json.loads(body))
        data = json.dumps(out).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data})

    def probe(self, p: dict) -> dict:
        """Time one in-flight check alone (context prepared, as the cache holds it, and
        the variant's in-flight window selector) at each exit."""
        from guardrail.bench import interleaved
        from guardrail.model import DetectInput

        det = self.det
        ctx = det.prepare_context(p["documents"])
        fns = {str(e): (lambda e=e: det.detect_batch(
            [DetectInput(ctx, p["question"], p["response"])],
            exit_layer=None if e >= det.n_layers else e, selector=self.selector))
            for e in p["exits"]}
        fns["prepare_context"] = lambda: det.prepare_context(p["documents"])
        t = interleaved(fns, warmup=1, repeats=p["repeats"])
        return {k: v.to_json() for k, v in t.items()}


def child_main() -> None:
    """Entry of the proxy process: a spec line on stdin, ports on stdout, EOF stops it."""
    spec = json.loads(sys.stdin.readline())
    asyncio.run(_child(spec))


async def _child(spec: dict) -> None:
    import resource

    import uvicorn

    from guardrail.engine.build import build_verifier, load_detector
    from guardrail.engine.checks import window_selectors
    from guardrail.engine.prepared import PreparedContextCache
    from guardrail.proxy.app import create_app
    from guardrail.types import Priority

    det = load_detector(variant_config(spec, "guarded", 0))  # one for every variant
    servers, verifiers, configs = {}, [], {}
    for name in spec["variants"]:
        cfg = variant_config(spec, name, det.n_layers)
        configs[name] = cfg
        # as create_app builds it, minus Redis: the prepared-context cache of cfg.cache
        contexts = PreparedContextCache(cfg.cache) if cfg.verification.engine == "scheduler" \
            else None
        v = CountingVerifier(build_verifier(cfg, detector=det, contexts=contexts), contexts)
        verifiers.append(v)
        selector = window_selectors(cfg.scheduler)[Priority.IN_FLIGHT]
        app = BenchApp(create_app(cfg, verifier=v), v, det, selector)
        servers[name] = uvicorn.Server(uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", access_log=False,
            lifespan="on", timeout_graceful_shutdown=2))
    tasks = [asyncio.create_task(s.serve()) for s in servers.values()]
    while not all(s.started for s in servers.values()):
        if any(t.done() for t in tasks):
            raise RuntimeError("a proxy server failed to start")
        await asyncio.sleep(0.02)
    ports = {k: s.servers[0].sockets[0].getsockname()[1] for k, s in servers.items()}
    info = verifiers[0].info().to_json() if verifiers else {}
    first = configs.get("guarded") or next(iter(configs.values()), None)
    print(json.dumps({
        "ports": ports, "n_layers": det.n_layers, "exit_layers": list(det.exit_layers),
        "info": info, "scheduler": _scheduler(first, info),
        "overrides": {k: variant_overrides(k, det.n_layers) for k in configs},
        "ru_maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}),
        flush=True)
    await asyncio.to_thread(sys.stdin.read)  # until the bench closes our stdin
    for s in servers.values():
        s.should_exit = True
    await asyncio.gather(*tasks, return_exceptions=True)
    for v in verifiers:
        await v.aclose()


class ProxyProcess:
    def __init__(self, spec: dict):
        self.spec = spec
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.stderr = tempfile.TemporaryFile()
        self.hello: dict = {}

    async def __aenter__(self) -> "ProxyProcess":
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c",
            "from guardrail.bench.stream_proxy import child_main; child_main()",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self.stderr)
        self.proc.stdin.write(json.dumps(self.spec).encode() + b"\n")
        await self.proc.stdin.drain()
        line = await asyncio.wait_for(self.proc.stdout.readline(), 600)
        if not line:
            await self.proc.wait()
            self.stderr.seek(0)
            tail = self.stderr.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"the proxy process failed to start:\n{tail}")
        self.hello = json.loads(line)
        return self

    async def __aexit__(self, *exc) -> None:
        if self.proc is None:
            return
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 20)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self.stderr.close()

    @property
    def pid(self) -> int:
        return self.proc.pid
