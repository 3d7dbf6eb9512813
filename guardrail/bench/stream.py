"""``guardrail bench stream``: the proxy end to end, on loopback, under N concurrent streams.

    bench process                                     proxy process (one, several apps)
    clients (httpx, N streams) --- POST ---------->   guarded | naive | ablations ...
        ^  receipt time of every read                 (create_app + Scheduler/LocalVerifier,
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
"""

from __future__ import annotations

import asyncio
import bisect
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Optional

from guardrail.bench import (SCHEMA_VERSION, Target, bench_documents, filler_documents,
                             find_data_dir, machine_info, percentile, ratio)

VARIANTS = {
    "guarded": "the batching scheduler with its defaults: shallow in-flight exit, cross-stream "
               "batches, prepared-context cache",
    "no_early_exit": "guarded, but every check at full depth",
    "no_batching": "guarded, but one sequence per forward",
    "no_cache": "guarded, but the context is tokenized again for every check",
    "all_windows": "guarded, but every context window is scored",
    "topk_windows": "guarded, but only the top-k context windows (BM25) are scored",
    "naive": "one check at a time, full depth, no batching, no cache (LocalVerifier)",
}
REDACT_MARKER = "[unsupported]"
_TAG = re.compile(rb"\[(c\d+):(\w+)-s(\d+)\]")


@dataclass(frozen=True)
class StreamBenchConfig:
    streams: tuple[int, ...] = (1, 4, 16, 64)
    rate: float = 30.0                       # upstream tokens (word pieces) per second
    context_tokens: tuple[int, ...] = (4096,)
    answer_tokens: int = 240                 # pieces per answer (~8 s at 30 tok/s)
    hallucination_rate: float = 0.1          # share of answer sentences not in the context
    naive_streams: tuple[int, ...] = (1, 16)
    ablations: tuple[str, ...] = ("no_early_exit", "no_batching", "no_cache", "topk_windows")
    ablation_streams: tuple[int, ...] = (16,)
    windows: str = "all"                     # window selection of "guarded": all | topk
    top_k: int = 2
    final_pass: bool = True
    admission: bool = False                  # the scheduler's 503 when its backlog is too long
    deadline_s: float = 45.0                 # a configuration's streams are cut after this
    throughput_tokens: int = 2000            # pieces per unthrottled pass-through stream
    probe_repeats: int = 10
    stagger_s: float = 0.5                   # stream starts spread over this
    model: Optional[str] = None
    device: Optional[str] = None
    data_dir: Optional[str] = None
    seed: int = 0

    @classmethod
    def quick(cls, **kw: Any) -> "StreamBenchConfig":
        base = cls(streams=(1, 2), rate=40.0, context_tokens=(256,), answer_tokens=36,
                   naive_streams=(1,), ablations=("no_batching",), ablation_streams=(2,),
                   deadline_s=30.0, throughput_tokens=200, probe_repeats=3, stagger_s=0.1)
        return replace(base, **kw)


# -- workloads ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    """One stream's request: its documents, the scripted answer and its tag."""

    key: str                      # "<context size>-s<i>": selects the scripted answer
    documents: tuple[str, ...]
    answer: str
    hallucinated: int             # sentences replaced by one from outside the context

    def body(self, config_id: str, delay: float, *, checked: bool) -> dict:
        size, _, i = self.key.partition("-s")
        docs = [f"(document set {config_id})"] + list(self.documents)
        body: dict = {"model": "fake-llm", "stream": True,
                      "messages": [{"role": "user", "content":
                                    f"[{config_id}:{size}-s{i}] What do the documents say?"}],
                      "fake": {"delay": delay}}
        if checked:
            body["guardrail"] = {"context": docs}
        return body


def _cut_to_tokens(tokenizer, parts: list[str], n_tokens: int) -> list[str]:
    out, total = [], 0
    for p in parts:
        enc = tokenizer(p, add_special_tokens=False, return_offsets_mapping=True)
        n = len(enc["input_ids"])
        if total + n > n_tokens:
            keep = n_tokens - total
            if keep > 0:
                out.append(p[:enc["offset_mapping"][keep - 1][1]])
            return out
        out.append(p)
        total += n
    return out


def build_workloads(tokenizer, docs: list[str], n: int, context_tokens: int, answer_tokens: int,
                    hallucination_rate: float, seed: int) -> list[Workload]:
    """``n`` streams: each a context of exactly ``context_tokens`` tokens (documents taken
    in turn from ``docs``) and an answer of its sentences, a ``hallucination_rate``
    share of them replaced by sentences of documents outside the context."""
    from guardrail.detector.synth import split_sentences, usable
    from guardrail.fake_upstream import split_pieces

    rng = random.Random(seed * 1000 + context_tokens)
    out = []
    for i in range(n):
        start = (i * 3) % len(docs)
        parts, j = [], start
        while sum(len(p) for p in parts) < context_tokens * 8:  # chars >> tokens
            parts.append(docs[j % len(docs)])
            j += 1
        parts = _cut_to_tokens(tokenizer, parts, context_tokens)
        inside = [s for p in parts for s in split_sentences(p) if usable(s)] or \
            [s for p in parts for s in split_sentences(p)] or parts
        text = "\n".join(parts)
        outside = [s for d in (docs[(start + len(docs) // 2 + k) % len(docs)] for k in range(3))
                   for s in split_sentences(d) if usable(s) and s not in text]
        sentences, pieces, bad, k = [], 0, 0, 0
        while pieces < answer_tokens:
            s = inside[k % len(inside)]
            k += 1
            if outside and rng.random() < hallucination_rate:
                s, bad = rng.choice(outside), bad + 1
            sentences.append(s)
            pieces += len(split_pieces(s))
        out.append(Workload(f"{context_tokens}-s{i}", tuple(parts), " ".join(sentences), bad))
    return out


# -- the timed fake upstream ----------------------------------------------------------------

class TimedUpstream:
    """ASGI wrapper recording when each response body chunk of a tagged request leaves."""

    def __init__(self, app):
        self.app = app
        self.sent: dict[tuple[str, str, int], list[tuple[float, bytes]]] = {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        msgs, body = [], b""
        while True:
            m = await receive()
            msgs.append(m)
            body += m.get("body", b"")
            if m["type"] != "http.request" or not m.get("more_body"):
                break
        found = _TAG.search(body)
        log = None
        if found:
            key = (found.group(1).decode(), found.group(2).decode(), int(found.group(3)))
            log = self.sent.setdefault(key, [])

        async def replay():
            return msgs.pop(0) if msgs else await receive()

        async def timed(message):
            await send(message)
            if log is not None and message["type"] == "http.response.body" and \
                    message.get("body"):
                log.append((time.perf_counter(), message["body"]))

        await self.app(scope, replay, timed)


# -- the proxy process ------------------------------------------------------------------------

class CountingVerifier:
    """Wraps a Verifier; counts finished checks by priority and exit layer."""

    def __init__(self, inner):
        self.inner = inner
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

    def queue_depth(self) -> int:
        return self.inner.queue_depth()

    def admit(self) -> None:
        admit = getattr(self.inner, "admit", None)
        try:
            if admit is not None:
                admit()
        except Exception:
            self.rejected += 1
            raise

    def info(self) -> dict:
        return self.inner.info()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def stats(self) -> dict:
        out: dict = {"exits": dict(self.exits), "failed": self.failed, "rejected": self.rejected,
                     "queue_depth": self.inner.queue_depth(), "info": self.inner.info()}
        if hasattr(self.inner, "stats"):
            s = self.inner.stats()
            out["scheduler"] = {**{k: v for k, v in asdict(s).items() if k != "contexts"},
                                "contexts": asdict(s.contexts) if s.contexts else None}
        return out


class _SelectingDetector:
    """A Detector whose ``detect`` uses a given window selector (for LocalVerifier)."""

    def __init__(self, det, selector):
        self.det, self.selector = det, selector
        self.n_layers, self.exit_layers, self.threshold = \
            det.n_layers, det.exit_layers, det.threshold

    def detect(self, context, question, response, *, exit_layer=None):
        from guardrail.detector import DetectInput

        return self.det.detect_batch([DetectInput(context, question, response)],
                                     exit_layer=exit_layer, selector=self.selector)[0]


def build_verifier(det, name: str, spec: dict):
    from guardrail.cache import CacheConfig, PreparedContextCache
    from guardrail.config import VerificationConfig
    from guardrail.detector.windows import IndexCache, make_selector
    from guardrail.scheduler import Scheduler, SchedulerConfig
    from guardrail.verifier import LocalVerifier

    timeout = spec["check_timeout_s"]
    windows = {"all_windows": "all", "topk_windows": "topk"}.get(name, spec["windows"])
    uncached = name in ("naive", "no_cache")
    selector = make_selector(windows, spec["top_k"], IndexCache(1) if uncached else None)
    # without admission control the backlog may exceed the latency budget: the benchmark
    # then measures the delay of every stream instead of refusing some with 503
    sched = SchedulerConfig(check_timeout_s=timeout, **({} if spec["admission"] else
                                                        {"latency_budget_s": 1e9,
                                                         "max_pending_checks": 1_000_000}))
    if name == "naive":
        vcfg = VerificationConfig(shallow_exit_layer=det.n_layers, check_timeout_s=timeout,
                                  left_context_chars=sched.left_context_chars,
                                  max_pending_checks=sched.max_pending_checks)
        return LocalVerifier(_SelectingDetector(det, selector), vcfg)
    if name == "no_early_exit":
        sched = replace_model(sched, in_flight_exit=det.n_layers, depth_ladder=())
    elif name == "no_batching":
        sched = replace_model(sched, max_batch_size=1, max_wait_ms=0.0)
    cache = CacheConfig(local_max_bytes=1, local_tenant_max_bytes=1) if uncached \
        else CacheConfig()
    return Scheduler(det, sched, contexts=PreparedContextCache(cache), selector=selector,
                     model_name=det.name)


def replace_model(model, **kw):
    return type(model).model_validate({**model.model_dump(), **kw})


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
            out = self.verifier.stats()
        else:
            out = await asyncio.to_thread(self.probe, json.loads(body))
        data = json.dumps(out).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data})

    def probe(self, p: dict) -> dict:
        """Time one check alone (context prepared, as the cache holds it) at each exit."""
        from guardrail.bench import interleaved
        from guardrail.detector import DetectInput

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

    from guardrail.config import GuardrailConfig
    from guardrail.detector import Detector
    from guardrail.detector.windows import make_selector
    from guardrail.server import create_app

    det = Detector.from_pretrained(spec["model"], device=spec["device"])
    cfg = GuardrailConfig.model_validate({
        "upstream": {"base_url": spec["upstream"], "read_timeout_s": 600},
        "server": {"max_concurrent_requests": 4096},
        "verification": {"final_pass": spec["final_pass"],
                         "check_timeout_s": spec["check_timeout_s"],
                         "max_pending_checks": 100_000}})
    servers, verifiers = {}, []
    for name in spec["variants"]:
        v = CountingVerifier(build_verifier(det, name, spec))
        verifiers.append(v)
        app = BenchApp(create_app(cfg, verifier=v), v, det,
                       make_selector(spec["windows"], spec["top_k"]))
        servers[name] = uvicorn.Server(uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", access_log=False,
            lifespan="on", timeout_graceful_shutdown=2))
    tasks = [asyncio.create_task(s.serve()) for s in servers.values()]
    while not all(s.started for s in servers.values()):
        if any(t.done() for t in tasks):
            raise RuntimeError("a proxy server failed to start")
        await asyncio.sleep(0.02)
    ports = {k: s.servers[0].sockets[0].getsockname()[1] for k, s in servers.items()}
    info = verifiers[0].info() if verifiers else {}
    print(json.dumps({"ports": ports, "n_layers": det.n_layers,
                      "exit_layers": list(det.exit_layers), "info": info,
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
            sys.executable, "-c", "from guardrail.bench.stream import child_main; child_main()",
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


# -- driving streams ----------------------------------------------------------------------------

@dataclass
class Trace:
    """What one client saw."""

    key: tuple[str, str, int]
    start: float
    reads: list[tuple[float, bytes]] = field(default_factory=list)
    status: int = 0
    error: Optional[str] = None
    cut: bool = False


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


# -- analysis --------------------------------------------------------------------------------------

def _events(reads: list[tuple[float, bytes]]) -> list[tuple[float, Any]]:
    """(time, parsed data) of every SSE event; data is a dict, or "[DONE]"."""
    from guardrail.sse import SSEDecoder

    dec, out = SSEDecoder(), []
    for t, b in reads:
        for ev in dec.feed(b):
            if ev.data.strip() == "[DONE]":
                out.append((t, "[DONE]"))
            elif ev.data.strip():
                try:
                    out.append((t, json.loads(ev.data)))
                except ValueError:
                    out.append((t, {"error": {"message": "unparseable event"}}))
    return out


def _content(chunk: Any) -> str:
    if not isinstance(chunk, dict):
        return ""
    return "".join((c.get("delta") or {}).get("content") or "" for c in chunk.get("choices") or ()
                   if isinstance(c, dict) and c.get("index", 0) == 0)


def content_timeline(reads) -> tuple[list[float], list[int], str, list[Any]]:
    """Times and cumulative characters of choice 0's content, the text, and all events."""
    events = _events(reads)
    times, cum, parts, n = [], [], [], 0
    for t, ev in events:
        text = _content(ev)
        if text:
            n += len(text)
            times.append(t)
            cum.append(n)
            parts.append(text)
    return times, cum, "".join(parts), events


def time_at(times: list[float], cum: list[int], offset: int) -> Optional[float]:
    i = bisect.bisect_left(cum, offset)
    return times[i] if i < len(times) else None


def align(answer: str, released: list[str], marker: str = REDACT_MARKER) -> list[int]:
    """End offset in ``answer`` of the last visible character of each released piece
    (redactions matched around)."""
    ends, pos, end = [], 0, 0
    for text in released:
        for piece in (p for p in text.split(marker) if p.strip()):
            j = answer.find(piece, pos)
            if j >= 0:
                pos = j + len(piece)
                end = j + len(piece.rstrip())
        ends.append(end)
    return ends


def sentence_ends(answer: str, released: list[str], report: Optional[dict]) -> list[int]:
    """Where each sentence behind the released chunks ends in the upstream answer: its
    last visible character (the sentence is complete when its last token is sent)."""
    if report:
        verdicts = [v for v in report.get("sentences", []) if v.get("released")]
        originals = [v.get("original", "") for v in report.get("sentences", [])]
        if len(verdicts) == len(released) and "".join(originals) == answer:
            ends, pos = {}, 0
            for v in report["sentences"]:
                ends[v["index"]] = pos + len(v.get("original", "").rstrip())
                pos += len(v.get("original", ""))
            return [ends[v["index"]] for v in verdicts]
    return align(answer, released)


def lag_slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of release delay over upstream time (s of delay per s)."""
    if len(points) < 3:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return 0.0 if var <= 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var


def _dist(ms: list[float]) -> dict:
    if not ms:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None}
    return {"n": len(ms), "p50": round(percentile(ms, 50), 3), "p95": round(percentile(ms, 95), 3),
            "p99": round(percentile(ms, 99), 3), "max": round(max(ms), 3)}


# A stream has fallen behind its upstream when it was cut at the deadline, or when its
# release delay keeps growing: least-squares slope over >= 5 sentences above 0.1 s per s
# of upstream time AND a total growth over the stream above 0.5 s (so jitter on a short
# stream does not count).
BEHIND_SLOPE = 0.1
BEHIND_GROWTH_S = 0.5


def fell_behind(points: list[tuple[float, float]]) -> tuple[bool, float]:
    slope = lag_slope(points)
    span = points[-1][0] - points[0][0] if points else 0.0
    return len(points) >= 5 and slope > BEHIND_SLOPE and slope * span > BEHIND_GROWTH_S, slope


def analyse(traces: list[Trace], upstream: dict, *, checked: bool) -> dict:
    delays, transport, ttft, behind, errors, slopes = [], [], [], 0, [], []
    chunks, flagged, sentences, ok = 0, 0, 0, 0
    first = min((t.start for t in traces), default=0.0)
    last = first
    for tr in traces:
        up_t, up_cum, answer, _ = content_timeline(upstream.get(tr.key, []))
        down_t, down_cum, _text, events = content_timeline(tr.reads)
        last = max([last] + [t for t, _ in tr.reads])
        report = next((e["guardrail"] for _, e in events
                       if isinstance(e, dict) and isinstance(e.get("guardrail"), dict)), None)
        err = next((e["error"] for _, e in events if isinstance(e, dict) and e.get("error")),
                   None)
        if tr.error or err or tr.status != 200:
            errors.append(tr.error or (err or {}).get("message") or f"HTTP {tr.status}")
        elif not tr.cut:
            ok += 1
        chunks += len(down_t)
        if down_t:
            ttft.append((down_t[0] - tr.start) * 1000)
        if report:
            flagged += sum(v.get("action") != "release" for v in report.get("sentences", []))
        if checked:
            released = [_content(e) for _, e in events if _content(e)]
            ends = sentence_ends(answer, released, report)
            points = []
            for t_down, end in zip(down_t, ends):
                t_up = time_at(up_t, up_cum, end)
                if t_up is not None:
                    delays.append((t_down - t_up) * 1000)
                    points.append((t_up, t_down - t_up))
            sentences += len(points)
            late, slope = fell_behind(points)
            slopes.append(slope)
            behind += tr.cut or late
        else:
            for m in re.finditer(r"[.!?](?=\s|$)", answer):
                a, b = time_at(up_t, up_cum, m.end()), time_at(down_t, down_cum, m.end())
                if a is not None and b is not None:
                    transport.append((b - a) * 1000)
    wall = max(1e-9, last - first)
    return {
        "streams_ok": ok, "streams_cut": sum(t.cut for t in traces),
        "streams_failed": len(errors), "errors": sorted(set(errors))[:5],
        "wall_s": round(wall, 3), "chunks": chunks,
        # all streams together, first request sent to last byte read: reads coalesce
        # events, so spacing between content events would overstate a burst
        "chunks_per_s": round(chunks / wall, 2),
        "ttft_ms": _dist(ttft),
        "release_delay_ms": _dist(delays) if checked else None,
        "transport_delay_ms": None if checked else _dist(transport),
        "sentences_released": sentences if checked else None,
        "sentences_acted_on": flagged if checked else None,
        "streams_behind": behind if checked else None,
        "max_lag_slope": round(max(slopes, default=0.0), 4) if checked else None,
    }


# -- one configuration ---------------------------------------------------------------------

def _diff(after: dict, before: dict) -> dict:
    """Counters that grew during a configuration (nested dicts of numbers)."""
    out = {}
    for k, v in after.items():
        b = before.get(k)
        if isinstance(v, dict):
            out[k] = _diff(v, b if isinstance(b, dict) else {})
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v - (b if isinstance(b, (int, float)) else 0)
    return out


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


def _checks(stats: dict, wall: float) -> dict:
    exits: dict[str, dict[str, int]] = {"in_flight": {}, "end_of_stream": {}}
    for k, n in (stats.get("exits") or {}).items():
        prio, _, layer = k.partition("@")
        if n:
            exits.setdefault(prio, {})[layer] = n
    in_flight = sum(exits["in_flight"].values())
    out: dict = {"in_flight": in_flight, "end_of_stream": sum(exits["end_of_stream"].values()),
                 "failed": stats.get("failed", 0), "rejected": stats.get("rejected", 0),
                 "exits": exits,
                 "sentences_checked_per_s": round(in_flight / wall, 3)}
    sch = stats.get("scheduler")
    if sch:
        sizes = {int(k): v for k, v in (sch.get("batch_sizes") or {}).items() if v}
        out["batches"] = {
            "count": sch.get("batches", 0),
            "mean_size": round(sch["sequences"] / sch["batches"], 2) if sch.get("batches") else 0,
            "sizes": dict(sorted(sizes.items())),
            "padding_ratio": round(sch["padded_tokens"] / sch["real_tokens"], 3)
            if sch.get("real_tokens") else None,
            "shallower_exits": sch.get("shallower_exits", 0)}
        ctx = sch.get("contexts") or {}
        out["context_cache"] = {"hits": ctx.get("local_hits", 0) + ctx.get("redis_hits", 0),
                                "misses": ctx.get("misses", 0)}
    return out


def _upstream_rate(traces: list[Trace], upstream: dict) -> Optional[float]:
    rates = []
    for tr in traces:
        events = upstream.get(tr.key, [])
        times, _cum, _text, _ = content_timeline(events)
        if len(times) > 2 and times[-1] > times[0]:
            rates.append((len(times) - 1) / (times[-1] - times[0]))
    return round(percentile(rates, 50), 2) if rates else None


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
                  "upstream_rate_tok_s": _upstream_rate(traces, upstream),
                  **analyse(traces, upstream, checked=checked), **mon.result}
        if checked:
            result["checks"] = _checks(_diff(after, before), result["wall_s"])
        return result


# -- the benchmark ----------------------------------------------------------------------------

def _probe_body(w: Workload, exits: list[int], repeats: int) -> dict:
    """The check a scheduler runs for one mid-answer sentence: its left context trimmed
    as the scheduler trims it, against the stream's whole context."""
    from guardrail.scheduler_config import SchedulerConfig
    from guardrail.verifier import trim_left

    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", w.answer)] or [len(w.answer)]
    k = min(3, len(ends) - 1)
    start, end = (ends[k - 1] + 1 if k else 0), ends[k]
    cut = trim_left(w.answer, start, SchedulerConfig().left_context_chars)
    return {"documents": list(w.documents), "question": "What do the documents say?",
            "response": w.answer[cut:end], "exits": exits, "repeats": repeats}


async def _probe(h: Harness, size: str, exits: list[int]) -> dict:
    port = h.proxy.hello["ports"]["guarded"]
    body = _probe_body(h.workloads[size][0], exits, h.cfg.probe_repeats)
    r = await h.client.post(f"http://127.0.0.1:{port}/bench/probe", json=body, timeout=600)
    return r.json()


def _fake_script(workloads: dict[str, list[Workload]]):
    from guardrail.fake_upstream import FakeScript, Rule

    rules = [Rule(match=f":{w.key}]", reply=w.answer) for ws in workloads.values() for w in ws]
    return FakeScript(rules=rules, model="fake-llm")


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
    return out


async def _run(cfg: StreamBenchConfig, log: Callable[[str], None]) -> dict:
    import httpx
    from transformers import AutoTokenizer

    from guardrail.detector.detector import DEFAULT_MODEL
    from guardrail.fake_upstream import ServerThread, create_fake_upstream, split_pieces

    tokenizer = AutoTokenizer.from_pretrained(str(cfg.model or DEFAULT_MODEL))
    tokenizer.model_max_length = 1 << 30
    docs, doc_source = bench_documents(find_data_dir(cfg.data_dir))
    n_max = max((*cfg.streams, *cfg.naive_streams, *cfg.ablation_streams))
    workloads = {str(size): build_workloads(tokenizer, docs, n_max, size, cfg.answer_tokens,
                                            cfg.hallucination_rate, cfg.seed)
                 for size in cfg.context_tokens}
    long_text = " ".join(filler_documents(1 + cfg.throughput_tokens // 200, cfg.seed))
    long_text = "".join(split_pieces(long_text)[:cfg.throughput_tokens])
    workloads["tp"] = [Workload(f"tp-s{i}", (), long_text, 0) for i in range(max(cfg.streams))]
    upstream = TimedUpstream(create_fake_upstream(_fake_script(workloads)))
    variants = ["guarded", *(["naive"] if cfg.naive_streams else []), *cfg.ablations]
    limits = httpx.Limits(max_connections=4 * n_max + 8, max_keepalive_connections=4 * n_max)
    timeout = httpx.Timeout(cfg.deadline_s + 60, connect=10)
    with ServerThread(upstream) as up:
        spec = {"upstream": f"http://127.0.0.1:{up.port}/v1", "model": cfg.model,
                "device": cfg.device, "variants": variants, "windows": cfg.windows,
                "top_k": cfg.top_k, "final_pass": cfg.final_pass, "admission": cfg.admission,
                "check_timeout_s": cfg.deadline_s + 30}
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
                "proxy_rss_mib_at_start": round(hello["ru_maxrss_mib"], 1),
                "tokens": "word pieces of the fake upstream (one SSE event each)"}
    result = {"kind": "stream", "schema": SCHEMA_VERSION, "machine": machine_info(cfg.device),
              "settings": settings, "probes": probes, "shallow_check_ms": shallow_ms,
              "configs": configs, "mechanisms": mechanisms(configs)}
    result["targets"] = [t.to_json() for t in targets(result, cfg)]
    return result


def run(cfg: StreamBenchConfig, *, log: Callable[[str], None] = lambda s: None) -> dict:
    unknown = set(cfg.ablations) - (set(VARIANTS) - {"guarded", "naive"})
    if unknown or cfg.windows not in ("all", "topk", "truncate"):
        raise ValueError(f"unknown ablations {sorted(unknown)} or windows {cfg.windows!r}; "
                         f"ablations: {sorted(set(VARIANTS) - {'guarded', 'naive'})}")
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


__all__ = ["StreamBenchConfig", "child_main", "run", "summary"]
