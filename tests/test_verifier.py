"""guardrail.engine.local.LocalVerifier with a stand-in detector (the collaborator)."""

from __future__ import annotations

import asyncio
import re
import threading

import pytest

from guardrail.config.scheduler import SchedulerConfig
from guardrail.engine.local import LocalVerifier
from guardrail.errors import DetectorError, InputError, Overloaded
from guardrail.types import CheckRequest, Detection, Grounding, Priority, Span

G = Grounding(("The tower was built 1887-1889.",), "When?")


class FakeDetector:
    n_layers, exit_layers, threshold = 6, (2, 4), 0.5

    def __init__(self, bad=("1950",)):
        self.bad = set(bad)
        self.calls: list[tuple[str, object, str]] = []  # (response, exit layer, thread name)
        self.release = threading.Event()
        self.release.set()
        self.entered = threading.Event()
        self.active = self.max_active = 0
        self.lock = threading.Lock()
        self.error: Exception | None = None

    def detect(self, context, question, response, *, exit_layer=None):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            self.entered.set()
            self.release.wait()
            self.calls.append((response, exit_layer, threading.current_thread().name))
            if self.error:
                raise self.error
            offs, probs, spans = [], [], []
            for m in re.finditer(r"\w+", response):
                p = 0.9 if m.group() in self.bad else 0.1
                offs.append((m.start(), m.end()))
                probs.append(p)
                if p > 0.5:
                    spans.append(Span(m.start(), m.end(), m.group(), p))
            return Detection(response, tuple(spans), tuple(offs), tuple(probs), 0.5,
                             exit_layer or 6, 6)
        finally:
            with self.lock:
                self.active -= 1


def req(response, start=0, end=None, stream="s", priority=Priority.IN_FLIGHT):
    return CheckRequest(G, response, start, end, stream, priority)


async def busy_with(v: LocalVerifier, d: FakeDetector, response: str, stream: str):
    """Start a check and wait until the (held) detector is inside it; the event loop keeps
    running while the detector blocks."""
    task = asyncio.create_task(v.verify(req(response, stream=stream)))
    while not d.entered.is_set():
        await asyncio.sleep(0)
    return task


async def until_queued(v: LocalVerifier, n: int) -> None:
    while v.queue_depth() < n:
        await asyncio.sleep(0)


async def test_the_engine_reads_the_text_it_is_given_and_offsets_index_it():
    """Left context is the stream's to bound (stream.textlog): the engine checks the
    whole response up to the target's end, whatever ``left_context_chars`` says."""
    d = FakeDetector()
    v = LocalVerifier(d, SchedulerConfig(left_context_chars=12))
    response = "One two three four five six. It was built in 1950. Later text."
    start = response.index("It")
    end = response.index(" Later")
    det = await v.verify(CheckRequest(G, response, start, end))
    sent, layer, thread = d.calls[0]
    # in-flight default: the deepest early exit
    assert sent == response[:end] and layer == 4
    assert thread.startswith("guardrail-check") and thread != threading.current_thread().name
    assert det.response == response
    assert [response[s.start:s.end] for s in det.spans] == ["1950"]
    assert det.score_in(start, len(response)) == pytest.approx(0.9)
    await v.aclose()


async def test_exit_layers_per_priority_and_explicit():
    d = FakeDetector()
    v = LocalVerifier(d, SchedulerConfig(in_flight_exit=2))
    await v.verify(req("A."))
    await v.verify(req("A.", priority=Priority.END_OF_STREAM))
    await v.verify(CheckRequest(G, "A.", exit_layer=4))
    assert [c[1] for c in d.calls] == [2, None, 4]
    assert v.info().shallow_exit_layer == 2
    with pytest.raises(ValueError, match="in_flight_exit=3 is not an exit"):
        LocalVerifier(d, SchedulerConfig(in_flight_exit=3))
    await v.aclose()


async def test_one_forward_at_a_time_in_flight_first_and_loop_stays_free():
    d = FakeDetector()
    d.release.clear()
    v = LocalVerifier(d)
    first = await busy_with(v, d, "first.", "a")
    final = asyncio.create_task(v.verify(req("final.", stream="a",
                                             priority=Priority.END_OF_STREAM)))
    inflight = asyncio.create_task(v.verify(req("inflight.", stream="b")))
    await until_queued(v, 3)
    d.release.set()
    await asyncio.gather(first, final, inflight)
    assert [c[0] for c in d.calls] == ["first.", "inflight.", "final."]
    assert d.max_active == 1
    await v.aclose()


async def test_abort_drops_queued_checks_of_that_stream_only():
    d = FakeDetector()
    d.release.clear()
    v = LocalVerifier(d)
    running = await busy_with(v, d, "running.", "a")
    queued_a = asyncio.create_task(v.verify(req("queued a.", stream="a")))
    queued_b = asyncio.create_task(v.verify(req("queued b.", stream="b")))
    await until_queued(v, 3)
    v.abort("a")
    d.release.set()
    with pytest.raises(asyncio.CancelledError):
        await queued_a
    await running
    await queued_b
    assert [c[0] for c in d.calls] == ["running.", "queued b."]
    await v.aclose()


async def test_errors_keep_their_type_or_become_detector_errors():
    d = FakeDetector()
    v = LocalVerifier(d)
    d.error = InputError("the response is empty")
    with pytest.raises(InputError):
        await v.verify(req("x."))
    d.error = RuntimeError("boom")
    with pytest.raises(DetectorError, match="RuntimeError: boom") as e:
        await v.verify(req("x."))
    assert isinstance(e.value.__cause__, RuntimeError)
    d.error = None
    assert (await v.verify(req("fine."))).response == "fine."  # the worker survived
    await v.aclose()


async def test_timeout_is_a_detector_error():
    d = FakeDetector()
    d.release.clear()
    v = LocalVerifier(d, SchedulerConfig(check_timeout_s=0.05))
    with pytest.raises(DetectorError, match="timed out"):
        await v.verify(req("slow."))
    assert v.queue_depth() == 1  # still running in the thread; its result will be dropped
    d.release.set()
    await v.aclose()


async def test_overload_when_the_queue_is_full():
    d = FakeDetector()
    d.release.clear()
    v = LocalVerifier(d, SchedulerConfig(max_pending_checks=2))
    tasks = [asyncio.create_task(v.verify(req(f"s{i}."))) for i in range(2)]
    await until_queued(v, 2)
    with pytest.raises(Overloaded, match="2 checks are pending"):
        await v.verify(req("one too many."))
    with pytest.raises(Overloaded):
        v.admit()
    d.release.set()
    await asyncio.gather(*tasks)
    await v.aclose()


async def test_checks_of_an_admitted_stream_pass_at_the_stream_limit():
    """The stream limit refuses new streams, not the checks of one already running (it
    did: with the limit at one, `guardrail demo`'s only stream had every check refused)."""
    d = FakeDetector()
    v = LocalVerifier(d, SchedulerConfig(initial_streams=1))
    v.admit("s1")
    with pytest.raises(Overloaded, match="1 checked streams are running"):
        v.admit("s2")                      # a second stream waits
    det = await v.verify(req("It was built in 1950.", stream="s1"))
    assert [s.text for s in det.spans] == ["1950"]
    v.abort("s1")
    v.admit("s2")                          # its place is free again
    await v.aclose()
