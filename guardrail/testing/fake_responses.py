"""The fake upstream's ``POST /v1/responses``: the same scripted rules, answered as the
Responses API streams them (typed events, each ``event: <type>``; the stream ends
after ``response.completed``, with no ``[DONE]``) or as one response object.

Failure modes as for chat (``"fake": {"mode": ...}``): ``error`` (an HTTP error),
``cut``, ``hang``, ``raw``, and ``event_error`` (an ``error`` event after ``after``
pieces, as OpenAI reports a failure mid-stream).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from guardrail.testing.script import (FakeCall, FakeScript, Rule, ScriptedCut,
                                     hang_until_gone, raw_events, scripted_error,
                                     split_pieces)

__all__ = ["responses_endpoint"]


def _as_chat(body: dict) -> dict:
    """The request as chat messages, for the script's rules (they read the last user
    message)."""
    items = body.get("input")
    if isinstance(items, str):
        return {"messages": [{"role": "user", "content": items}]}
    messages = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("role") == "user":
            c = item.get("content")
            text = c if isinstance(c, str) else " ".join(
                p.get("text", "") for p in c or () if isinstance(p, dict))
            messages.append({"role": "user", "content": text})
    return {"messages": messages}


def _output(rule: Rule, msg_id: str) -> list[dict]:
    out: list[dict] = []
    if rule.reply:
        out.append({"id": msg_id, "type": "message", "status": "completed",
                    "role": "assistant", "content": [
                        {"type": "output_text", "text": rule.reply, "annotations": []}]})
    for i, call in enumerate(rule.tool_calls):
        out.append({"id": f"fc_{i}", "type": "function_call", "status": "completed",
                    "call_id": f"call_{i}", "name": call["name"],
                    "arguments": call.get("arguments", "{}")})
    return out


def _response(script: FakeScript, rule: Rule, body: dict, rid: str, status: str,
              output: list[dict]) -> dict:
    words = len(split_pieces(rule.reply))
    return {"id": rid, "object": "response", "created_at": int(time.time()),
            "status": status, "model": body.get("model") or script.model,
            "output": output, "error": None, "incomplete_details": None,
            "usage": {"input_tokens": 1, "output_tokens": words,
                      "total_tokens": 1 + words} if status == "completed" else None}


def _event(kind: str, seq: int, **fields: Any) -> bytes:
    data = {"type": kind, "sequence_number": seq, **fields}
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


async def _stream(script: FakeScript, rule: Rule, body: dict, call: FakeCall,
                  fake: dict, request: Request) -> AsyncIterator[bytes]:
    rid, mid = f"resp_fake{id(call)}", f"msg_fake{id(call)}"
    mode, after = fake.get("mode"), int(fake.get("after", 0))
    delay = float(fake.get("delay", script.token_delay_s))
    seq = iter(range(10**6))
    ids = {"item_id": mid, "output_index": 0, "content_index": 0}
    try:
        start = _response(script, rule, body, rid, "in_progress", [])
        yield _event("response.created", next(seq), response=start)
        yield _event("response.in_progress", next(seq), response=start)
        yield _event("response.output_item.added", next(seq), output_index=0, item={
            "id": mid, "type": "message", "status": "in_progress", "role": "assistant",
            "content": []})
        yield _event("response.content_part.added", next(seq), **ids,
                     part={"type": "output_text", "text": "", "annotations": []})
        for k, piece in enumerate(split_pieces(rule.reply)):
            if k == after and mode in ("cut", "hang", "event_error"):
                if mode == "cut":
                    raise ScriptedCut("scripted cut")
                if mode == "event_error":
                    yield _event("error", next(seq), code="server_error", param=None,
                                 message=fake.get("message", "scripted failure"))
                    return
                await hang_until_gone(request, call)
                return
            if delay:
                await asyncio.sleep(delay)
            yield _event("response.output_text.delta", next(seq), **ids, delta=piece,
                         logprobs=[])
            call.pieces_sent = k + 1
        output = _output(rule, mid)
        yield _event("response.output_text.done", next(seq), **ids, text=rule.reply,
                     logprobs=[])
        yield _event("response.content_part.done", next(seq), **ids,
                     part={"type": "output_text", "text": rule.reply, "annotations": []})
        for i, item in enumerate(output):
            yield _event("response.output_item.done", next(seq), output_index=i, item=item)
        yield _event("response.completed", next(seq),
                     response=_response(script, rule, body, rid, "completed", output))
        call.finished = True
    except asyncio.CancelledError:
        call.cancelled = True
        raise


def responses_endpoint(script: FakeScript, log: list):
    async def responses(request: Request) -> Response:
        body = json.loads(await request.body())
        fake = body.get("fake") or {}
        stream = bool(body.get("stream"))
        call = FakeCall(body=body, headers=dict(request.headers), stream=stream)
        log.append(call)
        if fake.get("mode") == "error":
            return scripted_error(fake)
        if fake.get("mode") == "raw" and stream:
            return StreamingResponse(raw_events(fake, call), media_type="text/event-stream")
        if fake.get("mode") == "raw":
            return Response(fake["body"], media_type="application/json")
        rule = script.rule_for(_as_chat(body))
        if not stream:
            call.finished = True
            return JSONResponse(_response(script, rule, body, "resp_fake", "completed",
                                          _output(rule, "msg_fake")))
        return StreamingResponse(_stream(script, rule, body, call, fake, request),
                                 media_type="text/event-stream")
    return responses
