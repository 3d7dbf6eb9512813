"""What OpenAI-compatible servers send that OpenAI does not, read as its clients read
it: an empty finish_reason on every chunk (Ollama, SGLang), a usage chunk without
"choices" (Fireworks), usage on every chunk (vLLM's continuous_usage_stats), a final
"data: [DONE]" without its blank line, an error event then a close, content as an array
of parts (Mistral's reasoning models), logprobs of a redacted answer, a Markdown list
item redacted whole.  The scripted Verifier flags "1950"; the 200-with-a-JSON-error
upstream and the null extension go through the real server in test_server.py."""

from __future__ import annotations

import json

from scripted import ScriptedVerifier
from test_pipeline import (ANSWER, answer_stream, chunk, collect, content, events, raw,
                           settings, sse)

from guardrail.stream.chunks import passthrough_stream
from guardrail.stream.pipeline import guarded_completion, guarded_stream
from guardrail.stream.policy import redact

REDACTED = "The tower is in Paris. It was built in [unsupported]. It is 330 metres tall."


def finish_chunks(evs) -> list:
    return [e for e in evs if isinstance(e, dict) and e.get("choices")
            and e["choices"][0].get("finish_reason")]


async def test_an_empty_finish_reason_is_no_finish():
    """Every chunk with ``finish_reason: ""``: the answer is still cut into its three
    sentences (not a "sentence" per chunk), and the report rides on the real finish."""
    chunks = [chunk("", role="assistant")] + [chunk(p) for p in ANSWER] + [chunk(finish="stop")]
    for c in chunks[:-1]:
        c["choices"][0]["finish_reason"] = ""
    evs = events(await collect(guarded_stream(raw(sse(chunks)), settings(),
                                              ScriptedVerifier())))
    g = evs[-2]["guardrail"]
    assert content(evs) == REDACTED and len(g["sentences"]) == 3
    assert [e["choices"][0]["finish_reason"] for e in finish_chunks(evs)] == ["stop"]
    assert evs[0]["choices"][0]["delta"]["role"] == "assistant"  # not held to the end


async def test_a_usage_chunk_without_choices_is_the_usage_chunk():
    usage = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
             "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}}
    data = answer_stream(extra=()).replace(b"data: [DONE]", b"data: " +
                                           json.dumps(usage).encode() + b"\n\ndata: [DONE]")
    evs = events(await collect(guarded_stream(raw(data), settings(), ScriptedVerifier())))
    assert content(evs) == REDACTED and evs[-1] == "[DONE]"
    assert evs[-2]["usage"] == usage["usage"] and evs[-2]["choices"] == []
    assert "guardrail" in evs[-3]


async def test_usage_on_every_chunk_sends_no_empty_choices_ahead_of_the_text():
    """vLLM's ``continuous_usage_stats``: a loop reading ``chunk.choices[0]`` on every
    chunk, as against vLLM itself, meets no chunk without a choice."""
    chunks = [chunk("", role="assistant")] + [chunk(p) for p in ANSWER] + [chunk(finish="stop")]
    for i, c in enumerate(chunks):
        c["usage"] = {"prompt_tokens": 5, "completion_tokens": i, "total_tokens": 5 + i}
    evs = events(await collect(guarded_stream(raw(sse(chunks)), settings(),
                                              ScriptedVerifier())))
    assert content(evs) == REDACTED
    assert all(e["choices"] for e in evs if isinstance(e, dict))
    assert evs[-2]["usage"]["completion_tokens"] == len(chunks) - 1  # the finish's own


async def test_a_done_without_its_blank_line_ends_a_finished_answer_cleanly():
    data = answer_stream()[:-1]  # "data: [DONE]\n", then the upstream closes
    evs = events(await collect(guarded_stream(raw(data), settings(), ScriptedVerifier())))
    assert content(evs) == REDACTED and evs[-1] == "[DONE]" and "guardrail" in evs[-2]
    out = await collect(passthrough_stream(raw(data, 9)))
    assert out == answer_stream(done=False) + b"data: [DONE]\n\n"


async def test_an_upstream_error_event_then_a_close_is_one_error_then_done():
    err = {"error": {"message": "The server had an error", "type": "server_error"}}
    data = sse([chunk("", role="assistant"), chunk("The tower"), err], done=False)
    evs = events(await collect(passthrough_stream(raw(data, 11))))
    assert [e["error"]["message"] for e in evs if isinstance(e, dict) and "error" in e] \
        == ["The server had an error"] and evs[-1] == "[DONE]"


def parts_chunk(text: str, thinking: str = "") -> dict:
    c = chunk()
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": thinking}]}] \
        if thinking else []
    c["choices"][0]["delta"]["content"] = parts + [{"type": "text", "text": text}]
    return c


async def test_content_parts_are_checked_streamed():
    chunks = [chunk("", role="assistant"), parts_chunk("", "Let me think.")] + \
        [parts_chunk(p) for p in ANSWER] + [chunk(finish="stop")]
    evs = events(await collect(guarded_stream(raw(sse(chunks)), settings(),
                                              ScriptedVerifier())))
    texts = "".join(c["delta"]["content"] for e in evs if isinstance(e, dict)
                    for c in e["choices"] if isinstance(c["delta"].get("content"), str))
    assert texts == REDACTED and evs[-2]["guardrail"]["hallucination_detected"]
    thinking = [c["delta"]["content"] for e in evs if isinstance(e, dict)
                for c in e["choices"] if isinstance(c["delta"].get("content"), list)]
    assert thinking == [[{"type": "thinking", "thinking": [{"type": "text",
                                                            "text": "Let me think."}]}]]


def completion(content, logprobs=None) -> dict:
    return {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content},
         "logprobs": logprobs, "finish_reason": "stop"}]}


async def test_content_parts_are_checked_whole_and_keep_their_shape():
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Hm."}]}
    parts = [thinking, {"type": "text", "text": "".join(ANSWER[:3])},
             {"type": "text", "text": "".join(ANSWER[3:])}]
    r = await guarded_completion(completion(parts), settings(), ScriptedVerifier())
    assert r.body["choices"][0]["message"]["content"] == [
        thinking, {"type": "text", "text": REDACTED}]
    assert r.detected and r.body["guardrail"]["sentences"]


async def test_logprobs_go_when_the_answer_was_changed_and_stay_when_not():
    text = "".join(ANSWER)
    logprobs = {"content": [{"token": t, "logprob": -0.1} for t in ANSWER]}
    r = await guarded_completion(completion(text, logprobs), settings(), ScriptedVerifier())
    assert r.body["choices"][0]["message"]["content"] == REDACTED
    assert r.body["choices"][0]["logprobs"] is None  # they would spell "1950"
    kept = await guarded_completion(completion(text, logprobs), settings(),
                                    ScriptedVerifier(bad=()))
    assert kept.body["choices"][0]["logprobs"] == logprobs


def test_a_list_item_redacted_whole_keeps_its_marker():
    marker = "[unsupported]"
    assert redact("- It was built in 1950.\n", (), "sentence", marker) == f"- {marker}\n"
    assert redact("2. It was built in 1950. ", (), "sentence", marker) == f"2. {marker} "
    assert redact("- [x] Built in 1950.", (), "sentence", marker) == f"- [x] {marker}"
    assert redact("It was built in 1950. ", (), "sentence", marker) == f"{marker} "
    assert redact("- ", (), "sentence", marker) == marker + " "  # a marker alone: no item
