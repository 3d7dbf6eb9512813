"""guardrail.stream.answer (AnswerGuard), stream.textlog and the non-streaming path, with the scripted
Verifier; helpers shared with test_pipeline.py."""

from __future__ import annotations

import re

import pytest
from scripted import ScriptedVerifier, detection
from test_pipeline import ANSWER, answer_stream, collect, content, events, raw, settings

from guardrail.errors import UpstreamProtocolError
from guardrail.stream.textlog import TextLog, trim_left
from guardrail.stream.pipeline import guarded_completion, guarded_stream
from guardrail.types import Action, Priority

# -- non-streaming ----------------------------------------------------------------------

def completion(text: str) -> dict:
    return {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"},
        {"index": 1, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}]}


async def test_guarded_completion_redacts_and_reports():
    r = await guarded_completion(completion("".join(ANSWER)), settings(other_choices="pass"),
                                 ScriptedVerifier())
    msg = r.body["choices"][0]["message"]
    assert msg["content"] == ("The tower is in Paris. It was built in [unsupported]. "
                              "It is 330 metres tall.")
    assert r.body["choices"][1]["message"]["content"] == "x"
    assert (r.detected, r.span_count, r.action, r.blocked) == (True, 1, Action.REDACT, None)
    assert r.body["guardrail"]["unchecked_choices"] == [1]


async def test_guarded_completion_drops_a_choice_the_client_did_not_ask_for():
    r = await guarded_completion(completion("".join(ANSWER)), settings(), ScriptedVerifier())
    assert [c["index"] for c in r.body["choices"]] == [0]
    assert r.body["guardrail"]["unchecked_choices"] == []


async def test_guarded_completion_block_and_no_content():
    r = await guarded_completion(completion("".join(ANSWER)), settings(Action.BLOCK),
                                 ScriptedVerifier())
    assert r.blocked is not None and r.report.partial is True
    empty = completion("")
    empty["choices"][0]["message"]["content"] = None
    r = await guarded_completion(empty, settings(), ScriptedVerifier())
    assert r.body["choices"][0]["message"]["content"] is None and not r.detected
    with pytest.raises(UpstreamProtocolError):
        await guarded_completion({"choices": []}, settings(), ScriptedVerifier())


# -- bounded work per sentence ----------------------------------------------------------

def test_text_log_slices_like_a_string():
    log, full = TextLog(), ""
    for i in range(200):
        piece = "ab c"[: i % 5]
        log.append(piece)
        full += piece
    for a in range(0, len(full) + 2, 7):
        for b in range(a, len(full) + 3, 5):
            assert log.slice(a, b) == full[a:b]
    assert log.tail(9) == full[-9:] and log.slice(0) == full and len(log) == len(full)


def test_trim_left_cuts_at_a_word_boundary():
    text = "alpha beta gamma delta. Target."
    assert trim_left(text, 24, 100) == 0
    cut = trim_left(text, 24, 10)
    assert text[cut:24] == "delta. " and cut >= 24 - 10


def test_left_context_of_a_text_log_is_trim_left_of_the_whole_text():
    """The log reads only a window, yet cuts exactly where ``trim_left`` cuts the
    whole text, for every sentence start and budget (one rule, one place)."""
    full = "One two three, four five six. Seven eight nine ten. Eleven twelve."
    log = TextLog()
    for i in range(0, len(full), 5):
        log.append(full[i:i + 5])
    for budget in (0, 1, 4, 9, 30, 200):
        for start in range(len(full)):
            base, text = log.left_context(start, len(full), budget)
            assert base == trim_left(full, start, budget), (budget, start)
            assert text == full[base:]


async def test_checks_read_a_bounded_window_of_a_long_answer():
    pieces = [f" Sentence number {i} is here." for i in range(150)]
    v = ScriptedVerifier(bad=())
    out = await collect(guarded_stream(raw(answer_stream(pieces), 64),
                                       settings(left_context_chars=100), v))
    assert content(events(out)) == "".join(pieces)
    inflight = [r for r in v.requests if r.priority == Priority.IN_FLIGHT]
    assert len(inflight) == 150
    answer = "".join(pieces)
    for r in inflight:  # the left context: within the budget, cut between words
        base = answer.index(r.response)
        assert r.target_start <= 100 and (base == 0 or answer[base - 1] == " ")
    assert max(len(r.response) for r in inflight) <= 100 + 30
    last = inflight[-1]
    assert last.response[last.target_start:last.target_end] == "Sentence number 149 is here."


# -- confirming a flag that follows a flagged sentence -------------------------------------

class SpilloverVerifier(ScriptedVerifier):
    """Like a real detector whose left context holds an unsupported claim: an in-flight
    check flags the whole sentence whenever "1950" appears before it."""

    async def verify(self, req):
        left = req.response[:req.target_start]
        if "1950" in left and req.priority == Priority.IN_FLIGHT:
            self.requests.append(req)
            target = req.response[req.target_start:req.target_end]
            return detection(req.response, set(re.findall(r"[\w'-]+", target)), 2)
        return await super().verify(req)


async def test_a_flag_after_a_flagged_sentence_is_confirmed_against_the_supported_answer():
    v = SpilloverVerifier()
    out = await collect(guarded_stream(raw(answer_stream(), 7), settings(), v))
    evs = events(out)
    assert content(evs) == ("The tower is in Paris. It was built in [unsupported]. "
                            "It is 330 metres tall.")
    g = evs[-2]["guardrail"]
    assert [s["action"] for s in g["sentences"]] == ["release", "redact", "release"]
    confirm = [r for r in v.requests if r.priority == Priority.IN_FLIGHT][3:]
    assert len(confirm) == 1  # one extra check, for the third sentence only
    assert confirm[0].response == "The tower is in Paris. It is 330 metres tall."
    # ... and a sentence that is unsupported on its own stays flagged after the second look
    v = SpilloverVerifier(bad=("1950", "330"))
    evs = events(await collect(guarded_stream(raw(answer_stream(), 7), settings(), v)))
    assert [s["action"] for s in evs[-2]["guardrail"]["sentences"]] == \
        ["release", "redact", "redact"]


async def test_no_confirming_check_without_an_earlier_flag():
    v = SpilloverVerifier(bad=())
    await collect(guarded_stream(raw(answer_stream(), 7), settings(), v))
    assert len([r for r in v.requests if r.priority == Priority.IN_FLIGHT]) == 3


class RightSpillVerifier(ScriptedVerifier):
    """A full-depth pass over the whole answer flags "Paris" when "1950" comes after it
    (a model that spreads a flag over its neighbours); read up to its own end, the
    sentence is clean."""

    async def verify(self, req):
        det = await super().verify(req)
        if req.priority == Priority.END_OF_STREAM and "1950" in req.response:
            self.bad.add("Paris")
            det = detection(req.response, self.bad, 6)
            self.bad.discard("Paris")
        return det


async def test_a_final_pass_flag_caused_by_what_follows_is_confirmed_away():
    v = RightSpillVerifier()
    out = events(await collect(guarded_stream(raw(answer_stream()), settings(), v)))
    report = next(e["guardrail"] for e in out if isinstance(e, dict) and "guardrail" in e)
    paris = report["sentences"][0]
    assert paris["original"].startswith("The tower is in Paris")
    assert paris["final"]["hallucinated"] is False  # confirmed against its left context
    assert report["missed_by_shallow"] == []
    confirming = [r for r in v.requests if r.priority == Priority.END_OF_STREAM
                  and "1950" not in r.response]
    assert len(confirming) == 1  # one extra check, for the one candidate only


async def test_an_answer_in_parts_is_checked_sentence_by_sentence_across_the_parts():
    """A non-streaming answer of several parts (a Responses object's output_text
    parts): each check reads its own sentence after the answer so far, and sentences
    are numbered through the whole answer."""
    from guardrail.stream.pipeline import check_parts

    parts = ["The tower is in Paris. It was built in 1950.", "It is 330 metres tall. It is iron."]
    v = ScriptedVerifier()
    got = await check_parts(parts, settings(Action.ANNOTATE), v)
    whole = "".join(parts)
    checked = [r.response[r.target_start:r.target_end].strip() for r in v.requests
               if r.priority == Priority.IN_FLIGHT]
    assert checked == ["The tower is in Paris.", "It was built in 1950.",
                       "It is 330 metres tall.", "It is iron."]
    assert all(whole.endswith(r.response) or r.response in whole for r in v.requests)
    assert [s.index for s in got.report.sentences] == list(range(len(got.report.sentences)))
    assert got.texts[1] == parts[1] and "1950" in got.texts[0]


async def test_a_final_pass_read_run_by_run_fails_once_and_closes_every_read():
    """With a model that keeps the answer so far the final pass sends one read per run
    of sentences; when one fails, the pass fails once (open: noted, no final object)
    and every read was awaited, none left running."""
    import dataclasses

    from guardrail.errors import DetectorError

    class FailsOneRun(ScriptedVerifier):
        async def verify(self, req):
            if req.priority == Priority.END_OF_STREAM and req.target_start > 0:
                self.requests.append(req)
                raise DetectorError("the second run failed")
            return await super().verify(req)

    for on_error in ("open", "closed"):
        v = FailsOneRun()
        s = dataclasses.replace(settings(on_error=on_error), final_by_sentence=True,
                                left_context_chars=30, left_context_step_chars=20)
        out = events(await collect(guarded_stream(raw(answer_stream()), s, v)))
        final = [r for r in v.requests if r.priority == Priority.END_OF_STREAM]
        assert len(final) >= 2 and any(r.blocks for r in final)  # runs, blocks in them
        if on_error == "open":
            g = out[-2]["guardrail"]
            assert g["final"] is None and sum("final pass" in e for e in g["errors"]) == 1
        else:
            assert out[-2]["error"]["type"] == "detector_error"


async def test_a_final_pass_read_run_by_run_reports_spans_in_the_whole_answer():
    """Each run is read from its own start; the report's final spans and each
    sentence's final verdict still point into the whole answer, and a flag in one run
    makes the whole final verdict flagged."""
    import dataclasses

    v = ScriptedVerifier()
    s = dataclasses.replace(settings(Action.ANNOTATE), final_by_sentence=True,
                            left_context_chars=30, left_context_step_chars=20)
    out = events(await collect(guarded_stream(raw(answer_stream()), s, v)))
    g = out[-2]["guardrail"]
    answer = "".join(ANSWER)
    runs = [r for r in v.requests if r.priority == Priority.END_OF_STREAM]
    assert len(runs) >= 2 and all(answer.find(r.response) > 0 for r in runs[1:])
    assert g["final"]["hallucinated"] is True and g["final"]["exit_layer"] == 6
    assert [answer[sp["start"]:sp["end"]] for sp in g["final"]["spans"]] == ["1950"]
    flagged = [x for x in g["sentences"] if x["final"] and x["final"]["hallucinated"]]
    assert [x["original"].strip() for x in flagged] == ["It was built in 1950."]


# -- sentences the grounding settles ------------------------------------------------------

@pytest.fixture(scope="module")
def shipped_judge():
    import json
    from pathlib import Path

    import guardrail
    from guardrail.evidence.judge import SentenceJudge

    meta = Path(guardrail.__file__).parent / "models" / "default" / "guardrail.json"
    return SentenceJudge.from_json(json.loads(meta.read_text())["judge"])


@pytest.mark.parametrize("threshold, settle, settled", [
    (None, True, True), (0.5, True, True), (0.0, True, False), (None, False, False)])
async def test_a_sentence_the_grounding_says_again_needs_no_model_call(shipped_judge, threshold,
                                                                       settle, settled):
    """With the sentence judge, a sentence that says a line of the grounding again passes
    whatever the detector says, so once the judge's evidence is built it is released
    without a check (reported checked, score 0, no exit layer); a policy threshold of 0
    flags every sentence, so there it is checked as before, and so it is with
    ``verification.settle_restated: false``."""
    from dataclasses import replace

    from guardrail.stream.answer import AnswerGuard

    class Observer:
        settled = 0

        def on_sentence(self, action, checked):
            pass

        def on_check(self, seconds, exit_layer):
            pass

        def on_settled(self):
            self.settled += 1

    s, seen = settings(settle_restated=settle), Observer()
    v = ScriptedVerifier(bad=())
    guard = AnswerGuard(replace(s, judge=shipped_judge, observer=seen,
                                policy=replace(s.policy, threshold=threshold)), v)
    guard.prefetch()  # the pipeline's call at the stream's start: builds the evidence
    first, = guard.feed("The tower is in Paris. It")
    await guard.judge(first)  # its assessment awaits the evidence
    again, = guard.feed(" is 330 metres tall.") + guard.flush()
    verdict = await guard.judge(again)
    assert verdict.original == "It is 330 metres tall."
    asked = [r for r in v.requests
             if r.response[r.target_start:r.target_end] == again.sentence.text]
    assert verdict.checked and len(v.requests) >= 1 and seen.settled == int(settled)
    if settled:
        assert not asked and verdict.exit_layer is None and verdict.score == 0.0
        assert verdict.released == verdict.original
    else:
        assert asked and verdict.exit_layer == 2
        assert (verdict.released != verdict.original) == (threshold == 0.0)
    await guard.aclose()
