"""guardrail.proxy over real loopback HTTP (uvicorn), raw httpx as the client, the scripted
fake upstream, and a scripted Verifier (the collaborator) — every bad-input and
reliability case of the proxy.  End-to-end with the real detector: test_e2e_proxy.py."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time

import httpx
import pytest
from conftest import EIFFEL_TOOL, serve
from scripted import ScriptedVerifier

from guardrail.config import GuardrailConfig
from guardrail.errors import DetectorError
from guardrail.proxy.app import create_app
from guardrail.stream.sse import SSEDecoder

QUESTION = "When was the Eiffel Tower built?"
TOOL_MSGS = [{"role": "user", "content": QUESTION},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function",
                  "function": {"name": "search", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "c1", "content": EIFFEL_TOOL}]


def cfg(upstream_url: str, **sections) -> GuardrailConfig:
    sections["scheduler"] = {"latency_budget_s": 120.0, "initial_streams": 64,
                             **sections.get("scheduler", {})}
    data = {"upstream": {"base_url": upstream_url + "/v1", "api_key": "sk-upstream",
                         "read_timeout_s": 30}, **sections}
    return GuardrailConfig.model_validate(data)


@contextlib.contextmanager
def proxy(fake, verifier=None, **sections):
    v = verifier or ScriptedVerifier(bad=("1950",))
    with serve(create_app(cfg(fake.url, **sections), verifier=v)) as s:
        with httpx.Client(base_url=s.url, timeout=30) as client:
            client.verifier = v
            yield client


def body(stream=True, messages=None, **extra):
    return {"model": "fake-llm", "stream": stream,
            "messages": messages or [{"role": "user", "content": QUESTION}], **extra}


def events(text: str) -> list:
    return [e.data if e.data == "[DONE]" else json.loads(e.data)
            for e in SSEDecoder().feed(text.encode())]


def content(evs) -> str:
    return "".join(c["delta"].get("content") or "" for e in evs if isinstance(e, dict)
                   for c in e.get("choices", []) if c["index"] == 0)


# -- bad input --------------------------------------------------------------------------

@pytest.mark.parametrize("raw, message", [
    (b"{oops", "not valid JSON"),
    (json.dumps({"model": "fake-llm"}).encode(), "'messages' is required"),
    (json.dumps(body(messages="hi")).encode(), "'messages' must be a non-empty array"),
    (json.dumps({**body(), "stream": "yes"}).encode(), "'stream' must be a boolean"),
    (json.dumps(body(guardrail={"context": 5})).encode(), "'guardrail.context' must be"),
    (json.dumps(body(guardrail={"context": ["d"], "policy": {"threshold": 0.01}})).encode(),
     None),
])
def test_bad_requests_are_400_with_a_json_error(fake_upstream, raw, message):
    with proxy(fake_upstream, limits={"min_threshold": 0.2}) as c:
        r = c.post("/v1/chat/completions", content=raw,
                   headers={"content-type": "application/json"})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error"
    assert message is None or message in err["message"]
    assert fake_upstream.app.state.log == []  # nothing went upstream


def test_body_too_large_route_not_found_and_n_gt_1(fake_upstream):
    with proxy(fake_upstream, server={"max_body_bytes": 2048}) as c:
        r = c.post("/v1/chat/completions", content=b"x" * 5000)
        assert r.status_code == 413 and "exceeds 2048 bytes" in r.json()["error"]["message"]
        r = c.get("/v1/nothing")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert r.json()["error"]["message"].startswith("GET /v1/nothing is not served here")
        r = c.get("/v1/chat/completions")
        assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
        assert "POST /v1/chat/completions" in r.json()["error"]["message"]
        r = c.post("/v1/chat/completions", json=body(n=2, guardrail={"context": ["doc"]}))
        assert r.status_code == 400 and "only choice 0" in r.json()["error"]["message"]
        r = c.post("/v1/chat/completions", json=body(guardrail={"context_id": "ctx_1"}))
        assert r.status_code == 404 and r.json()["error"]["code"] == "context_not_found"
    assert all(call.body.get("fake") is None for call in fake_upstream.app.state.log)
    assert fake_upstream.app.state.log == []  # nothing went upstream


def test_unknown_api_key_is_401_when_keys_are_required(fake_upstream):
    with proxy(fake_upstream, server={"require_api_key": True},
               tenants={"acme": {"api_keys": ["sk-acme"]}}) as c:
        assert c.post("/v1/chat/completions", json=body()).status_code == 401
        assert c.get("/v1/models").status_code == 401  # not the upstream's, on our key
        assert c.get("/v1/models", headers={"authorization": "Bearer sk-acme"}
                     ).status_code == 200
        r = c.post("/v1/chat/completions", json=body(stream=False),
                   headers={"authorization": "Bearer sk-acme"})
        assert r.status_code == 200


def test_context_id_resolves_to_the_tenants_stored_documents(fake_upstream):
    acme = {"authorization": "Bearer sk-acme"}
    with proxy(fake_upstream, server={"require_api_key": False},
               tenants={"acme": {"api_keys": ["sk-acme"]}}) as c:
        cid = c.put("/v1/contexts", headers=acme, json={"documents": [EIFFEL_TOOL]}).json()[
            "context_id"]
        r = c.post("/v1/chat/completions", headers=acme, json=body(
            stream=False, guardrail={"context_id": cid, "context": ["An inline one."]}))
        assert r.status_code == 200 and r.json()["guardrail"]["policy"]["tenant"] == "acme"
        assert c.verifier.requests[0].grounding.documents == (EIFFEL_TOOL, "An inline one.")
        # without a key: the default tenant, which has no such id
        r = c.post("/v1/chat/completions", json=body(guardrail={"context_id": cid}))
        assert r.status_code == 404 and r.json()["error"]["code"] == "context_not_found"
        r = c.post("/v1/chat/completions", json=body(stream=False, messages=TOOL_MSGS))
        assert r.status_code == 200 and r.json()["guardrail"]["policy"]["tenant"] is None
        assert c.get("/v1/contexts").json()["data"] == []
        assert c.get("/healthz").json()["tenants"] == 1
        text = c.get("/metrics").text
    assert "guardrail_cache_redis_errors_total 0.0" in text
    assert "guardrail_scheduler_" not in text  # a verifier without scheduler stats


# -- upstream failures ------------------------------------------------------------------

def test_upstream_unreachable_is_502(fake_upstream):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    class Nowhere:
        url = f"http://127.0.0.1:{port}"
    with proxy(Nowhere) as c:
        for stream in (True, False):
            r = c.post("/v1/chat/completions", json=body(stream=stream))
            assert r.status_code == 502
            assert r.json()["error"]["type"] == "upstream_unreachable"
        assert c.get("/v1/models").status_code == 502


@pytest.mark.parametrize("stream", [True, False])
def test_upstream_error_status_is_passed_through(fake_upstream, stream):
    with proxy(fake_upstream) as c:
        r = c.post("/v1/chat/completions", json=body(
            stream=stream, fake={"mode": "error", "status": 429, "message": "slow down"},
            guardrail={"context": ["doc"]}))
    assert r.status_code == 429
    assert r.json() == {"error": {"message": "slow down", "type": "server_error",
                                  "code": "fake_error"}}


@pytest.mark.parametrize("mode", ["cut", "malformed", "end"])
@pytest.mark.parametrize("checked", [True, False])
def test_broken_upstream_streams_end_with_error_event_and_done(fake_upstream, mode, checked):
    msgs = TOOL_MSGS if checked else None
    with proxy(fake_upstream) as c:
        r = c.post("/v1/chat/completions", json=body(messages=msgs, fake={
            "mode": mode, "after": 14}))
        metrics = c.get("/metrics").text
    evs = events(r.text)
    assert r.status_code == 200 and evs[-1] == "[DONE]"
    assert evs[-2]["error"]["type"] == "upstream_protocol_error"
    # counted, so that a monitor sees the failed streams (their status was 200)
    assert 'guardrail_errors_total{type="upstream_protocol_error"} 1.0' in metrics
    if checked:  # only the finished, checked first sentence got out
        assert content(evs) == "The Eiffel Tower is a wrought-iron lattice tower in Paris. "


def test_client_disconnect_cancels_the_upstream_and_pending_checks(fake_upstream):
    with proxy(fake_upstream) as c:
        with c.stream("POST", "/v1/chat/completions",
                      json=body(messages=TOOL_MSGS, fake={"mode": "hang", "after": 14})) as r:
            first = next(r.iter_lines())
            assert first.startswith("data: ")
        # the client has gone: guardrail must drop its upstream request
        call = fake_upstream.app.state.log[-1]
        deadline = time.monotonic() + 20
        while not call.cancelled and time.monotonic() < deadline:
            time.sleep(0.02)
        assert call.cancelled and not call.finished
        while not c.verifier.aborted and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.verifier.aborted and c.verifier.aborted[0].startswith("gr-")


# -- detector failures ------------------------------------------------------------------

def test_detector_raising_fails_closed_by_default(fake_upstream):
    with proxy(fake_upstream, ScriptedVerifier(fail=RuntimeError("boom"))) as c:
        r = c.post("/v1/chat/completions", json=body(messages=TOOL_MSGS))
        evs = events(r.text)
        assert evs[-2]["error"]["type"] == "detector_error" and evs[-1] == "[DONE]"
        assert content(evs) == ""
        r = c.post("/v1/chat/completions", json=body(stream=False, messages=TOOL_MSGS))
        assert r.status_code == 500 and r.json()["error"]["type"] == "detector_error"


def test_detector_raising_fails_open_when_configured(fake_upstream):
    with proxy(fake_upstream, ScriptedVerifier(fail=DetectorError("down")),
               verification={"on_error": "open"}) as c:
        r = c.post("/v1/chat/completions", json=body(messages=TOOL_MSGS))
    evs = events(r.text)
    assert "1950" in content(evs)
    g = evs[-2]["guardrail"]
    assert all(not s["checked"] for s in g["sentences"]) and g["errors"]


# -- the happy paths --------------------------------------------------------------------

def test_passthrough_without_context_is_unverified_and_untouched(fake_upstream):
    with proxy(fake_upstream) as c:
        r = c.post("/v1/chat/completions", json=body())
        assert r.headers["x-guardrail-verified"] == "false"
        evs = events(r.text)
        assert "1950" in content(evs) and evs[-1] == "[DONE]"
        assert not any(isinstance(e, dict) and "guardrail" in e for e in evs)
        assert c.verifier.requests == []
        r = c.post("/v1/chat/completions", json=body(stream=False))
        assert r.headers["x-guardrail-verified"] == "false" and "guardrail" not in r.json()


def test_checked_stream_strips_extension_and_uses_the_operators_key(fake_upstream):
    with proxy(fake_upstream) as c:
        r = c.post("/v1/chat/completions", headers={"authorization": "Bearer sk-client"},
                   json=body(guardrail={"context": [EIFFEL_TOOL]}))
    assert r.headers["x-guardrail-verified"] == "true"
    evs = events(r.text)
    assert "[unsupported]" in content(evs) and "1950" not in content(evs)
    call = fake_upstream.app.state.log[-1]
    assert "guardrail" not in call.body
    assert call.headers["authorization"] == "Bearer sk-upstream"


def test_non_streaming_headers_and_block(fake_upstream):
    with proxy(fake_upstream) as c:
        r = c.post("/v1/chat/completions", json=body(stream=False, messages=TOOL_MSGS))
        assert r.status_code == 200
        assert (r.headers["x-guardrail-hallucination"], r.headers["x-guardrail-spans"],
                r.headers["x-guardrail-action"]) == ("true", "1", "redact")
        g = r.json()["guardrail"]
        assert [s["action"] for s in g["sentences"]] == ["release", "redact", "release"]
        r = c.post("/v1/chat/completions", json=body(
            stream=False, messages=TOOL_MSGS, guardrail={"policy": {"action": "block"}}))
        assert r.status_code == 422 and r.json()["error"]["type"] == "guardrail_blocked"
        assert r.json()["guardrail"]["partial"] is True


def test_overload_is_503_with_retry_after(fake_upstream):
    with proxy(fake_upstream, server={"max_concurrent_requests": 1}) as c:
        for stream in (False, False, True, True):  # finished requests free their slot
            assert c.post("/v1/chat/completions", json=body(stream=stream)).status_code == 200
        with c.stream("POST", "/v1/chat/completions",
                      json=body(fake={"mode": "hang", "after": 2})) as r:
            lines = r.iter_lines()  # keep it: a dropped iterator closes the connection
            next(lines)
            busy = c.post("/v1/chat/completions", json=body())
            assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
            assert busy.json()["error"]["type"] == "overloaded"


def test_verifier_backlog_is_503_before_anything_goes_upstream(fake_upstream):
    v = ScriptedVerifier()
    v.overloaded = True
    with proxy(fake_upstream, v) as c:
        r = c.post("/v1/chat/completions", json=body(messages=TOOL_MSGS))
        assert r.status_code == 503 and r.headers["retry-after"] == "3"
        assert c.post("/v1/chat/completions", json=body()).status_code == 200  # unchecked
    assert len(fake_upstream.app.state.log) == 1


def test_models_healthz_metrics_and_verify(fake_upstream):
    with proxy(fake_upstream) as c:
        assert c.get("/v1/models").json()["data"][0]["id"] == "fake-llm"
        assert c.get("/v1/models/fake-llm").json()["id"] == "fake-llm"  # models.retrieve
        r = c.get("/v1/models/org/other-llm")  # an id with a slash goes up as it is
        assert r.status_code == 404 and "'org/other-llm'" in r.json()["error"]["message"]
        r = c.get("/v1/models/%2E%2E/chat/completions")  # not sent up as ../chat
        assert r.status_code == 404 and fake_upstream.app.state.log == []
        assert c.get("/healthz").json()["status"] == "ok"
        c.post("/v1/chat/completions", json=body(messages=TOOL_MSGS))
        r = c.post("/v1/verify", json={"context": EIFFEL_TOOL, "question": QUESTION,
                                       "answer": "It was built in 1950."})
        assert r.status_code == 200
        v = r.json()
        assert v["hallucination_detected"] is True and v["released"] == \
            "It was built in [unsupported]."
        assert v["guardrail"]["sentences"][0]["spans"][0]["text"] == "1950"
        for bad, msg in [({"context": "d"}, "'answer'"), ({"answer": "a"}, "'context'"),
                         ({"context": "d", "answer": "a", "x": 1}, "unknown field"),
                         ({"context": "d", "answer": "a", "policy": {"action": "x"}},
                          "'policy.action'"),  # named as the body names it
                         ({"context": "d", "answer": "a", "policy": 3},
                          "'policy' must be an object"),
                         ({"context": "d", "answer": "a", "policy": {"hold": False}},
                          "'policy.hold' cannot be turned off")]:
            r = c.post("/v1/verify", json=bad)
            assert r.status_code == 400 and msg in r.json()["error"]["message"]
        text = c.get("/metrics").text
    assert 'guardrail_requests_total{checked="true",mode="stream"} 1.0' in text
    assert 'guardrail_sentences_total{action="redact",checked="true"}' in text
    assert 'guardrail_check_seconds_count{exit_layer="2"}' in text
    assert "guardrail_queue_depth 0.0" in text
    assert "guardrail_sentences_settled_total 0.0" in text  # no judge here: none settled


PROXY_PROCESS = """
import importlib, pkgutil, sys
import guardrail.cli, guardrail.engine, guardrail.proxy, guardrail.stream, guardrail.contexts
for pkg in (guardrail.proxy, guardrail.stream, guardrail.contexts, guardrail.engine):
    for m in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
        if m.name not in ("guardrail.engine.scheduler",):  # the engine side loads the model
            importlib.import_module(m.name)
from guardrail.proxy.app import create_app
create_app(verifier=object())
print(sorted(k for k in sys.modules if k == "torch" or k.startswith("torch.")))
"""


def test_proxy_process_never_imports_torch():
    """Every module of the proxy, the stream stages and the engine seam imports, and an
    app is built, without torch: only ``engine.build`` loads the model, lazily."""
    out = subprocess.run([sys.executable, "-c", PROXY_PROCESS], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("checked", [True, False])
def test_a_json_error_answering_a_stream_with_200_is_passed_on(fake_upstream, checked):
    """An upstream that answers a streaming request with ``200`` and its own JSON error
    object (overloaded, ...): the client gets that object, as for an error status
    (502: the upstream failed), not a protocol error that hides the message."""
    with proxy(fake_upstream) as c:
        r = c.post("/v1/chat/completions", json=body(
            messages=TOOL_MSGS if checked else None,
            fake={"mode": "error", "status": 200, "message": "model is overloaded"}))
    assert r.status_code == 502
    assert r.json()["error"] == {"message": "model is overloaded", "type": "server_error",
                                 "code": "fake_error"}


def test_null_in_the_extension_means_unset(fake_upstream):
    """``"guardrail": null`` and null fields in it are unset, as OpenAI reads a null
    parameter (``policy``, ``stream`` and ``n`` already were)."""
    with proxy(fake_upstream) as c:
        r = c.post("/v1/chat/completions", json=body(stream=False, guardrail=None))
        assert r.status_code == 200 and r.headers["x-guardrail-verified"] == "false"
        r = c.post("/v1/chat/completions", json=body(
            stream=False, messages=TOOL_MSGS,
            guardrail={"context": None, "sentence_events": None, "policy": None}))
        assert r.status_code == 200 and r.headers["x-guardrail-verified"] == "true"
        r = c.post("/v1/chat/completions", json=body(stream=False, guardrail={"context": 3}))
        assert r.status_code == 400 and "guardrail.context" in r.json()["error"]["message"]


def test_a_json_answer_stays_json_through_the_server(fake_upstream):
    """``response_format`` json_object: the flagged sentence is redacted inside its
    string value, and the client parses the answer; the same answer without it loses
    its closing quote and brace to the redaction."""
    from guardrail.testing.script import chat_events
    answer = json.dumps({"carrier": "UPS", "summary": "It shipped in May. It was built "
                         "in 1950 by J. Smith."})
    texts = []
    with proxy(fake_upstream) as c:
        for extra in ({"response_format": {"type": "json_object"}}, {}):
            r = c.post("/v1/chat/completions", json=body(
                messages=TOOL_MSGS, fake={"mode": "raw", "events": chat_events(answer)},
                guardrail={"policy": {"redact_mode": "sentence"}}, **extra))
            texts.append(content(events(r.text)))
    assert json.loads(texts[0]) == {"carrier": "UPS",
                                    "summary": "It shipped in May. [unsupported]"}
    assert texts[1].endswith("[unsupported]")  # the quote and brace went with the sentence


def test_healthz_shows_no_upstream_credentials(fake_upstream):
    url = fake_upstream.url.replace("http://", "http://svc:s3cret@")

    class WithCredentials:
        pass
    WithCredentials.url = url
    with proxy(WithCredentials) as c:
        shown = c.get("/healthz").json()["upstream"]
    assert "s3cret" not in shown and shown == fake_upstream.url.replace(
        "http://", "http://***@") + "/v1"


def test_verify_never_calls_the_upstream_even_to_regenerate(fake_upstream):
    """``/v1/verify`` checks a triple without an upstream: a regenerate policy redacts."""
    with proxy(fake_upstream) as c:
        r = c.post("/v1/verify", json={"context": EIFFEL_TOOL, "answer": "It was built in 1950.",
                                       "policy": {"action": "regenerate"}})
    assert r.status_code == 200 and r.json()["action"] == "redact"
    assert fake_upstream.app.state.log == []


def test_an_audio_answer_to_a_checked_request_is_refused(fake_upstream):
    """The transcript could be checked, the audio never redacted: a 400 saying so, and
    nothing upstream; without grounding the request passes unchecked as any other."""
    audio = [{"modalities": ["text", "audio"], "audio": {"voice": "alloy", "format": "wav"}},
             {"modalities": ["audio"]}, {"audio": {"voice": "alloy", "format": "pcm16"}}]
    with proxy(fake_upstream) as c:
        for extra in audio:
            for stream in (True, False):
                r = c.post("/v1/chat/completions",
                           json=body(stream, TOOL_MSGS, **extra))
                assert r.status_code == 400, (extra, r.text)
                assert r.json()["error"]["code"] == "unsupported_modality"
                assert "'modalities': ['text']" in r.json()["error"]["message"]
        assert fake_upstream.app.state.log == []
        r = c.post("/v1/chat/completions", json=body(False, **audio[0]))
        assert r.status_code == 200 and r.headers["x-guardrail-verified"] == "false"
        r = c.post("/v1/chat/completions", json=body(False, TOOL_MSGS, modalities=["text"]))
        assert r.status_code == 200 and r.headers["x-guardrail-verified"] == "true"


def test_verify_refuses_what_chat_refuses(fake_upstream):
    """Half a character, a grounding over the limits, a busy engine: the same 4xx/503 as
    chat, before any check runs."""
    with proxy(fake_upstream, context={"max_documents": 3}) as c:
        for field in ("answer", "question"):
            bad = {"context": "doc", "question": "q?", "answer": "It is 5 m tall."}
            bad[field] = "It is \ud800 tall."
            r = c.post("/v1/verify", content=json.dumps(bad),
                       headers={"content-type": "application/json"})
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_unicode"
            assert f"'{field}'" in r.json()["error"]["message"]
        r = c.post("/v1/verify", json={"context": ["d"] * 4, "answer": "It is 5 m tall."})
        assert r.status_code == 400 and r.json()["error"]["code"] == "context_too_large"
        c.verifier.overloaded = True
        r = c.post("/v1/verify", json={"context": "doc", "answer": "It is 5 m tall."})
        assert r.status_code == 503 and r.json()["error"]["type"] == "overloaded"
        assert c.verifier.completed == []  # nothing was checked


def test_a_lone_surrogate_from_the_upstream_is_a_replacement_character_not_a_500(
        fake_upstream):
    answer = "It was built in 1889 \\ud800 by Eiffel."  # a JSON escape of half a character
    chat = ('{"id": "c", "object": "chat.completion", "model": "m", "choices": ['
            '{"index": 0, "message": {"role": "assistant", "content": "%s"}, '
            '"finish_reason": "stop"}, {"index": 1, "message": {"role": "assistant", '
            '"content": "x \\udc00"}, "finish_reason": "stop"}]}' % answer)
    resp = ('{"id": "r", "object": "response", "status": "completed", "output": [{"type": '
            '"message", "id": "m", "role": "assistant", "content": [{"type": "output_text", '
            '"text": "%s", "annotations": []}]}]}' % answer)
    with proxy(fake_upstream, verification={"other_choices": "pass"}) as c:
        r = c.post("/v1/chat/completions", json=body(stream=False, messages=TOOL_MSGS, n=2,
                                                     fake={"mode": "raw", "body": chat}))
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["message"]["content"] == \
            "It was built in 1889 \ufffd by Eiffel."
        assert r.json()["choices"][1]["message"]["content"] == "x \udc00"  # as sent, unchecked
        r = c.post("/v1/responses", json={"model": "fake-llm", "input": QUESTION,
                                          "guardrail": {"context": EIFFEL_TOOL},
                                          "fake": {"mode": "raw", "body": resp}})
        assert r.status_code == 200, r.text
        assert r.json()["output"][0]["content"][0]["text"] == \
            "It was built in 1889 \ufffd by Eiffel."
