"""Answer blocks: a PCW model that reads the answer block-causally by sentence, so each
check keeps the answer so far and the next sentence's check runs only its own tokens.

The reference is the concatenation (windows + question + answer) with the block-causal
mask, one forward of the Hugging Face layers (what training runs).  The shipped weights
read as a model with answer blocks: these tests hold the computation, not the quality.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from guardrail.model import DetectInput, PcwDetector
from guardrail.model.inputs import tokenize
from guardrail.model.queries import (QUERY, QuerySequence, block_ranges, block_segments,
                                     pcw_mask)
from guardrail.model.states import StateCache
from guardrail.stream.textlog import TextLog

PARIS = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed in 1889 "
         "for the World's Fair and is 330 metres tall. Gustave Eiffel's company built it. ")
FILLER = ("The harbour district was rebuilt after the flood, with new warehouses along the "
          "quay and a market that opens on Saturdays. ")
QUESTION = "When was the Eiffel Tower completed?"
SENTENCES = ["The Eiffel Tower was completed in 1889.", " It is 500 metres tall.",
             " Gustave Eiffel's company built it in Paris."]
CONTEXT = FILLER * 8 + PARIS + FILLER * 4


@pytest.fixture()
def blocks() -> PcwDetector:
    det = PcwDetector.from_pretrained(None, device="cpu")
    det.answer = "sentences"
    return det


def _reference(det: PcwDetector, response: str, starts: list[int], exit_layer):
    """The concatenation with a block at each character offset in ``starts``."""
    r = tokenize(det.tokenizer, response)
    cuts = [int(np.searchsorted(r.offsets[:, 0], c)) for c in starts]
    ctx = det.prepare_context(CONTEXT)
    seq = det.training_sequence(ctx.tokens, det.windows(ctx), det.builder.question_tokens(QUESTION),
                                r, (0, len(r)), 0, cuts=cuts)
    return det.forward([seq], exit_layer)[0]


def _check(det: PcwDetector, n: int, exit_layer):
    """The check of sentence ``n`` as a stream sends it: the answer so far, then it."""
    text = "".join(SENTENCES[:n + 1])
    start = len("".join(SENTENCES[:n]))
    return det.detect_batch([DetectInput(CONTEXT, QUESTION, text, start)],
                            exit_layer=exit_layer)[0]


def test_a_querys_blocks_are_its_runs_of_one_segment():
    seg = np.concatenate([[QUERY] * 2, block_segments(4, [3])])
    assert block_ranges(seg) == ((0, 2), (2, 5), (5, 6))
    assert block_ranges(None) == ()


def test_the_mask_is_block_causal_over_the_answer():
    seg = np.concatenate([[0, 0, 1], [QUERY] * 2, block_segments(5, [2, 4])])
    m = pcw_mask(seg)
    assert m[3, :3].all() and m[3, 3:5].all() and not m[3, 5:].any()  # question: not the answer
    assert m[5, :7].all() and not m[5, 7:].any()     # block 1 (tokens 5-6): itself and before
    assert m[7, :9].all() and not m[7, 9:].any()     # block 2: blocks 0-2
    assert m[9].all()                                # the last block: everything
    assert not m[0, 2] and not m[2, :2].any()        # windows still see only themselves


@pytest.mark.parametrize("exit_layer", [2, 4, None])
def test_each_check_reuses_the_answer_so_far_and_equals_the_reference(blocks, exit_layer):
    """Sentence by sentence: the second and third checks find what the one before kept,
    run only their sentence, and score exactly as the whole query read at once."""
    dets = [_check(blocks, n, exit_layer) for n in range(3)]
    assert blocks.prefixes.stats().hits == 2 and blocks.prefixes.stats().builds == 3
    text = "".join(SENTENCES)
    ref = _reference(blocks, text, [len(SENTENCES[0]), len(SENTENCES[0] + SENTENCES[1])],
                     exit_layer)
    np.testing.assert_allclose(dets[2].token_probs, ref, atol=2e-5)
    n0 = len(dets[0].token_probs)  # the first sentence's scores are its own check's
    np.testing.assert_allclose(dets[2].token_probs[:n0], dets[0].token_probs, atol=1e-6)


def test_reading_its_top_windows_a_sentence_scores_alone_as_within_the_whole_answer(blocks):
    """Each block (the question, each sentence) picks the windows it reads itself, so a
    sentence checked on its kept answer so far scores as it does when the whole
    answer is read at once with a block per sentence."""
    blocks.top_windows = 1
    ctx = blocks.prepare_context(CONTEXT)
    assert len(blocks.windows(ctx)) > 1
    dets = [_check(blocks, n, 4) for n in range(3)]
    assert blocks.prefixes.stats().hits == 2
    fresh = PcwDetector.from_pretrained(None, device="cpu")  # nothing kept: reads it all
    fresh.answer, fresh.top_windows = "sentences", 1
    text = "".join(SENTENCES)
    r = tokenize(fresh.tokenizer, text)
    cuts = [int(np.searchsorted(r.offsets[:, 0], c))
            for c in (len(SENTENCES[0]), len(SENTENCES[0] + SENTENCES[1]))]
    q = fresh.builder.question_tokens(QUESTION)
    whole = fresh._query_sequence(ctx, fresh.context_states(ctx), q, r, (0, len(r)), 0, cuts, 1)
    assert whole.prefix is None
    want = fresh.forward([whole], 4)[0]
    np.testing.assert_allclose(dets[2].token_probs, want, atol=2e-5)
    every = _reference(blocks, text, [len(SENTENCES[0]), len(SENTENCES[0] + SENTENCES[1])], 4)
    assert np.abs(want - every).max() > 1e-3  # one window read is not all of them


def test_a_check_without_a_kept_prefix_reads_the_answer_so_far_as_one_block(blocks):
    det = _check(blocks, 2, 4)
    assert blocks.prefixes.stats().hits == 0
    ref = _reference(blocks, "".join(SENTENCES), [len(SENTENCES[0] + SENTENCES[1])], 4)
    np.testing.assert_allclose(det.token_probs, ref, atol=2e-5)


def test_a_deeper_check_deepens_a_shallower_prefix(blocks):
    """The in-flight check kept 4 layers; a full-depth check of the next sentence runs
    its sentence through them reading what was kept, then every token through layers
    4 and 5: the same as reading its whole query."""
    _check(blocks, 0, 4)
    full = _check(blocks, 1, None)
    assert blocks.prefixes.stats().hits == 1
    ref = _reference(blocks, "".join(SENTENCES[:2]), [len(SENTENCES[0])], None)
    np.testing.assert_allclose(full.token_probs, ref, atol=2e-5)
    _check(blocks, 1, 2)  # a shallower one may read the deeper entry
    assert blocks.prefixes.stats().hits == 2


def test_a_batch_mixes_kept_and_whole_queries(blocks):
    """One item reads a kept prefix (only its sentence runs), another its whole query
    with blocks, a third a different context: each equals its own check alone."""
    _check(blocks, 0, 4)
    text = "".join(SENTENCES[:2])
    inputs = [DetectInput(CONTEXT, QUESTION, text, len(SENTENCES[0])),
              DetectInput(FILLER * 3, "", "A market opens. It is on Saturdays.", 16),
              DetectInput(CONTEXT, "", "The tower is in Paris.", 0)]
    preps = [blocks.prepare(i) for i in inputs]
    seqs = [p.sequences[0] for p in preps]
    assert isinstance(seqs[0], QuerySequence) and seqs[0].prefix is not None
    assert len(seqs[0]) < len(seqs[0].input_ids) and seqs[1].prefix is None
    batched = blocks.forward(seqs, 4)
    alone = PcwDetector.from_pretrained(None, device="cpu")
    alone.answer = "sentences"
    _check(alone, 0, 4)
    for inp, got in zip(inputs, batched):
        want = alone.detect_batch([inp], exit_layer=4)[0].token_probs
        np.testing.assert_allclose(got, want, atol=2e-5)


def test_kept_answers_stay_within_their_byte_bound(blocks):
    blocks.prefixes = StateCache(max_bytes=1 << 20)
    for i in range(12):
        blocks.detect_batch([DetectInput(CONTEXT, f"Question {i}?", SENTENCES[0])], exit_layer=4)
    stats = blocks.prefixes.stats()
    assert stats.builds == 12 and stats.bytes <= 1 << 20 and stats.evictions > 0


def test_a_model_without_answer_blocks_keeps_nothing():
    det = PcwDetector.from_pretrained(None, device="cpu")
    assert det.answer == "whole" and not det.answer_blocks
    seq = det.prepare(DetectInput(CONTEXT, QUESTION, "".join(SENTENCES), 10)).sequences[0]
    assert seq.keep is None and seq.prefix is None and seq.segments is None
    assert seq.input_ids[-1] == det.builder.sep_id  # the query ends with [SEP] as trained


def test_training_queries_get_a_block_at_sentence_starts(blocks):
    from guardrail.train.pcw import answer_cuts

    text = "".join(SENTENCES)
    r = tokenize(blocks.tokenizer, text)
    starts = {int(np.searchsorted(r.offsets[:, 0], len("".join(SENTENCES[:n]))))
              for n in (1, 2)}
    seen = [answer_cuts(text, r, random.Random(i)) for i in range(200)]
    assert all(set(c) <= starts for c in seen)
    assert any(not c for c in seen) and any(set(c) == starts for c in seen)
    ctx = blocks.prepare_context(CONTEXT)
    seq = blocks.training_sequence(ctx.tokens, blocks.windows(ctx),
                                   blocks.builder.question_tokens(QUESTION), r, (0, len(r)), 0,
                                   labels=np.zeros(len(r), int), cuts=sorted(starts))
    answer = seq.segments[seq.response_slice]
    assert sorted(set(answer.tolist()), reverse=True) == [QUERY - 1, QUERY - 2, QUERY - 3]
    assert seq.input_ids[-1] != blocks.builder.sep_id  # no [SEP] after a block-causal answer


def test_left_context_moves_in_steps_so_checks_share_their_start():
    log, bases, pos = TextLog(), [], 0
    for i in range(30):
        sentence = f"Sentence number {i} says something about item {i * 7}. "
        log.append(sentence)
        base, text = log.left_context(pos, pos + len(sentence), 600, 300)
        assert 300 - 60 <= pos - base <= 600 or base == 0  # within the budget, a word apart
        assert text == log.slice(base, pos + len(sentence)) and log.slice(base - 1, base) in " "
        bases.append(base)
        pos += len(sentence)
    assert 1 < len(set(bases)) <= 6  # the start moved 2-5 times over 30 sentences
    sliding = {TextLog.left_context(log, s, s + 10, 600)[0] for s in range(700, 1400, 50)}
    assert len(sliding) == 14  # without a step it moves with every sentence


def test_a_stream_behind_the_real_server_reuses_its_answer_so_far(blocks):
    """The proxy on a loopback port, an upstream that streams at a reading pace: each
    sentence's in-flight check finds the answer so far that the one before it kept
    (``/metrics``), the text reaches the client verbatim, and ``/healthz`` says so.

    The context is encoded first (``/v1/verify``, whose checks keep nothing): on a
    loaded machine a stream's first check can otherwise run before its context's
    encoding is ready, reading a few windows cold (``prepare_cold``), and keep nothing."""
    import httpx
    import openai
    from conftest import proxy_config, scrape, serve

    from guardrail.proxy.app import create_app
    from guardrail.testing.fake_upstream import create_fake_upstream
    from guardrail.testing.script import FakeScript, Rule

    answer = "".join(SENTENCES) + " It opened for the World's Fair. Its company was Eiffel's. " \
        "The tower is 330 metres tall."
    script = FakeScript(rules=[Rule(match="", reply=answer)], token_delay_s=0.03)
    with serve(create_fake_upstream(script)) as up, \
            serve(create_app(proxy_config(up.url), detector=blocks)) as p:
        assert httpx.get(p.url + "/healthz").json()["verifier"]["keeps_answer"] is True
        assert httpx.post(p.url + "/v1/verify", timeout=120, json={
            "context": CONTEXT, "question": QUESTION, "answer": SENTENCES[0]}).status_code == 200
        before = scrape(p.url)
        with openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0) as c:
            chunks = list(c.chat.completions.create(
                model="fake-llm", stream=True,
                messages=[{"role": "user", "content": QUESTION}],
                extra_body={"guardrail": {"context": CONTEXT, "policy": {"threshold": 1.0}}}))
        m = scrape(p.url)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == answer
    g = chunks[-1].model_extra["guardrail"]
    assert len(g["sentences"]) == 6 and all(s["checked"] for s in g["sentences"])
    states = {e: m[("guardrail_answer_states_total", (("event", e),))]
              - before[("guardrail_answer_states_total", (("event", e),))]
              for e in ("kept", "reused", "resumed")}
    assert before[("guardrail_answer_states_total", (("event", "kept"),))] == 0
    assert states["kept"] >= 6 and states["reused"] >= 1
    assert states["resumed"] >= 1  # the final pass
    assert m[("guardrail_answer_states_bytes", ())] > 0


def test_the_left_context_follows_the_engine_unless_set():
    """A model that keeps the answer so far reads 300 to 900 characters of it and reads
    them again once every 600; any other reads the last 600, sliding."""
    from guardrail.config import SchedulerConfig

    assert SchedulerConfig().left_context(keeps_answer=True) == (900, 600)
    assert SchedulerConfig().left_context(keeps_answer=False) == (600, 0)  # as before
    set_ = SchedulerConfig(left_context_step_chars=0, left_context_chars=800)
    assert set_.left_context(keeps_answer=True) == (800, 0)
    assert SchedulerConfig(left_context_chars=600).left_context(keeps_answer=True) == (600, 400)
    assert SchedulerConfig(left_context_step_chars=300).left_context(True) == (900, 300)
    with pytest.raises(ValueError, match="left_context_step_chars"):
        SchedulerConfig(left_context_step_chars=-1)


def test_a_check_stays_at_the_exit_its_answer_so_far_was_kept_at():
    """Under load the depth ladder moved a check to exit 2; the next sentence's check
    reads what that one kept at exit 2 rather than reading the whole answer again at 4."""
    from types import SimpleNamespace as NS

    from guardrail.engine.batching import shallower_under_load

    ladder = [2, 4, None]
    kept_at = lambda d: [NS(prefix=NS(depth=d))]  # noqa: E731
    assert shallower_under_load(ladder, 4, 0, (6, 64)) == 4
    assert shallower_under_load(ladder, 4, 0, (6, 64), kept_at(2)) == 2
    assert shallower_under_load(ladder, 4, 0, (6, 64), kept_at(4)) == 4
    assert shallower_under_load(ladder, 4, 0, (6, 64), kept_at(6)) == 4  # full depth: any
    assert shallower_under_load(ladder, 4, 10, (6, 64), kept_at(4)) == 2  # load still counts
    assert shallower_under_load(ladder, 4, 0, (6, 64), [NS(prefix=None)]) == 4


def test_a_check_runs_at_the_exit_of_the_queued_check_that_keeps_its_answer_so_far():
    """Under load a stream's next sentence is prepared while the check before it still
    waits: it finds nothing kept yet, and went deeper than that check would read its
    whole answer again.  The queue knows the exit each waiting check keeps at."""
    from types import SimpleNamespace as NS

    from guardrail.engine.batching import WorkQueue, shallower_under_load
    from guardrail.types import Priority

    ladder = [2, 4, None]
    waiting = [NS(prefix=None, lookup="k1")]
    assert shallower_under_load(ladder, 4, 0, (6, 64), waiting) == 4
    assert shallower_under_load(ladder, 4, 0, (6, 64), waiting, {"k1": 2}) == 2
    assert shallower_under_load(ladder, 4, 0, (6, 64), waiting, {"k1": 4}) == 4
    assert shallower_under_load(ladder, 4, 0, (6, 64), waiting, {"k1": None}) == 4
    assert shallower_under_load(ladder, 4, 0, (6, 64), waiting, {"k2": 2}) == 4
    found = [NS(prefix=NS(depth=4), lookup="k1")]  # what is kept wins over what waits
    assert shallower_under_load(ladder, 4, 0, (6, 64), found, {"k1": 2}) == 4

    class Seq(NS):
        def __len__(self) -> int:
            return 3

    q = WorkQueue(max_batch_tokens=512, max_batch_size=8, eos_every=4)
    first, second = object(), object()
    q.push(first, Priority.IN_FLIGHT, 2, [Seq(keep="k1")], 2, 0.0)
    q.push(second, Priority.IN_FLIGHT, 4, [Seq(keep="k2")], 4, 0.0)
    assert q.keeping == {"k1": 2, "k2": 4}
    batch = q.take(q.next_lane())
    assert q.keeping == {"k1": 2, "k2": 4}  # taken, not yet run: still to be kept
    q.ran(batch.items)
    q.drop(second)
    assert q.keeping == {}


def test_the_shipped_pcw_model_reads_the_answer_in_blocks():
    det = PcwDetector.from_pretrained("pcw", device="cpu")
    assert det.answer_blocks and det.meta["pcw"]["answer"] == "sentences"
    assert det.meta["judge"]  # its own sentence judge, fitted on its probabilities


def test_a_check_prepared_before_the_one_before_it_ran_still_finds_what_it_kept(blocks):
    """Under load a stream's next sentence is prepared while the check before it still
    waits in the queue: it looks again when it runs."""
    first = blocks.prepare(DetectInput(CONTEXT, QUESTION, SENTENCES[0], 0))
    text = "".join(SENTENCES[:2])
    second = blocks.prepare(DetectInput(CONTEXT, QUESTION, text, len(SENTENCES[0])))
    assert second.sequences[0].prefix is None and second.sequences[0].lookup is not None
    blocks.forward(list(first.sequences), 4)
    got = blocks.forward(list(second.sequences), 4)[0]
    assert blocks.prefixes.stats().hits == 1
    np.testing.assert_allclose(got, _reference(blocks, text, [len(SENTENCES[0])], 4), atol=2e-5)


def test_a_streams_consecutive_sentences_in_one_batch_share_what_the_first_keeps(blocks):
    """Under load a stream's next sentences wait in the queue with the one before them
    and land in one batch: each runs after the check it follows, reads what that one
    kept (only its own sentence runs), and equals the reference."""
    texts = ["".join(SENTENCES[:n + 1]) for n in range(3)]
    starts = [len("".join(SENTENCES[:n])) for n in range(3)]
    other = DetectInput(FILLER * 3, "", "A market opens. It is on Saturdays.", 16)
    seqs = [blocks.prepare(DetectInput(CONTEXT, QUESTION, t, s)).sequences[0]
            for t, s in zip(texts, starts)] + [blocks.prepare(other).sequences[0]]
    assert all(s.prefix is None for s in seqs)
    got = blocks.forward(seqs[::-1], 4)[::-1]  # batch order does not matter
    assert blocks.prefixes.stats().hits == 2  # sentences 2 and 3 read what 1 and 2 kept
    for n in range(3):
        np.testing.assert_allclose(got[n], _reference(blocks, texts[n], starts[1:n + 1], 4),
                                   atol=2e-5)
    alone = PcwDetector.from_pretrained(None, device="cpu")
    alone.answer = "sentences"
    np.testing.assert_allclose(got[3], alone.detect_batch([other], exit_layer=4)[0].token_probs,
                               atol=2e-5)


def test_with_a_shortlist_a_sentence_still_scores_alone_as_within_the_whole_answer(blocks):
    """Each block shortlists its windows from its own tokens' attention, so the
    shortlist keeps the equality above, over a context of more windows than it keeps."""
    context = FILLER * 30 + PARIS + FILLER * 10
    blocks.top_windows, blocks.shortlist = 1, 2
    blocks.meta["pcw"]["shortlist_from"] = 1  # layers 1-3 of the exit-4 check read it
    ctx = blocks.prepare_context(context)
    assert len(blocks.windows(ctx)) > 2
    text = "".join(SENTENCES)
    dets = [blocks.detect_batch([DetectInput(context, QUESTION, "".join(SENTENCES[:n + 1]),
                                             len("".join(SENTENCES[:n])))], exit_layer=4)[0]
            for n in range(3)]
    assert blocks.prefixes.stats().hits == 2
    fresh = PcwDetector.from_pretrained(None, device="cpu")
    fresh.answer, fresh.top_windows, fresh.shortlist = "sentences", 1, 2
    fresh.meta["pcw"]["shortlist_from"] = 1
    r = tokenize(fresh.tokenizer, text)
    cuts = [int(np.searchsorted(r.offsets[:, 0], c))
            for c in (len(SENTENCES[0]), len(SENTENCES[0] + SENTENCES[1]))]
    q = fresh.builder.question_tokens(QUESTION)
    whole = fresh._query_sequence(ctx, fresh.context_states(ctx), q, r, (0, len(r)), 0, cuts, 1)
    np.testing.assert_allclose(dets[2].token_probs, fresh.forward([whole], 4)[0], atol=2e-5)
    fresh.shortlist = 0  # every window scored at every layer: another reading
    plain = fresh._query_sequence(ctx, fresh.context_states(ctx), q, r, (0, len(r)), 0, cuts, 1)
    assert fresh.meta["pcw"].get("shortlist") is None
    assert np.abs(fresh.forward([plain], 4)[0] - dets[2].token_probs).max() > 1e-4


def test_eval_by_sentence_reads_an_answer_as_the_proxys_checks_read_it(blocks):
    """`guardrail eval --by-sentence`: each sentence a block choosing its own windows, so
    the whole answer scores as a stream's last check on its kept answer so far; read
    whole, one block chooses for every sentence.  A cross-encoder reads as before."""
    from guardrail.model import Detector
    from guardrail.train.data import Example
    from guardrail.train.evaluate import detect_all

    blocks.top_windows = 1
    text = "".join(SENTENCES)
    ex = Example("x", CONTEXT, QUESTION, text, (), False, True, "x", "t")
    read = detect_all(blocks, [ex], progress=False, by_sentence=True)[0][0]
    whole = detect_all(blocks, [ex], progress=False)[0][0]
    stream = PcwDetector.from_pretrained(None, device="cpu")
    stream.answer, stream.top_windows = "sentences", 1
    last = [_check(stream, n, None) for n in range(3)][2]
    np.testing.assert_allclose(read.token_probs, last.token_probs, atol=2e-5)
    assert np.abs(np.subtract(read.token_probs, whole.token_probs)).max() > 1e-3
    cross = Detector.from_pretrained(None)
    a, b = (detect_all(cross, [ex], progress=False, by_sentence=s)[0][0] for s in (True, False))
    assert a.token_probs == b.token_probs


def test_the_judges_full_depth_rows_read_the_answer_as_the_final_pass_does(blocks):
    """`judge fit`/`judge eval` at full depth: a PCW answer read a block per sentence, as
    the proxy's final pass reads it (`stream.final` by sentence), not as one block."""
    from guardrail.train.data import Example
    from guardrail.train.evaluate import detect_all
    from guardrail.train.judge import score

    blocks.top_windows = 1
    text = "".join(SENTENCES)
    ex = Example("x", CONTEXT, QUESTION, text, (), False, True, "x", "t")
    rows = score(blocks, [ex])
    read, whole = (detect_all(blocks, [ex], progress=False, by_sentence=s)[0][0]
                   for s in (True, False))
    assert len(rows) == 3
    for row in rows:
        np.testing.assert_allclose(row.probs, read.probs_in(row.start, row.end), atol=2e-5)
    assert any(np.abs(np.subtract(row.probs, whole.probs_in(row.start, row.end))).max() > 1e-3
               for row in rows)


def test_calibration_reads_a_pcw_answer_as_the_proxy_does(blocks, monkeypatch):
    """`guardrail calibrate` chooses a PCW model's thresholds on the read that serves."""
    import guardrail.train.evaluate as ev
    from guardrail.model import Detector
    from guardrail.train.data import Example

    seen, real = [], ev.detect_all
    monkeypatch.setattr(ev, "detect_all",
                        lambda *a, **k: seen.append(k.get("by_sentence")) or real(*a, **k))
    text = "".join(SENTENCES)
    ex = Example("x", CONTEXT, QUESTION, text, ((41, 63),), True, True, "x", "t")
    ev.calibrate(blocks, [ex], [4], progress=False)
    ev.calibrate(Detector.from_pretrained(None), [ex], [2], progress=False)
    assert seen == [True, False]
