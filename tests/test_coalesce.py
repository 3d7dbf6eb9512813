"""Waiting in-flight checks of one stream run as one check (engine.coalesce).

The pure join/narrow rules, the queue keeping a joined check's place, and the
scheduler: with the test suite's fake detector (which holds the model thread at a
gate) for what joins and what does not, and with the shipped default detector for
what each caller gets back.
"""

from __future__ import annotations

import asyncio
import dataclasses

import numpy as np
import pytest

from guardrail.config import SchedulerConfig
from guardrail.engine.batching import WorkQueue
from guardrail.engine.coalesce import Joined, join, narrow
from guardrail.engine.scheduler import Scheduler
from guardrail.types import CheckRequest, Detection, Grounding, Priority, Span
from test_scheduler import FakeDetector, cfg, hold_model, queued, until

IF, EOS = Priority.IN_FLIGHT, Priority.END_OF_STREAM
G = Grounding(("The tower is in Paris. It opened in 1889.",), "Where is it?")
ANSWER = "The tower is in Paris. It opened in 1889. It is 300 metres tall. It is grey."


def sentence(i: int, base: int = 0, answer: str = ANSWER, stream: str = "s", space: bool = False,
             **kw) -> CheckRequest:
    """The in-flight check of the answer's sentence ``i``, its text read from ``base``
    (``space``: with the space after it, as the stream's segmenter cuts sentences)."""
    starts = [0] + [j + 2 for j in range(len(answer)) if answer.startswith(". ", j)]
    ends = [s - (not space) for s in starts[1:]] + [len(answer)]
    return CheckRequest(G, answer[base:ends[i]], starts[i] - base, ends[i] - base, stream,
                        IF, **kw)


# -- the rules ----------------------------------------------------------------------------
def test_a_sentence_joins_the_one_before_it_in_the_same_answer():
    j = join(Joined.alone(sentence(0)), sentence(1), 4)
    assert j is not None and j.run.response == ANSWER[:41]
    assert j.at == (0, 23) and j.run.target_start == 0 and j.run.blocks == (23,)
    j = join(j, sentence(2), 4)
    assert j.at == (0, 23, 42) and j.run.response == ANSWER[:64]


def test_sentences_cut_with_their_trailing_space_join():
    j = join(Joined.alone(sentence(0, space=True)), sentence(1, space=True), 4)
    assert j is not None and j.at == (0, 23) and j.run.response == ANSWER[:42]
    j = join(Joined.alone(sentence(1, base=10, space=True)), sentence(2, base=20, space=True), 4)
    assert j is not None and j.at == (3, 22)


def test_a_sliding_left_context_shifts_the_earlier_sentences():
    """The later check reads its answer so far from further on (the left context
    slides): the earlier sentences are placed in its text."""
    j = join(Joined.alone(sentence(1, base=0)), sentence(2, base=10), 4)
    assert j is not None and j.at == (13, 32)
    assert j.run.response[j.at[0]:].startswith("It opened in 1889.")
    # the earlier sentence starts before the later check's text: no join
    assert join(Joined.alone(sentence(1, base=0)), sentence(2, base=30), 4) is None


@pytest.mark.parametrize("change", [
    dict(grounding=Grounding(("Another document.",), "Where is it?")),
    dict(tenant="other"), dict(priority=EOS), dict(exit_layer=2)])
def test_checks_of_other_inputs_do_not_join(change):
    assert join(Joined.alone(sentence(0)), dataclasses.replace(sentence(1), **change), 4) is None


def test_a_confirming_check_reading_another_answer_so_far_does_not_join():
    """Its text is the supported answer so far plus the sentence, not the stream's."""
    confirming = CheckRequest(G, "Paris it is. It opened in 1889.", 13, None, "s", IF)
    assert join(Joined.alone(confirming), sentence(2), 4) is None
    assert join(Joined.alone(sentence(0)), sentence(2), 4) is None  # a sentence between


def test_at_most_max_sentences_join():
    j = join(Joined.alone(sentence(0)), sentence(1), 2)
    assert j is not None and join(j, sentence(2), 2) is None


def test_narrow_gives_each_caller_its_sentence_in_its_own_offsets():
    run = ANSWER[:64]
    det = Detection(run, (Span(3, 30, run[3:30], 0.9),),
                    ((0, 3), (4, 9), (23, 25), (26, 32), (42, 44), (52, 55)),
                    (0.1, 0.9, 0.2, 0.8, 0.3, 0.7), 0.5, 4, 6)
    own = sentence(1, base=10)  # its own text starts 10 characters on
    got = narrow(det, own, 23)
    assert got.response == own.response
    assert got.token_offsets == ((13, 15), (16, 22)) and got.token_probs == (0.2, 0.8)
    assert [(s.start, s.end, s.text) for s in got.spans] == [(13, 20, "It open")]
    assert narrow(det, sentence(2), 42).token_probs == (0.3, 0.7)


def test_replace_keeps_the_checks_place_and_arrival():
    q = WorkQueue(max_batch_tokens=512, max_batch_size=8, eos_every=4)
    a, b = object(), object()
    q.push(a, IF, 4, ["xx", "yyy"], 4, now=1.0)
    q.push(b, IF, 4, ["zz"], 4, now=2.0)
    q.replace(a, ["wwwww"])
    assert q.queued(IF) == 2 and q.tokens == 7 and q.work == 28
    batch = q.take((IF, 4))
    assert sorted(it.seq for it in batch.items) == ["wwwww", "zz"]
    first = next(it for it in batch.items if it.job is a)
    assert first.enqueued == 1.0 and first.order == 0
    assert q.drop(a) == 0 and len(q) == 0


# -- the scheduler ---------------------------------------------------------------------------
async def _queued_check(s: Scheduler, r: CheckRequest) -> asyncio.Task:
    before = queued(s), s._c["coalesced"]
    task = asyncio.create_task(s.verify(r))
    await until(lambda: (queued(s), s._c["coalesced"]) != before, "the check to queue or join")
    return task


async def test_checks_waiting_behind_the_model_run_as_one_and_each_caller_gets_its_own():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1)) as s:
        gate = await hold_model(s, det)
        tasks = [await _queued_check(s, sentence(i)) for i in range(3)]
        other = await _queued_check(s, sentence(1, stream="t"))  # another stream
        assert s._c["coalesced"] == 2 and queued(s) == 2
        det.gate.set()
        got = await asyncio.gather(*tasks, other, gate)
        assert s.stats().checks_coalesced == 2
    assert det.forwarded()[0] == "gate"
    assert sorted(det.forwarded()[1:]) == [ANSWER[:41], ANSWER[:64]]  # one batch
    for i, d in enumerate(got[:3]):
        assert d.response == sentence(i).response


async def test_sentences_arriving_before_the_first_is_prepared_still_join():
    """An answer that arrives at once (a fast upstream): each check waits for the one
    before it to be prepared, then joins it."""
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1)) as s:
        gate = await hold_model(s, det)
        tasks = [asyncio.create_task(s.verify(sentence(i, space=True))) for i in range(4)]
        await until(lambda: s._c["coalesced"] == 3, "three checks to join the first")
        det.gate.set()
        got = await asyncio.gather(*tasks)
        await gate
    assert det.forwarded() == ["gate", ANSWER]
    assert [d.response for d in got] == [sentence(i, space=True).response for i in range(4)]


async def test_a_check_the_model_took_is_not_joined_and_off_means_off():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1)) as s:
        first = asyncio.create_task(s.verify(sentence(0)))
        await until(det.started.is_set, "the first forward")
        second = await _queued_check(s, sentence(1))
        det.gate.set()
        await asyncio.gather(first, second)
    assert det.forwarded() == [ANSWER[:22], ANSWER[:41]]
    assert await _two_behind_the_gate(FakeDetector(gate=True), coalesce_sentences=1) == \
        ["gate", ANSWER[:22], ANSWER[:41]]


async def test_a_model_that_keeps_the_answer_so_far_runs_them_one_by_one():
    det = FakeDetector(gate=True)
    det.answer_blocks = True
    assert await _two_behind_the_gate(det) == ["gate", ANSWER[:22], ANSWER[:41]]


async def _two_behind_the_gate(det: FakeDetector, **config) -> list[str]:
    """What the model ran for two sentences of one stream queued while it was busy."""
    async with Scheduler(det, cfg(max_batches_in_flight=1, **config)) as s:
        gate = await hold_model(s, det)
        tasks = [await _queued_check(s, sentence(i)) for i in range(2)]
        det.gate.set()
        await asyncio.gather(gate, *tasks)
    return det.forwarded()


async def test_when_the_joined_check_is_dropped_its_riders_run_alone():
    det = FakeDetector(gate=True)
    async with Scheduler(det, cfg(max_batches_in_flight=1)) as s:
        gate = await hold_model(s, det)
        first = await _queued_check(s, sentence(0))
        second = await _queued_check(s, sentence(1))
        assert s._c["coalesced"] == 1
        first.cancel()
        await until(lambda: queued(s) == 1, "the rider to queue on its own")
        det.gate.set()
        got = await second
        await gate
        with pytest.raises(asyncio.CancelledError):
            await first
    assert det.forwarded() == ["gate", ANSWER[:41]]
    assert got.response == ANSWER[:41]


@pytest.fixture(scope="module")
def detector():
    from guardrail.model import Detector
    return Detector.from_pretrained()


async def test_each_sentence_gets_the_joined_reads_tokens_of_its_own_span(detector):
    """With the shipped detector: three waiting sentences of one answer are one forward,
    and each caller's Detection is that forward's tokens of its sentence, equal to one
    check of the joined text."""
    ctx = ("The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall.",)
    answer = "The tower is in Paris. It was finished in 1889. It is 500 metres tall."
    g = Grounding(ctx, "Tell me about the tower.")
    reqs = [dataclasses.replace(sentence(i, answer=answer), grounding=g) for i in range(3)]
    async with Scheduler(detector, SchedulerConfig(max_wait_ms=2000)) as s:
        tasks = [await _queued_check(s, r) for r in reqs]
        got = await asyncio.gather(*tasks)
        assert s.stats().batches == 1 and s.stats().sequences == 1
    async with Scheduler(detector, SchedulerConfig(coalesce_sentences=1)) as s:
        whole = await s.verify(CheckRequest(g, answer, 0, None, "w", IF))
    for r, d in zip(reqs, got):
        lo, hi = r.target_start, r.target_end
        ref = [(o, p) for o, p in zip(whole.token_offsets, whole.token_probs)
               if lo <= o[0] and o[1] <= hi]
        assert d.token_offsets == tuple(o for o, _ in ref) and ref
        np.testing.assert_allclose(d.token_probs, [p for _, p in ref], atol=1e-5)
        assert d.response == r.response and d.exit_layer == whole.exit_layer
