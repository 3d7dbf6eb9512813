"""The verification scheduler: routing, priority, starvation, abort, overload, depth.

Most tests use ``FakeDetector`` (the detector's three-stage API, recording every
forward and optionally holding the model thread at a gate); the last ones run the
shipped default detector and compare with ``Detector.detect``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading

import numpy as np
import pytest

from guardrail.config import CacheConfig, SchedulerConfig
from guardrail.contexts import ContextStore
from guardrail.engine.scheduler import Scheduler
from guardrail.errors import DetectorError, InputError, NotFound, Overloaded
from guardrail.model.inputs import PreparedContext, Tokenized, context_key
from guardrail.types import CheckRequest, Detection, Grounding, Priority, Span

IF, EOS = Priority.IN_FLIGHT, Priority.END_OF_STREAM
DOCS = ("The tower is in Paris. It opened in 1889.",)


class Boom(RuntimeError):
    """A detector failure of a type the scheduler has never heard of."""


class FakeSeq:
    def __init__(self, label: str, n: int):
        self.label, self.n = label, n

    def __len__(self) -> int:
        return self.n


class FakePrep:
    def __init__(self, response: str, sequences):
        self.response, self.sequences = response, tuple(sequences)


class FakeTokenizer:
    name_or_path = "fake-tokenizer"


class FakeDetector:
    """Response ``"a b c|d e"`` -> two sequences (3 and 2 tokens) labelled by text.

    ``gate`` holds the first forward in the model thread until the test sets it;
    ``fail`` makes forward raise ``Boom`` for sequences whose label contains it.
    """

    exit_layers = (2, 4)
    n_layers = 6
    max_length = 64
    threshold = 0.5
    tokenizer = FakeTokenizer()

    def __init__(self, gate: bool = False):
        self.calls: list[tuple[list[str], object]] = []
        self.gate = threading.Event()
        self.started = threading.Event()
        if not gate:
            self.gate.set()
        self.fail = None
        self.selectors: list = []  # the window selector of each prepare

    def prepare_context(self, documents):
        text = "\n\n".join(documents)
        if not text.strip():
            raise InputError("the context is empty")
        ids = np.arange(len(text.split()), dtype=np.int32)
        return PreparedContext(context_key(list(documents), self.tokenizer.name_or_path), text,
                               Tokenized(ids, np.zeros((len(ids), 2), np.int32)),
                               self.tokenizer.name_or_path)

    def prepare(self, inp, selector=None):
        assert isinstance(inp.context, PreparedContext)
        self.selectors.append(selector)
        pieces = inp.response.split("|")
        return FakePrep(inp.response, [FakeSeq(p.strip(), max(1, len(p.split())))
                                       for p in pieces])

    def forward(self, seqs, exit_layer=None):
        self.started.set()
        if not self.gate.wait(timeout=30):
            raise AssertionError("the test never opened the gate")
        self.calls.append(([s.label for s in seqs], exit_layer))
        if self.fail and any(self.fail in s.label for s in seqs):
            raise Boom("forward failed")
        return [np.full(len(s), 0.9 if "bad" in s.label else 0.1, np.float32) for s in seqs]

    def finish(self, prep, probs, exit_layer=None):
        layer = self.n_layers if exit_layer is None else exit_layer
        p = float(max(np.max(x) for x in probs))
        n = len(prep.response)
        spans = (Span(0, n, prep.response, p),) if p >= self.threshold else ()
        return Detection(prep.response, spans, ((0, n),), (p,), self.threshold, layer,
                         self.n_layers)

    def forwarded(self) -> list[str]:
        return [label for labels, _ in self.calls for label in labels]


def req(text: str, stream: str = "s", priority=IF, exit_layer=None, **kw) -> CheckRequest:
    return CheckRequest(Grounding(DOCS, "q?"), text, stream_id=stream, priority=priority,
                        exit_layer=exit_layer, **kw)


def cfg(**kw) -> SchedulerConfig:
    """No ladder and no time budget (a fake's forward is timed in microseconds, so the
    budget would depend on thread wake-ups), unless a test sets them."""
    return SchedulerConfig(**{"max_batch_tokens": 512, "max_wait_ms": 0.0,
                              "depth_ladder": (), "final_budget_s": None, **kw})


async def until(cond, what: str = "condition") -> None:
    for _ in range(2000):
        if cond():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def queued(s: Scheduler) -> int:
    st = s.stats()
    return st.queued_in_flight + st.queued_end_of_stream


async def submit(s: Scheduler, r: CheckRequest) -> asyncio.Task:
    """Start a check and wait until its sequences are queued (keeps arrival order exact)."""
    before = queued(s)
    task = asyncio.create_task(s.verify(r))
    await until(lambda: queued(s) > before, "the check to be queued")
    return task


async def hold_model(s: Scheduler, det: FakeDetector, label: str = "gate") -> asyncio.Task:
    """Occupy the model thread with one check, held at the gate."""
    task = asyncio.create_task(s.verify(req(label, stream="gate")))
    await until(det.started.is_set, "the first forward")
    return task


# -- routing and batching ---------------------------------------------------------------------
async def test_concurrent_checks_are_batched_across_streams_and_routed_back():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1)) as s:
        gate = await hold_model(s, det)
        texts = [f"s{i} ok ok|bad {i}" if i % 2 else f"s{i} fine" for i in range(8)]
        tasks = [await submit(s, req(t, stream=f"stream{i}")) for i, t in enumerate(texts)]
        det.gate.set()
        results = await asyncio.gather(gate, *tasks)
        for text, d in zip(texts, results[1:]):
            assert d.response == text and d.exit_layer == 4   # the deepest early exit
            assert d.hallucinated == ("bad" in text)
        st = s.stats()
        assert st.checks_done == 9 and st.pending_checks == 0
        assert st.batches == 2 and st.sequences == 1 + 12   # all 12 queued ones in one batch
        assert st.batch_sizes == {1: 1, 12: 1} and st.exits_used == {4: 9}


# -- priority and starvation --------------------------------------------------------------------
async def test_in_flight_checks_run_before_end_of_stream_under_load():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1, max_batch_size=1)) as s:
        gate = await hold_model(s, det)
        tasks = [await submit(s, req(f"eos{i}", priority=EOS)) for i in range(3)]
        tasks += [await submit(s, req(f"inflight{i}")) for i in range(3)]
        det.gate.set()
        await asyncio.gather(gate, *tasks)
    assert det.forwarded() == ["gate", "inflight0", "inflight1", "inflight2",
                               "eos0", "eos1", "eos2"]
    assert [e for _, e in det.calls] == [4, 4, 4, 4, None, None, None]


async def test_end_of_stream_work_is_not_starved_by_streaming():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1, max_batch_size=1,
                                  eos_every=2)) as s:
        gate = await hold_model(s, det)
        tasks = [await submit(s, req(f"eos{i}", priority=EOS)) for i in range(2)]
        tasks += [await submit(s, req(f"if{i}")) for i in range(6)]
        det.gate.set()
        await asyncio.gather(gate, *tasks)
    assert det.forwarded() == ["gate", "if0", "if1", "eos0", "if2", "if3", "eos1",
                               "if4", "if5"]


# -- abort and cancellation ----------------------------------------------------------------------
async def test_abort_drops_queued_checks_before_they_reach_the_model():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1)) as s:
        gate = await hold_model(s, det)
        gone = [await submit(s, req(f"gone{i} a|b", stream="left")) for i in range(3)]
        kept = await submit(s, req("kept", stream="stays"))
        s.abort("left")
        s.abort("never-seen")  # unknown streams are a no-op
        for t in gone:
            with pytest.raises(asyncio.CancelledError):
                await t
        assert queued(s) == 1
        det.gate.set()
        await asyncio.gather(gate, kept)
        st = s.stats()
    assert det.forwarded() == ["gate", "kept"]
    assert st.checks_dropped == 3 and st.checks_done == 2 and st.pending_checks == 0


async def test_cancelling_the_caller_drops_its_sequences():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1)) as s:
        gate = await hold_model(s, det)
        doomed = await submit(s, req("doomed|x|y"))
        doomed.cancel()
        with pytest.raises(asyncio.CancelledError):
            await doomed
        assert queued(s) == 0
        det.gate.set()
        await gate
    assert det.forwarded() == ["gate"]


async def test_a_batch_already_handed_to_the_model_thread_skips_aborted_checks():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=2)) as s:
        gate = await hold_model(s, det)
        waiting = asyncio.create_task(s.verify(req("second", stream="b")))
        await until(lambda: s.stats().batches_in_model == 2, "a second batch in the model")
        s.abort("b")
        with pytest.raises(asyncio.CancelledError):
            await waiting
        det.gate.set()
        await gate
        await until(lambda: s.stats().batches_in_model == 0, "the model thread to drain")
        assert s.stats().skipped_sequences == 1
    assert det.forwarded() == ["gate"]


async def test_timeout_drops_the_check_and_raises_detector_error():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1, check_timeout_s=1.0)) as s:
        gate = await hold_model(s, det)
        with pytest.raises(DetectorError) as info:
            await s.verify(req("late"))
        assert info.value.code == "check_timeout" and queued(s) == 0
        det.gate.set()
        with pytest.raises(DetectorError):
            await gate  # the held one timed out as well
        assert s.stats().checks_timed_out == 2
    assert "late" not in det.forwarded()


# -- errors ------------------------------------------------------------------------------------
async def test_detector_errors_reach_the_caller_with_their_type_and_the_loop_survives():
    det = FakeDetector()
    det.fail = "explode"
    async with Scheduler(det, cfg()) as s:
        with pytest.raises(Boom, match="forward failed"):
            await s.verify(req("explode now"))
        with pytest.raises(InputError, match="context is empty"):
            await s.verify(CheckRequest(Grounding(("  ",)), "text", stream_id="x"))
        with pytest.raises(InputError, match="not an exit"):
            await s.verify(req("x", exit_layer=3))
        with pytest.raises(InputError, match="target range"):
            await s.verify(req("abc", target_start=2, target_end=2))
        d = await s.verify(req("still works"))
        assert d.response == "still works"
        assert s.stats().checks_failed == 2


# -- tenants and stored contexts --------------------------------------------------------------------
async def test_context_id_is_resolved_per_tenant_and_prepared_contexts_are_namespaced():
    store = ContextStore(CacheConfig())
    stored = await store.put("acme", list(DOCS))
    det = FakeDetector()
    async with Scheduler(det, cfg(), store=store) as s:
        by_id = CheckRequest(Grounding((), "q?", context_id=stored.context_id), "bad claim",
                             stream_id="x")
        d = await s.verify(dataclasses.replace(by_id, tenant="acme"))
        assert d.hallucinated and d.response == "bad claim"
        with pytest.raises(NotFound):  # another tenant cannot use acme's context id
            await s.verify(dataclasses.replace(by_id, tenant="globex"))
        await s.verify(req("ok"))       # no tenant given: the default namespace
        lru = s.contexts.local
        assert lru.tenant_bytes("acme") > 0 and lru.tenant_bytes("default") > 0
        assert lru.tenant_bytes("globex") == 0
        assert s.stats().contexts.local_hits == 0 and s.stats().contexts.misses == 2


# -- admission control ------------------------------------------------------------------------------
async def test_overload_rejects_with_retry_after_and_recovers():
    det = FakeDetector(gate=True)
    config = cfg(max_batches_in_flight=1, max_pending_checks=3, latency_budget_s=1.0,
                 initial_layer_tokens_per_s=10.0)
    async with Scheduler(det, config) as s:
        assert not s.is_overloaded()
        s.admit()
        gate = await hold_model(s, det)
        tasks = [await submit(s, req("one two three four five six seven eight", priority=EOS))]
        # 8 tokens x 6 layers at 10 layer-tokens/s: ~4.8 s of backlog > 1 s budget
        assert s.is_overloaded() and s.drain_time_s() == pytest.approx(4.8)
        with pytest.raises(Overloaded) as info:
            s.admit()
        assert info.value.retry_after == 5 and info.value.status == 503
        tasks.append(await submit(s, req("x")))
        with pytest.raises(Overloaded):  # max_pending_checks reached: verify refuses too
            await s.verify(req("y"))
        det.gate.set()
        await asyncio.gather(gate, *tasks)
        assert not s.is_overloaded() and s.stats().checks_rejected == 2
        s.admit()


# -- adaptive depth ----------------------------------------------------------------------------------
async def test_deep_in_flight_queue_uses_a_shallower_exit_but_not_for_end_of_stream():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1, max_batch_size=1,
                                  depth_ladder=(2,))) as s:
        gate = await hold_model(s, det)
        first = [await submit(s, req(f"a{i}")) for i in range(2)]      # queue 0, 1 -> exit 4
        later = [await submit(s, req(f"b{i}")) for i in range(2)]      # queue 2, 3 -> exit 2
        final = await submit(s, req("final", priority=EOS))           # full depth regardless
        explicit = await submit(s, req("explicit", exit_layer=6))      # full -> one step: 4
        det.gate.set()
        out = await asyncio.gather(*first, *later, final, explicit)
        await gate
        assert [d.exit_layer for d in out] == [4, 4, 2, 2, 6, 4]
        assert s.stats().shallower_exits == 3
        assert s.stats().exits_used == {4: 4, 2: 2, 6: 1}


async def test_config_is_checked_against_the_detector():
    with pytest.raises(ValueError, match="in_flight_exit=3"):
        Scheduler(FakeDetector(), cfg(in_flight_exit=3))
    with pytest.raises(ValueError, match="max_batch_tokens"):
        Scheduler(FakeDetector(), cfg(max_batch_tokens=32))
    with pytest.raises(ValueError, match="depth_ladder"):
        SchedulerConfig(depth_ladder=(10, 5))
    for field in ("in_flight_top_k", "final_top_k"):
        with pytest.raises(ValueError, match=field):
            SchedulerConfig(**{field: 0})
    s = Scheduler(FakeDetector(), cfg())
    await s.aclose()
    with pytest.raises(Overloaded, match="shutting down"):
        await s.verify(req("late"))


async def test_window_selector_follows_the_priority():
    from guardrail.model.windows import AllWindows, OwnWindows, TopBlocks, TopKWindows

    det = FakeDetector()
    async with Scheduler(det, cfg()) as s:  # defaults: packed in flight, own at the end
        await s.verify(req("a b", priority=IF))
        await s.verify(req("a b", priority=EOS))
    fly, end = det.selectors
    # up to 3 windows whole, else one packed; each sentence's own window, 64 at most
    assert isinstance(fly, TopBlocks) and (fly.k, fly.whole, fly.tokens) == (1, 3, None)
    assert isinstance(end, OwnWindows) and (end.m, end.k) == (1, 64)
    det = FakeDetector()
    async with Scheduler(det, cfg(in_flight_context_tokens=160)) as s:
        await s.verify(req("a b", priority=IF))
    assert det.selectors[0].tokens == 160
    det = FakeDetector()
    async with Scheduler(det, cfg(final_windows="all")) as s:
        await s.verify(req("a b", priority=EOS))
    # "all" within the budget: top-64 scores every window of a context of 64 or fewer
    assert isinstance(det.selectors[0], TopKWindows) and det.selectors[0].k == 64
    det = FakeDetector()
    async with Scheduler(det, cfg(final_windows="all", final_max_windows=None)) as s:
        await s.verify(req("a b", priority=EOS))
    assert isinstance(det.selectors[0], AllWindows)
    det = FakeDetector()
    async with Scheduler(det, cfg(in_flight_windows="all", final_windows="topk",
                                  final_top_k=5)) as s:
        await s.verify(req("a b", priority=EOS))
        await s.verify(req("a b", priority=IF))
    end, fly = det.selectors
    assert isinstance(end, TopKWindows) and end.k == 5 and isinstance(fly, AllWindows)


@pytest.mark.parametrize("under_load", [8, None])
async def test_an_end_of_stream_check_prepared_while_the_proxy_is_behind_reads_top_k(under_load):
    """From the depth ladder's first step of queued sequences on (here in-flight
    ones), the end-of-stream pass scores ``final_top_k_under_load`` windows; with the
    queue short again, every window (within the budget) as before."""
    from guardrail.model.windows import OwnWindows

    det = FakeDetector(gate=True)
    config = cfg(max_batches_in_flight=1, depth_ladder=(6,), final_top_k_under_load=under_load)
    async with Scheduler(det, config) as s:
        gate = await hold_model(s, det)
        flying = [await submit(s, req("a b", stream=f"s{i}")) for i in range(5)]
        calm = await submit(s, req("a b", stream="e1", priority=EOS))  # 5 waiting: not yet
        flying.append(await submit(s, req("a b", stream="s5")))
        busy = await submit(s, req("a b", stream="e2", priority=EOS))  # 6 waiting
        det.gate.set()
        await asyncio.gather(gate, calm, busy, *flying)
        after = await s.verify(req("a b", stream="e3", priority=EOS))
    ends = [sel for sel in det.selectors if sel.name == "own"]  # in flight: "blocks"
    assert all(isinstance(e, OwnWindows) and e.m == 1 for e in ends) and len(ends) == 3
    assert [e.k for e in ends] == [64, under_load or 64, 64]
    assert after.response == "a b"


@pytest.mark.parametrize("kw, busy", [
    ({}, 8), ({"final_windows": "topk", "final_top_k": 4}, None), ({"final_max_windows": None}, 8),
    ({"depth_ladder": ()}, None), ({"final_top_k_under_load": None}, None)])
def test_under_load_the_final_pass_never_reads_more_windows_than_it_would(kw, busy):
    from guardrail.engine.checks import window_selectors

    s = window_selectors(SchedulerConfig(**kw))
    assert (s.busy_final and s.busy_final.k) == busy
    assert s.pick(EOS, 100) is (s.busy_final or s.final) and s.pick(EOS, 0) is s.final
    assert s.pick(IF, 100) is s.in_flight is s[IF]


class _Priced:
    max_length, n_layers = 512, 6  # 3,072 layer-tokens a window


@pytest.mark.parametrize("kw, rate, drain, k", [
    ({}, 30_720.0, 0.0, 10), ({}, 30_720.0, 0.5, 8), ({"final_top_k_under_load": None},
                                                     30_720.0, 0.5, 5),
    ({}, 300_000.0, 0.0, None), ({}, None, 0.0, None), ({"final_budget_s": None}, 3e4, 0, None),
    ({"final_budget_s": 2.0}, 30_720.0, 0.0, 20), ({}, 30_720.0, 9.0, 8)])
def test_the_final_pass_reads_the_windows_its_budget_runs(kw, rate, drain, k):
    """``final_budget_s`` (1 s): windows the measured rate runs in what is left of the
    budget after the queued work, at least ``final_top_k_under_load``; the shipped
    bound (64) when the budget runs more, or without a rate."""
    from guardrail.engine.checks import window_selectors

    s = window_selectors(SchedulerConfig(**kw), _Priced())
    picked = s.pick(EOS, 0, rate, drain)
    assert (picked.k if picked is not s.final else None) == k
    assert s.pick(IF, 0, rate, drain) is s.in_flight
    assert s.pick(EOS, 100, rate, drain) is s.busy_final or "final_top_k_under_load" in kw


def test_own_windows_under_a_budget_or_load_stay_each_sentences_own():
    """``final_windows: own``: the budget and the load cap how many windows the pass
    reads, and each sentence is still judged by its own ``final_sentence_windows``."""
    from guardrail.engine.checks import window_selectors
    from guardrail.model.windows import OwnWindows

    s = window_selectors(SchedulerConfig(final_windows="own", final_sentence_windows=2),
                         _Priced())
    assert isinstance(s.final, OwnWindows) and (s.final.m, s.final.k) == (2, 64)
    for picked, k in ((s.pick(EOS, 0, 30_720.0, 0.0), 10), (s.pick(EOS, 100), 8)):
        assert isinstance(picked, OwnWindows) and (picked.m, picked.k) == (2, k)
    assert s.pick(EOS, 0, 300_000.0, 0.0) is s.final


async def test_an_end_of_stream_pass_reads_what_the_rate_runs_in_its_budget():
    """Before any forward is measured the scheduler plans with
    ``initial_layer_tokens_per_s``: 10 windows of the fake's 64 tokens x 6 layers a
    second (here 3,840) in a 1 s budget; the in-flight check reads one packed window."""
    det = FakeDetector()
    config = cfg(initial_layer_tokens_per_s=3840.0, final_budget_s=1.0)
    async with Scheduler(det, config) as s:
        await s.verify(req("a b", stream="e1", priority=EOS))
        await s.verify(req("a b", stream="s1"))
    assert [sel.k for sel in det.selectors] == [10, 1]


async def test_streams_ending_together_read_top_k_behind_each_others_passes():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1, depth_ladder=(6,))) as s:
        gate = await hold_model(s, det)
        first = await submit(s, req("a|b|c|d|e|f|g", stream="e1", priority=EOS))  # 7 queued
        second = await submit(s, req("a b", stream="e2", priority=EOS))
        det.gate.set()
        await asyncio.gather(gate, first, second)
    assert [sel.k for sel in det.selectors[-2:]] == [64, 8]


async def test_stats_split_batch_time_into_queueing_and_model():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1, max_batch_size=1)) as s:
        tasks = [asyncio.create_task(s.verify(req("a b", stream=f"s{i}", priority=p)))
                 for i, p in enumerate((IF, IF, EOS))]
        await until(det.started.is_set, "the first forward")
        await asyncio.sleep(0.05)  # the other two wait behind it
        det.gate.set()
        await asyncio.gather(*tasks)
        st = s.stats()
    assert st.batches == 3 and st.in_flight_batches == 2
    assert st.queue_wait_s >= 0.05 and st.model_s > 0  # the first forward held the others
    assert 0 < st.in_flight_model_s <= st.model_s
    assert 0 <= st.in_flight_queue_wait_s <= st.queue_wait_s
    assert st.mean_queue_wait_ms == 1000 * st.queue_wait_s / 3


# -- the real default detector ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def detector():
    from guardrail.model import Detector
    return Detector.from_pretrained()


CONTEXTS = [("The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall.",),
            ("Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
             "She was born in Warsaw.")]
ANSWERS = [(0, "The Eiffel Tower is in Paris and was completed in 1889."),
           (0, "It is 500 metres tall and was painted gold in 1925."),
           (1, "Marie Curie was born in Warsaw."),
           (1, "She won three Nobel Prizes, the first in 1920 for Biology.")]


def same(a: Detection, b: Detection) -> None:
    assert a.response == b.response and a.exit_layer == b.exit_layer
    assert a.token_offsets == b.token_offsets
    np.testing.assert_allclose(a.token_probs, b.token_probs, atol=1e-4)
    assert [(s.start, s.end) for s in a.spans] == [(s.start, s.end) for s in b.spans]


@pytest.mark.parametrize("exit_layer", [2, None])
async def test_scheduled_results_equal_detect(detector, exit_layer):
    async with Scheduler(detector, SchedulerConfig(max_wait_ms=50)) as s:
        reqs = [CheckRequest(Grounding(CONTEXTS[c], "What do you know?"), text,
                             stream_id=f"s{i}", priority=EOS, exit_layer=exit_layer)
                for i, (c, text) in enumerate(ANSWERS)]
        results = await asyncio.gather(*(s.verify(r) for r in reqs))
        assert s.stats().batches < len(reqs)  # cross-stream batches were formed
    for (c, text), got in zip(ANSWERS, results):
        same(got, detector.detect(CONTEXTS[c], "What do you know?", text,
                                  exit_layer=exit_layer))


async def test_the_engine_reads_what_it_is_given_and_offsets_map_back(detector):
    """The stream bounds the left context (stream.textlog); the engine checks the
    given response up to the target's end and indexes its Detection into it."""
    so_far = " ".join(f"Sentence number {i} says the tower is in Paris." for i in range(3))
    sentence = " It is 500 metres tall and was painted gold."
    response = so_far + sentence + " More text after it."
    start, end = len(so_far), len(so_far) + len(sentence)
    async with Scheduler(detector, SchedulerConfig(left_context_chars=20)) as s:
        got = await s.verify(CheckRequest(Grounding(CONTEXTS[0]), response, target_start=start,
                                          target_end=end, stream_id="t", priority=EOS))
    ref = detector.detect(CONTEXTS[0], "", response[:end], exit_layer=None)
    assert got.response == response
    assert got.token_offsets == ref.token_offsets
    np.testing.assert_allclose(got.token_probs, ref.token_probs, atol=1e-4)
    assert got.spans_in(start, end) == ref.spans_in(start, end)
    for sp in got.spans:
        assert response[sp.start:sp.end] == sp.text


def long_context(n: int = 150) -> tuple[str, ...]:
    import random

    rng = random.Random(0)
    words = "market city river council school harvest festival railway museum library".split()
    filler = [f"The {rng.choice(words)} near the {rng.choice(words)} hired a {rng.choice(words)} "
              f"in year {rng.randint(1, 99)}." for _ in range(n)]
    filler.insert(n // 2, "The Zorblat bridge over the Mira river was opened in 1931.")
    return (" ".join(filler),)


@pytest.mark.parametrize("final", [("all", None), ("topk", 2), ("own", 1)])
async def test_in_flight_checks_score_top_k_windows_the_final_pass_all(detector, final):
    """A long context: in flight at most ``in_flight_top_k`` windows, at the end of the
    stream every window (or ``final_top_k``; with ``own`` the one sentence's own
    window); a one-window context is unaffected."""
    windows, k = final
    config = SchedulerConfig(in_flight_top_k=1, final_windows=windows, final_top_k=k or 8)
    answer = "The Zorblat bridge was opened in 1931."
    async with Scheduler(detector, config) as s:
        fly, end = [await s.verify(CheckRequest(Grounding(long_context(), "When?"), answer,
                                                stream_id="w", priority=p)) for p in (IF, EOS)]
        short = await s.verify(CheckRequest(Grounding(CONTEXTS[0], "When?"), answer,
                                            stream_id="w", priority=IF))
    assert fly.windows_total == end.windows_total > 2
    assert fly.windows_scored == 1 and fly.context_truncated
    assert end.windows_scored == (k or end.windows_total)
    assert (short.windows_total, short.windows_scored) == (1, 1)
