"""The checked routes: ``POST /v1/chat/completions``, ``POST /v1/responses`` and
``POST /v1/verify``.

Per request: the tenant from ``Authorization`` (401), the body parsed and validated
(400/413), admission (``engine.admit()``: 503/429 + Retry-After, nothing sent
upstream), ``guardrail.context_id`` resolved in the tenant's namespace (404), then the
stream runs through ``guardrail.stream`` against the engine.
"""

from __future__ import annotations

import contextlib
import functools
import re
import uuid
from dataclasses import dataclass, replace
from typing import AsyncIterator, Awaitable, Callable, Optional

from sse_starlette import EventSourceResponse
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from guardrail.config import ContextConfig, PolicyOverride
from guardrail.engine.seam import Verifier
from guardrail.errors import BadRequest, GuardrailError, NotFound
from guardrail.proxy.requests import (ChatRequest, SafeJSONResponse, check_size,
                                      documents_list, parse_chat_request, parse_json_object,
                                      parse_policy, read_body, whole_characters)
from guardrail.proxy.responses_api import parse_responses_request
from guardrail.proxy.state import AppState, _Admission, state_of
from guardrail.proxy.upstream import PASSED_BACK, PASSED_ON, UpstreamStream, passed
from guardrail.stream.answer import GuardSettings
from guardrail.stream.chunks import chat_failure, passthrough_stream
from guardrail.stream.pipeline import CompletionResult, guarded_completion, guarded_stream
from guardrail.stream.responses import (TERMINAL, ResponsesWire, guarded_response,
                                        responses_failure)
from guardrail.stream.wire import ChatWire, Wire
from guardrail.stream.policy import resolve_policy
from guardrail.types import Grounding


async def _grounding(st: AppState, g: Grounding, tenant: str) -> Grounding:
    """Stored documents of ``context_id`` (in the tenant's namespace) before the inline
    ones; unknown or expired is NotFound (404), a Redis-only id while Redis is down
    StoreUnavailable (503).  Resolved before anything goes upstream."""
    if g.context_id is None:
        return g
    stored = await st.store.get(tenant, g.context_id)
    docs = tuple(stored.documents) + g.documents
    check_size(docs, st.config.context)  # a context stored under other limits
    return Grounding(docs, g.question, g.context_id)


async def _settings(st: AppState, grounding: Grounding, override: Optional[PolicyOverride],
                    tenant: str, auth: Optional[str], *, n: int = 1, model: str = "",
                    stream_id: Optional[str] = None, sentence_events: bool = False,
                    json_answer: bool = False, where: str = "guardrail.policy"
                    ) -> GuardSettings:
    cfg = st.config
    if n > 1 and cfg.verification.other_choices == "reject":
        raise BadRequest(f"'n'={n} with grounding context: only choice 0 can be checked "
                         "and this server rejects n>1 (verification.other_choices=reject)")
    policy = resolve_policy(cfg, st.tenants.policy_name(tenant), override, where)
    stream_id = stream_id or new_stream_id()
    budget, step = st.left_context()
    return GuardSettings(await _grounding(st, grounding, tenant), policy, cfg.verification,
                         stream_id=stream_id, model=model,
                         regenerator=st.regenerators.for_request(auth),
                         observer=st.metrics, tenant=tenant,
                         grounding_limit=functools.partial(
                             check_size, cfg=cfg.context,
                             what="the grounding with the regenerate hook's documents"),
                         on_report=lambda r: st.reports.put(tenant, stream_id, r),
                         judge=st.sentence_judge(), sentence_events=sentence_events,
                         json_answer=json_answer,
                         left_context_chars=budget, left_context_step_chars=step,
                         final_by_sentence=st.keeps_answer())


async def _streaming(body: AsyncIterator[bytes], slot: _Admission) -> AsyncIterator[bytes]:
    try:
        async with contextlib.aclosing(body):
            async for out in body:
                yield out
    finally:
        await slot.release()  # closes the upstream: it learns the client has gone


UNGROUNDED = {"x-guardrail-verified": "false", "x-guardrail-grounding": "none"}


def _no_grounding(st: AppState) -> None:
    """No grounding was found: refused (``verification.no_grounding: refuse``) or
    counted and passed through unchecked, saying so in the headers."""
    if st.config.verification.no_grounding == "refuse":
        raise BadRequest("no grounding found in the request: send tool results, "
                         "'guardrail.context' or 'guardrail.context_id', or documents in "
                         "the system message; this server refuses unchecked answers "
                         "(verification.no_grounding: refuse)", code="no_grounding")
    st.metrics.ungrounded.inc()


def new_stream_id() -> str:
    return f"gr-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Api:
    """What differs between the OpenAI APIs guardrail serves; the route is the same."""

    path: str                                             # upstream path, e.g. "responses"
    parse: Callable[[bytes, ContextConfig], ChatRequest]
    wire: Callable[[GuardSettings], Wire]
    ends: Callable[[Optional[dict]], bool]                # a pass-through stream's last event
    complete: Callable[[dict, GuardSettings, Verifier], Awaitable[CompletionResult]]
    fail: Callable[[GuardrailError], bytes] = chat_failure  # how a pass-through ends failing
    unended: str = "upstream closed the stream without [DONE]"


CHAT = Api("chat/completions", parse_chat_request, lambda s: ChatWire(),
           lambda event: event is None, guarded_completion)
RESPONSES = Api("responses", parse_responses_request, lambda s: ResponsesWire(s.policy.hold),
                lambda event: event is None or event.get("type") in (*TERMINAL, "error"),
                guarded_response, responses_failure,
                "upstream closed the stream before the response ended")


async def chat_completions(request: Request) -> Response:
    return await _serve(request, CHAT)


async def responses(request: Request) -> Response:
    return await _serve(request, RESPONSES)


async def _serve(request: Request, api: Api) -> Response:
    st = state_of(request)
    auth = request.headers.get("authorization")
    tenant = st.tenants.resolve(auth)
    raw = await read_body(request.stream(), st.config.server.max_body_bytes)
    req = api.parse(raw, st.config.context)
    auth = _Auth(auth, passed(request.headers, PASSED_ON))
    if not req.checked:
        _no_grounding(st)
        return await _forward(st, api, req, None, auth)
    stream_id = new_stream_id()
    st.verifier.admit(stream_id)  # refuse early (503) rather than fail mid-stream
    try:
        settings = await _settings(st, req.grounding, req.policy, tenant, auth.key, n=req.n,
                                   model=req.model, stream_id=stream_id,
                                   sentence_events=req.sentence_events,
                                   json_answer=req.json_answer)
        return await _forward(st, api, req, settings, auth)
    except BaseException:
        st.verifier.abort(stream_id)  # its place is free again (the answer never began)
        raise


@dataclass(frozen=True)
class _Auth:
    """What of the client's request the upstream request carries: its key (where the
    server forwards keys) and the headers of ``upstream.PASSED_ON``."""

    key: Optional[str]
    headers: dict


async def _forward(st: AppState, api: Api, req: ChatRequest,
                   settings: Optional[GuardSettings], auth: _Auth) -> Response:
    st.metrics.request("stream" if req.stream else "json", settings is not None)
    slot = _Admission(st)
    if not req.stream:
        try:
            return await _complete(st, api, req, settings, auth)
        finally:
            await slot.release()
            if settings is not None:
                st.verifier.abort(settings.stream_id)
    try:
        up: UpstreamStream = await st.upstream.open_stream(api.path, req.forward_bytes,
                                                           auth.key, auth.headers)
    except BaseException:
        await slot.release()
        raise
    slot.streaming(up)
    back = passed(up.response.headers, PASSED_BACK)
    if settings is None:
        def fail(err: GuardrailError) -> bytes:  # counted as an error response is
            st.metrics.error(err.type)
            return api.fail(err)
        body, headers = passthrough_stream(up.chunks(), api.ends, fail, api.unended), \
            {**back, **UNGROUNDED}
    else:
        body = guarded_stream(up.chunks(), settings, st.verifier, api.wire(settings))
        headers = {**back, "x-guardrail-verified": "true",
                   "x-guardrail-stream-id": settings.stream_id}
    return EventSourceResponse(_streaming(body, slot), headers=headers,
                               ping=st.config.server.ping_interval_s,
                               background=BackgroundTask(_ended, st, slot, settings))


async def _ended(st: AppState, slot: _Admission, settings: Optional[GuardSettings]) -> None:
    """The response is over (finished, failed, or never read): free its places."""
    await slot.release()
    if settings is not None:
        st.verifier.abort(settings.stream_id)


async def _complete(st: AppState, api: Api, req: ChatRequest,
                    settings: Optional[GuardSettings], auth: _Auth) -> Response:
    reply = await st.upstream.request("POST", api.path, req.forward_bytes, auth.key,
                                      client=auth.headers)
    if settings is None:
        return Response(reply.content, reply.status, media_type=reply.content_type,
                        headers={**dict(reply.headers), **UNGROUNDED})
    result = await api.complete(reply.json(), settings, st.verifier)
    headers = {**dict(reply.headers), "x-guardrail-verified": "true",
               "x-guardrail-stream-id": settings.stream_id,
               "x-guardrail-hallucination": str(result.detected).lower(),
               "x-guardrail-spans": str(result.span_count),
               "x-guardrail-action": result.action.value}
    if result.blocked is not None:
        return SafeJSONResponse({**result.blocked.to_json(),
                                 "guardrail": result.report.to_json()},
                                result.blocked.status, headers=headers)
    return SafeJSONResponse(result.body, headers=headers)


def _verify_input(body: dict) -> tuple[Grounding, str, Optional[PolicyOverride]]:
    unknown = sorted(set(body) - {"context", "question", "answer", "policy"})
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}; known: answer, context, "
                         "policy, question")
    docs = documents_list(body.get("context"), "context", require_text=True)
    policy = parse_policy(body.get("policy"), "policy")
    question = body.get("question", "")
    if not isinstance(question, str):
        raise BadRequest("'question' must be a string")
    answer = body.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise BadRequest("'answer' must be a non-empty string")
    whole_characters(question, "question")  # as in chat's messages
    whole_characters(answer, "answer")
    return Grounding(tuple(docs), question), answer, policy


async def verify(request: Request) -> Response:
    """Check a (context, question, answer) triple as a non-streaming answer would be."""
    st = state_of(request)
    tenant = st.tenants.resolve(request.headers.get("authorization"))
    body = parse_json_object(await read_body(request.stream(), st.config.server.max_body_bytes))
    grounding, answer, override = _verify_input(body)
    check_size(grounding.documents, st.config.context)  # the limits chat's grounding has
    stream_id = new_stream_id()
    st.verifier.admit(stream_id)  # refused (503/429) before any work, as chat is
    try:
        # no upstream here: a regenerate policy redacts, as without a regenerator
        settings = replace(await _settings(st, grounding, override, tenant, None,
                                           stream_id=stream_id, where="policy"),
                           regenerator=None)
        st.metrics.request("verify", True)
        completion = {"choices": [{"index": 0, "message": {"role": "assistant",
                                                           "content": answer}}]}
        result = await guarded_completion(completion, settings, st.verifier)
    finally:
        st.verifier.abort(stream_id)
    return JSONResponse({"object": "guardrail.verification",
                         "hallucination_detected": result.detected,
                         "span_count": result.span_count, "action": result.action.value,
                         "released": result.body["choices"][0]["message"]["content"],
                         "guardrail": result.report.to_json()})


_STREAM_ID = re.compile(r"gr-[0-9a-f]{32}")


async def report(request: Request) -> Response:
    """``GET /v1/guardrail/reports/{stream_id}``: a finished answer's report, for a client
    whose SDK dropped the report chunk (it has the ``x-guardrail-stream-id`` header).
    The caller's tenant only; unknown, expired and other tenants' ids are all 404."""
    st = state_of(request)
    tenant = st.tenants.resolve(request.headers.get("authorization"))
    stream_id = request.path_params["stream_id"]
    found = await st.reports.get(tenant, stream_id) if _STREAM_ID.fullmatch(stream_id) \
        else None
    if found is None:
        raise NotFound(f"no report for stream {stream_id!r} (unknown, unfinished or "
                       f"expired)", code="report_not_found")
    return JSONResponse({"object": "guardrail.report", "stream_id": stream_id,
                         "guardrail": found})
