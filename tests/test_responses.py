"""The Responses API (``/v1/responses``): the pipeline over Responses events with a
scripted verifier, request parsing, and end to end with the official openai SDK
(``client.responses.create(stream=True)``) -> guardrail on loopback with the REAL
default detector -> the scripted fake upstream's ``/v1/responses``."""

from __future__ import annotations

import json
import time
from typing import Optional

import httpx
import openai
import pytest
from conftest import EIFFEL_ANSWER, EIFFEL_TOOL, proxy_config, serve
from scripted import ScriptedVerifier
from test_pipeline import collect, events, raw, settings

from guardrail.config import ContextConfig
from guardrail.errors import BadRequest
from guardrail.proxy.app import create_app
from guardrail.proxy.responses_api import parse_responses_request
from guardrail.stream.pipeline import guarded_stream
from guardrail.stream.responses import ResponsesWire
from guardrail.types import Action

PIECES = ["The tower", " is in", " Paris.", " It was", " built in", " 1950.", " It is",
          " 330 metres", " tall."]
IDS = {"item_id": "msg_1", "output_index": 0, "content_index": 0}


def ev(kind: str, **fields) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


def upstream(pieces=PIECES, *, after_text=(), terminal: Optional[str] = "response.completed",
             error_at: Optional[int] = None) -> bytes:
    text = "".join(pieces)
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    out = [ev("response.created", sequence_number=40,
              response={"id": "resp_1", "object": "response", "status": "in_progress",
                        "output": []}),
           ev("response.output_item.added", output_index=0, item={**item, "content": []}),
           ev("response.content_part.added", **IDS, part={"type": "output_text", "text": ""})]
    for k, p in enumerate(pieces):
        if k == error_at:
            return b"".join(out + [ev("error", code="server_error", message="model melted",
                                      param=None)])
        out.append(ev("response.output_text.delta", **IDS, delta=p, logprobs=[]))
    out += [ev("response.output_text.done", **IDS, text=text, logprobs=[]),
            ev("response.content_part.done", **IDS, part={"type": "output_text", "text": text}),
            ev("response.output_item.done", output_index=0, item=item), *after_text]
    if terminal:
        out.append(ev(terminal, response={"id": "resp_1", "object": "response",
                                          "status": "completed", "output": [item]}))
    return b"".join(out)


async def run(data: bytes, s=None, v=None) -> list:
    s = s or settings()
    return events(await collect(guarded_stream(raw(data), s, v or ScriptedVerifier(),
                                               ResponsesWire(s.policy.hold))))


def delta_text(evs) -> str:
    return "".join(e["delta"] for e in evs if isinstance(e, dict)
                   and e["type"] == "response.output_text.delta")


RELEASED = "The tower is in Paris. It was built in [unsupported]. It is 330 metres tall."


async def test_every_repeat_of_the_text_is_the_released_text():
    evs = await run(upstream())
    assert evs[-1] == "[DONE]"
    body = evs[:-1]
    assert delta_text(body) == RELEASED
    assert [e["sequence_number"] for e in body] == list(range(len(body)))
    by = {e["type"]: e for e in body}
    assert by["response.output_text.done"]["text"] == RELEASED
    assert by["response.content_part.done"]["part"]["text"] == RELEASED
    assert by["response.output_item.done"]["item"]["content"][0]["text"] == RELEASED
    done = body[-1]
    assert done["type"] == "response.completed"
    assert done["response"]["output"][0]["content"][0]["text"] == RELEASED
    assert done["guardrail"]["action"] == "redact"
    assert "1950" not in json.dumps([e for e in body if e is not done]) \
        and "1950" not in json.dumps(done["response"])  # only the report names it


async def test_event_names_are_the_types_and_text_goes_before_a_tool_call():
    call = ev("response.output_item.added", output_index=1,
              item={"id": "fc_1", "type": "function_call", "name": "search", "arguments": ""})
    out = await collect(guarded_stream(raw(upstream(after_text=[call])), settings(),
                                       ScriptedVerifier(), ResponsesWire()))
    blocks = [b for b in out.decode().split("\n\n") if b.startswith("event:")]
    names = [b.split("\n")[0].removeprefix("event: ") for b in blocks]
    types = [json.loads(b.split("\n")[1].removeprefix("data: "))["type"] for b in blocks]
    assert names == types
    call_at = max(i for i, t in enumerate(types) if t == "response.output_item.added")
    assert call_at > max(i for i, t in enumerate(types) if t == "response.output_text.delta")


async def test_sentence_events_ride_on_the_deltas():
    import dataclasses
    s = dataclasses.replace(settings(), sentence_events=True)
    evs = await run(upstream(), s)
    sent = [e["guardrail"]["sentence"] for e in evs if isinstance(e, dict)
            and e["type"] == "response.output_text.delta"]
    assert [x["action"] for x in sent] == ["release", "redact", "release"]


async def test_a_block_ends_as_an_incomplete_response_filtered():
    evs = await run(upstream(), settings(Action.BLOCK))
    assert evs[-1] == "[DONE]"
    end = evs[-2]
    assert end["type"] == "response.incomplete"
    assert end["response"]["incomplete_details"] == {"reason": "content_filter"}
    assert end["guardrail"]["partial"] is True
    assert delta_text(evs) == "The tower is in Paris. "
    assert "1950" not in json.dumps(end["response"])
    # the output the client got, as OpenAI's filtered response carries it (the SDK's
    # final response is this object; an empty output would lose the released text)
    [item] = end["response"]["output"]
    assert (item["id"], item["type"], item["status"]) == ("msg_1", "message", "incomplete")
    assert [c["text"] for c in item["content"]] == ["The tower is in Paris. "]


async def test_a_block_with_hold_off_ends_with_the_text_the_client_got():
    evs = await run(upstream(), settings(Action.BLOCK, hold=False))
    end = evs[-2]
    assert end["type"] == "response.incomplete"
    [item] = end["response"]["output"]
    assert item["content"][0]["text"] == delta_text(evs) and "1950" in delta_text(evs)


async def test_an_upstream_error_event_is_passed_on_and_nothing_unchecked_leaks():
    evs = await run(upstream(error_at=7))
    assert evs[-1] == "[DONE]"
    err = evs[-2]
    assert err["type"] == "error" and "model melted" in err["message"]
    assert err["guardrail"]["partial"] is True
    assert "1950" not in delta_text(evs) and "330" not in delta_text(evs)


async def test_an_upstream_that_reports_its_response_failed_ends_with_it_and_the_report():
    evs = await run(upstream(terminal="response.failed"))
    assert evs[-1] == "[DONE]" and evs[-2]["type"] == "response.failed"
    assert evs[-2]["guardrail"]["action"] == "redact" and delta_text(evs) == RELEASED


async def test_a_stream_cut_before_its_terminal_event_ends_with_an_error():
    evs = await run(upstream(terminal=None))
    assert evs[-2]["type"] == "error" and "before the response ended" in evs[-2]["message"]
    assert evs[-1] == "[DONE]"


async def test_hold_off_forwards_the_upstream_events_and_reports_at_the_end():
    evs = await run(upstream(), settings(Action.RELEASE, hold=False))
    assert delta_text(evs) == "".join(PIECES)
    assert evs[-2]["type"] == "response.completed"
    assert evs[-2]["guardrail"]["sentences"][1]["score"] > 0.5


async def test_a_character_split_across_two_deltas_arrives_whole():
    data = upstream(["Paris is nice ", "\ud83d", "\ude00", "."])
    out = await collect(guarded_stream(raw(data), settings(), ScriptedVerifier(),
                                       ResponsesWire()))
    assert delta_text(events(out)) == "Paris is nice \U0001F600."
    assert "\U0001F600".encode() in out


# -- request parsing ----------------------------------------------------------------------

def test_grounding_from_tool_outputs_instructions_and_the_extension():
    body = {"model": "m", "instructions": "Answer from the documents.\n<document>Doc A."
            "</document>", "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "When?"}]},
                {"type": "function_call", "call_id": "c1", "name": "s", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": '{"year": 1889}'}],
            "guardrail": {"context": ["Ext doc."], "sentence_events": True}, "stream": True}
    req = parse_responses_request(json.dumps(body).encode(), ContextConfig())
    assert set(req.grounding.documents) == {"Ext doc.", "Doc A.", '{"year": 1889}'}
    assert req.grounding.question == "When?"
    assert req.stream and req.sentence_events and "guardrail" not in req.body
    plain = parse_responses_request(b'{"model": "m", "input": "Hi"}', ContextConfig())
    assert not plain.checked and plain.forward_bytes == b'{"model": "m", "input": "Hi"}'


@pytest.mark.parametrize("body, message", [
    ({"model": "m", "input": 7}, "'input' must be a string or an array"),
    ({"model": "m", "input": [3]}, "'input[0]' must be an object"),
    ({"model": "m", "input": [{"role": "robot", "content": "x"}]}, "'input[0].role'"),
    ({"model": "m", "input": "x", "stream": "yes"}, "'stream' must be a boolean"),
    ({"model": "m", "input": "x", "temperature": "hot"}, "'temperature' must be a number"),
    ({"model": "m", "input": [{"type": "function_call_output", "output": 5}]},
     "'input[0].output' must be a string"),
    ({"model": "m", "input": "x", "guardrail": {"sentence_events": 1}},
     "'guardrail.sentence_events' must be a boolean"),
])
def test_bad_requests_are_refused_naming_the_field(body, message):
    with pytest.raises(BadRequest, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_responses_request(json.dumps(body).encode(), ContextConfig())


# -- end to end: openai SDK -> guardrail (real model) -> fake upstream -----------------

INPUT = [{"role": "user", "content": "When was the Eiffel Tower built?"},
         {"type": "function_call", "call_id": "call_1", "name": "search",
          "arguments": '{"q": "Eiffel Tower"}'},
         {"type": "function_call_output", "call_id": "call_1", "output": EIFFEL_TOOL}]


@pytest.fixture(scope="module")
def proxy(fake_upstream_server, detector):
    with serve(create_app(proxy_config(fake_upstream_server.url), detector=detector)) as s:
        yield s


@pytest.fixture
def client(proxy, fake_upstream):
    with openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-client", max_retries=0,
                       timeout=120) as c:
        yield c


def test_sdk_stream_stops_the_unsupported_sentence_and_passes_the_rest(client, proxy,
                                                                      fake_upstream):
    raw_response = client.responses.with_raw_response.create(model="fake-llm", input=INPUT,
                                                             stream=True)
    stream_id = raw_response.headers["x-guardrail-stream-id"]
    evs = list(raw_response.parse())
    text = "".join(e.delta for e in evs if e.type == "response.output_text.delta")
    assert "The Eiffel Tower is a wrought-iron lattice tower in Paris. " in text
    assert text.endswith("It is 330 metres tall.")
    assert "1950" not in text and "Italian" not in text
    done = evs[-1]
    assert done.type == "response.completed" and done.response.output_text == text
    report = done.model_extra["guardrail"]
    flagged = [s for s in report["sentences"] if s["action"] != "release"]
    assert [s["original"].strip() for s in flagged] == \
        ["It was completed in 1950 by a team of Italian architects."]
    sent = fake_upstream.app.state.log[0].body
    assert "guardrail" not in sent and sent["input"][2]["output"] == EIFFEL_TOOL
    again = httpx.get(f"{proxy.url}/v1/guardrail/reports/{stream_id}",
                      headers={"authorization": "Bearer sk-client"}, timeout=30).json()
    assert again["guardrail"]["sentences"] == report["sentences"]


def test_sdk_reads_the_released_text_in_a_blocked_response(client, detector):
    """A block ends with ``response.incomplete``: the SDK's response object there holds
    the output the client got, not an empty one."""
    if detector.meta.get("placeholder"):
        pytest.skip("the default model is still the untrained placeholder")
    evs = list(client.responses.create(model="fake-llm", input=INPUT, stream=True, extra_body={
        "guardrail": {"policy": {"action": "block"}}}))
    text = "".join(e.delta for e in evs if e.type == "response.output_text.delta")
    end = evs[-1]
    assert end.type == "response.incomplete" and end.response.status == "incomplete"
    assert text.startswith("The Eiffel Tower is a wrought-iron lattice tower in Paris.")
    assert end.response.output_text == text and "1950" not in text


def test_sdk_non_streaming_response_is_checked_too(client):
    r = client.responses.create(model="fake-llm", input=INPUT)
    assert "1950" not in r.output_text and r.output_text.endswith("It is 330 metres tall.")
    assert r.model_extra["guardrail"]["action"] != "release"


def test_ungrounded_request_passes_through_unchanged(proxy, fake_upstream):
    with httpx.stream("POST", proxy.url + "/v1/responses", timeout=60, json={
            "model": "fake-llm", "input": "Tell me about the Eiffel tower", "stream": True}) as r:
        assert r.headers["x-guardrail-verified"] == "false"
        body = r.read().decode()
    assert EIFFEL_ANSWER.split()[0] in body and "1950" in body  # nothing checked
    assert body.rstrip().splitlines()[0] == "event: response.created"


def test_errors_are_clear(proxy, fake_upstream):
    r = httpx.post(proxy.url + "/v1/responses", json={"model": "m", "input": 7}, timeout=30)
    assert r.status_code == 400 and "'input' must be" in r.json()["error"]["message"]
    r = httpx.post(proxy.url + "/v1/responses", timeout=30, json={
        "model": "m", "input": INPUT, "stream": True,
        "fake": {"mode": "error", "status": 429, "headers": {"retry-after": "7"}}})
    assert r.status_code == 429 and r.headers.get("retry-after") == "7"
    with httpx.stream("POST", proxy.url + "/v1/responses", timeout=60, json={
            "model": "m", "input": INPUT, "stream": True,
            "fake": {"mode": "event_error", "after": 3, "message": "overloaded"}}) as r:
        evs = events(r.read())
    assert evs[-1] == "[DONE]" and evs[-2]["type"] == "error"
    assert "overloaded" in evs[-2]["message"]


def test_a_client_that_goes_away_cancels_the_upstream(proxy, fake_upstream):
    with httpx.Client(timeout=60) as c:
        with c.stream("POST", proxy.url + "/v1/responses", json={
                "model": "fake-llm", "stream": True, "input": INPUT,
                "fake": {"mode": "hang", "after": 14}}) as r:
            assert next(r.iter_lines()).startswith("event: ")
    call = fake_upstream.app.state.log[-1]
    deadline = time.monotonic() + 30
    while not call.cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    assert call.cancelled and not call.finished


def test_hostile_upstream_events_end_the_stream_with_an_error_and_done(proxy, fake_upstream):
    """Not JSON, no type, [DONE] before the end: an error event, [DONE], nothing more."""
    bad_index = json.dumps({"type": "response.output_text.delta", "delta": "Hi.",
                            "output_index": "zero"})
    for bad, says in (("{oops", "not valid JSON"), ('{"delta": "x"}', "no 'type'"),
                      (bad_index, "non-integer output_index"),
                      ("[DONE]", "before the response ended")):
        with httpx.stream("POST", proxy.url + "/v1/responses", timeout=60, json={
                "model": "m", "input": INPUT, "stream": True,
                "fake": {"mode": "raw", "events": [bad]}}) as r:
            evs = events(r.read())
        assert evs[-1] == "[DONE]" and evs[-2]["type"] == "error", evs
        assert says in evs[-2]["message"], evs


def test_the_usual_refusals_hold_for_responses(proxy, fake_upstream):
    r = httpx.post(proxy.url + "/v1/responses", timeout=30, json={
        "model": "m", "input": INPUT, "guardrail": {"context_id": "ctx_unknown"}})
    assert r.status_code == 404 and r.json()["error"]["message"]
    r = httpx.post(proxy.url + "/v1/responses", timeout=30, content=b"[1, 2]",
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and "JSON object" in r.json()["error"]["message"]
    assert fake_upstream.app.state.log == []  # nothing went upstream


def test_the_sdk_stream_helper_accumulates_the_released_text(client):
    """``client.responses.stream()`` builds its own snapshot from the events: it must end
    with the released text, never the upstream's."""
    with client.responses.stream(model="fake-llm", input=INPUT) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert final.output_text == "".join(deltas)
    assert "1950" not in final.output_text and final.output_text.endswith("330 metres tall.")


def test_an_unchecked_stream_ends_with_the_upstreams_error_or_one_of_its_own(proxy,
                                                                            fake_upstream):
    """Passed through (no grounding): the upstream's ``error`` event ends the stream, with
    no second error of ours after it; a cut one ends with one ``error`` event in the
    Responses shape, then ``[DONE]``, as a checked stream ends."""
    for mode, says in (("event_error", "overloaded"), ("cut", "closed the connection")):
        with httpx.stream("POST", proxy.url + "/v1/responses", timeout=60, json={
                "model": "m", "input": "Tell me about the tower", "stream": True,
                "fake": {"mode": mode, "after": 3, "message": "overloaded"}}) as r:
            assert r.headers["x-guardrail-verified"] == "false"
            evs = events(r.read())
        errors = [e for e in evs if isinstance(e, dict) and e.get("type") == "error"]
        assert len(errors) == 1 and says in errors[0]["message"], evs
        assert not any(isinstance(e, dict) and "choices" in e for e in evs)


def test_a_request_without_input_is_forwarded(proxy, fake_upstream):
    """``input`` is optional (a stored prompt, a conversation, previous_response_id)."""
    r = httpx.post(proxy.url + "/v1/responses", timeout=60, json={
        "model": "fake-llm", "prompt": {"id": "pmpt_1"}, "previous_response_id": "resp_0"})
    assert r.status_code == 200 and r.headers["x-guardrail-verified"] == "false"
    assert fake_upstream.app.state.log[-1].body["prompt"] == {"id": "pmpt_1"}


async def test_streamed_citations_into_changed_text_are_dropped_from_the_done_events():
    cite = {"type": "url_citation", "start_index": 16, "end_index": 21, "url": "https://x"}
    data = upstream().replace(b'"annotations": []', b'"annotations": ' +
                              json.dumps([cite]).encode())
    evs = await run(data)
    done = [e for e in evs if isinstance(e, dict) and e["type"] in (
        "response.output_item.done", "response.completed")]
    items = [done[0]["item"], done[1]["response"]["output"][0]]
    assert [i["content"][0]["annotations"] for i in items] == [[], []]
    kept = await run(data, v=ScriptedVerifier(bad=()))  # nothing changed: as sent
    item = next(e for e in kept if isinstance(e, dict)
                and e["type"] == "response.output_item.done")["item"]
    assert item["content"][0]["annotations"] == [cite]


async def test_text_sent_only_in_its_done_event_is_checked_not_blanked():
    """An upstream that streams no ``output_text.delta``: the part's text, sent only in
    ``output_text.done``, is checked and released like streamed text."""
    data = b"".join(line + b"\n\n" for line in upstream().split(b"\n\n")
                    if line and b"response.output_text.delta" not in line)
    evs = await run(data)
    assert delta_text(evs) == ("The tower is in Paris. It was built in [unsupported]. "
                               "It is 330 metres tall.")
    done = next(e for e in evs if isinstance(e, dict)
                and e["type"] == "response.output_text.done")
    assert done["text"] == delta_text(evs)
    assert evs[-2]["guardrail"]["hallucination_detected"]
