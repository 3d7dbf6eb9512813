"""End to end: the official openai SDK (and raw httpx for bad input) -> guardrail on a
loopback port, wired as ``guardrail serve`` wires it (the cross-stream scheduler and
the in-process context cache) around the REAL default detector -> the scripted fake
upstream.  Contexts API, tenants, Redis, concurrency: test_e2e_contexts.py and
test_e2e_load.py.

These tests assert structure and faithfulness (what the client got is exactly what the
verdicts say was released; released sentences are verbatim), plus deterministic policy
behaviour at thresholds 0 and 1, so they hold for any detector.  The one assertion that
needs the model's own verdict is ``test_trained_model_flags_the_1950_sentence``: the
shipped model must flag the demo's hallucination and leave its true sentences alone.
"""

from __future__ import annotations

import copy
import json
import re
import socket
import sys
import time
import types
from pathlib import Path

import httpx
import openai
import pytest
from conftest import EIFFEL_ANSWER, EIFFEL_REWRITE, EIFFEL_TOOL, proxy_config, serve
from test_misadded import RELEASES as RELEASES_TOOL  # the River Lune's four add to 39,900

from guardrail.config import GuardrailConfig
from guardrail.proxy.app import create_app
from guardrail.testing.script import chat_events
from guardrail.types import Rewrite

QUESTION = "When was the Eiffel Tower built?"
MESSAGES = [{"role": "user", "content": QUESTION},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "search", "arguments": '{"q": "Eiffel Tower"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": EIFFEL_TOOL}]


@pytest.fixture(scope="module")
def placeholder(detector) -> bool:
    return bool(detector.meta.get("placeholder"))


def config(upstream: str, **sections) -> GuardrailConfig:
    return proxy_config(upstream, **sections)


@pytest.fixture(scope="module")
def proxy(fake_upstream_server, detector):
    with serve(create_app(config(fake_upstream_server.url), detector=detector)) as s:
        yield s


@pytest.fixture
def client(proxy, fake_upstream) -> openai.OpenAI:
    with openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-client", max_retries=0,
                       timeout=120) as c:
        yield c


def stream_answer(client, messages: list = MESSAGES, **kw) -> tuple[str, dict, list]:
    chunks = list(client.chat.completions.create(model="fake-llm", messages=messages,
                                                 stream=True, **kw))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finals = [c.model_extra["guardrail"] for c in chunks if "guardrail" in (c.model_extra or {})]
    assert len(finals) == 1 and "guardrail" in chunks[-1].model_extra
    return text, finals[0], chunks


def check_report(text: str, g: dict, n_layers: int) -> None:
    """The guardrail object is complete and agrees with what the client received."""
    sentences = g["sentences"]
    assert "".join(s["original"] for s in sentences) == EIFFEL_ANSWER  # upstream, verbatim
    assert "".join(s["released"] for s in sentences) == text            # what was sent
    for s in sentences:  # in-flight checks: the deepest early exit (no load, no ladder)
        assert s["checked"] is True and 0 <= s["score"] <= 1
        # or none: a sentence that says a line of the grounding again ("It is 330
        # metres tall.") is settled without a model call once the judge's evidence is
        # built, which depends on timing (test_guard.py tests it)
        assert s["exit_layer"] == 4 or s["exit_layer"] is None and s["score"] == 0.0 \
            and s["action"] == "release"
        if s["action"] == "release":
            assert s["released"] == s["original"]
        if s["action"] == "redact":
            assert "[unsupported]" in s["released"]
        for sp in s["spans"] + s["final"]["spans"]:
            assert s["original"][sp["start"]:sp["end"]] == sp["text"]
            assert 0 <= sp["confidence"] <= 1
        assert isinstance(s["final"]["hallucinated"], bool)
    assert g["final"]["exit_layer"] == n_layers == 6
    for sp in g["final"]["spans"]:
        assert EIFFEL_ANSWER[sp["start"]:sp["end"]] == sp["text"]
    flagged = any(s["action"] != "release" for s in sentences)  # default policy: redact
    assert g["hallucination_detected"] == (flagged or g["final"]["hallucinated"])


def test_stream_with_tool_context(client, fake_upstream, detector, proxy):
    text, g, chunks = stream_answer(client)
    check_report(text, g, detector.n_layers)
    assert [s["action"] for s in g["sentences"]] and g["policy"]["action"] == "redact"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert any(c.choices and c.choices[0].finish_reason == "stop" for c in chunks)
    assert len({c.id for c in chunks}) == 1 and chunks[0].model == "fake-llm"
    call = fake_upstream.app.state.log[0]
    assert call.headers["authorization"] == "Bearer sk-upstream"
    info = httpx.get(proxy.url + "/healthz").json()
    assert info["verifier"]["scheduler"] == "batching"  # the default wiring
    assert info["verifier"]["shallow_exit_layer"] == 4 and info["tenants"] == "single"


def test_non_streaming_with_extension_context(client, detector):
    raw = client.chat.completions.with_raw_response.create(
        model="fake-llm", messages=[{"role": "user", "content": QUESTION}],
        extra_body={"guardrail": {"context": [EIFFEL_TOOL]}})
    completion = raw.parse()
    g = completion.model_extra["guardrail"]
    text = completion.choices[0].message.content
    check_report(text, g, detector.n_layers)
    assert raw.headers["x-guardrail-verified"] == "true"
    assert raw.headers["x-guardrail-hallucination"] == str(g["hallucination_detected"]).lower()
    assert raw.headers["x-guardrail-action"] == g["action"]
    assert int(raw.headers["x-guardrail-spans"]) == g["span_count"]


def test_threshold_one_releases_everything_verbatim(client):
    text, g, _ = stream_answer(client, extra_body={"guardrail": {"policy": {"threshold": 1.0}}})
    assert text == EIFFEL_ANSWER
    assert all(s["action"] == "release" for s in g["sentences"])


def test_threshold_zero_redacts_every_sentence(client):
    text, g, _ = stream_answer(client, extra_body={"guardrail": {"policy": {
        "threshold": 0.0, "redact_mode": "sentence"}}})
    assert text == "[unsupported] [unsupported] [unsupported]"
    assert g["hallucination_detected"] is True


def test_regenerate_asks_upstream_then_falls_back(client, fake_upstream):
    # at threshold 0 every rewrite is flagged too: 2 attempts each, then redaction
    text, g, _ = stream_answer(client, extra_body={"guardrail": {"policy": {
        "threshold": 0.0, "action": "regenerate", "max_attempts": 2}}})
    assert [(s["action"], s["attempts"]) for s in g["sentences"]] == [("redact", 2)] * 3
    rewrites = [c for c in fake_upstream.app.state.log if not c.stream]
    assert len(rewrites) == 6
    prompt = rewrites[0].body["messages"][0]["content"]
    assert EIFFEL_TOOL in prompt and "The Eiffel Tower is a wrought-iron" in prompt
    assert "[unsupported]" in text


HUGE = "The Eiffel Tower was completed in 1889 by Gustave Eiffel's company. " * 150


@pytest.mark.parametrize("refused_by", ["size rule", "model", "model, local engine"])
def test_a_hook_retrieving_too_much_fails_its_attempt_not_the_stream(
        refused_by, fake_upstream_server, fake_upstream, detector, monkeypatch):
    """A regenerate hook returning more grounding than the request may hold (the
    ``context`` size rule) or the model can read (its context token limit): the passage
    is left out and noted, the attempt goes on without it, and the stream ends as a
    normal answer."""
    hooks = types.ModuleType("guardrail_test_huge_hook")
    hooks.retrieve = lambda req: Rewrite(EIFFEL_REWRITE, (HUGE,))
    monkeypatch.setitem(sys.modules, hooks.__name__, hooks)
    limits = {"context": {"max_context_chars": 4000}} if refused_by == "size rule" else {}
    if refused_by.endswith("local engine"):
        limits["verification"] = {"engine": "local"}
    if refused_by.startswith("model"):  # the same weights, reading at most 1,000 context tokens
        detector = copy.copy(detector)
        detector.max_context_tokens = 1000
    cfg = config(fake_upstream_server.url, **limits,
                 policy={"regenerate": {"hook": f"{hooks.__name__}:retrieve"}})
    with serve(create_app(cfg, detector=detector)) as s, openai.OpenAI(
            base_url=s.url + "/v1", api_key="sk-client", max_retries=0, timeout=120) as c:
        text, g, chunks = stream_answer(c, extra_body={"guardrail": {"policy": {
            "threshold": 0.0, "action": "regenerate", "max_attempts": 2}}})
    assert chunks[-1].choices[0].finish_reason == "stop" and "error" not in g
    assert [(v["action"], v["attempts"]) for v in g["sentences"]] == [("redact", 2)] * 3
    assert g["added_documents"] == []
    refused = [e for e in g["errors"] if "documents were not added" in e]
    assert len(refused) == 6 and all("context_too_large" not in e for e in refused), refused
    assert text == "[unsupported] [unsupported] [unsupported]"


def test_block_ends_the_stream_as_a_content_filter_in_the_sdk(client):
    """Not an error a client or router would retry: the convention of a filtered answer."""
    text, g, chunks = stream_answer(client, extra_body={"guardrail": {"policy": {
        "threshold": 0.0, "action": "block"}}})
    assert text == ""  # threshold 0: the first sentence is blocked, nothing leaks
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    assert g["partial"] is True and g["sentences"][-1]["action"] == "block"
    assert any("blocks the answer" in e for e in g["errors"])


@pytest.mark.parametrize("stream, grounded", [(True, True), (False, True), (True, False),
                                            (False, False)])
def test_request_ids_traces_and_rate_limits_pass_both_ways(client, fake_upstream, stream,
                                                           grounded):
    """The client's request id, trace and OpenAI organization reach the upstream; the
    upstream's own request id and rate limits reach the client (the SDK's
    ``_request_id``), checked or not, streamed or not.  Other headers stay behind."""
    raw = client.chat.completions.with_raw_response.create(
        model="fake-llm", messages=[{"role": "user", "content": QUESTION}], stream=stream,
        extra_headers={"x-request-id": "client-7", "traceparent": TRACE,
                       "OpenAI-Organization": "org-9", "x-secret-thing": "no"},
        extra_body={"guardrail": {"context": [EIFFEL_TOOL]}} if grounded else None)
    assert raw.headers["x-request-id"].startswith("req_fake")
    assert raw.headers["x-ratelimit-remaining-requests"] == "499"
    assert raw.headers["x-guardrail-verified"] == str(grounded).lower()
    parsed = raw.parse()
    if stream:
        list(parsed)
    sent = fake_upstream.app.state.log[-1].headers
    assert (sent["x-request-id"], sent["traceparent"], sent["openai-organization"]) == \
        ("client-7", TRACE, "org-9")
    assert "x-secret-thing" not in sent


TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_no_context_passes_through_unverified(client, fake_upstream):
    raw = client.chat.completions.with_raw_response.create(
        model="fake-llm", messages=[{"role": "user", "content": QUESTION}], stream=True)
    assert raw.headers["x-guardrail-verified"] == "false"
    chunks = list(raw.parse())
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == \
        EIFFEL_ANSWER
    assert not any("guardrail" in (c.model_extra or {}) for c in chunks)


def test_tool_call_deltas_and_usage_pass_through_a_checked_stream(client):
    chunks = list(client.chat.completions.create(
        model="fake-llm", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "Use the weather tool for Paris."}],
        extra_body={"guardrail": {"context": ["Paris is in France."]}}))
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert calls[0].function.name == "get_weather" and calls[0].id == "call_0"
    assert "".join(tc.function.arguments or "" for tc in calls) == '{"city": "Paris"}'
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert [c.usage.total_tokens for c in chunks if c.usage]
    assert chunks[-1].usage is not None and not chunks[-1].choices  # usage stays last
    reports = [c for c in chunks if "guardrail" in (c.model_extra or {})]
    assert len(reports) == 1 and reports[0].choices[0].finish_reason == "tool_calls"
    assert reports[0].model_extra["guardrail"]["sentences"] == []


def test_verify_endpoint(proxy):
    r = httpx.post(proxy.url + "/v1/verify", timeout=120, json={
        "context": [EIFFEL_TOOL], "question": QUESTION, "answer": EIFFEL_ANSWER})
    assert r.status_code == 200
    v = r.json()
    assert "".join(s["original"] for s in v["guardrail"]["sentences"]) == EIFFEL_ANSWER
    assert v["released"] == "".join(s["released"] for s in v["guardrail"]["sentences"])


def test_trained_model_flags_the_1950_sentence(client, placeholder):
    """The real default detector flags the hallucinated sentence and the policy acts."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    text, g, _ = stream_answer(client)
    actions = [s["action"] for s in g["sentences"]]
    assert actions == ["release", "redact", "release"], g
    assert "1950" not in text and g["sentences"][1]["spans"]
    text, g, _ = stream_answer(client, extra_body={"guardrail": {"policy": {
        "action": "regenerate"}}})
    assert g["sentences"][1]["action"] == "regenerate"
    assert text == EIFFEL_ANSWER.replace(
        "It was completed in 1950 by a team of Italian architects.", EIFFEL_REWRITE)


# -- bad input and failures, with the real detector ------------------------------------

@pytest.mark.parametrize("raw, message", [
    (b"{not json", "not valid JSON"),
    (b'{"model": "fake-llm"}', "'messages' is required"),
    (b'{"model": "fake-llm", "messages": [{"role": "user", "content": 1}]}',
     "'messages[0].content' must be"),
    (b'{"model": "fake-llm", "messages": [{"role": "user", "content": "q"}], "n": "2"}',
     "'n' must be a positive integer"),
])
def test_bad_input_is_400(proxy, raw, message):
    r = httpx.post(proxy.url + "/v1/chat/completions", content=raw, timeout=30)
    assert r.status_code == 400 and message in r.json()["error"]["message"]


ROOMS_TOOL = json.dumps({"booking_ref": "KX-4471", "city": "Lisbon", "guests": [
    {"name": "Ana Ruiz", "nights": 3, "rate_cents": 12900},
    {"name": "Leo Park", "nights": 2, "rate_cents": 14500}]})
ROOMS_ANSWER = ["Booking KX-4471 is in Lisbon. ", "Together the two rooms come to $697. ",
                "Leo Park stays 4 nights."]


def test_a_flag_names_its_basis_and_the_policy_acts_on_it(client, placeholder, proxy):
    """Through the server: each flag says what it rests on.  By default a total the
    tool result does not hold, in a sentence that says it worked it out, reaches the
    client as written, marked ``value_worked_out`` (unverifiable), while a changed value
    is redacted; a request's ``by_basis: {}`` redacts the total too, and one naming only
    ``structured.value_missing`` covers it; an unknown basis is a 400 that names it."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = [{"role": "user", "content": "What do the two rooms cost?"}]
    messages = [*question, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "booking", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": ROOMS_TOOL}]
    fake = {"mode": "raw", "events": chat_events("".join(ROOMS_ANSWER))}
    text, g, _ = stream_answer(client, messages, extra_body={"fake": fake})
    first, total, nights = g["sentences"]
    assert first["action"] == "release"
    assert total["action"] == "annotate" and total["released"] == ROOMS_ANSWER[1]
    assert total["explanation"]["basis"] == "value_worked_out"
    assert total["explanation"]["kind"] == "unverifiable"
    assert total["explanation"]["grounding"] == "structured"
    assert nights["action"] == "redact" and nights["explanation"]["basis"] == "value_changed"
    assert text.startswith("".join(ROOMS_ANSWER[:2])) and "4 nights" not in text
    assert g["policy"]["by_basis"] == {"structured.value_worked_out": "annotate",
                                       "structured.other_record": "annotate"}
    text, g, _ = stream_answer(client, messages, extra_body={"fake": fake, "guardrail": {
        "policy": {"by_basis": {}}}})
    first, total, nights = g["sentences"]
    assert total["action"] == "redact" and "$697" not in text
    assert g["policy"]["by_basis"] is None
    text, g, _ = stream_answer(client, messages, extra_body={"fake": fake, "guardrail": {
        "policy": {"by_basis": {"structured.value_missing": "annotate"}}}})
    first, total, nights = g["sentences"]
    assert total["action"] == "annotate" and total["released"] == ROOMS_ANSWER[1]
    assert nights["action"] == "redact" and "4 nights" not in text
    assert g["policy"]["by_basis"] == {"structured.value_missing": "annotate"}
    r = httpx.post(proxy.url + "/v1/chat/completions", json={
        "model": "fake-llm", "messages": messages, "stream": True,
        "guardrail": {"policy": {"by_basis": {"value_guessed": "annotate"}}}}, timeout=30)
    assert r.status_code == 400 and "value_guessed" in r.json()["error"]["message"]


def test_a_redacted_amount_goes_whole_with_its_currency_sign(client, placeholder):
    """Through the server: a wrong total is redacted as one value, its currency sign,
    thousands separator and cents with it, never "$[unsupported].50" or "£[unsupported]"."""
    if placeholder:
        pytest.skip("needs the trained default model")
    answer = ["Booking KX-4471 is in Lisbon. ", "Together the two rooms come to $6,970.50. ",
              "Ana Ruiz pays £129 a night. "]
    text, g = stream_tool_turn(client, "What do the two rooms cost?", "booking", ROOMS_TOOL,
                               "".join(answer), REDACT_ALL)
    total = g["sentences"][1]
    assert total["action"] == "redact"
    assert total["released"] == "Together the two rooms come to [unsupported]. "
    assert not re.search(r"[$£]\s?\[unsupported\]|\[unsupported\][.,]?\d|\d[.,]\[unsupported", text)


ORDER_TOOL = json.dumps({"order_id": "A-1042", "status": "shipped", "items": [
    {"sku": "KB-201", "name": "Mechanical keyboard", "qty": 1, "price_eur": 129.9},
    {"sku": "MS-88", "name": "Wireless mouse", "qty": 2, "price_eur": 60.0}],
    "total_eur": 249.9})


def test_a_total_the_tool_states_otherwise_is_redacted_by_default(client, placeholder):
    """Through the server, default policy: "The total came to 429 EUR." against
    ``total_eur: 249.9`` says the tool's total otherwise and is redacted (the demo's
    example); the same wrong sum said of the items together is marked, not redacted."""
    if placeholder:
        pytest.skip("needs the trained default model")
    head = "Order A-1042 has shipped. "
    text, g = stream_tool_turn(client, "What is the status of order A-1042?", "get_order",
                               ORDER_TOOL, head + "The total came to 429 EUR.")
    total = g["sentences"][1]
    assert total["action"] == "redact" and "429" not in text
    assert total["explanation"]["basis"] == "value_missing"
    items = "The keyboard and the two mice together come to 289.90 EUR."
    text, g = stream_tool_turn(client, "What is the status of order A-1042?", "get_order",
                               ORDER_TOOL, head + items)
    summed = g["sentences"][1]
    assert summed["action"] == "annotate" and text == head + items
    assert summed["explanation"]["basis"] == "value_worked_out"


def test_a_value_beside_the_quantities_it_is_worked_from_is_marked_by_default(client,
                                                                             placeholder):
    """Through the server, default policy: a price the tool result lacks, in a sentence that
    states the prices it holds beside it (its operands, no cue word), rests on
    ``value_worked_out`` and is sent as written, marked; the same price beside a date alone
    is a value missing and redacted; with ``by_basis: {}`` both are redacted."""
    if placeholder:
        pytest.skip("needs the trained default model")
    tickets = json.dumps({"show": "Harbour Lights", "date": "2025-08-14",
                          "prices": {"adult_usd": 30, "child_usd": 20}, "seats_left": 12})
    head = "Harbour Lights has 12 seats left. "
    worked = "Two adult tickets at $30 and one child ticket at $20 are $85 for the three of you."
    text, g = stream_tool_turn(client, "What would three tickets cost?", "tickets", tickets,
                               head + worked)
    marked = g["sentences"][1]
    assert marked["action"] == "annotate" and text == head + worked, marked
    assert marked["explanation"]["basis"] == "value_worked_out"
    text, g = stream_tool_turn(client, "What would three tickets cost?", "tickets", tickets,
                               head + worked, REDACT_ALL)
    assert g["sentences"][1]["action"] == "redact" and "$85" not in text
    dated = "The show on August 14 costs $85 a ticket."
    text, g = stream_tool_turn(client, "What would three tickets cost?", "tickets", tickets,
                               head + dated)
    plain = g["sentences"][1]
    assert plain["action"] == "redact" and "$85" not in text, plain
    assert plain["explanation"]["basis"] == "value_missing"


TRAIL_TOOL = json.dumps([
    {"title": "Harrowdown Ridge Loop | Refillready", "snippet": "Harrowdown Ridge Loop — Trail "
     "id: TR22123 · Region: Mardale Uplands · Start town: Elsinby · Parking fee: 2050 VND · "
     "Length (km): 15.9 · Ascent (m): 1178 · Moving time: 255",
     "url": "https://refillready.health/harrowdown-ridge-loop"},
    {"title": "Harrowdown Ridge Loop | Gigstub", "snippet": "Harrowdown Ridge Loop — Dogs "
     "welcome: yes · Circular: no · Sights: a ruined chapel, a waterfall, a heather moor · "
     "Footfall change (%): -4.3 · Surveyed on: 2025-05-27 · Trail rating: 4.5",
     "url": "https://gigstub.live/harrowdown-ridge-loop"}])


def test_another_records_value_is_marked_by_default_against_a_tool_result(client,
                                                                          placeholder):
    """Through the server: a correct sentence flagged on ``other_record`` (its start town
    stands in the first search result, its record read as the second) is sent as written
    and marked by default; ``by_basis: {}`` redacts it."""
    if placeholder:
        pytest.skip("needs the trained default model")
    answer = ("Walkers on the Harrowdown Ridge Loop are down 4.3% on last season. "
              "It sets off from Elsinby.")
    text, g = stream_tool_turn(client, "How hard is the Harrowdown Ridge Loop?", "search",
                               TRAIL_TOOL, answer)
    start = g["sentences"][-1]
    assert start["explanation"] and start["explanation"]["basis"] == "other_record", start
    assert start["action"] == "annotate" and text == answer
    text, g = stream_tool_turn(client, "How hard is the Harrowdown Ridge Loop?", "search",
                               TRAIL_TOOL, answer, REDACT_ALL)
    assert g["sentences"][-1]["action"] == "redact" and "Elsinby" not in text


def test_advice_to_check_passes_verbatim_without_a_check(client, placeholder):
    """Through the server: a closing "Double-check with the provider ..." makes no claim;
    it reaches the client as written and no check reads it (the generated holdout
    family's default stopped 11 of them)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    advice = "Double-check with the provider before relying on these values."
    text, g = stream_tool_turn(client, "What do the two rooms cost?", "booking", ROOMS_TOOL,
                               ROOMS_ANSWER[0] + advice)
    last = g["sentences"][-1]
    assert last["claim"] is False and last["checked"] is False and last["action"] == "release"
    assert text.endswith(advice)


def test_sdk_sees_upstream_errors_and_unreachable(client, detector):
    with pytest.raises(openai.RateLimitError, match="slow down"):
        client.chat.completions.create(model="fake-llm", messages=MESSAGES, extra_body={
            "fake": {"mode": "error", "status": 429, "message": "slow down"}})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with serve(create_app(config(f"http://127.0.0.1:{port}"), detector=detector)) as p:
        with openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0) as c:
            with pytest.raises(openai.InternalServerError) as e:
                c.chat.completions.create(model="fake-llm", messages=MESSAGES)
    assert e.value.status_code == 502


@pytest.mark.parametrize("mode", ["cut", "malformed"])
def test_broken_stream_leaks_nothing_unchecked(client, mode):
    got = []
    with pytest.raises(openai.APIError, match="upstream"):
        for c in client.chat.completions.create(
                model="fake-llm", messages=MESSAGES, stream=True,
                extra_body={"fake": {"mode": mode, "after": 14},
                            "guardrail": {"policy": {"threshold": 1.0}}}):
            got.append(c.choices[0].delta.content or "" if c.choices else "")
    # 14 pieces reach into sentence 2: only the finished, checked sentence 1 got out
    assert "".join(got) == "The Eiffel Tower is a wrought-iron lattice tower in Paris. "


def test_client_disconnect_cancels_upstream(proxy, fake_upstream):
    with httpx.Client(timeout=60) as c:
        with c.stream("POST", proxy.url + "/v1/chat/completions", json={
                "model": "fake-llm", "stream": True, "messages": MESSAGES,
                "fake": {"mode": "hang", "after": 14}}) as r:
            assert next(r.iter_lines()).startswith("data: ")
    call = fake_upstream.app.state.log[-1]
    deadline = time.monotonic() + 30
    while not call.cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    assert call.cancelled and not call.finished


def test_local_engine_is_the_one_at_a_time_baseline(fake_upstream_server, fake_upstream,
                                                     detector):
    cfg = config(fake_upstream_server.url,  # every sentence checked, none settled
                 verification={"engine": "local", "settle_restated": False},
                 scheduler={"in_flight_exit": 6})
    with serve(create_app(cfg, detector=detector)) as p:
        info = httpx.get(p.url + "/healthz").json()["verifier"]
        assert (info["scheduler"], info["shallow_exit_layer"]) == ("local", 6)
        cid = httpx.put(p.url + "/v1/contexts", json={"documents": [EIFFEL_TOOL]}).json()
        assert "tokens" not in cid  # nothing to warm: LocalVerifier has no context cache
        with openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0) as c:
            chunks = list(c.chat.completions.create(
                model="fake-llm", stream=True, messages=[{"role": "user", "content": QUESTION}],
                extra_body={"guardrail": {"context_id": cid["context_id"],
                                          "policy": {"threshold": 1.0}}}))
        g = chunks[-1].model_extra["guardrail"]
        assert [s["exit_layer"] for s in g["sentences"]] == [6, 6, 6]
        assert "".join(s["original"] for s in g["sentences"]) == EIFFEL_ANSWER
        assert "guardrail_scheduler_batch_size" not in httpx.get(p.url + "/metrics").text


EIFFEL_JSON = json.dumps({"name": "Eiffel Tower", "type": "wrought-iron lattice tower",
                          "city": "Paris", "construction": {"start": 1887, "end": 1889},
                          "builder": "company of Gustave Eiffel", "height_m": 330})


def test_each_flag_is_explained_and_a_json_tool_result_grounds_like_prose(client, placeholder):
    """Through the server with the shipped model and its sentence judge: the flagged
    sentence says why, the supported ones pass verbatim and unexplained, and the same
    facts as a JSON tool result give the same verdicts."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    for tool in (EIFFEL_TOOL, EIFFEL_JSON):
        messages = MESSAGES[:2] + [{**MESSAGES[2], "content": tool}]
        chunks = list(client.chat.completions.create(model="fake-llm", messages=messages,
                                                     stream=True))
        g = next(c.model_extra["guardrail"] for c in chunks
                 if "guardrail" in (c.model_extra or {}))
        first, built, tall = g["sentences"]
        assert [s["action"] for s in g["sentences"]] == ["release", "redact", "release"], tool
        assert first["released"] == first["original"] and tall["released"] == tall["original"]
        for s in (first, tall):  # explained only if the end-of-stream pass flags it
            assert (s["explanation"] is None) is (not s["final"]["hallucinated"]), (tool, s)
        assert built["explanation"]["kind"] in ("contradicted", "unverifiable")
        assert built["explanation"]["severity"] in ("low", "medium", "high")


EVENTS_TOOL = json.dumps([
    {"summary": "Budget Check-in", "starts_at": "2025-03-23T13:00:00+12:00",
     "room": "Kauri Room", "organizer": "Mei Chen",
     "attendees": ["Yuki Nguyen", "Kofi Watanabe", "Ibrahim Lim"]},
    {"summary": "Hiring Committee", "starts_at": "2025-06-06T19:45:00+12:00",
     "room": "Level 12 Boardroom", "organizer": "Ananya Okafor",
     "attendees": ["Aiko Tanaka", "Tane Iyer"]}])
EVENTS_SUPPORTED = ["The lookup returned two events. ",
                    "The Budget Check-in starts at 1 PM on March 23. ",
                    "Three people are invited to it. ",
                    "The Hiring Committee starts at 7:45 PM. "]
EVENTS_CHANGED = "It is organized by Mei Chen."  # Mei Chen organizes the other event


def last_sentence_stopped(client, question: str, tool: str, result: str,
                          supported: list[str], changed: str) -> dict:
    """Stream ``supported`` sentences then ``changed`` against a tool result: every
    supported one reaches the client verbatim, the changed one does not; its final
    guardrail entry."""
    text, g = stream_tool_turn(client, question, tool, result, "".join(supported) + changed)
    for s in g["sentences"][:-1]:
        assert s["action"] == "release" and s["released"] == s["original"], s
    bad = g["sentences"][-1]
    assert bad["action"] != "release" and changed not in text, bad
    return bad


# every flag redacted: the default marks a value a sentence says it worked out and no
# rule reproduces (test_a_flag_names_its_basis_and_the_policy_acts_on_it); tests of what
# the rules catch ask for this policy
REDACT_ALL = {"by_basis": {}}


def stream_tool_turn(client, question: str, tool: str, result: str, answer: str,
                     policy: dict | None = None) -> tuple[str, dict]:
    """One turn grounded in a tool call's result, the upstream streaming ``answer``
    (under the request's ``policy``, if any): what the client received and the final
    guardrail object."""
    messages = [{"role": "user", "content": question},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": tool, "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": result}]
    body = {"fake": {"mode": "raw", "events": chat_events(answer)}}
    if policy is not None:
        body["guardrail"] = {"policy": policy}
    text, g, _ = stream_answer(client, messages, extra_body=body)
    return text, g


def verbatim_then_changed(client, question: str, tool: str, result: str, right: str,
                          old: str, new: str) -> tuple[str, dict]:
    """Stream ``right``, which must reach the client verbatim, sentence by sentence, with
    the default policy; then the same answer with ``old`` replaced by ``new`` under
    ``REDACT_ALL``: what the client received of that."""
    text, g = stream_tool_turn(client, question, tool, result, right)
    assert text == right and all(s["released"] == s["original"] for s in g["sentences"])
    return stream_tool_turn(client, question, tool, result, right.replace(old, new),
                            REDACT_ALL)


FLIGHT_TOOL = json.dumps({"flight_no": "SK701", "airline": "SAS", "terminal": "5",
                          "seats_left": 22, "refundable": False,
                          "checked_bag_included": False,
                          "departure_time": "2024-02-03T11:10:00Z"})
FLIGHT_SUPPORTED = ["Flight SK701 is operated by SAS. ",
                    "It leaves from Terminal 5 at 11:10 AM. ",
                    "The ticket is non-refundable. "]
FLIGHT_CHANGED = "It includes a checked bag."  # checked_bag_included: false


def test_a_field_given_another_value_is_stopped_with_its_line(client, placeholder):
    """The shipped judge through the real server: a field of a tool result stated as the
    result has it is released verbatim (a false flag said with "non-"); the same kind of
    field stated the other way round is stopped as a contradiction whose evidence is the
    field's line (the previous judge released it)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    text, g = stream_tool_turn(client, "Tell me about flight SK701.", "flight", FLIGHT_TOOL,
                               "".join(FLIGHT_SUPPORTED) + FLIGHT_CHANGED)
    for s in g["sentences"][:-1]:
        assert s["action"] == "release" and s["released"] == s["original"], s
    changed = g["sentences"][-1]
    assert changed["original"] == FLIGHT_CHANGED and changed["action"] != "release", changed
    assert changed["explanation"]["kind"] == "contradicted"
    assert "checked bag included: false" in changed["explanation"]["evidence"]
    assert text.startswith("".join(FLIGHT_SUPPORTED)) and FLIGHT_CHANGED not in text


def test_tool_values_are_read_as_answers_write_them(client, placeholder):
    """The shipped judge through the real server: a time in words against an ISO
    date-time, a count of records and of a list, a pronoun about the record before it,
    all released verbatim; a name that belongs to the other record is stopped as a
    contradiction."""
    if placeholder:
        pytest.skip("needs the trained default model")
    text, g = stream_tool_turn(client, "What is on the calendar?", "calendar", EVENTS_TOOL,
                               "".join(EVENTS_SUPPORTED) + EVENTS_CHANGED)
    assert [s["original"] for s in g["sentences"]] == [*EVENTS_SUPPORTED, EVENTS_CHANGED]
    for s in g["sentences"][:-1]:
        assert s["action"] == "release" and s["released"] == s["original"], s
    changed = g["sentences"][-1]
    assert changed["action"] != "release" and "Mei Chen" not in changed["released"], changed
    assert changed["explanation"]["kind"] == "contradicted"
    assert text.startswith("".join(EVENTS_SUPPORTED)) and "Mei Chen" not in text


TOWER_PROSE = "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall."
TOWER_SUPPORTED = "The Eiffel Tower is in Paris. "
TOWER_CAVEAT = " These figures come from the tool and could be out of date."
RENT_TOOL = json.dumps({"listing_code": "APT277438", "building": "Juhu Seaview Court",
                        "rent_change_pct": -10.2, "bedrooms": 4})
RENT_SUPPORTED = "The asking rent at Juhu Seaview Court is down 10.2 percent on last year."


@pytest.mark.parametrize("changed", ["It was completed in 1950.", "It is 500 metres tall."])
def test_a_value_its_line_states_otherwise_is_stopped_and_caveats_pass(client, placeholder,
                                                                       changed):
    """The shipped judge through the real server, on a prose tool result: one changed
    value (the judge's weights alone released it) is stopped as a contradiction pointing
    at its line; the supported sentence and a caveat about the data (no claim, no check)
    pass verbatim; a negative value written as its size is supported."""
    if placeholder:
        pytest.skip("needs the trained default model")
    text, g = stream_tool_turn(client, "Tell me about the Eiffel Tower.", "lookup",
                               TOWER_PROSE, TOWER_SUPPORTED + changed + TOWER_CAVEAT)
    first, bad, caveat = g["sentences"]
    assert first["action"] == "release" and first["released"] == first["original"]
    assert bad["action"] != "release" and changed not in text, bad
    assert bad["explanation"] == {"kind": "contradicted", "severity": "high",
                                  "evidence": "It was completed in 1889 and is 330 metres tall.",
                                  "basis": "value_changed", "grounding": "prose"}
    assert caveat["claim"] is False and caveat["checked"] is False
    assert text.startswith(TOWER_SUPPORTED) and text.endswith(TOWER_CAVEAT)
    text, g = stream_tool_turn(client, "How has the rent changed?", "listing", RENT_TOOL,
                               RENT_SUPPORTED)
    assert text == RENT_SUPPORTED and g["sentences"][0]["action"] == "release", g


CHARGES_TOOL = json.dumps([
    {"txn_ref": "TXN75280238", "merchant": "Livraria Ipê",
     "charged": {"amt": 869.3, "ccy": "BRL"}},
    {"txn_ref": "TXN99297636", "merchant": "Taquería El Faro",
     "charged": {"amt": 120.0, "ccy": "MXN"}}])
FILMS_TOOL = json.dumps([{"film_title": "Copper Sky", "release_year": 2003},
                         {"film_title": "Paper Kites", "release_year": 1974},
                         {"film_title": "Harvest of Stars", "release_year": 1987}])


@pytest.mark.parametrize("tool,result,question,supported,changed,line", [
    ("transactions", CHARGES_TOOL, "What did I spend at Livraria Ipê?",
     "Transaction TXN75280238 was for 869.30 Brazilian reais.",
     "Transaction TXN75280238 was for 869.30 rand.", "item 1 > charged > ccy: BRL"),
    ("films", FILMS_TOOL, "When did Paper Kites come out?", "Paper Kites came out in 1974.",
     "Paper Kites came out in 1987.", "item 2 > release year: 1974"),
])
def test_another_currency_or_another_records_value_is_stopped(client, placeholder, tool, result,
                                                              question, supported, changed,
                                                              line):
    """Through the real server, on JSON tool results: an amount given in a currency its
    record does not hold, and a record given another record's year, are stopped as
    contradictions pointing at the record's own line; the right answers pass verbatim."""
    if placeholder:
        pytest.skip("needs the trained default model")
    text, g = stream_tool_turn(client, question, tool, result, supported)
    assert text == supported and g["sentences"][0]["action"] == "release", g
    text, g = stream_tool_turn(client, question, tool, result, changed)
    bad = g["sentences"][0]
    assert bad["action"] != "release" and changed not in text, bad
    assert bad["explanation"]["kind"] == "contradicted" and bad["explanation"]["evidence"] == line


TOWER_TOOL = json.dumps({"name": "Eiffel Tower", "height_m": 330, "weight_tonnes": 7300,
                         "forecast": {"high_c": 25}})
TOWER_CONVERTED = ["The Eiffel Tower is about 1,083 feet tall. ",
                   "It weighs about 16 million pounds. ",
                   "The forecast high is 77 degrees Fahrenheit. "]
PLAN_TOOL = json.dumps({"plan": "Pro", "seats": 5, "seats_used": 3, "monthly_price_usd": 49})
PLAN_WORKED_OUT = "You have 5 seats and 3 are in use, so 2 are still free. " \
                  "It costs $49 a month, or $588 a year."


@pytest.mark.parametrize("changed,line", [("It is 330 feet tall.", "height m: 330"),
                                          ("It weighs 7,300 kilograms.", "weight tonnes: 7300")])
def test_a_converted_value_passes_and_another_unit_is_stopped(client, placeholder, changed,
                                                              line):
    """Through the real server, on a JSON tool result: values converted to other units and
    values worked out from the result (a difference the sentence states, a yearly rate)
    pass verbatim; the right number in another unit is stopped as a contradiction pointing
    at its field."""
    if placeholder:
        pytest.skip("needs the trained default model")
    bad = last_sentence_stopped(client, "Tell me about the tower.", "lookup", TOWER_TOOL,
                                TOWER_CONVERTED, changed)
    assert bad["explanation"]["kind"] == "contradicted" and bad["explanation"]["evidence"] == line
    text, g = stream_tool_turn(client, "What's my plan?", "account", PLAN_TOOL, PLAN_WORKED_OUT)
    assert text == PLAN_WORKED_OUT, g


SHOP_TOOL = json.dumps({"name": "Cafe Luna", "open_now": False, "in_stock": False,
                        "next_delivery": "2025-03-07T08:25:00Z"})
SHOP_SUPPORTED = ["Cafe Luna is currently closed. ", "The beans are sold out. ",
                  "The next delivery is on Friday, March 7. "]


@pytest.mark.parametrize("changed", ["Cafe Luna is open now.",
                                     "The next delivery is on Thursday, March 7."])
def test_yes_no_fields_in_other_words_and_a_wrong_weekday(client, placeholder, changed):
    """Through the real server: yes/no fields said with an opposite ("closed", "sold out")
    and a weekday the date falls on pass verbatim; the field said the other way round and a
    weekday the date does not fall on are stopped as contradictions."""
    if placeholder:
        pytest.skip("needs the trained default model")
    bad = last_sentence_stopped(client, "Can I get coffee at Cafe Luna?", "shop", SHOP_TOOL,
                                SHOP_SUPPORTED, changed)
    assert bad["explanation"]["kind"] == "contradicted"


INVOICES_TOOL = json.dumps({"customer": "Brightline Studio", "invoices": [
    {"number": "INV-0412", "due": "2025-05-01", "amount_due_cents": 480000, "status": "paid"},
    {"number": "INV-0517", "due": "2025-05-31", "amount_due_cents": 480000, "status": "open"},
    {"number": "INV-0533", "due": "2025-06-14", "amount_due_cents": 126550,
     "status": "open"}]})
INVOICES_SUPPORTED = ["Brightline Studio has two open invoices totaling $6,065.50. ",
                      "INV-0533 for $1,265.50 isn't due until Saturday, June 14. ",
                      "Let me know if you'd like me to send a reminder. "]


@pytest.mark.parametrize("changed", ["INV-0533 for $1,265.50 is due on May 31.",
                                     "INV-0412 is still open."])
def test_cents_totals_and_offers_pass_and_a_swapped_date_or_state_is_stopped(
        client, placeholder, changed):
    """Through the real server: amounts a tool result keeps in cents, a total over the
    records the sentence counts and an offer to do more pass verbatim; another invoice's
    due date, and a paid invoice said to be open, are stopped as contradictions."""
    if placeholder:
        pytest.skip("needs the trained default model")
    bad = last_sentence_stopped(client, "Do we owe Brightline anything?", "billing",
                                INVOICES_TOOL, INVOICES_SUPPORTED, changed)
    assert bad["explanation"]["kind"] == "contradicted"


QUERY_TOOL = json.dumps({
    "statement": "SELECT c.name, COUNT(o.id) AS orders, SUM(o.total_cents) AS revenue_cents "
                 "FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.name",
    "columns": [{"name": "name", "type": "text"}, {"name": "orders", "type": "int8"},
                {"name": "revenue_cents", "type": "numeric"}],
    "rows": [["Northwind Traders", 42, 1843250], ["Bluepeak Outfitters", 17, 1290000],
             ["Kessler GmbH", 31, 1102475]],
    "row_count": 3, "duration_ms": 214})
QUERY_SUPPORTED = ["Northwind Traders led with $18,432.50 across 42 orders. ",
                   "Bluepeak Outfitters brought in $12,900.00 from just 17 orders. "]


@pytest.mark.parametrize("changed", ["Kessler GmbH brought in $12,900.00 from 31 orders.",
                                     "Kessler GmbH brought in $11,024.75 from 17 orders."])
def test_query_rows_pass_by_their_columns_and_another_rows_value_is_stopped(
        client, placeholder, changed):
    """Through the real server: a SQL tool's rows, read by their column names (revenue in
    cents said in dollars), pass verbatim; a row given another row's revenue or order
    count is stopped as a contradiction."""
    if placeholder:
        pytest.skip("needs the trained default model")
    bad = last_sentence_stopped(client, "Who were our top customers last quarter?", "sql",
                                QUERY_TOOL, QUERY_SUPPORTED, changed)
    assert bad["explanation"]["kind"] == "contradicted"


PAYOUTS_TOOL = json.dumps({"object": "list", "url": "/v1/payouts", "has_more": False, "data": [
    {"id": "po_1PqA8xLk", "object": "payout", "amount": 482315, "currency": "usd",
     "arrival_date": "2025-09-02", "status": "paid", "bank_last4": "6789"},
    {"id": "po_1PqB2mTr", "object": "payout", "amount": 129050, "currency": "usd",
     "arrival_date": "2025-09-04", "status": "in_transit", "bank_last4": "6789"},
    {"id": "po_1PqC9wQe", "object": "payout", "amount": 75000, "currency": "usd",
     "arrival_date": "2025-08-29", "status": "failed", "bank_last4": "1122",
     "failure_code": "account_closed"}]})
PAYOUTS_SUPPORTED = ["Your payout of $4,823.15 landed on September 2. ",
                     "Another $1,290.50 is in transit and due to arrive on September 4. ",
                     "Want me to retry the failed one to the account ending 6789 instead? "]


@pytest.mark.parametrize("changed", ["The failed payout was for $850.00.",
                                     "Your payout of $4,832.15 landed on September 2."])
def test_amounts_in_minor_units_and_an_offer_pass_and_a_changed_amount_is_stopped(
        client, placeholder, changed):
    """Through the real server: a payments tool that writes amounts in cents beside a
    lower-case currency code (as Stripe does) is read in dollars, and an offer asked as a
    question is no claim; all pass verbatim. A changed amount is stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    bad = last_sentence_stopped(client, "Where are my payouts?", "list_payouts", PAYOUTS_TOOL,
                                PAYOUTS_SUPPORTED, changed)
    assert bad["explanation"]["kind"] in ("contradicted", "unverifiable")


def test_a_restated_line_and_a_next_step_pass_and_a_wrong_city_goes_whole(client, placeholder):
    """Through the server: a preamble before the answer passes unchecked, a sentence that
    says a line of the prose grounding again reaches the client verbatim (observed
    before: "The Eiffel Tower is [unsupported] Paris."), and a wrong city is replaced
    as a whole sentence or a clean span, never around a function word."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    prose = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
             "Paris, France. It was completed in 1889 and is 330 metres tall.")
    said = ["I'll look up the tower now. ", "The Eiffel Tower is in Paris. "]
    wrong = "The Eiffel Tower is in Rome."
    text, g = stream_tool_turn(client, "Where is the Eiffel Tower?", "search", prose,
                               "".join(said) + wrong)
    step, where, bad = g["sentences"]
    assert step["claim"] is False and step["released"] == step["original"]
    assert where["action"] == "release" and where["released"] == where["original"]
    assert where["score"] == 0.0 and not where["final"]["hallucinated"]
    assert text.startswith("".join(said)) and wrong not in text
    assert bad["explanation"] and bad["released"] in ("[unsupported]",
                                                      "The Eiffel Tower is in [unsupported].")


def test_a_grounding_with_carriage_returns_is_checked(client, placeholder):
    """Through the server: a prose tool result holding a bare carriage return inside a
    line is checked like any other (every check of it failed before, and the sentences
    went out unchecked as "failed open"); a wrong year is still stopped."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    prose = ("The Eiffel Tower is a wrought-iron lattice tower in Paris, France.\r\n"
             "It was completed in 1889,\rand it is 330 metres tall.\r\n"
             "It was designed by the company of Gustave Eiffel.\r\n")
    right = "The Eiffel Tower is in Paris. It was completed in 1889."
    text, g = stream_tool_turn(client, "When was the tower built?", "search", prose, right)
    assert not g.get("errors") and all(s["checked"] for s in g["sentences"])
    assert text == right
    wrong = right.replace("1889", "1950")
    text, g = stream_tool_turn(client, "When was the tower built?", "search", prose, wrong)
    assert not g.get("errors") and "1950" not in text


def test_a_sentence_the_grounding_says_again_is_released_without_a_check(client, proxy):
    """Through the server with the shipped judge: the judge's evidence is built as the
    stream starts, so a later sentence that says a line of the grounding again is
    released verbatim with no model call (no exit layer, counted on /metrics), while
    the sentence before it is checked."""
    prose = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed in "
             "1889 for the World's Fair. It is 330 metres tall.")
    answer = "The tower went up for the World's Fair of 1889. It is 330 metres tall."

    def settled() -> float:
        line = next(x for x in httpx.get(proxy.url + "/metrics").text.splitlines()
                    if x.startswith("guardrail_sentences_settled_total "))
        return float(line.split()[1])

    before = settled()
    messages = [{"role": "user", "content": "When was it built?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "search", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": prose}]
    text, g, _ = stream_answer(client, messages, extra_body={"fake": {
        "mode": "raw", "events": chat_events(answer), "delay": 0.02}})
    first, again = g["sentences"]
    assert text == answer and first["exit_layer"] == 4
    assert again["exit_layer"] is None and again["checked"] and again["score"] == 0.0
    assert again["released"] == again["original"] and again["final"] is not None
    assert settled() == before + 1


LABS_TOOL = json.dumps({"panel": "CMP", "results": [
    {"analyte": "Glucose", "value": 112, "unit": "mg/dL", "flag": "H"},
    {"analyte": "BUN", "value": 14, "unit": "mg/dL", "flag": None},
    {"analyte": "Creatinine", "value": 0.91, "unit": "mg/dL", "flag": None},
    {"analyte": "eGFR", "value": 81, "unit": "mL/min", "flag": None},
    {"analyte": "Potassium", "value": 5.4, "unit": "mmol/L", "flag": "H"}]})


def test_two_records_named_by_label_pass_and_their_values_swapped_are_stopped(client,
                                                                               placeholder):
    """Through the server: a sentence naming two records by their lower-case labels
    ("creatinine", "eGFR") reaches the client verbatim; the same sentence with the two
    values swapped is stopped as a contradiction (released before: score 0.22)."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    right = ("Your glucose was 112 mg/dL, flagged high. Your kidney markers look normal, "
             "with creatinine at 0.91 mg/dL and an eGFR of 81.")
    text, g = stream_tool_turn(client, "How are my labs?", "labs", LABS_TOOL, right)
    assert text == right and all(s["released"] == s["original"] for s in g["sentences"])
    swapped = right.replace("0.91 mg/dL", "81 mg/dL").replace("eGFR of 81", "eGFR of 0.91")
    text, g = stream_tool_turn(client, "How are my labs?", "labs", LABS_TOOL, swapped)
    first, second = g["sentences"]
    assert first["released"] == first["original"]
    assert second["released"] != second["original"] and "81 mg/dL" not in text
    assert second["explanation"]["kind"] == "contradicted"
    assert second["explanation"]["severity"] == "high"


def test_an_address_ending_a_sentence_is_its_own_sentence_through_the_server(client,
                                                                               placeholder):
    """Through the server: "Denver, CO." and "410 N 7th St." end their sentences, so the
    correct one before a wrong one is checked alone and reaches the client verbatim
    (before, the two were one sentence, stopped together)."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    result = json.dumps({"warehouse": {"city": "Denver", "state": "CO",
                                       "address": "410 N 7th St"},
                         "box": {"weight_kg": 4, "pickup": "2024-05-03"}})
    answer = "It ships from our warehouse in Denver, CO. The box weighs 9 kg."
    text, g = stream_tool_turn(client, "Where does it ship from?", "shipment", result, answer)
    first, second = g["sentences"]
    assert first["original"] == "It ships from our warehouse in Denver, CO. "
    assert first["released"] == first["original"] and text.startswith(first["original"])
    assert second["released"] != second["original"] and "9 kg" not in text


SOLAR_CSV = ("date,energy_wh,export_wh,peak_w\n"
             "2024-06-10,41230,19130,6980\n2024-06-11,38760,17240,6810\n"
             "2024-06-12,22410,6980,4120\n2024-06-13,44870,23650,7410\n"
             "2024-06-14,45120,24310,7600\n2024-06-15,39980,18870,7020\n"
             "2024-06-16,30050,11420,5590\n")


def test_a_total_over_a_csv_results_rows_passes_and_a_changed_total_is_stopped(client,
                                                                                placeholder):
    """Through the server: a CSV tool result is read as records, and a key added up over
    them without "total" (262,420 Wh as "about 262.4 kWh") reaches the client verbatim;
    the same sentence with another total is stopped (released before: CSV was text)."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    right = ("Here is your week. Over the week your panels produced about 262.4 kWh, and "
             "121.6 kWh of it went out to the grid.")
    text, g = verbatim_then_changed(client, "How did my solar do last week?", "solar_week",
                                    SOLAR_CSV, right, "262.4", "282.4")
    first, second = g["sentences"]
    assert first["released"] == first["original"]
    assert second["released"] != second["original"] and "282.4" not in text


STAMPS_CSV = ("catalog_no,country,year,qty,catalog_value_each_usd,paid_each_usd\n"
              "SG 1,Great Britain,1840,1,425.00,310.00\nSG 2,Great Britain,1840,1,780.00,520.00\n"
              "Scott 11,United States,1851,2,95.00,60.00\n"
              "Scott 65,United States,1861,4,12.50,6.00\n"
              "SG 33,Canada,1859,1,140.00,115.00\n")


def test_an_itemised_bill_and_a_total_of_quantity_times_price_pass_and_changed_ones_stop(
        client, placeholder):
    """Through the server: a value the tool result lacks, worked out as the answer shows
    (a bill's parts adding up to its total) or over each record's quantity times its
    amount each, reaches the client verbatim; the same sentence with a changed value is
    stopped (both were stopped before as values the result lacks)."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    right = ("Your stamps have a combined catalogue value of $1,585, and you paid $1,089 for "
             "them.")
    text, g = verbatim_then_changed(client, "What is my stamp collection worth?", "stamps",
                                    STAMPS_CSV, right, "$1,585", "$1,685")
    assert "$1,685" not in text
    bill = json.dumps({"job": "LK-20931", "keys_cut": 3, "callout_fee_usd": 95.0,
                       "after_hours_surcharge_usd": 45.0, "labor_usd": 60.0,
                       "total_usd": 213.5, "payment_status": "paid"})
    right = ("The bill came to $213.50: a $95 call-out fee, a $45 after-hours surcharge, $60 "
             "for labor and $13.50 for the keys.")
    text, g = stream_tool_turn(client, "What did the locksmith cost?", "job", bill, right)
    assert text == right
    text, g = stream_tool_turn(client, "What did the locksmith cost?", "job", bill,
                               right.replace("$13.50", "$18.50"), REDACT_ALL)
    assert "$18.50" not in text


def test_a_finishing_time_changed_in_its_seconds_is_stopped(client, placeholder):
    """Through the server: a time is read to the second where the tool result writes
    seconds. "3:17:44" for ``chip_time: 3:17:14`` was released before (the seconds were
    dropped); the right time, and the start-line delay worked out between two times,
    pass verbatim."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    race = json.dumps({"event": "Twin Cities Marathon", "runner": "Daniel Whitcomb",
                       "chip_time": "3:17:14", "gun_time": "3:19:32", "overall_place": 612})
    right = ("Daniel Whitcomb finished the Twin Cities Marathon in a chip time of 3:17:14. "
             "His gun time was 3:19:32, so it took him 2 minutes 18 seconds to reach the "
             "start line.")
    text, g = verbatim_then_changed(client, "How did Daniel do?", "race_result", race, right,
                                    "3:17:14", "3:17:44")
    assert "3:17:44" not in text and g["sentences"][0]["released"] != g["sentences"][0]["original"]


def test_nights_a_count_times_a_price_and_an_elapsed_span_pass_and_changed_ones_stop(
        client, placeholder):
    """Through the server: nights between a booking's two dates, two places at a price
    per person, and a span a tool result writes as a clock value (``elapsed: 06:52``)
    were stopped before as values the result lacks; now they pass verbatim, and the
    same sentences with a changed value are stopped."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    hut = json.dumps({"ref": "HUT-3318", "hut": "Lindauer Hut", "check_in": "2025-07-14",
                      "check_out": "2025-07-17", "guests": [{"name": "Lena Hart"},
                                                             {"name": "Tom Hart"}],
                      "price_per_person_cents": 6400, "paid": True})
    right = ("Your booking at the Lindauer Hut runs from Monday, July 14 to Thursday, "
             "July 17. That gives you three nights in the mountains. Your two places came "
             "to $128 and are already paid.")
    for old, new in (("three nights", "four nights"), ("$128", "$138")):
        text, g = verbatim_then_changed(client, "What does my hut booking look like?",
                                        "hut_booking", hut, right, old, new)
        assert new not in text, g["sentences"]
    kiln = "kiln_id: KLN-1\nstatus: firing\nstarted_at: 2025-04-14 06:30\nelapsed: 06:52"
    right = ("Kiln KLN-1 is firing. It started at 6:30 AM and has been going for 6 hours "
             "and 52 minutes.")
    text, g = verbatim_then_changed(client, "How is the kiln doing?", "kiln_status", kiln,
                                    right, "52 minutes", "42 minutes")
    assert "42 minutes" not in text, g["sentences"]


def test_an_events_end_and_quantities_at_a_price_pass_and_changed_ones_stop(client,
                                                                             placeholder):
    """Through the server: a lesson's end (its start plus ``duration_min``) and skeins at a
    price each were stopped before as values the tool result lacks; now they pass
    verbatim, and the same sentences with a changed value are stopped."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    lesson = json.dumps({"booking_ref": "SL-55210", "school": "Salt & Swell Surf School",
                         "lesson": "Beginner group lesson", "date": "2025-07-26",
                         "start": "09:00", "duration_min": 120, "instructor": "Keoni Alana"})
    right = ("You're booked for a beginner group lesson with Salt & Swell Surf School on "
             "Saturday, July 26, from 9:00 to 11:00 AM. Your instructor is Keoni Alana.")
    text, g = verbatim_then_changed(client, "When is my surf lesson?", "surf_booking", lesson,
                                    right, "11:00 AM", "11:30 AM")
    assert "11:30" not in text, g["sentences"]
    yarn = json.dumps({"order": "YW-1182", "lines": [
        {"yarn": "Merino DK", "colour": "Foxglove", "skeins": 20, "price_each": 14.0},
        {"yarn": "Merino DK", "colour": "Low Tide", "skeins": 15, "price_each": 14.0}]})
    right = ("Your order YW-1182 has two Merino DK lines. The 20 skeins of Foxglove and 15 "
             "of Low Tide at $14 each come to $490.")
    text, g = verbatim_then_changed(client, "What does my yarn order cost?", "yarn_order",
                                    yarn, right, "$490", "$504")
    assert "$504" not in text, g["sentences"]


def test_a_state_said_of_a_group_passes_and_named_records_given_it_are_stopped(
        client, placeholder):
    """Through the server: "Four of the six candidates passed" was matched to a candidate
    who failed and stopped as a changed field before; now it reaches the client verbatim,
    while the two candidates who failed, named as having passed, are still stopped."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    grading = (Path(__file__).parent / "data" / "grading.json").read_text()
    right = "Four of the six candidates passed Saturday's grading on May 17."
    text, g = stream_tool_turn(client, "How did the grading go?", "grading_results", grading,
                               right)
    assert text == right, g["sentences"]
    text, g = stream_tool_turn(client, "How did the grading go?", "grading_results", grading,
                               right + " Owen Ruiz and Aarav Mehta both passed.")
    assert "Owen Ruiz and Aarav Mehta both passed" not in text, g["sentences"]


def test_a_total_kept_in_steps_passes_and_a_changed_step_is_stopped(client, placeholder):
    """Through the server: an order totalled across sentences ("... comes to $18.00.
    ... $18.00 on its own. With the $4.50 handling fee, the order totals $40.50.") was
    stopped at its last sentence before, as a value the tool result lacks; now it passes
    verbatim, and the same answer with a wrong total is stopped."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    order = json.dumps({"order": "SCN-30571", "paid": False, "lines": [
        {"item": "standard page scan", "qty": 24, "each_cents": 75},
        {"item": "oversize map scan", "qty": 1, "each_cents": 1800}], "handling_cents": 450})
    right = ("Your order SCN-30571 has 24 standard page scans at 75 cents each, which comes "
             "to $18.00. The oversize map scan is $18.00 on its own. With the $4.50 "
             "handling fee, the order totals $40.50.")
    text, g = verbatim_then_changed(client, "What does my scan order cost?", "scan_order",
                                    order, right, "$40.50", "$41.50")
    assert "$41.50" not in text, g["sentences"]


def test_a_next_due_date_and_a_groups_total_counted_as_a_part_pass_and_changed_ones_stop(
        client, placeholder):
    """Through the server: a date one interval after a record's last visit (``last_groom``
    plus ``rebook_interval_weeks``), and the total of a group the sentence counts as a part
    ("Two of your four claims were denied, totalling ...") were stopped before as values
    the tool result lacks; now they pass verbatim, and the same sentences with a changed
    value are stopped."""
    if placeholder:
        pytest.skip("the default model is still the untrained placeholder")
    salon = json.dumps({"salon": "Sudsy Paws", "as_of": "2025-06-30", "clients": [
        {"pet": "Rufus", "owner": "Tom Beck", "last_groom": "2025-04-28",
         "rebook_interval_weeks": 8, "next_booked": "2025-07-03"},
        {"pet": "Mochi", "owner": "Grace Lin", "last_groom": "2025-05-12",
         "rebook_interval_weeks": 6, "next_booked": None}]})
    right = ("Rufus was due for a groom on June 23. Tom Beck has him booked for Thursday, "
             "July 3.")
    text, g = verbatim_then_changed(client, "When is Rufus due?", "grooming_clients", salon,
                                    right, "June 23", "June 25")
    assert "June 25" not in text, g["sentences"]
    claims = json.dumps({"claims": [
        {"id": "CLM-1", "pet": "Rufus", "billed_cents": 28650, "status": "paid"},
        {"id": "CLM-2", "pet": "Rufus", "billed_cents": 14200, "status": "denied"},
        {"id": "CLM-3", "pet": "Hazel", "billed_cents": 41575, "status": "paid"},
        {"id": "CLM-4", "pet": "Hazel", "billed_cents": 19830, "status": "denied"}]})
    right = "Two of your four claims were denied, totalling $340.30 in billed charges."
    text, g = verbatim_then_changed(client, "Which claims were denied?", "pet_claims", claims,
                                    right, "$340.30", "$430.30")
    assert "$430.30" not in text, g["sentences"]


def test_a_rate_per_a_key_of_its_record_passes_and_a_wrong_one_is_marked(client, placeholder):
    """Through the server, default policy: "about 145 tonnes per hectare" where the plot
    holds 2,210 tonnes on 15.2 hectares is sent as written; "about 160", beside the
    right 211, rests on a value worked out and is marked (the default for that basis)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    plots = ("plot,hectares,tonnes\nNorth Flat,12.5,1820\nRidge,6.4,1350\n"
             "Creek Bend,15.2,2210\n")
    head = "Three plots were harvested. "
    right = "Per hectare, Ridge led with roughly 211 tonnes, compared with about 145 at Creek Bend."
    text, g = stream_tool_turn(client, "Which plot yielded best?", "plots", plots, head + right)
    assert text == head + right, g["sentences"]
    wrong = right.replace("145", "160")
    text, g = stream_tool_turn(client, "Which plot yielded best?", "plots", plots, head + wrong)
    flagged = g["sentences"][1]
    assert flagged["action"] == "annotate", g["sentences"]
    assert flagged["explanation"]["basis"] == "value_worked_out"


def test_a_concentration_and_a_pronouns_own_date_are_read_as_written(client, placeholder):
    """Through the server, default policy: "9.1 mg/L of dissolved oxygen" is the value of
    ``dissolved_oxygen_mg_l`` (no milligrams against litres), and "It ... on Thursday,
    June 5" speaks of June 5's check, not the day the sentence before named; each is sent
    as written (6422bf2 redacted the second as another record's value given to June 2).
    Another day's wind said of June 5 is still stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    raceway = ("raceway: R-03\nwater_temp_c: 11.8\ndissolved_oxygen_mg_l: 9.1\n"
               "flow_rate_l_per_s: 85\n")
    right = "The water is at 11.8 °C with 9.1 mg/L of dissolved oxygen."
    text, g = stream_tool_turn(client, "How is raceway R-03?", "raceway", raceway, right)
    assert text == right, g["sentences"]
    checks = json.dumps({"ride": "Sky Viper", "checks": [
        {"date": "2025-06-02", "max_wind_mph": 14, "weather_closure": False},
        {"date": "2025-06-05", "max_wind_mph": 41, "weather_closure": True},
        {"date": "2025-06-06", "max_wind_mph": 22, "weather_closure": False}]})
    answer = ("Sky Viper opened on two of the three days from Monday, June 2 to Friday, "
              "June 6. It stayed closed for weather on Thursday, June 5, when wind reached "
              "41 mph.")
    text, g = verbatim_then_changed(client, "Did Sky Viper close?", "ride_checks", checks,
                                    answer, "41 mph", "22 mph")
    wrong = g["sentences"][1]
    assert wrong["action"] == "redact" and wrong["released"] != wrong["original"], wrong
    assert wrong["explanation"]["kind"] == "contradicted", wrong


def test_a_nested_records_machine_and_a_rows_weekday_are_read_as_the_tool_writes_them(
        client, placeholder):
    """Through the server: a sentence about a machine's open fault (a record nested in the
    machine's) speaks of the machine too, so "out of service" for ``in_service: true`` is
    stopped, and a show given another row's weekday is stopped; the right answers go out
    verbatim (1b0b347 sent both changed sentences as written)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    machines = json.dumps({"network": "Metrolink South", "machines": [
        {"tvm_id": "TVM-0412", "stop": "St Peter's Square", "in_service": True,
         "open_faults": []},
        {"tvm_id": "TVM-0618", "stop": "Cornbrook", "in_service": True, "open_faults": [
            {"code": "E502", "desc": "card reader offline",
             "reported": "2025-11-18T22:40:00+00:00"}]},
        {"tvm_id": "TVM-0619", "stop": "Cornbrook", "in_service": False, "open_faults": []}]})
    right = ("TVM-0618 at Cornbrook is still in service, although its card reader went "
             "offline at 10:40 PM on November 18.")
    text, g = verbatim_then_changed(client, "Which machines have problems?", "machines",
                                    machines, right, "is still in service, although",
                                    "is out of service because")
    wrong = g["sentences"][0]
    assert wrong["action"] == "redact" and wrong["explanation"]["basis"] == "value_changed"
    grid = ("| Slot | Day | Start | End | Program | Presenter |\n|---|---|---|---|---|---|\n"
            "| 1 | Monday | 19:00 | 21:00 | Folk Roots | Declan Fry |\n"
            "| 2 | Wednesday | 20:00 | 22:00 | Basement Jazz | Otis Kamara |\n"
            "| 3 | Thursday | 13:00 | 14:00 | Council Matters | Ruth Ellery |")
    right = ("Basement Jazz, hosted by Otis Kamara, goes to air on Wednesday from 8:00 PM "
             "to 10:00 PM.")
    text, g = verbatim_then_changed(client, "When is the jazz show?", "grid", grid, right,
                                    "Wednesday", "Thursday")
    wrong = g["sentences"][0]
    assert wrong["action"] == "redact" and "Wednesday" in wrong["explanation"]["evidence"], wrong


def test_a_count_whose_whole_follows_a_possessive_is_stopped_through_the_server(
        client, placeholder):
    """Through the server: "Four of last week's nine walks are still unpaid" where four of
    the nine records hold ``paid: false`` goes out verbatim; "Five of ..." is stopped as a
    changed value (bf2d954 sent it as written: the count was not read as a part of a
    whole)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    walkers = "Hannah Hannah Tom Aisha Tom Tom Hannah Aisha Aisha".split()
    paid = (True, True, True, False, True, True, False, False, False)
    walks = json.dumps({"walks": [
        {"walk_id": f"W-{1040 + i}", "walker": w, "fee_cents": 1500, "paid": p}
        for i, (w, p) in enumerate(zip(walkers, paid), 1)]})
    right = "Four of last week's nine logged walks are still unpaid."
    text, g = verbatim_then_changed(client, "Which walks are unpaid?", "walks", walks, right,
                                    "Four of", "Five of")
    wrong = g["sentences"][0]
    assert wrong["action"] == "redact" and wrong["explanation"]["basis"] == "value_changed", g


FERRY_TOOL = json.dumps({
    "vessel": "MV Skerry", "sailing": "2025-04-12T08:15:00", "berth": "Pier 5",
    "crew": ["Ines Lowry", "Bram Cole", "Sofia Nair"],
    "stops": [{"port": p, "arrive": a} for p, a in
              [("Craignure", "09:05"), ("Tobermory", "10:20"), ("Coll", "12:40"),
               ("Tiree", "13:35")]]}, indent=2)
FERRY_RIGHT = "The MV Skerry sails at 8:15 AM with four stops, the last at Tiree."


def test_a_count_of_more_records_than_the_result_lists_is_stopped(client, placeholder):
    """Through the real server, with the default policy: "four stops" over four
    ``stops`` records reaches the client verbatim; "five stops" is stopped as a value
    changed, the list's length its evidence (9bd5383 released it: a 5 stands in the
    result, at "Pier 5")."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "When does the Skerry sail, and where does it call?"
    text, g = stream_tool_turn(client, question, "sailing", FERRY_TOOL, FERRY_RIGHT)
    assert text == FERRY_RIGHT, g
    text, g = stream_tool_turn(client, question, "sailing", FERRY_TOOL,
                               FERRY_RIGHT.replace("four stops", "five stops"))
    wrong = g["sentences"][0]
    assert wrong["action"] != "release" and "five stops" not in text, g
    assert wrong["explanation"]["basis"] == "value_changed"
    assert wrong["explanation"]["evidence"] == "stops: 4 listed"


REFUND_TOOL = json.dumps({"refund_id": "RF-2231", "order_id": "A-1043", "amount_cents": 4200,
                          "status": "approved", "approved_at": "2025-03-04T14:30:00",
                          "method": "card", "card_last4": "4821"})


def test_a_general_claim_beside_a_tool_result_is_stopped_or_marked_as_asked(client,
                                                                            placeholder):
    """Through the real server: "Refunds like this usually take three to five business
    days" beside a refund record is no record's: redacted by default as `unverifiable`
    on basis `general` while the report before it reaches the client verbatim; a
    request's ``by_basis: {"structured.general": "annotate"}`` releases it as written
    and marks it (9bd5383 read it as a value the result lacks, `value_missing`)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "Where is my refund?"
    report = "Your refund RF-2231 for order A-1043 was approved. "
    general = "Refunds like this usually take three to five business days to reach your card."
    text, g = stream_tool_turn(client, question, "refund", REFUND_TOOL, report + general)
    first, last = g["sentences"]
    assert first["action"] == "release" and text.startswith(report), g
    assert last["action"] != "release" and general not in text, g
    assert last["explanation"]["basis"] == "general"
    assert last["explanation"]["kind"] == "unverifiable"
    text, g = stream_tool_turn(client, question, "refund", REFUND_TOOL, report + general,
                               policy={"by_basis": {"structured.general": "annotate"}})
    assert text == report + general, g
    assert g["sentences"][1]["action"] == "annotate"
    assert g["sentences"][1]["explanation"]["basis"] == "general"


CLOCK_REPAIR_TOOL = json.dumps({"repair_id": "CR-2210", "item": "longcase clock",
                                "work": "movement overhaul", "price_cents": 42000,
                                "case_included": True, "collection_date": "2025-04-11"})


def test_an_extra_the_tool_result_does_not_list_is_stopped_or_marked_as_asked(client,
                                                                              placeholder):
    """Through the real server: "The repair also comes with a one-year guarantee on the
    movement." beside a repair record that lists no guarantee is redacted by default as
    `unverifiable` on basis `unlisted`, the evidence naming the extra, while the record
    said again before it and an extra the record lists ("also includes the case", its
    ``case_included: true``) reach the client verbatim; a request's ``by_basis:
    {"structured.unlisted": "annotate"}`` releases it as written and marks it (48fedfa
    released it unmarked)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "How much is the clock repair, and when can I collect it?"
    report = ("The movement overhaul on your longcase clock comes to $420.00, and you can "
              "collect it on Friday, April 11. The price also includes the case. ")
    extra = "The repair also comes with a one-year guarantee on the movement."
    text, g = stream_tool_turn(client, question, "repair", CLOCK_REPAIR_TOOL, report + extra)
    *kept, last = g["sentences"]
    assert all(s["action"] == "release" for s in kept) and text.startswith(report), g
    assert last["action"] != "release" and extra not in text, g
    assert last["explanation"]["basis"] == "unlisted"
    assert last["explanation"]["kind"] == "unverifiable"
    assert last["explanation"]["evidence"] == "not listed: a one-year guarantee on the movement"
    text, g = stream_tool_turn(client, question, "repair", CLOCK_REPAIR_TOOL, report + extra,
                               policy={"by_basis": {"structured.unlisted": "annotate"}})
    assert text == report + extra, g
    assert g["sentences"][-1]["action"] == "annotate"


COMEDY_TOOL = json.dumps({"comic": "Dana Whitlock", "venue": "The Laugh Cellar", "shows": [
    {"date": "2025-10-10", "start": "20:00", "sold_out": True, "seats_left": 0,
     "premium_cents": 3800},
    {"date": "2025-10-10", "start": "22:15", "sold_out": False, "seats_left": 12,
     "premium_cents": 3400}]})


def test_a_sold_out_show_beside_one_with_seats_reaches_the_client_verbatim(client,
                                                                          placeholder):
    """Through the real server: "Friday's 8:00 PM show is sold out, but the 10:15 PM
    show still has 12 seats." says the 8:00 PM show's ``sold_out: true`` (48fedfa
    redacted it as the 10:15 PM show's ``sold_out: false`` said otherwise); the late
    show said sold out is still stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "Which Dana Whitlock shows still have seats?"
    right = ("Friday's 8:00 PM show is sold out, but the 10:15 PM show still has 12 seats. "
             "Two premium tickets for the late show come to $68.00.")
    text, g = stream_tool_turn(client, question, "shows", COMEDY_TOOL, right)
    assert text == right and all(s["action"] == "release" for s in g["sentences"]), g
    text, g = stream_tool_turn(client, question, "shows", COMEDY_TOOL,
                               "Friday's 10:15 PM show is sold out.", REDACT_ALL)
    assert g["sentences"][0]["action"] != "release", g
    assert g["sentences"][0]["explanation"]["basis"] == "value_changed"


ANALYSERS_TOOL = json.dumps({"site": "Ashby General", "machines": [
    {"name": "Ward 4 analyser", "room": "Ward 4", "online": True},
    {"name": "Maternity analyser", "room": "Maternity", "online": False},
    {"name": "ICU analyser", "room": "ICU", "online": True},
    {"name": "A&E analyser", "room": "A&E", "online": True}]})


def test_a_groups_state_with_its_exception_named_reaches_the_client(client, placeholder):
    """Through the real server: "every analyser except the maternity one is online"
    reaches the client verbatim (25e3539 redacted it as the maternity analyser's
    ``online: false`` said otherwise); that record's own state said otherwise is still
    stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "Which analysers are online?"
    right = "Every analyser except the maternity one is online. "
    text, g = stream_tool_turn(client, question, "machines", ANALYSERS_TOOL,
                               right + "The maternity analyser is online.")
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release" and wrong["explanation"]["basis"] == "value_changed"


SHIPPED_TOOL = json.dumps({
    "order_id": "A-1043", "status": "shipped", "shipped_at": "2025-03-04T14:30:00",
    "items": [{"sku": "KB-2", "name": "Mechanical keyboard", "qty": 1, "price_cents": 8999},
              {"sku": "MS-9", "name": "Wireless mouse", "qty": 2, "price_cents": 2450}],
    "gift_wrap": False, "carrier": "UPS", "eta": "2025-03-07"}, indent=2)
SHIPPED_SUPPORTED = ["Your order A-1043 shipped on Tuesday, March 4, 2025 at 2:30 PM with UPS. ",
                   "It has one mechanical keyboard at $89.99 and two wireless mice at $24.50 "
                   "each, $138.99 in all. ", "Gift wrap was not added. "]
SHIPPED_CHANGED = "It should arrive on Friday, March 14."


@pytest.mark.parametrize("wrapped", [f"```json\n{SHIPPED_TOOL}\n```",
                                     f"Tool output (get_order):\n{SHIPPED_TOOL}"])
def test_a_tool_result_in_a_fenced_block_or_after_a_label_grounds_as_the_bare_one(
        client, placeholder, wrapped):
    """Agents often send a tool result as markdown: fenced, or after a line naming the
    tool.  Through the real server it is read as the bare JSON is: the correct sentences
    pass verbatim (with the fenced text read as prose, two of the three were redacted),
    and a changed date is stopped against the structured result."""
    if placeholder:
        pytest.skip("needs the trained default model")
    got = {}
    for name, result in (("bare", SHIPPED_TOOL), ("wrapped", wrapped)):
        text, g = stream_tool_turn(client, "Where is my order?", "get_order", result,
                                   "".join(SHIPPED_SUPPORTED) + SHIPPED_CHANGED)
        got[name] = [(s["action"], (s["explanation"] or {}).get("grounding"))
                     for s in g["sentences"]]
    for s in g["sentences"][:-1]:
        assert s["action"] == "release" and s["released"] == s["original"], s
    changed = g["sentences"][-1]
    assert changed["action"] != "release" and "March 14" not in text, changed
    assert changed["explanation"]["grounding"] == "structured"
    assert got["wrapped"] == got["bare"]


FISH_TOOL = json.dumps({"order_id": "FM-3381", "lines": [
    {"item": "Turbot, whole", "kg": 6.5, "price_per_kg_cents": 5400},
    {"item": "Halibut fillet", "kg": 8.2, "price_per_kg_cents": 3980},
    {"item": "Langoustines", "kg": 3.0, "price_per_kg_cents": 4650}],
    "delivery_cents": 1500})


def test_arithmetic_an_answer_states_and_gets_wrong_is_stopped(client, placeholder):
    """Through the real server: "comes to $816.86, and with the $15.00 delivery charge
    the order totals $841.86" states its operands beside a total the result lacks, and
    they make $831.86: redacted by default as `contradicted` on `value_changed` with the
    equation as evidence, while the report before it reaches the client verbatim (3c7c757
    marked it `value_worked_out` and released it); the right total is not redacted."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "What does my fish order come to?"
    report = "Your order FM-3381 has three lines of fish. "
    total = ("The fish comes to $816.86, and with the $15.00 delivery charge the order "
             "totals {}.")
    text, g = stream_tool_turn(client, question, "orders.get", FISH_TOOL,
                               report + total.format("$841.86"))
    first, last = g["sentences"]
    assert first["action"] == "release" and text.startswith(report), g
    assert last["action"] == "redact" and "$841.86" not in text, g
    assert last["explanation"]["basis"] == "value_changed"
    assert last["explanation"]["kind"] == "contradicted"
    assert last["explanation"]["evidence"] == "816.86 + 15 = 831.86"
    text, g = stream_tool_turn(client, question, "orders.get", FISH_TOOL,
                               report + total.format("$831.86"))
    assert g["sentences"][1]["action"] != "redact" and "$831.86" in text, g


SHELTER_TOOL = json.dumps({"depot": "Harbour Road", "work_orders": [
    {"wo": "BSR-7710", "crew": "Crew B", "location": "Maple Avenue",
     "issue": "shattered rear glass panel", "status": "completed"},
    {"wo": "BSR-7721", "crew": "Crew B", "location": "Linden Blvd & Oak St",
     "issue": "solar light not working", "status": "in_progress"}]})


def test_a_status_said_as_a_kind_its_record_cannot_be_is_stopped(client, placeholder):
    """Through the real server: "Crew B has also wrapped up the solar light repair at
    Linden Blvd & Oak St." where that work order is ``in_progress`` is redacted as
    `contradicted` on `value_changed`, the status line as evidence (2cb0a50 released
    it); "is still working on" it reaches the client verbatim."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "How are the shelter repairs going?"
    report = "Crew B replaced the shattered rear glass panel at Maple Avenue. "
    status = "Crew B {} the solar light repair at Linden Blvd & Oak St."
    text, g = stream_tool_turn(client, question, "repairs.list", SHELTER_TOOL,
                               report + status.format("has also wrapped up"))
    first, last = g["sentences"]
    assert first["action"] == "release" and text.startswith(report), g
    assert last["action"] == "redact" and "wrapped up" not in text, g
    assert last["explanation"]["basis"] == "value_changed"
    assert last["explanation"]["kind"] == "contradicted"
    assert last["explanation"]["evidence"].endswith("status: in_progress")
    right = report + status.format("is still working on")
    text, g = stream_tool_turn(client, question, "repairs.list", SHELTER_TOOL, right)
    assert g["sentences"][1]["action"] != "redact" and text == right, g


def test_a_total_over_a_group_the_sentence_names_said_otherwise_is_stopped(client,
                                                                            placeholder):
    """Through the real server: "Altogether that comes to 41,900 fish for the Lune." where
    the River Lune's four releases add up to 39,900 is redacted as `contradicted` on
    `value_changed`, the group's total as evidence (afdc321 only marked it as worked out
    and released it); the right total reaches the client verbatim."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "How many fish went into the River Lune this spring?"
    report = "Ashbeck and Holm Mill made four releases into the River Lune. "
    total = "Altogether that comes to {} fish for the Lune."
    text, g = stream_tool_turn(client, question, "releases.csv", RELEASES_TOOL,
                               report + total.format("41,900"))
    first, last = g["sentences"]
    assert first["action"] == "release" and text.startswith(report), g
    assert last["action"] == "redact" and "41,900" not in text, g
    assert last["explanation"]["basis"] == "value_changed"
    assert last["explanation"]["kind"] == "contradicted"
    assert "39,900" in last["explanation"]["evidence"], g
    right = report + total.format("39,900")
    text, g = stream_tool_turn(client, question, "releases.csv", RELEASES_TOOL, right)
    assert g["sentences"][1]["action"] != "redact" and text == right, g


JUMP_TOOL = json.dumps({"booking_ref": "GLB-77410", "jumper": {
    "name": "Kenji Moreau", "age": 27, "declared_weight_kg": 78, "measured_weight_kg": 81.4},
    "cord": {"class": "medium", "range_kg": [70, 90]}, "amount_paid_cents": 24400})


def test_a_value_another_field_holds_reaches_the_client_verbatim(client, placeholder):
    """Through the real server: "You weighed in at 81.4 kilograms, 3.4 kilograms more than
    you declared." beside ``declared_weight_kg: 78`` and ``measured_weight_kg: 81.4``
    reaches the client verbatim (57e5962 redacted it as the declared weight changed); the
    declared weight said as 81.4 is still redacted on `value_changed`."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "Is everything ready for my bungee jump check-in?"
    intro = "Your booking GLB-77410 is for Kenji Moreau, aged 27. "
    right = intro + "You weighed in at 81.4 kilograms, 3.4 kilograms more than you declared."
    text, g = stream_tool_turn(client, question, "bookings.get", JUMP_TOOL, right)
    assert text == right and g["sentences"][1]["action"] == "release", g
    wrong = intro + "Your declared weight was 81.4 kilograms."
    text, g = stream_tool_turn(client, question, "bookings.get", JUMP_TOOL, wrong)
    assert g["sentences"][1]["action"] == "redact" and "81.4" not in text, g
    assert g["sentences"][1]["explanation"]["basis"] == "value_changed"


MUSEUM_TOOL = json.dumps({"booking_ref": "AG-19044", "museum": "Riverside Maritime Museum",
                          "group": {"students": 28, "adults": 4},
                          "devices": {"student_rate_cents": 250, "adult_rate_cents": 450},
                          "invoice": {"status": "unpaid", "due_date": "2025-10-28"}})


def test_a_total_of_the_sentence_befores_amounts_said_otherwise_is_stopped(client, placeholder):
    """Through the real server: "That brings the total bill to $98." after a sentence
    stating $70 and $18 is redacted on `value_changed` (59fc5c5 only marked it, a value
    no rule reproduced); "$88" reaches the client verbatim; so does a share per person
    of it (marked at most: 32 is in no tool result), and a wrong share is redacted."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "What will the audio guides cost for my class visit?"
    intro = ("Audio guides for the 28 students cost $2.50 each, which is $70, and the four "
             "adults pay $4.50 each, which is $18. ")
    right = intro + "That brings the total bill to $88."
    text, g = stream_tool_turn(client, question, "bookings.get", MUSEUM_TOOL, right)
    assert text == right and g["sentences"][1]["action"] == "release", g
    wrong = intro + "That brings the total bill to $98."
    text, g = stream_tool_turn(client, question, "bookings.get", MUSEUM_TOOL, wrong)
    assert g["sentences"][1]["action"] == "redact" and "$98" not in text, g
    assert g["sentences"][1]["explanation"]["basis"] == "value_changed"
    shared = right + " Split across all 32 of you, that works out to $2.75 per person."
    text, g = stream_tool_turn(client, question, "bookings.get", MUSEUM_TOOL, shared)
    assert text == shared and g["sentences"][2]["action"] != "redact", g  # at most marked
    text, g = stream_tool_turn(client, question, "bookings.get", MUSEUM_TOOL,
                               shared.replace("$2.75", "$3.25"))
    assert g["sentences"][2]["action"] == "redact" and "$3.25" not in text, g


SHOPS_TOOL = json.dumps({"shops": [
    {"name": n, "open_now": o, "oat_milk": m, "oat_milk_upcharge_cents": c, "rating": r}
    for n, o, m, c, r in [("Leaf Lab", True, True, 60, 4.5),
                          ("Pearl Point", True, False, None, 4.7),
                          ("Boba Barn", False, True, 50, 4.4), ("Moon Sip", True, True, 0, 4.2),
                          ("Tea Tide", True, True, 40, 4.0)]]})


def test_supported_sentences_once_read_as_changed_values_reach_the_client_verbatim(
        client, placeholder):
    """Through the real server: "oat milk costs nothing extra" (a price, no negation of
    ``oat_milk: true``) and "Three shops are open right now and offer oat milk" (three
    records hold both yes/no keys) reach the client verbatim (59fc5c5 redacted both on
    `value_changed`); the same said of the shop without oat milk is still redacted."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "Which bubble tea shops near me are open and have oat milk?"
    right = ("Three shops are open right now and offer oat milk. Moon Sip is rated 4.2, and "
             "oat milk costs nothing extra.")
    text, g = stream_tool_turn(client, question, "shops.search", SHOPS_TOOL, right)
    assert text == right and [s["action"] for s in g["sentences"]] == ["release"] * 2, g
    wrong = right.replace("Moon Sip is rated 4.2", "Pearl Point is rated 4.7")
    text, g = stream_tool_turn(client, question, "shops.search", SHOPS_TOOL, wrong)
    assert g["sentences"][1]["action"] == "redact", g
    assert g["sentences"][1]["explanation"]["basis"] == "value_changed"


CLAIMS_TOOL = json.dumps({"policy_no": "PP-5520917", "pet": {"name": "Juniper",
                                                             "species": "cat"},
                          "claims": [
    {"claim_id": "CLM-030112", "submitted": "2025-03-04", "condition": "dental extraction",
     "claimed_cents": 64500, "status": "paid", "paid_cents": 38700},
    {"claim_id": "CLM-058233", "submitted": "2025-05-27", "condition": "annual wellness exam",
     "claimed_cents": 18900, "status": "denied", "paid_cents": 0}],
                          "totals": {"claimed_cents": 83400, "paid_cents": 38700}})


def test_a_decision_said_the_other_way_round_and_what_most_cats_do_are_stopped(client,
                                                                              placeholder):
    """Through the real server: a claim the tool result holds as ``denied`` said accepted
    is a status changed, and what most cats do, which no record says, a general claim;
    9d8414c released both.  The right decision reaches the client verbatim."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "How did my claims for Juniper go?"
    right = "The annual wellness exam claim from May 27 was denied. "
    text, g = stream_tool_turn(
        client, question, "claims", CLAIMS_TOOL,
        right + "The dental extraction claim from March 4 was denied. Most cats with dental "
        "disease recover fully within two weeks.", REDACT_ALL)
    kept, wrong, general = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release" and wrong["explanation"]["basis"] == "value_changed"
    assert general["action"] != "release" and general["explanation"]["basis"] == "general"
    assert general["explanation"]["kind"] == "unverifiable"


OLIVES_TOOL = json.dumps({"producer": "Sierra Olivar", "lots": [
    {"lot": "L-101", "olives_kg": 18400, "oil_l": 3220},
    {"lot": "L-102", "olives_kg": 21600, "oil_l": 3996}], "totals": {"olives_kg": 40000,
                                                                      "oil_l": 7216}})


def test_a_quantity_said_again_wrongly_after_a_hedge_is_stopped(client, placeholder):
    """Through the real server: "40,000 kg of olives ..., roughly 400 tonnes" restates
    the total a hundred times over (9d8414c only marked it); "roughly 40 tonnes" reaches
    the client verbatim."""
    if placeholder:
        pytest.skip("needs the trained default model")
    question = "How much did the mill press this season?"
    right = "In total, 40,000 kg of olives went through the mill, roughly 40 tonnes. "
    text, g = stream_tool_turn(client, question, "lots", OLIVES_TOOL,
                               right + right.replace("roughly 40 tonnes", "roughly 400 tonnes"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release" and wrong["explanation"]["basis"] == "value_changed"


HIRE_TOOL = json.dumps({"contract": "HC-1001", "currency": "USD", "charges": [
    {"invoice": "INV-1", "period": "2025-09-01/2025-09-07", "amount_cents": 64500, "paid": True},
    {"invoice": "INV-2", "period": "2025-09-08/2025-09-12", "amount_cents": 46000,
     "paid": False, "due": "2025-09-22"}]})


def test_two_records_states_said_both_ways_pass_and_outstanding_is_unpaid(client, placeholder):
    """Through the real server: "$645.00 for the first week, which is paid, and $460.00
    ..., which is still outstanding" reaches the client verbatim (589a061 redacted it as
    the second invoice's ``paid`` said otherwise); the first invoice said outstanding is
    a value changed (589a061 released it)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = ("You've been invoiced $645.00 for the first week, which is paid, and $460.00 "
             "for September 8 to 12, which is still outstanding. ")
    text, g = stream_tool_turn(client, "Where do my hire invoices stand?", "charges", HIRE_TOOL,
                               right + "The $645.00 invoice for the first week is still "
                               "outstanding.", REDACT_ALL)
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release" and wrong["explanation"]["basis"] == "value_changed"


LOANS_TOOL = json.dumps({"patron": "LIB-1", "loans": [
    {"title": "Braiding Sweetgrass", "due_date": "2025-10-14", "renewals_used": 1,
     "renewable": False},
    {"title": "Sourdough Basics", "due_date": "2025-10-20", "renewals_used": 0,
     "renewable": True}]})


def test_a_thing_not_yet_done_passes_and_one_that_cannot_be_done_is_checked(client,
                                                                             placeholder):
    """Through the real server: "you haven't renewed it yet" of a ``renewable`` loan says
    what was done, not what can be, and reaches the client verbatim (589a061 redacted
    it); "can't be renewed" of it is still a value changed."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Sourdough Basics isn't due until October 20, and you haven't renewed it yet. "
    text, g = stream_tool_turn(client, "What do I have out from the library?", "loans",
                               LOANS_TOOL, right + "Sourdough Basics is due on October 20 and "
                               "can't be renewed.", REDACT_ALL)
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release" and wrong["explanation"]["basis"] == "value_changed"


STATEMENT_TOOL = json.dumps({"loan": "ML-1", "total_payment_due_cents": 267450,
                             "payment_breakdown": {"principal_cents": 59214,
                                                   "interest_cents": 159500,
                                                   "escrow_cents": 48736}})
RESALE_TOOL = json.dumps({"listing": {"section": "118", "seats": ["7", "8", "9", "10"]},
                          "sales": [{"order": "ORD-1", "seats": ["7", "8"],
                                     "sale_price_cents_each": 16500, "transferred": True},
                                    {"order": "ORD-2", "seats": ["9"],
                                     "sale_price_cents_each": 15000, "transferred": False}]})


def test_amounts_named_and_added_up_wrongly_are_stopped_a_seat_said_by_number_passes(
        client, placeholder):
    """Through the real server: "Principal and interest together account for $2,178.14"
    where they add up to $2,187.14 is a value changed (589a061 only marked it); "Seat 9
    sold for $150" of a sale holding ``seats: ["9"]`` and ``sale_price_cents_each: 15000``
    reaches the client verbatim (589a061 redacted it as the seat count said otherwise)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Principal and interest together account for $2,187.14 of the payment. "
    text, g = stream_tool_turn(client, "How is my October payment split?", "statement",
                               STATEMENT_TOOL, right + right.replace("2,187.14", "2,178.14"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release" and wrong["explanation"]["basis"] == "value_changed"
    seat = "Seat 9 sold for $150, but it hasn't been transferred yet."
    text, g = stream_tool_turn(client, "How is my resale going?", "sales", RESALE_TOOL, seat)
    assert text == seat and g["sentences"][0]["action"] == "release", g


WELL_TOOL = json.dumps({"well_id": "W-7", "site": "Mill Farm", "completed": "2025-06-10",
                        "total_depth_m": 80, "static_water_level_m": 15.2,
                        "casing": {"material": "PVC", "diameter_mm": 125, "depth_m": 20}})
OYSTERS_TOOL = json.dumps({"lot": "OY-31", "harvested_at": "2025-09-08T06:30:00",
                           "shipped_date": "2025-09-09", "received_by": "Harbour Grill",
                           "received_date": "2025-09-10"})
ILL_TOOL = json.dumps({"patron": "P-44", "requests": [
    {"request_id": "ILL-2", "title": "Coastal Survey, vol. 4", "format": "article_scan",
     "status": "delivered_electronically", "requested_on": "2025-03-04",
     "arrived_on": "2025-03-06", "pages": 18}]})


def test_a_depth_in_two_units_and_dates_a_span_on_reach_the_client_verbatim(client,
                                                                          placeholder):
    """Through the real server: "a depth of 80 meters, which is about 262 feet" of
    ``total_depth_m: 80`` beside a casing's ``depth_m: 20`` reaches the client verbatim
    (3673953 redacted it as the casing's depth changed); a wrong depth so said is still
    stopped.  "filled on March 6, two days after you asked for it" of ``requested_on:
    2025-03-04`` passes too (3673953 redacted it as the request date changed), and so
    does "harvested on September 8, 2025, shipped the next day, and reached Harbour Grill
    on September 10" of ``shipped_date: 2025-09-09`` (3673953 redacted it)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "The well at Mill Farm was finished at a depth of 80 meters, which is about 262 feet. "
    text, g = stream_tool_turn(client, "How deep is the new well?", "well", WELL_TOOL,
                               right + right.replace("80", "95").replace("262", "312"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release", g
    filled = "Your article request was filled electronically on March 6, two days after you asked."
    text, g = stream_tool_turn(client, "Where are my loan requests?", "requests", ILL_TOOL,
                               filled)
    assert text == filled and g["sentences"][0]["action"] == "release", g
    shipped = ("They were harvested on Monday, September 8, 2025, shipped the next day, and "
               "reached Harbour Grill on September 10.")
    text, g = stream_tool_turn(client, "When did my oysters ship?", "lot", OYSTERS_TOOL,
                               shipped)
    assert text == shipped and g["sentences"][0]["action"] == "release", g


RUNS_TOOL = json.dumps({"project": "api", "runs": [
    {"run_id": 501 + i, "duration_s": 300 + 7 * i, "status": s}
    for i, s in enumerate(["success", "failed", "success", "success", "canceled", "success",
                           "success", "failed", "success", "success"])]})
VISION_TOOL = json.dumps({"plan": "ClearView Basic", "benefits": {
    "contact_lens_fitting": {"covered": True, "copay_cents": 4000},
    "lenses": {"single_vision_copay_cents": 2000, "progressive_covered": False}}})
FUND_TOOL = json.dumps({"account": "PX-1", "period": {"start": "2025-01-01",
                                                      "end": "2025-06-30"},
                        "balances": {"beginning_cents": 5012000, "ending_cents": 5230050}})


def test_a_share_of_the_records_a_longer_yes_no_and_the_start_of_the_year_pass(client,
                                                                               placeholder):
    """Through the real server, each redacted by 3673953 and now released verbatim: "Seven
    of them succeeded, a 70% success rate." over ten runs (the 70% was a value missing);
    "progressive lenses aren't covered" beside a contact lens fitting that is covered (its
    ``covered`` read as said otherwise); "from $50,120 at the start of the year to
    $52,300.50 on June 30, 2025" (June 30 read as ``period > start``).  A wrong share is
    still stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Seven of them succeeded, a 70% success rate. "
    text, g = stream_tool_turn(client, "How did the api runs go?", "runs", RUNS_TOOL,
                               right + right.replace("70%", "60%"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release", g
    for question, name, tool, said in (
            ("Are progressive lenses covered?", "benefits", VISION_TOOL,
             "Single-vision lenses have a $20 copay, but progressive lenses aren't covered."),
            ("How did my account do?", "statement", FUND_TOOL,
             "Your account grew from $50,120 at the start of the year to $52,300.50 on June "
             "30, 2025.")):
        text, g = stream_tool_turn(client, question, name, tool, said)
        assert text == said and g["sentences"][0]["action"] == "release", g


PARCELS_TOOL = json.dumps({"owner": "Alder LLC", "parcels": [
    {"address": "4 Ferry Ln", "amount_due_cents": 210000, "status": "delinquent"},
    {"address": "9 Ferry Ln", "amount_due_cents": 185000, "status": "paid",
     "paid_date": "2025-03-02"}]})


def test_a_paid_parcel_said_still_outstanding_is_stopped(client, placeholder):
    """Through the real server: "9 Ferry Ln is also still outstanding" of ``status: paid``
    is a value changed (3673953 released it); the delinquent parcel said outstanding
    passes verbatim."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "4 Ferry Ln is still outstanding at $2,100. "
    text, g = stream_tool_turn(client, "Which of my parcels are unpaid?", "parcels",
                               PARCELS_TOOL, right + "9 Ferry Ln is also still outstanding.")
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release" and wrong["explanation"]["basis"] == "value_changed"


WINES_TOOL = json.dumps({"member": "WC-7", "shipment": {"ship_date": "2025-05-06", "bottles": [
    {"wine": "Ridge Pinot Noir", "qty": 3, "list_price_cents": 4200},
    {"wine": "Hill Syrah", "qty": 1, "list_price_cents": 5100},
    {"wine": "Creek Riesling", "qty": 2, "list_price_cents": 2300}]}})


def test_a_count_of_things_over_their_quantities_reaches_the_client_verbatim(client,
                                                                            placeholder):
    """Through the real server: "six bottles" over three records whose ``qty`` add up to
    six reaches the client verbatim (3673953 redacted it as a value missing); "five
    bottles" is still stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Your next shipment has six bottles and ships on May 6, 2025. "
    text, g = stream_tool_turn(client, "What's in my next wine shipment?", "shipment",
                               WINES_TOOL, right + right.replace("six", "five"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release", g


ROPES_TOOL = json.dumps({"shop": "Harbour Chandlery", "ropes": [
    {"sku": "R-10", "name": "Blue braided polyester", "on_reel_m": 86.5, "price_per_m_cents": 310},
    {"sku": "R-12", "name": "Red braided polyester", "on_reel_m": 9.0, "price_per_m_cents": 395}]})


def test_a_bound_the_stock_keeps_reaches_the_client_verbatim(client, placeholder):
    """Through the real server: "at least 20 meters" of a reel holding 86.5 m reaches the
    client verbatim (6f6d27f redacted it as a value said otherwise); the same bound of
    the reel holding 9 m is still stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "The blue braided polyester has at least 20 meters on the reel. "
    text, g = stream_tool_turn(client, "Which rope can I buy 20 meters of?", "rope_stock",
                               ROPES_TOOL, right + right.replace("blue", "red"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release", g


PLANS_TOOL = json.dumps({"plans": [{"name": "Plan A", "price_usd": 20},
                                   {"name": "Plan B", "price_usd": 30},
                                   {"name": "Plan C", "price_usd": 40}]})


def test_another_plans_price_is_stopped_where_the_names_share_a_word(client, placeholder):
    """Through the real server: "Plan B costs $40 a month." where $40 is Plan C's price
    is stopped as Plan B's price said otherwise (a57e0c7 released it: "Plan" is every
    record's, and the $40 of Plan C tied with the "B" of Plan B); Plan B's own price
    reaches the client verbatim."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Plan B costs $30 a month. "
    text, g = stream_tool_turn(client, "How much is Plan B?", "list_plans", PLANS_TOOL,
                               right + "Plan B costs $40 a month.")
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release", g
    assert wrong["explanation"]["basis"] == "value_changed"
    assert wrong["explanation"]["kind"] == "contradicted"


def test_a_table_answer_keeps_its_shape_and_its_header_is_no_claim(client):
    """Through the real server: a Markdown table's header and separator rows pass
    unchecked (they name columns); a row redacted whole keeps its cells, so what the
    client renders is still the table, row for row and cell for cell."""
    answer = ("| Fact | Value |\n|---|---|\n| Height | 330 m |\n| Designer | Gustave Eiffel |\n"
              "| Built | 1950 |\n")
    text, g = stream_tool_turn(client, QUESTION, "search", EIFFEL_TOOL, answer,
                               {"threshold": 0.0})  # every checked row redacted
    header, rule, *rows = g["sentences"]
    assert (header["checked"], rule["checked"]) == (False, False)
    assert header["released"] == header["original"] and rule["released"] == rule["original"]
    assert all(r["checked"] and r["action"] == "redact" for r in rows), g
    sent, got = answer.splitlines(), text.splitlines()
    assert len(got) == len(sent) and got[:2] == sent[:2]
    assert [x.count("|") for x in got] == [x.count("|") for x in sent]
    assert [x.split("|")[1] for x in got] == [x.split("|")[1] for x in sent]  # row names


def test_the_openai_loop_reads_to_the_end_when_the_upstream_sends_no_finish_reason(client):
    """Through the real server and the openai SDK: an upstream that ends with ``[DONE]``
    and never sends a ``finish_reason`` (checked or not), or finishes and closes without
    ``[DONE]`` (unchecked), is read to the end by the docs' loop, ``chunk.choices[0]`` on
    every chunk; ``"stream": null`` is a plain answer."""
    answer = "The tower is 330 metres tall."
    no_finish = [e for e in chat_events(answer) if '"stop"' not in e]
    no_done = chat_events(answer)[:-1]
    for events, grounded in ((no_finish, True), (no_finish, False), (no_done, False)):
        body = {"fake": {"mode": "raw", "events": events}}
        if grounded:
            body["guardrail"] = {"context": [EIFFEL_TOOL]}
        stream = client.chat.completions.create(
            model="fake-llm", messages=[{"role": "user", "content": "How tall?"}],
            stream=True, extra_body=body)
        text = "".join(c.choices[0].delta.content or "" for c in stream)
        assert text == answer, (grounded, text)
    plain = client.chat.completions.create(
        model="fake-llm", messages=[{"role": "user", "content": QUESTION}],
        extra_body={"stream": None, "guardrail": {"context": [EIFFEL_TOOL]}})
    assert plain.choices[0].message.content and plain.model_extra["guardrail"]["verified"]


def test_a_language_the_detector_does_not_read_passes_verbatim_and_says_so(client, proxy):
    """Through the server with the real model, at threshold 0 (every checked sentence
    redacted): an answer's Chinese and German sentences reach the client as the upstream
    wrote them, reported unchecked (``skipped: "language"``, counted on /metrics), while
    its English sentence is checked; against a Chinese grounding the English sentence
    is not checked either."""
    def unchecked() -> float:
        line = next((x for x in httpx.get(proxy.url + "/metrics").text.splitlines()
                     if x.startswith('guardrail_sentences_unchecked_total{reason="language"}')),
                    "x 0")
        return float(line.split()[1])

    zh = "埃菲尔铁塔于1887年至1889年建造。"
    de = "Er wurde von 1887 bis 1889 gebaut und ist 330 Meter hoch. "
    answer = "The Eiffel Tower was built from 1887 to 1889. " + zh + de
    before = unchecked()
    text, g = stream_tool_turn(client, QUESTION, "search", EIFFEL_TOOL, answer,
                               {"threshold": 0.0, "redact_mode": "sentence"})
    assert [(s["skipped"], s["checked"]) for s in g["sentences"]] == \
        [(None, True), ("language", False), ("language", False)]
    assert text == "[unsupported] " + zh + de and unchecked() == before + 2
    assert g["sentences"][0]["final"] is not None and g["sentences"][1]["final"] is None

    chinese_tool = "埃菲尔铁塔是巴黎的一座铁塔，于1887年至1889年建造，高330米，以工程师埃菲尔命名。"
    text, g = stream_tool_turn(client, QUESTION, "search", chinese_tool,
                               "The Eiffel Tower was built from 1887 to 1889.",
                               {"threshold": 0.0})
    assert text == "The Eiffel Tower was built from 1887 to 1889."
    assert g["sentences"][0]["skipped"] == "language"


RACE_TOOL = json.dumps({"event": "Harbor City Marathon", "finishers": 6210, "runner": {
    "name": "Emma Lindgren", "finish_time": "3:41:27", "pace_per_km": "5:15"}})
FX_TOOL = json.dumps({"base": "GBP", "date": "2025-06-20",
                      "rates": {"EUR": 1.1712, "USD": 1.2695, "CHF": 1.1087}})


def test_a_finish_time_in_words_reaches_the_client_verbatim(client, placeholder):
    """Through the real server: a finish time of ``3:41:27`` said in words reaches the
    client verbatim (3469685 redacted it as ``finishers: 6210`` said otherwise); a
    changed time is still stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Emma Lindgren finished the marathon in 3 hours, 41 minutes and 27 seconds. "
    text, g = stream_tool_turn(client, "How did Emma do?", "race_result", RACE_TOOL,
                               right + right.replace("41 minutes", "14 minutes"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release", g


def test_an_amount_at_the_tools_rate_reaches_the_client_verbatim(client, placeholder):
    """Through the real server: £500 in Swiss francs at the tool's CHF rate reaches the
    client verbatim (3469685 redacted it); a wrong conversion is not released untouched."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "In Swiss francs, £500 is about CHF 554.35. "
    text, g = stream_tool_turn(client, "What is £500 in Swiss francs?", "fx_rates", FX_TOOL,
                               right + right.replace("554.35", "574.35"))
    kept, wrong = g["sentences"]
    assert kept["action"] == "release" and text.startswith(right), g
    assert wrong["action"] != "release", g


SUSHI_TOOL = json.dumps({
    "restaurant": "Kaiten Kita", "date": "2025-01-18",
    "plate_prices_cents": {"green": 250, "yellow": 350, "red": 450, "black": 600},
    "plates_sold": {"green": 412, "yellow": 268, "red": 139, "black": 47},
    "discarded_plates": {"green": 38, "yellow": 21, "red": 9, "black": 2}})
LAUNDRY_TOOL = json.dumps({"store": "SpinCity", "as_of": "2025-07-19T10:20:00-04:00",
                           "faulted": [{"id": "W-04", "since": "2025-07-18T16:05:00-04:00"},
                                       {"id": "D-02", "since": "2025-07-17T19:30:00-04:00"}]})


def test_an_objects_counts_and_the_time_to_the_as_of_pass_through_the_server(client,
                                                                            placeholder):
    """Through the real server: an object's counts added up, counts times the prices keyed
    alike (objects.py), and the time from a record's moment to the result's as-of
    (elapsed.py) reach the client verbatim (78d8575 redacted the first two sentences);
    changed, they are stopped."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = ("Kaiten Kita sold 866 plates on January 18, bringing in $2,875.50. "
             "Another 70 plates were discarded, most of them green. ")
    text, g = verbatim_then_changed(client, "How did Saturday go?", "sales", SUSHI_TOOL,
                                    right, "Another 70", "Another 76")
    first, second = g["sentences"]
    assert first["released"] == first["original"]
    assert second["released"] != second["original"] and "76" not in text
    right = "Dryer D-02 has now been down for almost 39 hours. "
    text, g = verbatim_then_changed(client, "Which machines are down?", "faults",
                                    LAUNDRY_TOOL, right, "almost 39", "almost 45")
    assert g["sentences"][0]["released"] != right and "45" not in text


CHARGER_TOOL = json.dumps({"charger": "CH-W7", "site": "Westgate", "sessions": [
    {"session": "S-1", "vehicle": "EV-118", "energy_kwh": 31.4},
    {"session": "S-2", "vehicle": "EV-204", "energy_kwh": 6.2},
    {"session": "S-3", "vehicle": "EV-118", "energy_kwh": 28.9},
    {"session": "S-4", "vehicle": "EV-233", "energy_kwh": 38.7},
    {"session": "S-5", "vehicle": "EV-151", "energy_kwh": 33.0}]})
PARCEL_TOOL = json.dumps({"order": "SO-558", "boxes": 3, "total_weight_kg": 4.8,
                          "carrier": "USPS"})


def test_a_count_of_different_things_and_a_weighed_unit_through_the_server(client,
                                                                          placeholder):
    """Through the real server: a count of different things read against the values of
    the key naming them (occurrences.py) and a weight in its own unit reach the client
    verbatim; five different vehicles of four, and the kilograms said as pounds
    (units.py: a weighed pound is a mass), are stopped (6ba9f45 released both)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Four different vehicles used the Westgate charger over five sessions. "
    text, g = verbatim_then_changed(client, "Who used the charger?", "sessions",
                                    CHARGER_TOOL, right, "Four different", "Five different")
    assert g["sentences"][0]["released"] != g["sentences"][0]["original"]
    assert "Five" not in text
    right = "Order SO-558 ships in three boxes and weighs 4.8 kg in all. "
    text, g = verbatim_then_changed(client, "How heavy is my order?", "order", PARCEL_TOOL,
                                    right, "4.8 kg", "4.8 pounds")
    assert g["sentences"][0]["released"] != g["sentences"][0]["original"]
    assert "4.8 pounds" not in text


DRUM_TOOL = json.dumps({"quote_id": "Q-2025-0412", "rental_period": {
    "pickup": "2025-04-11T10:00:00", "return": "2025-04-14T12:00:00", "billable_days": 3},
    "items": [{"description": "Pearl Export 5-piece shell pack", "daily_rate_cents": 3500,
               "qty": 1},
              {"description": "Zildjian A Custom cymbal pack", "daily_rate_cents": 2200,
               "qty": 1},
              {"description": "Roc-N-Soc drum throne", "daily_rate_cents": 500, "qty": 1},
              {"description": "Boom cymbal stand", "daily_rate_cents": 300, "qty": 2}],
    "delivery": {"requested": True, "fee_cents": 4500}, "deposit_cents": 30000})
DRUM_ANSWER = ("Per day, it's $35.00 for the Pearl Export shell pack, $22.00 for the Zildjian "
               "A Custom cymbals, $5.00 for the throne and $6.00 for the pair of boom stands, "
               "or $68.00 in all. Over the three days that adds up to $204.00 in rental "
               "charges. Once the $45.00 delivery fee is included, the total comes to {}. ")


def test_a_step_on_from_a_marked_amount_is_read_against_what_the_client_read(client,
                                                                           placeholder):
    """Through the real server, default policy: "$204.00" is worked out and no rule
    reproduces it, so it may be marked; the next sentence's total is read against it as
    the client read it (resummed.stepped: 204 + 45 = 249). $249.00 reaches the client
    verbatim; $259.00 is stopped (the confirming check read the answer without the
    marked sentence, and released it, at 7e76571)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    text, g = stream_tool_turn(client, "Can you break down the drum kit quote?", "quote",
                               DRUM_TOOL, DRUM_ANSWER.format("$249.00"))
    assert g["sentences"][-1]["released"] == g["sentences"][-1]["original"]
    text, g = stream_tool_turn(client, "Can you break down the drum kit quote?", "quote",
                               DRUM_TOOL, DRUM_ANSWER.format("$259.00"))
    last = g["sentences"][-1]
    assert last["released"] != last["original"] and "$259.00" not in text
    assert last["explanation"]["basis"] == "value_changed"


DELAYED_FLIGHT_TOOL = json.dumps({"flight": "TP1352", "status": "delayed",
                          "scheduled_departure": "2026-12-08T07:45:00Z",
                          "estimated_departure": "2026-12-08T08:30:00Z", "gate": "B14"})


def test_a_status_said_otherwise_is_redacted_and_said_in_other_words_passes(client,
                                                                          placeholder):
    """Through the server, default policy: "is on time" against ``status: delayed`` is a
    contradiction and is redacted; "is running late" says the same status in other words
    and reaches the client verbatim (guardrail.evidence.statuses)."""
    if placeholder:
        pytest.skip("needs the trained default model")
    right = "Your flight TP1352 is running late. It now leaves from gate B14."
    text, g = stream_tool_turn(client, "Is my flight on time?", "flight_status",
                               DELAYED_FLIGHT_TOOL, right)
    assert text == right and all(s["action"] == "release" for s in g["sentences"])
    text, g = stream_tool_turn(client, "Is my flight on time?", "flight_status",
                               DELAYED_FLIGHT_TOOL,
                               "Your flight TP1352 is on time. It leaves from gate B14.")
    wrong = g["sentences"][0]
    assert wrong["action"] == "redact" and "on time" not in text
    assert wrong["explanation"]["kind"] == "contradicted"
    assert wrong["explanation"]["basis"] == "value_changed"
    assert text.endswith("It leaves from gate B14.")
