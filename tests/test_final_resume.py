"""The end-of-stream pass of a model that keeps the answer so far: it resumes the
stream's in-flight checks from their exit instead of reading the answer again.

Each in-flight check keeps its query's keys and values below its exit and what its last
layer handed on; the final pass over the same text, with a block at each checked
sentence, runs only the layers from that exit up.  The reference is the concatenation
read at full depth with the same blocks (what training runs).  The shipped weights read
as a model with answer blocks: these tests hold the computation, not the quality.
"""

from __future__ import annotations

import numpy as np
import pytest

from guardrail.model import DetectInput, PcwDetector
from guardrail.model.prefixes import prefix_key
from guardrail.model.inputs import tokenize

from test_answer_blocks import CONTEXT, QUESTION, SENTENCES, _check, _reference

TEXT = "".join(SENTENCES)
STARTS = [len("".join(SENTENCES[:n])) for n in (1, 2)]


@pytest.fixture()
def blocks() -> PcwDetector:
    det = PcwDetector.from_pretrained(None, device="cpu")
    det.answer = "sentences"
    return det


def _last_key(det: PcwDetector, text: str = TEXT) -> str:
    """The key the check of ``text`` keeps its states under."""
    ctx = det.prepare_context(CONTEXT)
    return prefix_key(ctx.key, det.builder.question_tokens(QUESTION).ids,
                      tokenize(det.tokenizer, text).ids)


def _final(det: PcwDetector):
    """The final pass as a stream sends it: the text its last check read, a block at
    every checked sentence, full depth."""
    return det.detect_batch([DetectInput(CONTEXT, QUESTION, TEXT, 0, tuple(STARTS),
                                         keep=False)], exit_layer=None)[0]


@pytest.mark.parametrize("exit_layer", [2, 4])
def test_the_final_pass_resumes_the_last_check_from_its_exit(blocks, exit_layer):
    for n in range(3):
        _check(blocks, n, exit_layer)
    kept = blocks.prefixes.peek(_last_key(blocks))
    assert kept is not None and kept.resumable and kept.depth == exit_layer
    assert kept.hidden[exit_layer].shape[0] == kept.n_tokens
    hits = blocks.prefixes.stats().hits
    got = _final(blocks)
    assert blocks.prefixes.stats().hits == hits  # no prefix read:
    assert blocks.prefixes.stats().resumed == 1  # resumed, not run again
    assert blocks.prefixes.peek(_last_key(blocks)) is None  # and then let go
    np.testing.assert_allclose(got.token_probs, _reference(blocks, TEXT, STARTS, None),
                               atol=2e-5)


def test_without_what_the_checks_kept_the_final_pass_reads_it_all_the_same(blocks):
    got = _final(blocks)
    assert blocks.prefixes.stats().hits == 0
    assert len(blocks.prefixes) == 0  # no sentence follows: nothing is kept
    np.testing.assert_allclose(got.token_probs, _reference(blocks, TEXT, STARTS, None),
                               atol=2e-5)


def test_a_stream_whose_exit_moved_under_load_is_resumed_from_the_shallower(blocks):
    """Sentence 2's check ran at exit 2 over what sentence 1 kept at exit 4, which kept
    its layer-2 input too: the final pass resumes the last check from layer 2."""
    _check(blocks, 0, 4)
    assert set(blocks.prefixes.peek(_last_key(blocks, SENTENCES[0])).hidden) == {2, 4}
    _check(blocks, 1, 2)
    _check(blocks, 2, 2)
    kept = blocks.prefixes.peek(_last_key(blocks))
    assert kept is not None and kept.resumable and set(kept.hidden) == {2}
    np.testing.assert_allclose(_final(blocks).token_probs,
                               _reference(blocks, TEXT, STARTS, None), atol=2e-5)
    assert blocks.prefixes.peek(_last_key(blocks)) is None


def test_sentences_after_a_kept_prefix_are_blocks_of_their_own(blocks):
    """A query that finds the answer up to its first sentence kept runs the rest with a
    block at every sentence start, as the reference reads it."""
    _check(blocks, 0, 4)
    got = blocks.detect_batch([DetectInput(CONTEXT, QUESTION, TEXT, STARTS[0], (STARTS[1],))],
                              exit_layer=4)[0]
    assert blocks.prefixes.stats().hits == 1
    np.testing.assert_allclose(got.token_probs, _reference(blocks, TEXT, STARTS, 4), atol=2e-5)


def test_a_shortlist_keeps_nothing_to_resume_from(blocks):
    blocks.top_windows, blocks.shortlist = 1, 2
    for n in range(3):
        _check(blocks, n, 4)
    assert not blocks.prefixes.peek(_last_key(blocks)).resumable


def test_sentence_starts_outside_the_target_are_refused():
    from guardrail.engine.checks import target_end
    from guardrail.errors import InputError
    from guardrail.types import CheckRequest, Grounding

    g = Grounding(("ctx",), "")
    assert target_end(CheckRequest(g, "One. Two. Three.", 5, None, blocks=(10,))) == 16
    for bad in ((5,), (16,), (3,)):
        with pytest.raises(InputError, match="sentence starts"):
            target_end(CheckRequest(g, "One. Two. Three.", 5, None, blocks=bad))


class Recording:
    """The real engine, its requests noted (a collaborator's view of the thing under test)."""

    def __init__(self, engine):
        self.engine, self.requests = engine, []

    async def verify(self, req):
        self.requests.append(req)
        return await self.engine.verify(req)

    def __getattr__(self, name):
        return getattr(self.engine, name)


async def _guarded(det: PcwDetector, answer: list[str], budget: int, step: int):
    from guardrail.config import SchedulerConfig, VerificationConfig
    from guardrail.engine.scheduler import Scheduler
    from guardrail.stream.pipeline import check_parts
    from guardrail.stream.policy import EffectivePolicy
    from guardrail.stream.settings import GuardSettings
    from guardrail.types import Action, Grounding

    policy = EffectivePolicy(Action.ANNOTATE, 1.0, True, "spans", "[unsupported]", 2)  # no flags
    async with Scheduler(det, SchedulerConfig(max_wait_ms=1)) as engine:
        assert engine.info().keeps_answer
        await engine.warm((CONTEXT,))  # as a stream's start does: no check runs cold
        v = Recording(engine)
        s = GuardSettings(Grounding((CONTEXT,), QUESTION), policy, VerificationConfig(),
                          "s1", "m", left_context_chars=budget, left_context_step_chars=step,
                          final_by_sentence=True)
        got = await check_parts(answer, s, v)
    return got.report, v.requests


async def test_a_streams_final_pass_reads_each_run_of_checks_as_its_last_check_did(blocks):
    """Through the real engine: the final pass sends one request per run of sentences
    checked from one start, resumes each run's last check (nothing is kept after), and
    each sentence's final score is its full-depth score read from that start."""
    from guardrail.stream.policy import assess
    from guardrail.types import Priority

    answer = SENTENCES + [" The tower opened for the World's Fair.", " It is in Paris."]
    report, requests = await _guarded(blocks, answer, 60, 40)
    final = [r for r in requests if r.priority == Priority.END_OF_STREAM]
    in_flight = [r for r in requests if r.priority == Priority.IN_FLIGHT]
    assert len(in_flight) == 5 and 1 < len(final) < 5  # the start moved: several runs
    for r in final:  # each run's last check was resumed, then let go
        assert blocks.prefixes.peek(_last_key(blocks, r.response)) is None
    assert all(e.depth == 4 for e in blocks.prefixes._items.values())  # none kept at 6
    text = "".join(answer)
    for r in final:
        base = text.index(r.response)
        ends = [i.target_end for i in in_flight if text.index(i.response) == base]
        assert r.response == text[base:base + max(ends)]
    fresh = PcwDetector.from_pretrained(None, device="cpu")
    fresh.answer = "sentences"
    pos = 0
    for v in report.sentences:
        start, pos = pos, pos + len(v.original)
        if not v.original.strip():
            continue  # the space between sentences: nothing was checked
        r = next(r for r in final if text.index(r.response) <= start
                 and text.index(r.response) + len(r.response) >= pos)
        base = text.index(r.response)
        ref = fresh.detect_batch([DetectInput(CONTEXT, QUESTION, r.response, r.target_start,
                                              r.blocks)], exit_layer=None)[0]
        want = assess(ref, start - base, pos - base, report.policy["threshold"])
        assert v.final_score == pytest.approx(want.score, abs=1e-4)


def test_a_prefix_read_and_extended_is_the_first_to_go():
    """A check keeps its answer so far and its sentence in one entry; the prefix it
    read is then the first entry evicted, not the oldest stream's last check."""
    from types import SimpleNamespace as NS

    from guardrail.model.states import StateCache

    c = StateCache(max_bytes=30)
    for k in "abc":
        c.put(k, NS(nbytes=10))
    c.demote("c")
    c.put("d", NS(nbytes=10))
    assert c.peek("c") is None and c.peek("a") is not None
    c.drop("a")
    assert c.peek("a") is None and c.bytes == 20


def test_a_stream_back_at_exit_4_deepens_what_exit_2_kept_and_is_resumed_from_4(blocks):
    """Load moved sentences 1 and 2 to exit 2; sentence 3 runs at exit 4 again: it
    deepens what they kept (layers 2-3 over the answer so far, not 0-3) and keeps an
    entry the final pass resumes from layer 4.  Each step equals the reference."""
    _check(blocks, 0, 2)
    _check(blocks, 1, 2)
    third = _check(blocks, 2, 4)
    assert blocks.prefixes.stats().hits == 2
    np.testing.assert_allclose(third.token_probs, _reference(blocks, TEXT, STARTS, 4),
                               atol=2e-5)
    kept = blocks.prefixes.peek(_last_key(blocks))
    assert kept.depth == 4 and set(kept.hidden) == {2, 4} and kept.resumable
    np.testing.assert_allclose(_final(blocks).token_probs,
                               _reference(blocks, TEXT, STARTS, None), atol=2e-5)


def test_an_engine_that_deepens_lets_load_alone_set_the_exit():
    """Kept at exit 2 (or about to be), a check used to stay at 2: going deeper read its
    whole answer again.  An engine that deepens runs the missing layers only, so once
    the queue is short the check goes back to exit 4."""
    from types import SimpleNamespace as NS

    from guardrail.engine.batching import shallower_under_load

    ladder, kept = [2, 4, None], [NS(prefix=NS(depth=2), lookup=None)]
    assert shallower_under_load(ladder, 4, 0, (6, 64), kept) == 2
    assert shallower_under_load(ladder, 4, 0, (6, 64), kept, deepens=True) == 4
    waiting = [NS(prefix=None, lookup="k1")]
    assert shallower_under_load(ladder, 4, 0, (6, 64), waiting, {"k1": 2}, deepens=True) == 4
    assert shallower_under_load(ladder, 4, 10, (6, 64), kept, deepens=True) == 2  # load
    det = PcwDetector.from_pretrained(None, device="cpu")
    assert not det.deepens_answer  # reads the answer whole: nothing kept
    det.answer = "sentences"
    assert det.deepens_answer
    det.shortlist = 2
    assert not det.deepens_answer


def test_runs_whose_last_check_ran_cold_are_read_as_one_answer():
    """A run's last check read a context still being encoded: nothing resumable was
    kept, and reading each run whole would read its answer so far again, so the final
    pass reads the whole answer at once, as before.  Warm runs are read one by one."""
    from types import SimpleNamespace as NS

    from guardrail.stream.final import final_reads
    from guardrail.types import Sentence

    def check(i, base, start, end, cold=False):
        return NS(task=object(), verdict=NS(claim=True, skipped=None), base=base, cold=cold,
                  sentence=Sentence(i, "x" * (end - start), start, end))

    checks = [check(0, 0, 0, 40), check(1, 0, 41, 80), check(2, 40, 81, 120),
              check(3, 40, 121, 160)]
    reads = final_reads(checks, 160, True)
    assert [(r.base, r.end, r.start, r.blocks, r.sentences) for r in reads] == [
        (0, 80, 0, (41,), (0, 1)), (40, 160, 41, (81,), (2, 3))]
    checks[1].cold = True  # the first run's last check
    assert [(r.base, r.end, r.sentences) for r in final_reads(checks, 160, True)] == [
        (0, 160, (0, 1, 2, 3))]
    checks[1].cold, checks[0].cold = False, True  # a cold check the next one re-read
    assert len(final_reads(checks, 160, True)) == 2
    assert len(final_reads(checks, 160, False)) == 1


async def test_a_settled_sentence_in_a_run_leaves_the_final_pass_whole(blocks):
    """Through the real engine with the pcw model and its judge: a sentence that says a
    line of the grounding again is released without an in-flight check once the judge's
    evidence is built; the final pass still reads every sentence from its run's start
    (the engine finds nothing kept after the settled one and reads it) and judges each."""
    from guardrail.config import SchedulerConfig, VerificationConfig
    from guardrail.engine.scheduler import Scheduler
    from guardrail.evidence.judge import SentenceJudge
    from guardrail.stream.answer import AnswerGuard
    from guardrail.stream.policy import EffectivePolicy
    from guardrail.stream.settings import GuardSettings
    from guardrail.types import Action, Grounding, Priority

    policy = EffectivePolicy(Action.ANNOTATE, None, True, "spans", "[unsupported]", 2)
    async with Scheduler(blocks, SchedulerConfig(max_wait_ms=1)) as engine:
        await engine.warm((CONTEXT,))
        v = Recording(engine)
        s = GuardSettings(Grounding((CONTEXT,), QUESTION), policy, VerificationConfig(),
                          "s1", "m", judge=SentenceJudge.from_json(blocks.meta["judge"]),
                          left_context_chars=900, left_context_step_chars=600,
                          final_by_sentence=True)
        guard = AnswerGuard(s, v)
        guard.prefetch()
        first, = guard.feed("The Eiffel Tower was completed in 1889. Gustave")
        await guard.judge(first)  # its judgement awaits the evidence
        checks = guard.feed(" Eiffel's company built it. It") + guard.feed(
            " is in Paris.") + guard.flush()
        for c in checks:
            await guard.judge(c)
        await guard.final_pass()
        report = guard.report()
        await guard.aclose()
    settled, last = checks[0].verdict, checks[1].verdict
    assert settled.original.strip() == "Gustave Eiffel's company built it."
    assert settled.exit_layer is None and settled.checked and settled.score == 0.0
    assert last.exit_layer is not None
    in_flight = [r for r in v.requests if r.priority == Priority.IN_FLIGHT]
    assert len(in_flight) == 2  # the first and the last sentence
    assert all(x.final_score is not None for x in report.sentences if x.original.strip())
    assert report.errors == ()
