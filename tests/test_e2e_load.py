"""Many streams at once through the running server: cross-stream batching, admission
control and abort on disconnect, with the real default detector and the scheduler as
``guardrail serve`` wires it.

Nothing here asserts a timing.  Where a test needs checks to wait (to catch them
queued), the scheduler's ``max_wait_ms`` is made longer than the test, so a lane is
cut only when the test has let it; every assertion is on counts (``/metrics``).
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from conftest import proxy_config, scrape, serve, wait_until

from guardrail.proxy.app import create_app
from guardrail.testing.fake_upstream import FakeScript, Rule, create_fake_upstream

N_STREAMS = 16
WORDS = ("amber", "basalt", "cedar", "dune", "ember", "fjord", "granite", "heath", "iris",
         "juniper", "kelp", "lichen", "moss", "nectar", "onyx", "pine")


def question(k: int) -> str:
    return f"Tell me about item {k:02d}."


CHECK_ALL = {"settle_restated": False}
"""The answers here say their documents again, which the judge's evidence settles
without a model call; these tests are about the checks, so every sentence gets one."""


def answer(k: int) -> str:
    w = WORDS[k]
    return (f"Item {k} is made of {w}. It was found near the {w} river in {1900 + k}. "
            f"Nothing else is known about item {k}.")


def document(k: int) -> str:
    return (f"Item {k} is an artefact made of {WORDS[k]}. It was found near the "
            f"{WORDS[k]} river in {1900 + k}.")


SCRIPT = FakeScript(rules=[Rule(match=question(k), reply=answer(k)) for k in range(N_STREAMS)],
                    model="fake-llm")


@pytest.fixture(scope="module")
def upstream():
    with serve(create_fake_upstream(SCRIPT)) as s:
        yield s


def request_body(k: int, **extra) -> dict:
    return {"model": "fake-llm", "stream": True,
            "messages": [{"role": "user", "content": question(k)}],
            "guardrail": {"context": [document(k)], "policy": {"threshold": 1.0}}, **extra}


def metric(m: dict, name: str, **labels) -> float:
    return m[(name, tuple(sorted(labels.items())))]


def test_sixteen_concurrent_streams_each_get_their_own_answer_in_order(upstream, detector):
    # a lane is cut when 16 sequences wait, or when its oldest has waited 2 s: the
    # batches formed are the cross-stream ones the scheduler exists for
    cfg = proxy_config(upstream.url, verification=CHECK_ALL,
                       scheduler={"max_wait_ms": 2000, "max_batch_size": 16})
    start = threading.Barrier(N_STREAMS)

    def one(k: int, client: openai.OpenAI) -> tuple[str, dict, list]:
        start.wait()
        chunks = list(client.chat.completions.create(
            model="fake-llm", stream=True, messages=[{"role": "user", "content": question(k)}],
            extra_body={"guardrail": {"context": [document(k)],
                                      "policy": {"threshold": 1.0}}}))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        finals = [c.model_extra["guardrail"] for c in chunks
                  if "guardrail" in (c.model_extra or {})]
        return text, finals[0] if len(finals) == 1 else {}, chunks

    with serve(create_app(cfg, detector=detector)) as p, \
            openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0,
                          timeout=300) as client, ThreadPoolExecutor(N_STREAMS) as pool:
        results = list(pool.map(lambda k: one(k, client), range(N_STREAMS)))
        m = scrape(p.url)

    stream_ids = set()
    for k, (text, g, chunks) in enumerate(results):
        assert text == answer(k), f"stream {k} got {text!r}"
        sentences = g["sentences"]
        assert [s["index"] for s in sentences] == list(range(len(sentences)))
        assert "".join(s["original"] for s in sentences) == answer(k)
        assert len(sentences) == 3 and all(s["checked"] for s in sentences)
        assert all(s["exit_layer"] in (2, 4) for s in sentences)   # 2: the ladder, under load
        assert g["final"]["exit_layer"] == 6 and g["errors"] == []
        assert len({c.id for c in chunks}) == 1
        assert chunks[-1].choices[0].finish_reason == "stop"  # the report rides on it
        stream_ids.add(g["stream_id"])
    assert len(stream_ids) == N_STREAMS

    checks = N_STREAMS * 4  # 3 sentences + the end-of-stream pass, per stream
    assert metric(m, "guardrail_scheduler_checks_total", outcome="done") == checks
    for outcome in ("failed", "dropped", "rejected", "timed_out"):
        assert metric(m, "guardrail_scheduler_checks_total", outcome=outcome) == 0
    exits = {k[1][0][1]: v for k, v in m.items() if k[0] == "guardrail_scheduler_exits_total"}
    assert sum(exits.values()) == checks and exits["6"] == N_STREAMS
    assert metric(m, "guardrail_requests_total", mode="stream", checked="true") == N_STREAMS
    # one check is one sequence here (short context and answer), unless it joined the
    # waiting check of the sentence before it (engine.coalesce); one stream has at most
    # 3 checks in a lane: a forward of more than 4 sequences ran several streams
    batches = metric(m, "guardrail_scheduler_batch_size_count")
    assert metric(m, "guardrail_scheduler_batch_size_sum") + \
        metric(m, "guardrail_scheduler_coalesced_checks_total") == checks
    assert metric(m, "guardrail_scheduler_batch_size_bucket", le="4.0") < batches
    assert metric(m, "guardrail_scheduler_pending_checks") == 0


def _open_and_wait_for_queued(client: httpx.Client, proxy_url: str, k: int, n: int):
    """Start a checked stream and return it (open) once ``n`` of its sentences wait in
    the in-flight lane."""
    stream = client.stream("POST", "/v1/chat/completions", json=request_body(k))
    response = stream.__enter__()
    assert response.status_code == 200 and response.headers["x-guardrail-verified"] == "true"
    wait_until(lambda: metric(scrape(proxy_url), "guardrail_scheduler_queued_sequences",
                              priority="in_flight") >= n, 60, f"{n} queued sequences")
    return stream


@pytest.mark.parametrize("status", [None, 429])
def test_a_full_backlog_is_refused_with_retry_after(upstream, detector, status):
    cfg = proxy_config(upstream.url, verification=CHECK_ALL,
                       scheduler={"max_pending_checks": 1, "max_wait_ms": 600_000},
                       **({"server": {"overload_status": status}} if status else {}))
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:
        held = _open_and_wait_for_queued(c, p.url, 0, 1)
        try:
            calls = len(upstream.app.state.log)
            r = c.post("/v1/chat/completions", json=request_body(1))
            assert r.status_code == (status or 503)
            assert int(r.headers["retry-after"]) >= 1
            assert r.json()["error"]["type"] == "overloaded"
            assert r.json()["error"]["message"] == \
                "1 checks are pending (limit 1); retry later"
            assert len(upstream.app.state.log) == calls  # refused before going upstream
            body = request_body(1)
            del body["guardrail"]  # unchecked requests do not queue checks: served
            assert c.post("/v1/chat/completions", json=body).status_code == 200
        finally:
            held.__exit__(None, None, None)  # the client goes: its checks are dropped
        wait_until(lambda: metric(scrape(p.url), "guardrail_scheduler_pending_checks") == 0,
                   30, "the backlog to drain")
        with c.stream("POST", "/v1/chat/completions", json=request_body(2)) as r:
            assert r.status_code == 200  # admitted again
        m = scrape(p.url)
        assert metric(m, "guardrail_scheduler_checks_total", outcome="rejected") >= 1
        assert metric(m, "guardrail_errors_total", type="overloaded") == 1


def test_a_disconnected_streams_queued_checks_are_dropped_not_computed(upstream, detector):
    cfg = proxy_config(upstream.url, verification=CHECK_ALL, scheduler={"max_wait_ms": 600_000})
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:
        held = _open_and_wait_for_queued(c, p.url, 3, 1)
        wait_until(lambda: metric(scrape(p.url), "guardrail_scheduler_coalesced_checks_total")
                   == 2, 60, "the later two sentences to join the first")
        m = scrape(p.url)  # one sequence waits for all three checks
        assert metric(m, "guardrail_scheduler_pending_checks") == 3
        assert metric(m, "guardrail_scheduler_queued_sequences", priority="in_flight") == 1
        held.__exit__(None, None, None)  # the client disconnects mid-stream
        m = wait_until(lambda: (lambda m: m if metric(
            m, "guardrail_scheduler_pending_checks") == 0 else None)(scrape(p.url)),
            30, "the stream's checks to be dropped")
        assert metric(m, "guardrail_scheduler_checks_total", outcome="dropped") == 3
        assert metric(m, "guardrail_scheduler_checks_total", outcome="done") == 0
        assert metric(m, "guardrail_scheduler_queued_sequences", priority="in_flight") == 0
        # never computed: no forward ran, not a token went through the model
        assert metric(m, "guardrail_scheduler_batch_size_count") == 0
        assert metric(m, "guardrail_scheduler_tokens_total", kind="real") == 0
        assert metric(m, "guardrail_scheduler_skipped_sequences_total") == 0


def long_context_body() -> dict:
    """A 4-sentence answer's request whose context is its document and 400 notes."""
    filler = " ".join(f"Registry note {i}: shelf {i % 17} in hall {i % 5} was dusted on day "
                      f"{i % 28 + 1}." for i in range(400))
    body = request_body(4)
    body["guardrail"]["context"] = [document(4), filler]
    return body


def stream_once(cfg, detector, body: dict) -> tuple[list[dict], dict]:
    """One streamed request through a server of ``cfg``: its events and the metrics."""
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=120) as c:
        text = c.post("/v1/chat/completions", json=body).text
        m = scrape(p.url)
    return [json.loads(line[5:]) for line in text.splitlines()
            if line.startswith("data:") and line[5:].strip() != "[DONE]"], m


@pytest.mark.parametrize("streams, budget", [(1, None), (2, None), (1, 0.001)])
def test_the_final_pass_reads_its_top_windows_only_while_checks_queue_or_over_budget(
        upstream, detector, streams, budget):
    """Through the server, a long context, ``final_windows: all``: one stream alone reads
    every window in its end-of-stream pass (it starts when the stream's own checks are
    done: nothing waits); two streams ending together queue each other's passes (here
    the ladder's first step is one queued sequence), so a pass prepared behind the
    other reads its top 8 and its report says ``context_truncated``.  With a time
    budget the measured model rate cannot meet, one stream alone reads its top 8 too."""
    body = long_context_body()
    start = threading.Barrier(streams)
    # a lane waits up to 1 s to fill, and one queued sequence is the ladder's first step
    cfg = proxy_config(upstream.url, verification=CHECK_ALL,
                       scheduler={"max_wait_ms": 1000, "depth_ladder": [1],
                                  "final_budget_s": budget, "final_windows": "all"})

    def one(c: httpx.Client) -> dict:
        start.wait()
        text = c.post("/v1/chat/completions", json=body).text
        return next(json.loads(line[5:]) for line in text.splitlines()
                    if line.startswith("data:") and '"guardrail"' in line)["guardrail"]

    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=120) as c, ThreadPoolExecutor(streams) as pool:
        reports = list(pool.map(lambda _: one(c), range(streams)))
    assert all(r["errors"] == [] and r["final"] is not None for r in reports)
    truncated = [r["final"]["context_truncated"] for r in reports]
    assert truncated == [budget is not None] if streams == 1 else any(truncated)


@pytest.mark.parametrize("final", ["own", "all"])
def test_the_final_pass_reads_each_sentences_own_window(upstream, detector, final):
    """Through the server, a context of dozens of windows: with the default
    ``final_windows: own`` the end-of-stream pass reads each sentence's own window (a
    few model sequences, counted on ``/metrics``, and ``context_truncated``), where
    ``all`` reads every window; the answer reaches the client whole either way."""
    body = long_context_body()
    cfg = proxy_config(upstream.url, verification=CHECK_ALL,
                       scheduler={"coalesce_sentences": 1, "final_budget_s": None,
                                  "final_windows": final})
    events, m = stream_once(cfg, detector, body)
    assert "".join(e["choices"][0]["delta"].get("content") or ""
                   for e in events if e.get("choices")) == answer(4)
    report = next(e["guardrail"] for e in events if "guardrail" in e)
    assert report["errors"] == [] and report["final"]["context_truncated"] == (final == "own")
    in_flight = metric(m, "guardrail_scheduler_checks_total", outcome="done") - 1
    final_sequences = metric(m, "guardrail_scheduler_batch_size_sum") - in_flight
    assert in_flight == 3  # one packed window per sentence, one pass
    # here the three sentences share one window; the context has 16 at this size
    assert (final_sequences <= 3) if final == "own" else (final_sequences >= 10)


@pytest.mark.parametrize("windows, per_check", [("blocks", 1), ("topk", 3)])
def test_in_flight_checks_over_a_long_context_read_one_packed_window(upstream, detector,
                                                                     windows, per_check):
    """Through the server, a context of many windows: with the default
    ``in_flight_windows: blocks`` each in-flight check is one model sequence (one window
    packed from the passages its sentence matches), where ``topk`` reads 3; the answer
    reaches the client whole.  Counted on ``/metrics`` (no end-of-stream pass, no joins)."""
    body = long_context_body()
    cfg = proxy_config(upstream.url, verification={**CHECK_ALL, "final_pass": False},
                       scheduler={"in_flight_windows": windows, "coalesce_sentences": 1})
    events, m = stream_once(cfg, detector, body)
    assert "".join(e["choices"][0]["delta"].get("content") or ""
                   for e in events if e.get("choices")) == answer(4)
    checks = metric(m, "guardrail_scheduler_checks_total", outcome="done")
    assert checks == 3  # one per sentence
    assert metric(m, "guardrail_scheduler_batch_size_sum") == per_check * checks
