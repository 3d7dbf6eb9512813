"""A scripted fake OpenAI-compatible LLM server (an ASGI app) for tests and the demo.

Answers are chosen by the first rule whose ``match`` occurs in the last user message
and are streamed word piece by word piece (``" built"``, ``" in"``, ``" 1950."``) at
``token_delay_s``.  A request may pick a failure mode with an extra body field,
which guardrail forwards like any unknown field (the openai SDK sends it through
``extra_body``)::

    "fake": {"mode": "error", "status": 503}   # OpenAI-style error body, that status
    "fake": {"mode": "cut", "after": 3}        # drop the connection after 3 pieces
    "fake": {"mode": "end", "after": 3}        # end cleanly, no finish_reason, no [DONE]
    "fake": {"mode": "malformed", "after": 3}  # send a data: line that is not JSON
    "fake": {"mode": "hang", "after": 3}       # stop sending, keep the connection open
    "fake": {"mode": "slow", "delay": 0.2}     # per-piece delay for this request
    "fake": {"mode": "raw", "events": [...]}   # send these ``data:`` payloads verbatim
                                               # (strings; a hostile upstream), then stop
    "fake": {"mode": "raw", "body": "..."}     # not streaming: this body, verbatim
    "fake": {"mode": "error", "status": 429, "headers": {"retry-after": "7"}}

Every request is appended to ``app.state.log`` (``FakeCall``), and a stream the
client abandoned is marked ``cancelled``: tests read both.  ``/v1/responses`` answers
the same rules in the Responses API's shape (``fake_responses``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator, Optional

import yaml

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from guardrail.testing.fake_responses import responses_endpoint
from guardrail.testing.script import (FakeCall, FakeScript, Rule, ScriptedCut,
                                      hang_until_gone, raw_events, scripted_error,
                                      split_pieces)

__all__ = ["DEMO", "FakeCall", "FakeScript", "Rule", "ServerThread", "create_fake_upstream",
           "demo_upstream", "read_demo", "split_pieces"]

# The conversation `guardrail demo` plays; examples/demo.yaml holds the same (tested).
_DEMO_TOOL = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, "
              "France. It was designed and built by the company of Gustave Eiffel from 1887 "
              "to 1889 as the centrepiece of the 1889 World's Fair. The tower is 330 metres "
              "tall.")
DEMO: dict = {
    "conversation": [
        {"role": "user", "content": "When was the Eiffel Tower built, and how tall is it?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "search", "arguments": '{"query": "Eiffel Tower"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": _DEMO_TOOL},
    ],
    "upstream": {
        "model": "fake-llm",
        "token_delay_s": 0.04,
        "rules": [
            {"match": "completed in 1950",
             "reply": "It was built by the company of Gustave Eiffel from 1887 to 1889."},
            {"match": "Eiffel",
             "reply": "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was "
                      "completed in 1950 by a team of Italian architects. The tower is 330 "
                      "metres tall."},
        ],
    },
}


def _chunk(cid: str, model: str, created: int, choices: list, **extra: Any) -> bytes:
    body = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
            "system_fingerprint": "fp_fake", "choices": choices, **extra}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _tool_call_deltas(calls: tuple[dict, ...]) -> list[dict]:
    out = []
    for i, call in enumerate(calls):
        out.append({"index": i, "id": f"call_{i}", "type": "function",
                    "function": {"name": call["name"], "arguments": ""}})
        out.append({"index": i, "function": {"arguments": call.get("arguments", "{}")}})
    return out


async def _stream(script: FakeScript, rule: Rule, body: dict, call: FakeCall,
                  fake: dict, request: Request) -> AsyncIterator[bytes]:
    cid, created, model = f"chatcmpl-fake{id(call)}", int(time.time()), body.get("model")
    model = model or script.model
    n, mode, after = int(body.get("n") or 1), fake.get("mode"), int(fake.get("after", 0))
    delay = float(fake.get("delay", script.token_delay_s))
    try:
        yield _chunk(cid, model, created, [{"index": i, "delta": {"role": "assistant",
                     "content": ""}, "logprobs": None, "finish_reason": None} for i in range(n)])
        for k, piece in enumerate(split_pieces(rule.reply)):
            if mode in ("cut", "end", "malformed", "hang") and k == after:
                if mode == "cut":
                    raise ScriptedCut("scripted cut")
                if mode == "malformed":
                    yield b'data: {"id": "broken", "choices": [\n\n'
                elif mode == "hang":
                    await hang_until_gone(request, call)
                return
            if delay:
                await asyncio.sleep(delay)
            for i in range(n):
                yield _chunk(cid, model, created, [{"index": i, "delta": {"content": piece},
                                                    "logprobs": None, "finish_reason": None}])
            call.pieces_sent = k + 1
        if rule.tool_calls:
            for delta in _tool_call_deltas(rule.tool_calls):
                yield _chunk(cid, model, created, [{"index": 0, "delta": {"tool_calls": [delta]},
                                                    "logprobs": None, "finish_reason": None}])
        reason = "tool_calls" if rule.tool_calls else "stop"
        yield _chunk(cid, model, created, [{"index": i, "delta": {}, "logprobs": None,
                                            "finish_reason": reason} for i in range(n)])
        if (body.get("stream_options") or {}).get("include_usage"):
            yield _chunk(cid, model, created, [], usage=_usage(body, rule.reply, n))
        yield b"data: [DONE]\n\n"
        call.finished = True
    except asyncio.CancelledError:
        call.cancelled = True
        raise


def _usage(body: dict, reply: str, n: int) -> dict:
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    completion = len(split_pieces(reply)) * n
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _completion(script: FakeScript, rule: Rule, body: dict) -> dict:
    n = int(body.get("n") or 1)
    message: dict = {"role": "assistant", "content": rule.reply or None}
    if rule.tool_calls:
        message["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                  "function": {"name": c["name"],
                                               "arguments": c.get("arguments", "{}")}}
                                 for i, c in enumerate(rule.tool_calls)]
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model") or script.model, "system_fingerprint": "fp_fake",
            "choices": [{"index": i, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if rule.tool_calls else "stop"}
                        for i in range(n)],
            "usage": _usage(body, rule.reply, n)}


def create_fake_upstream(script: Optional[FakeScript] = None) -> Starlette:
    """The fake server; mount it at the root (routes live under ``/v1``)."""
    script = script or FakeScript()

    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        fake = body.get("fake") or {}
        stream = bool(body.get("stream"))
        call = FakeCall(body=body, headers=dict(request.headers), stream=stream)
        app.state.log.append(call)
        if fake.get("mode") == "error":
            return scripted_error(fake)
        # as OpenAI answers: its own request id, its rate limits
        sent = {"x-request-id": f"req_fake{len(app.state.log)}", "openai-processing-ms": "3",
                "x-ratelimit-remaining-requests": "499"}
        if fake.get("mode") == "raw" and stream:
            return StreamingResponse(raw_events(fake, call), media_type="text/event-stream",
                                     headers=sent)
        if fake.get("mode") == "raw":
            return Response(fake["body"], media_type="application/json", headers=sent)
        rule = script.rule_for(body)
        if not stream:
            if fake.get("delay"):
                await asyncio.sleep(float(fake["delay"]))
            call.finished = True
            return JSONResponse(_completion(script, rule, body), headers=sent)
        return StreamingResponse(_stream(script, rule, body, call, fake, request),
                                 media_type="text/event-stream", headers=sent)

    async def models(request: Request) -> Response:
        model = {"id": script.model, "object": "model", "created": 0, "owned_by": "fake"}
        wanted = request.path_params.get("model_id")
        if wanted is None:
            return JSONResponse({"object": "list", "data": [model]})
        if wanted != script.model:
            return JSONResponse({"error": {"message": f"The model '{wanted}' does not exist",
                                           "type": "invalid_request_error",
                                           "code": "model_not_found"}}, 404)
        return JSONResponse(model)

    log: list[FakeCall] = []
    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                            Route("/v1/responses", responses_endpoint(script, log),
                                  methods=["POST"]),
                            Route("/v1/models", models, methods=["GET"]),
                            Route("/v1/models/{model_id:path}", models, methods=["GET"])])
    app.state.log = log
    app.state.script = script
    return app


class ServerThread:
    """Serve an ASGI app with uvicorn on ``host``:``port`` (0: a free port) in a daemon
    thread with its own event loop; for tests and ``guardrail demo``.  Use as a context
    manager; ``url`` is valid once entered."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0,
                 log_level: str = "warning"):
        import uvicorn

        self.app = app
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port,
                                                    log_level=log_level, lifespan="on",
                                                    timeout_graceful_shutdown=2))
        self.loop: Optional[asyncio.AbstractEventLoop] = None  # the server's, once started
        self.thread = threading.Thread(target=lambda: asyncio.run(self._serve()),
                                       daemon=True, name="uvicorn")
        self.host, self.port = host, port

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.server.serve()

    def __enter__(self) -> "ServerThread":
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the server failed to start (see its log)")
            self.thread.join(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def demo_upstream() -> Starlette:
    """The demo's scripted LLM, as an app factory (``uvicorn --factory
    guardrail.testing.fake_upstream:demo_upstream``; deploy/compose.yaml runs it)."""
    return create_fake_upstream(FakeScript.from_dict(DEMO["upstream"]))


def read_demo(path: Optional[Path] = None) -> tuple[list[dict], FakeScript]:
    """A demo YAML's (``examples/demo.yaml``'s form; None: :data:`DEMO`) conversation and
    scripted LLM; a file that is not one is a ``ValueError`` saying why."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path else DEMO
        messages = data["conversation"]
        if not (isinstance(messages, list) and all(isinstance(m, dict) and "role" in m
                                                   for m in messages)
                and any(m["role"] == "user" for m in messages)):
            raise ValueError("conversation: a list of messages (role, content) with a user's")
        return messages, FakeScript.from_dict(data["upstream"])
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError) as exc:
        why = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ValueError(f"{path}: {why} (examples/demo.yaml shows the form)") from None
