"""guardrail.stream.pipeline + stream.answer with a scripted Verifier (the collaborator).

The real segmenter and SSE codec run; the verifier flags words from a set.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import AsyncIterator, Optional

import pytest
from scripted import ScriptedVerifier

from guardrail.config import VerificationConfig
from guardrail.errors import (BadRequest, ContextError, DetectorError, InputError,
                             UpstreamProtocolError)
from guardrail.stream.answer import GuardSettings
from guardrail.stream.chunks import chat_chunks, passthrough_stream, split_chunk
from guardrail.stream.pipeline import guarded_completion, guarded_stream
from guardrail.stream.policy import EffectivePolicy
from guardrail.stream.sse import SSEDecoder
from guardrail.types import Action, Grounding, Priority, Rewrite

ANSWER = ["The tower", " is in", " Paris.", " It was", " built in", " 1950.", " It is",
          " 330 metres", " tall."]
GROUNDING = Grounding(("The tower in Paris was built 1887-1889. It is 330 metres tall.",),
                      "When was it built?")


class ScriptedRegenerator:
    def __init__(self, *replies):
        self.replies = list(replies)
        self.seen = []

    async def rewrite(self, req):
        self.seen.append(req)
        return self.replies.pop(0)


def settings(action=Action.REDACT, hold=True, regenerator=None, left_context_chars=600,
             **vcfg) -> GuardSettings:
    policy = EffectivePolicy(action, None, hold, "spans", "[unsupported]", 2)
    return GuardSettings(GROUNDING, policy, VerificationConfig(**vcfg), "stream-1", "m",
                         regenerator, left_context_chars=left_context_chars)


def chunk(content=None, *, finish=None, role=None, index=0, **extra) -> dict:
    delta = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7, "model": "m",
            "choices": [{"index": index, "delta": delta, "logprobs": None,
                         "finish_reason": finish}], **extra}


def sse(chunks, done=True) -> bytes:
    out = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return out + (b"data: [DONE]\n\n" if done else b"")


def answer_stream(pieces=ANSWER, *, finish="stop", done=True, extra=()) -> bytes:
    chunks = [chunk("", role="assistant")] + [chunk(p) for p in pieces] + list(extra)
    if finish:
        chunks.append(chunk(finish=finish))
    return sse(chunks, done)


async def raw(data: bytes, size: int = 7, error: Optional[Exception] = None,
              log: Optional[list] = None) -> AsyncIterator[bytes]:
    try:
        for i in range(0, len(data), size):
            yield data[i:i + size]
            await asyncio.sleep(0)
        if error is not None:
            raise error
    finally:
        if log is not None:
            log.append("upstream closed")


def events(out: bytes) -> list:
    d = SSEDecoder()
    return [e.data if e.data == "[DONE]" else json.loads(e.data) for e in d.feed(out)]


def content(evs) -> str:
    return "".join(c["delta"].get("content") or "" for e in evs if isinstance(e, dict)
                   for c in e.get("choices", []) if c["index"] == 0)


async def collect(gen) -> bytes:
    return b"".join([b async for b in gen])


# -- stage units ------------------------------------------------------------------------

def test_split_chunk_separates_content_from_the_rest():
    part = split_chunk(chunk("Hi", role="assistant"))
    assert part.text == "Hi" and part.rest["choices"][0]["delta"] == {"role": "assistant"}
    assert split_chunk(chunk(" there")).rest is None
    end = split_chunk(chunk("!", finish="stop"))
    assert end.text == "!" and end.finished and end.rest["choices"][0]["finish_reason"] == "stop"
    usage = split_chunk({"id": "x", "choices": [], "usage": {"total_tokens": 3}})
    assert usage.rest["usage"] == {"total_tokens": 3}
    other = split_chunk(chunk("unchecked", index=1))
    assert other.text == "" and other.other_choices == (1,) and other.rest["choices"][0][
        "delta"] == {"content": "unchecked"}
    with pytest.raises(UpstreamProtocolError):
        split_chunk({"id": "x"})


async def test_chat_chunks_across_every_split():
    data = answer_stream()
    for size in (1, 2, 5, 64, len(data)):
        chunks = [c async for c in chat_chunks(raw(data, size))]
        assert content([*chunks]) == "".join(ANSWER)


async def test_chat_chunks_errors():
    with pytest.raises(UpstreamProtocolError, match="before the answer finished"):
        [c async for c in chat_chunks(raw(answer_stream(finish=None, done=False)))]
    with pytest.raises(UpstreamProtocolError, match="middle of an event"):
        cut = answer_stream(finish=None, done=False) + b'data: {"choi'
        [c async for c in chat_chunks(raw(cut))]
    # finished but no [DONE], or its event unended ("data: [DONE]\n") or cut: tolerated,
    # as the openai SDK reading the upstream itself tolerates them
    for data in (answer_stream(done=False), answer_stream()[:-1], answer_stream()[:-5]):
        assert content([c async for c in chat_chunks(raw(data))]) == "".join(ANSWER)


# -- passthrough ------------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 3, 50, 10_000])
async def test_passthrough_forwards_bytes_unchanged(size):
    data = answer_stream().replace(b"\n\n", b"\r\n\r\n", 2)
    assert await collect(passthrough_stream(raw(data, size))) == data


@pytest.mark.parametrize("data, message", [
    (answer_stream(done=False, finish=None), "without [DONE]"),
    (answer_stream()[:40] + b'\n\ndata: {"broken\n\n' + answer_stream()[40:], "not valid JSON"),
])
async def test_passthrough_errors_end_with_error_event_and_done(data, message):
    out = await collect(passthrough_stream(raw(data, 10)))
    evs = events(out)
    assert evs[-1] == "[DONE]" and message in evs[-2]["error"]["message"]
    assert b'"broken' not in out


async def test_passthrough_of_a_finished_answer_without_done_ends_as_a_checked_one():
    """An upstream that finishes choice 0 and closes without ``[DONE]``: a checked stream
    accepts it (``chat_chunks``), and so does the pass-through, which ends it with
    ``[DONE]`` after the bytes as sent instead of an error the SDK raises."""
    data = answer_stream(done=False)
    out = await collect(passthrough_stream(raw(data, 9)))
    assert out == data + b"data: [DONE]\n\n"
    assert not any(isinstance(e, dict) and "error" in e for e in events(out))


async def test_passthrough_cut_mid_stream():
    err = UpstreamProtocolError("upstream closed the connection")
    out = await collect(passthrough_stream(raw(answer_stream()[:100], 30, error=err)))
    evs = events(out)
    assert evs[-2]["error"]["type"] == "upstream_protocol_error" and evs[-1] == "[DONE]"


# -- hold mode --------------------------------------------------------------------------

async def test_hold_releases_checked_sentences_in_order_with_final_object():
    v = ScriptedVerifier()
    out = await collect(guarded_stream(raw(answer_stream()), settings(), v))
    evs = events(out)
    assert evs[-1] == "[DONE]"
    assert content(evs) == ("The tower is in Paris. It was built in [unsupported]. "
                            "It is 330 metres tall.")
    assert evs[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    finish = [e for e in evs[:-1] if e["choices"] and e["choices"][0]["finish_reason"]]
    assert finish[0]["choices"][0]["finish_reason"] == "stop"
    g = evs[-2]["guardrail"]
    # the report rides on choice 0's finish chunk, the last one before [DONE]
    assert evs[-2]["choices"][0]["finish_reason"] == "stop" and evs[-2]["id"] == "chatcmpl-1"
    assert [s["action"] for s in g["sentences"]] == ["release", "redact", "release"]
    s1 = g["sentences"][1]
    assert s1["original"] == "It was built in 1950. " and s1["spans"][0]["text"] == "1950"
    assert s1["spans"][0]["start"] == 16 and s1["exit_layer"] == 2
    assert s1["final"]["hallucinated"] is True and g["final"]["exit_layer"] == 6
    assert g["hallucination_detected"] is True and g["action"] == "redact"
    assert g["span_count"] == 1 and g["missed_by_shallow"] == []
    final_req = v.requests[-1]
    assert final_req.priority == Priority.END_OF_STREAM and final_req.target_start == 0
    first = v.requests[0]
    assert (first.target_start, first.target_end) == (0, 23)
    second = v.requests[1]
    assert second.response[:second.target_start] == "The tower is in Paris. "


async def test_done_without_a_finish_reason_still_ends_on_a_chunk_with_choice_0():
    """An upstream that ends with ``[DONE]`` and sends no ``finish_reason``: the report
    rides on a chunk holding choice 0 (an empty delta), so the openai docs' loop,
    ``chunk.choices[0].delta.content``, reads to the end as it does unchecked."""
    out = await collect(guarded_stream(raw(answer_stream(finish=None)), settings(),
                                       ScriptedVerifier()))
    evs = events(out)
    assert evs[-1] == "[DONE]" and all(e["choices"] for e in evs[:-1])
    last = evs[-2]
    assert last["choices"] == [{"index": 0, "delta": {}, "logprobs": None,
                                "finish_reason": None}]
    assert last["guardrail"]["hallucination_detected"] is True
    assert content(evs).endswith("It is 330 metres tall.")


async def test_nothing_is_released_before_its_verdict_and_order_is_kept():
    v = ScriptedVerifier(bad=())
    v.gates["Paris"] = gate = asyncio.Event()
    seen: list[str] = []

    async def consume():
        async for b in guarded_stream(raw(answer_stream()), settings(), v):
            for e in events(b):
                text = content([e]) if isinstance(e, dict) else ""
                if text:
                    assert text in v.completed, text  # checked before it was sent
                    seen.append(text)
    task = asyncio.create_task(consume())
    while len(v.completed) < 2:  # sentences 1 and 2 are checked, sentence 0 is gated
        await asyncio.sleep(0)
    assert seen == [] and not task.done()
    gate.set()
    await task
    assert seen == ["The tower is in Paris. ", "It was built in 1950. ", "It is 330 metres tall."]


async def test_regenerate_uses_released_answer_and_rechecks():
    regen = ScriptedRegenerator("It was built in 1889.")
    v = ScriptedVerifier()
    evs = events(await collect(guarded_stream(raw(answer_stream()),
                                              settings(Action.REGENERATE, regenerator=regen), v)))
    assert content(evs) == "The tower is in Paris. It was built in 1889. It is 330 metres tall."
    s1 = evs[-2]["guardrail"]["sentences"][1]
    assert (s1["action"], s1["attempts"], s1["original"]) == \
        ("regenerate", 1, "It was built in 1950. ")
    assert regen.seen[0].answer_so_far == "The tower is in Paris. "
    assert regen.seen[0].sentence == "It was built in 1950." and regen.seen[0].model == "m"
    recheck = [r for r in v.requests if "1889" in r.response][0]
    assert recheck.response == "The tower is in Paris. It was built in 1889."


class GroundedVerifier(ScriptedVerifier):
    """Flags the years its request's grounding does not mention."""

    async def verify(self, req):
        self.bad = {"1889", "1950"} - set(re.findall(r"\d{4}", req.grounding.text))
        return await super().verify(req)


async def test_a_rewrite_with_documents_extends_the_grounding_of_what_follows():
    """FLARE: the hook retrieves a passage with its rewrite; the rewrite, the sentences
    after it (even those whose check had already started) and the final pass read it."""
    found = "The Eiffel Tower was completed in 1889."
    regen = ScriptedRegenerator(Rewrite("It was built in 1889.", (found, "")))
    v = GroundedVerifier()
    g = Grounding(("The tower is in Paris.",), "When was it built?")
    pieces = ["The tower", " is in Paris.", " It was built in 1950.", " It opened in 1889."]
    s = dataclasses.replace(settings(Action.REGENERATE, regenerator=regen), grounding=g)
    evs = events(await collect(guarded_stream(raw(answer_stream(pieces)), s, v)))
    assert content(evs) == "The tower is in Paris. It was built in 1889. It opened in 1889."
    report = evs[-2]["guardrail"]
    assert report["added_documents"] == [found]
    assert [x["action"] for x in report["sentences"]] == ["release", "regenerate", "release"]
    late = [r for r in v.requests if r.response.endswith("It opened in 1889.")]
    assert late[-1].grounding.documents == (g.documents[0], found)
    final = [r for r in v.requests if r.priority == Priority.END_OF_STREAM]
    assert final and all(found in r.grounding.documents for r in final)
    assert regen.seen[0].grounding == g  # the hook saw the grounding before its passage


class RefusingVerifier(GroundedVerifier):
    """An engine that cannot prepare grounding over ``limit`` characters: it refuses to
    warm it and fails every check that reads it."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def _refuse(self, documents) -> None:
        if sum(len(d) for d in documents) > self.limit:
            raise ContextError("the context's encoded states exceed the cache",
                               code="context_too_large")

    async def warm(self, documents, *, tenant="default"):
        self._refuse(documents)
        return None

    async def verify(self, req):
        self._refuse(req.grounding.documents)
        return await super().verify(req)


def too_big(limit: int):
    def check(docs) -> None:
        if sum(len(d) for d in docs) > limit:
            raise BadRequest("the grounding is too large", code="context_too_large")
    return check


@pytest.mark.parametrize("refused_by", ["size rule", "engine"])
async def test_documents_the_grounding_cannot_take_are_left_out_not_fatal(refused_by):
    """A hook that retrieves more than the grounding may hold (the request's size rule,
    or what the engine can encode) fails that part of its attempt only: its documents
    are left out and noted, the rewrite is checked without them, and every later
    sentence and the final pass still read the grounding they can read."""
    huge = "The Eiffel Tower was completed in 1889. " * 40
    regen = ScriptedRegenerator(Rewrite("It was built in 1950 anyway.", (huge,)),
                                Rewrite("It stands in Paris.", ("The tower is in Paris.",)))
    g = Grounding(("The tower is in Paris.",), "When was it built?")
    s = dataclasses.replace(settings(Action.REGENERATE, regenerator=regen), grounding=g)
    if refused_by == "size rule":
        v, s = GroundedVerifier(), dataclasses.replace(s, grounding_limit=too_big(500))
    else:
        v = RefusingVerifier(500)
    pieces = ["The tower", " is in Paris.", " It was built in 1950.", " It is in Paris."]
    evs = events(await collect(guarded_stream(raw(answer_stream(pieces)), s, v)))
    assert evs[-1] == "[DONE]" and not any("error" in e for e in evs[:-1])
    assert content(evs) == "The tower is in Paris. It stands in Paris. It is in Paris."
    report = evs[-2]["guardrail"]
    assert report["added_documents"] == []
    assert [x["action"] for x in report["sentences"]] == ["release", "regenerate", "release"]
    why = "the grounding is too large" if refused_by == "size rule" else \
        "the context's encoded states exceed the cache"
    assert f"sentence 1: attempt 1: the hook's documents were not added: {why}" \
        in report["errors"], report["errors"]
    assert all(r.grounding == g for r in v.requests)  # no check read the refused passage


class LeftContextVerifier(ScriptedVerifier):
    """At full depth, flags "tall" when the text it reads holds "1950" (a flag spread
    over a supported neighbour)."""

    async def verify(self, req):
        final = req.priority == Priority.END_OF_STREAM
        self.bad = {"1950", "tall"} if final and "1950" in req.response else {"1950"}
        return await super().verify(req)


async def test_the_final_confirmation_reads_what_the_client_read():
    """The full-depth pass reads the original answer (the 1950 sentence included); its
    flag on a later supported sentence is confirmed against the supported answer, with
    the accepted rewrite in place of the withheld sentence, and does not stand."""
    regen = ScriptedRegenerator("It was built in 1889.")
    v = LeftContextVerifier()
    evs = events(await collect(guarded_stream(
        raw(answer_stream()), settings(Action.REGENERATE, regenerator=regen), v)))
    last = evs[-2]["guardrail"]["sentences"][2]
    assert last["final"]["hallucinated"] is False and last["final"]["missed_by_shallow"] is False
    confirm = [r for r in v.requests if r.priority == Priority.END_OF_STREAM
               and r.target_end is not None]
    assert confirm and confirm[-1].response == \
        "The tower is in Paris. It was built in 1889. It is 330 metres tall."


async def test_sentence_events_say_what_happened_without_the_unsupported_text():
    regen = ScriptedRegenerator("It was built in 1889.")
    s = dataclasses.replace(settings(Action.REGENERATE, regenerator=regen),
                            sentence_events=True)
    evs = events(await collect(guarded_stream(raw(answer_stream()), s, ScriptedVerifier())))
    sent = [e["guardrail"]["sentence"] for e in evs[:-2]
            if isinstance(e, dict) and "guardrail" in e]
    assert [x["released"] for x in sent] == \
        ["The tower is in Paris. ", "It was built in 1889. ", "It is 330 metres tall."]
    assert [x["action"] for x in sent] == ["release", "regenerate", "release"]
    assert sent[1]["redacted_original"] == "It was built in [unsupported]. "
    assert sent[1]["explanation"] is None or "1950" not in json.dumps(sent[1]["explanation"])
    assert all(x["latency_ms"] >= 0 and "original" not in x and "spans" not in x
               for x in sent)
    assert "1950" not in json.dumps(evs[:-2])  # only the final report names it
    plain = events(await collect(guarded_stream(raw(answer_stream()), settings(),
                                                ScriptedVerifier())))
    assert not any("guardrail" in e for e in plain[:-2] if isinstance(e, dict))


async def test_block_stops_with_a_content_filter_finish_and_done():
    v = ScriptedVerifier()
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(Action.BLOCK), v)))
    assert content(evs) == "The tower is in Paris. "
    assert evs[-1] == "[DONE]"
    end = evs[-2]
    assert end["choices"][0]["finish_reason"] == "content_filter" and "error" not in end
    assert any("sentence 1" in e for e in end["guardrail"]["errors"])
    assert end["guardrail"]["partial"] is True
    assert end["guardrail"]["sentences"][-1]["action"] == "block"


@pytest.mark.parametrize("error, where", [
    (UpstreamProtocolError("upstream closed the connection: cut"), "closed the connection"),
    (None, "before the answer finished"),
])
async def test_upstream_cut_leaks_no_unchecked_text(error, where):
    data = answer_stream(finish=None, done=False)
    cut = data.rindex(b"data: ", 0, data.index(b" tall."))  # inside the last sentence
    v = ScriptedVerifier(bad=())
    evs = events(await collect(guarded_stream(raw(data[:cut], 9, error=error), settings(), v)))
    assert content(evs) == "The tower is in Paris. It was built in 1950. "
    assert where in evs[-2]["error"]["message"] and evs[-1] == "[DONE]"
    assert "It is" not in json.dumps(evs[:-2])


async def test_malformed_sse_mid_stream():
    data = answer_stream()
    bad = data[:data.index(b"data: ", 300)] + b"data: {not json\n\n" + data[300:]
    evs = events(await collect(guarded_stream(raw(bad), settings(), ScriptedVerifier(bad=()))))
    assert evs[-2]["error"]["type"] == "upstream_protocol_error" and evs[-1] == "[DONE]"
    assert "tall" not in content(evs)


async def test_detector_failure_fails_closed():
    v = ScriptedVerifier(fail=RuntimeError("CUDA exploded"))
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(), v)))
    assert content(evs) == ""
    assert evs[-2]["error"]["type"] == "detector_error"
    assert "CUDA exploded" in evs[-2]["error"]["message"] and evs[-1] == "[DONE]"


async def test_detector_failure_fails_open_when_configured_and_marks_it():
    v = ScriptedVerifier(fail=DetectorError("model down"))
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(on_error="open"), v)))
    assert content(evs) == "".join(ANSWER)
    g = evs[-2]["guardrail"]
    assert all(s["checked"] is False for s in g["sentences"])
    assert any("failed open: model down" in e for e in g["errors"])


async def test_a_check_cancelled_by_the_verifier_is_a_failure_not_a_cancellation():
    v = ScriptedVerifier(fail=asyncio.CancelledError())
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(), v)))
    assert evs[-2]["error"]["type"] == "detector_error" and evs[-1] == "[DONE]"
    assert "cancelled by the verifier" in evs[-2]["error"]["message"]


async def test_input_error_releases_the_sentence_unchecked():
    v = ScriptedVerifier(fail=InputError("no tokens"))
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(), v)))
    assert content(evs) == "".join(ANSWER)
    assert "not checkable" in evs[-2]["guardrail"]["errors"][0]


async def test_final_pass_failure_closed_and_open():
    v = ScriptedVerifier(fail_final=RuntimeError("oom"))
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(), v)))
    assert evs[-2]["error"]["type"] == "detector_error" and "final pass" in \
        evs[-2]["error"]["message"]
    v = ScriptedVerifier(fail_final=RuntimeError("oom"))
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(on_error="open"),
                                              v)))
    assert evs[-2]["guardrail"]["final"] is None
    assert "final pass: failed open" in evs[-2]["guardrail"]["errors"][0]


async def test_final_pass_flags_what_shallow_let_through():
    v = ScriptedVerifier(bad=(), shallow_misses=("330",))
    evs = events(await collect(guarded_stream(raw(answer_stream()), settings(), v)))
    g = evs[-2]["guardrail"]
    assert content(evs) == "".join(ANSWER)
    assert g["missed_by_shallow"] == [2] and g["sentences"][2]["final"]["missed_by_shallow"]
    assert g["hallucination_detected"] is True and g["action"] == "release"


async def test_tool_calls_usage_and_other_choices_pass_through():
    tool = chunk(None)
    tool["choices"][0]["delta"] = {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                                   "function": {"name": "f", "arguments": "{}"}}]}
    usage = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7, "model": "m",
             "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2,
                                      "total_tokens": 3}}
    data = answer_stream(extra=[chunk("other answer", index=1), tool], finish="tool_calls")
    data = data.replace(b"data: [DONE]", b"data: " + json.dumps(usage).encode() +
                        b"\n\ndata: [DONE]")
    evs = events(await collect(guarded_stream(raw(data), settings(other_choices="pass"),
                                              ScriptedVerifier(bad=()))))
    assert any(e["choices"] and e["choices"][0]["delta"].get("tool_calls") ==
               tool["choices"][0]["delta"]["tool_calls"] for e in evs[:-1])
    assert any(e.get("usage") == usage["usage"] for e in evs[:-1])
    assert any(e["choices"] and e["choices"][0]["index"] == 1 for e in evs[:-1])
    # the report rides on choice 0's finish chunk; the usage chunk stays last
    report = [e for e in evs[:-1] if "guardrail" in e]
    assert len(report) == 1 and report[0]["choices"][0]["finish_reason"] == "tool_calls"
    assert report[0]["guardrail"]["unchecked_choices"] == [1]
    assert evs[-2].get("usage") == usage["usage"]


async def test_a_refusal_follows_the_text_the_upstream_sent_before_it():
    """As a tool call does: the held text before a ``refusal`` delta is judged and sent
    first (its last sentence ends there), then the refusal, as the upstream ordered them."""
    pieces = ["The tower", " is in Paris.", " It is 330", " metres tall"]
    refusal = chunk()
    refusal["choices"][0]["delta"] = {"refusal": "I cannot say more about it."}
    evs = events(await collect(guarded_stream(raw(answer_stream(pieces, extra=[refusal])),
                                              settings(), ScriptedVerifier())))
    order = [("refusal", c["delta"]["refusal"]) if c["delta"].get("refusal") else
             ("content", c["delta"]["content"]) for e in evs[:-1] if isinstance(e, dict)
             for c in e.get("choices", []) if c["delta"].get("refusal") or
             c["delta"].get("content")]
    assert order[-1] == ("refusal", "I cannot say more about it.")
    assert "".join(text for _, text in order[:-1]) == "".join(pieces)


async def test_azure_content_filter_fields_reach_the_client_in_hold_mode():
    """Azure OpenAI sends ``content_filter_results`` on the choice of every text chunk,
    ``prompt_filter_results`` on a first chunk without choices, and its asynchronous
    filter's annotations as a choice without a delta: each goes on (the text checked
    apart), none is lost."""
    cfr = {"hate": {"filtered": False, "severity": "safe"}}
    prompt = {"id": "", "object": "", "created": 0, "model": "", "choices": [],
              "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": cfr}]}
    texts = [chunk(p) for p in ANSWER]
    for c in texts:
        c["choices"][0]["content_filter_results"] = cfr
    offsets = {"check_offset": 0, "start_offset": 0, "end_offset": 45}
    note = {"id": "", "object": "", "created": 0, "model": "", "choices": [
        {"index": 0, "finish_reason": None, "content_filter_results": cfr,
         "content_filter_offsets": offsets}]}
    data = sse([prompt, chunk("", role="assistant"), *texts, note, chunk(finish="stop")])
    evs = events(await collect(guarded_stream(raw(data), settings(), ScriptedVerifier())))
    assert content(evs) == "The tower is in Paris. It was built in [unsupported]. " \
        "It is 330 metres tall."
    body = [e for e in evs[:-1] if isinstance(e, dict)]
    assert body[0]["prompt_filter_results"] == prompt["prompt_filter_results"]
    choices = [c for e in body for c in e["choices"]]
    assert sum("content_filter_results" in c for c in choices) == len(ANSWER) + 1
    assert [c["content_filter_offsets"] for c in choices if "content_filter_offsets" in c] \
        == [offsets]
    assert not any("1950" in json.dumps(e) for e in body if "guardrail" not in e)


async def test_a_server_repeating_the_text_beside_the_delta_leaks_nothing():
    """Together's chunks carry the token's text in the choice (``text``) and its id in
    the delta: the rest of the choice goes on, the repeated text does not."""
    texts = [chunk(p) for p in ANSWER]
    for i, c in enumerate(texts):
        c["choices"][0]["text"] = ANSWER[i]
        c["choices"][0]["message"] = {"content": ANSWER[i]}  # nor any other structure
        c["choices"][0]["alternatives"] = [ANSWER[i]]
        c["choices"][0]["delta"]["token_id"] = 100 + i
    data = sse([chunk("", role="assistant"), *texts, chunk(finish="stop")])
    evs = events(await collect(guarded_stream(raw(data), settings(), ScriptedVerifier())))
    assert content(evs) == "The tower is in Paris. It was built in [unsupported]. " \
        "It is 330 metres tall."
    assert not any("1950" in json.dumps(e) for e in evs[:-1] if "guardrail" not in e)
    kept = [c for e in evs[:-1] for c in e["choices"] if "token_id" in c["delta"]]
    assert [c["delta"]["token_id"] for c in kept] == list(range(100, 100 + len(ANSWER)))
    whole = {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "text": "".join(ANSWER), "finish_reason": "stop", "seed": 7,
         "message": {"role": "assistant", "content": "".join(ANSWER)}}]}
    r = await guarded_completion(whole, settings(), ScriptedVerifier())
    [choice] = r.body["choices"]
    assert "1950" not in json.dumps(choice) and choice["seed"] == 7
    assert choice["finish_reason"] == "stop" and choice["index"] == 0


async def test_an_extra_choice_the_client_did_not_ask_for_never_leaks_in_hold_mode():
    """`other_choices: reject` (the default) refuses n>1, so an upstream's choice 1 is
    dropped; a null index is choice 0 (checked); an index that is no number is refused."""
    bad = "It was completed in 1950. "
    data = answer_stream(extra=[chunk(bad, index=1)])
    evs = events(await collect(guarded_stream(raw(data), settings(), ScriptedVerifier())))
    assert not any(c["index"] != 0 for e in evs[:-1] for c in e["choices"])
    assert evs[-2]["guardrail"]["unchecked_choices"] == [] and evs[-1] == "[DONE]"
    for index in (None, "0", 1.0, True):
        data = answer_stream(pieces=["The tower is in Paris. ", bad], extra=[])
        data = data.replace(b'"index": 0, "delta": {"content": "It was',
                            b'"index": ' + json.dumps(index).encode() +
                            b', "delta": {"content": "It was')
        evs = events(await collect(guarded_stream(raw(data), settings(), ScriptedVerifier())))
        sent = [c["delta"].get("content") or "" for e in evs[:-1] for c in e.get("choices", [])]
        assert "1950" not in "".join(sent) and evs[-1] == "[DONE]", index
        if index is None:
            assert content(evs) == "The tower is in Paris. It was completed in [unsupported]. "
        else:
            assert evs[-2]["error"]["type"] == "upstream_protocol_error", index


async def test_client_disconnect_cancels_upstream_producer_and_checks():
    v = ScriptedVerifier(bad=())
    v.gates["1950"] = asyncio.Event()  # never released
    log = []
    gen = guarded_stream(raw(answer_stream(), error=None, log=log), settings(), v)
    first = await gen.__anext__()        # the role chunk
    second = await gen.__anext__()       # sentence 0, after its check
    assert "role" in first.decode() and "Paris" in second.decode()
    while not any("1950" in r.response[r.target_start:] for r in v.requests):
        await asyncio.sleep(0)
    await gen.aclose()                   # what sse-starlette does on disconnect
    assert v.aborted == ["stream-1"] and v.cancelled == 1
    assert log == ["upstream closed"]


# -- hold off ---------------------------------------------------------------------------

async def test_hold_off_forwards_before_verdicts_and_still_reports():
    v = ScriptedVerifier()
    v.gates["Paris"] = gate = asyncio.Event()
    out = b""
    async for b in guarded_stream(raw(answer_stream()), settings(Action.ANNOTATE, hold=False),
                                  v):
        out += b
        if "Paris" in content(events(out)) and not gate.is_set():
            assert "The tower is in Paris." not in v.completed  # sent before its verdict
            gate.set()
    evs = events(out)
    assert content(evs) == "".join(ANSWER)
    assert [s["action"] for s in evs[-2]["guardrail"]["sentences"]] == \
        ["release", "annotate", "release"]


async def test_hold_off_block_stops_the_rest():
    pieces = ANSWER + [" More", " text", " here."] * 20
    evs = events(await collect(guarded_stream(raw(answer_stream(pieces)),
                                              settings(Action.BLOCK, hold=False),
                                              ScriptedVerifier())))
    assert evs[-2]["choices"][0]["finish_reason"] == "content_filter" and evs[-1] == "[DONE]"
    sent = content(evs)
    assert sent.startswith("The tower is in Paris. It was built in 1950.")
    report = evs[-2]["guardrail"]
    blocked = report["sentences"][-1]
    assert blocked["action"] == "block" and report["partial"] is True
    # the client has the blocked sentence already: the report says what it got
    assert blocked["released"] == blocked["original"] == "It was built in 1950. "
    assert sent.startswith("".join(v["released"] for v in report["sentences"]))


def test_an_event_drops_evidence_that_quotes_the_withheld_words():
    from guardrail.stream.answer import SentenceCheck
    from guardrail.stream.pipeline import _Stream
    from guardrail.stream.wire import ChatWire
    from guardrail.types import Explanation, Sentence, SentenceVerdict

    async def nothing():
        yield  # never read
    s = _Stream(nothing(), settings(), ScriptedVerifier(), ChatWire())
    text = "It includes a free guarantee. "
    why = Explanation("unverifiable", "medium", "not listed: a free guarantee", "unlisted")
    check = SentenceCheck(Sentence(0, text, 0, len(text)), None)
    redacted = SentenceVerdict(0, text, "[unsupported] ", Action.REDACT, 0.9, (), 2,
                               explanation=why)
    assert s._event(check, redacted)["explanation"]["evidence"] is None
    assert s._event(check, redacted)["explanation"]["kind"] == "unverifiable"
    kept = dataclasses.replace(redacted, released=text, action=Action.ANNOTATE)
    assert s._event(check, kept)["explanation"]["evidence"] == "not listed: a free guarantee"
    line = dataclasses.replace(redacted, explanation=Explanation(  # a grounding line stays
        "contradicted", "high", "total eur: 249.9", "value"))
    assert s._event(check, line)["explanation"]["evidence"] == "total eur: 249.9"
