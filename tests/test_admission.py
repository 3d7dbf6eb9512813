"""Admission control (engine.admission): the queue bound, the backlog, and the checks'
real latency over the last seconds, each refusing with a Retry-After it implies."""

from __future__ import annotations

import asyncio
import threading

import pytest

from guardrail.config import SchedulerConfig
from guardrail.engine.admission import Admission
from guardrail.engine.local import LocalVerifier
from guardrail.errors import Overloaded
from guardrail.types import CheckRequest, Detection, Grounding


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_signal_refuses_with_its_own_retry_after():
    clock = Clock()
    a = Admission(SchedulerConfig(max_pending_checks=10, latency_budget_s=2.0), clock=clock)
    assert a.refusal(0, 0.0) is None
    assert a.refusal(10, 0.5) == ("10 checks are pending (limit 10)", 1.0)
    why, wait = a.refusal(0, 4.2)
    assert "backlog (~4.2s) exceeds the latency budget (2s)" in why and wait == 5.0
    for latency in (1.0, 3.5, 3.6):
        a.observe(latency)
    why, wait = a.refusal(1, 0.0)
    assert "checks take 3.5s" in why and wait == 4.0
    assert a.refusal(0, 0.0) is None  # nothing pending: past slowness refuses no one


def test_latency_refusals_end_when_checks_are_fast_again_or_none_is_recent():
    clock = Clock()
    a = Admission(SchedulerConfig(latency_budget_s=2.0), window_s=10.0, clock=clock)
    a.observe(5.0)
    assert a.refusal(1, 0.0) is not None
    clock.now += 11  # nothing recent: nothing says the engine is slow
    assert a.recent_latency_s() is None and a.refusal(1, 0.0) is None
    a.observe(5.0)
    for _ in range(3):
        a.observe(0.2)
    assert a.refusal(1, 0.0) is None  # the median is back under the budget


class SlowDetector:
    n_layers, exit_layers, threshold = 6, (2, 4), 0.5

    def __init__(self):
        self.release = threading.Event()

    def detect(self, context, question, response, *, exit_layer=None):
        self.release.wait(5)
        return Detection(response, (), ((0, len(response)),), (0.1,), 0.5, exit_layer or 6, 6)


async def test_an_engine_whose_checks_are_slow_refuses_new_streams():
    """A check over the budget shrinks the stream limit: with one stream running, the
    next is refused, with a Retry-After."""
    det = SlowDetector()
    v = LocalVerifier(det, SchedulerConfig(latency_budget_s=0.05, initial_streams=2))
    try:
        v.admit("s1")  # nothing measured yet: admitted
        g = Grounding(("The tower is 330 metres tall.",), "How tall?")
        asyncio.get_running_loop().call_later(0.2, det.release.set)
        await v.verify(CheckRequest(g, "It is 330 metres tall.", stream_id="s1"))
        with pytest.raises(Overloaded, match="checked streams are running") as refused:
            v.admit("s2")
        assert refused.value.retry_after >= 1 and v.stats().checks_rejected == 1
        v.abort("s1")
        v.admit("s2")  # its place is free again
    finally:
        await v.aclose()


def test_the_stream_limit_grows_while_checks_are_fast_and_shrinks_when_slow():
    clock = Clock()
    a = Admission(SchedulerConfig(latency_budget_s=2.0, initial_streams=2, max_streams=4),
                  clock=clock)
    a.admitted("s1")
    assert a.refusal(0, 0.0) is None
    a.admitted("s2")
    waits = set()
    for _ in range(50):
        why, wait = a.refusal(0, 0.0)
        waits.add(wait)
    assert "2 checked streams are running" in why
    assert waits == {2.0, 3.0}  # spread, so the refused do not all return together
    for _ in range(5):  # fast checks with the limit in use: +1 a second, up to the max
        clock.now += 1.1
        a.observe(0.3)
        a.admitted(f"x{clock.now}")
    assert a.limit == 4
    clock.now += 1.1
    a.observe(3.0)  # one check over the budget: x0.75
    assert a.limit == 3
    a.observe(3.0)  # within the same second: once
    assert a.limit == 3
    clock.now += 2
    a.observe(0.3)  # fast again, but a check was over the budget 2 s ago: no growth yet
    assert a.limit == 3
    clock.now += 4
    a.observe(0.3)  # calm for over 5 s: it grows again
    assert a.limit == 4
    clock.now += 6
    a.observe(1.2)  # within the budget but over its target (half): it shrinks already
    assert a.limit == 3
    clock.now += 6
    a.observe(0.8)  # under the target, not under half of it: it holds
    assert a.limit == 3


def test_the_limit_grows_only_to_what_the_measured_busy_share_says_fits():
    """Fast checks and the limit in use: with the model idle it doubles (slow start);
    busy 30 % with two streams, five would fit but doubling caps it at four; busy 45 % with two, a
    third would take it to 68 %: +1; busy 60 % with two, a third would pass 80 %: it holds."""
    for busy, grown in ((0.0, 4), (0.3, 4), (0.45, 3), (0.6, 2)):
        clock = Clock()
        a = Admission(SchedulerConfig(latency_budget_s=2.0, initial_streams=2,
                                      max_streams=8), clock=clock)
        a.admitted("s1")
        a.admitted("s2")
        for _ in range(10):
            clock.now += 1.0
            a.busy(busy)
        a.observe(0.3)
        assert a.busy_share(clock.now - 10) == pytest.approx(busy)
        assert a.limit == grown, busy


def test_a_stream_holds_its_place_until_it_ends_or_its_time_runs_out():
    clock = Clock()
    a = Admission(SchedulerConfig(initial_streams=1), clock=clock, stream_ttl_s=60)
    a.admitted("s1")
    assert a.refusal(0, 0.0) is not None
    a.ended("s1")
    assert a.refusal(0, 0.0) is None
    a.admitted("s2")
    clock.now += 61  # a stream whose end was never reported is let go
    assert a.active() == 0 and a.refusal(0, 0.0) is None


def test_a_burst_of_checked_requests_over_http_gets_503s_beyond_the_stream_limit(
        fake_upstream, detector):
    """Over real HTTP with the real engine: the second checked stream is refused while
    the first runs (503 + Retry-After), and admitted again once the first has ended."""
    import httpx
    from conftest import EIFFEL_TOOL, proxy_config, serve, wait_until

    from guardrail.engine.build import build_verifier
    from guardrail.proxy.app import create_app

    cfg = proxy_config(fake_upstream.url, scheduler={"initial_streams": 1, "max_streams": 1})
    body = {"model": "fake-llm", "stream": True, "guardrail": {"context": [EIFFEL_TOOL]},
            "messages": [{"role": "user", "content": "When was it built?"}]}
    verifier = build_verifier(cfg, detector=detector)
    with serve(create_app(cfg, verifier=verifier)) as s, \
            httpx.Client(base_url=s.url, timeout=60) as c:
        with c.stream("POST", "/v1/chat/completions",
                      json={**body, "fake": {"mode": "hang", "after": 2}}) as first:
            lines = first.iter_lines()
            next(lines)
            busy = c.post("/v1/chat/completions", json=body)
            assert busy.status_code == 503 and int(busy.headers["retry-after"]) >= 1
            assert "checked streams are running" in busy.json()["error"]["message"]
            assert c.post("/v1/chat/completions",  # unchecked requests are not limited
                          json={k: v for k, v in body.items() if k != "guardrail"}
                          ).status_code == 200
        wait_until(lambda: c.post("/v1/chat/completions", json=body).status_code == 200)
