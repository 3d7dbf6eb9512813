"""The HTTP face: a Starlette app, OpenAI-compatible.

    POST /v1/chat/completions   streaming and not; checked when the request has grounding
    GET  /v1/models             passed through from the upstream
    POST /v1/verify             check (context, question, answer) without an upstream
    GET  /healthz               liveness plus the loaded model's facts
    GET  /metrics               Prometheus

The server knows one seam, the ``Verifier``; it never imports torch.  Without an
injected verifier, the lifespan builds one with ``verifier_factory`` (default: the
local detector) in a worker thread.  Every ``GuardrailError`` becomes
``{"error": {...}}`` with its status; mid-stream errors are SSE error events.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass
from typing import AsyncIterator, Callable, Optional, Protocol, Sequence

import anyio
import httpx
from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge,
                               Histogram, generate_latest)
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from guardrail.config import GuardrailConfig, PolicyOverride
from guardrail.context import (ChatRequest, parse_chat_request, parse_extension,
                               parse_json_object)
from guardrail.errors import BadRequest, GuardrailError, Overloaded, Unauthorized
from guardrail.guard import GuardSettings
from guardrail.pipeline import (CLEANUP_TIMEOUT_S, guarded_completion, guarded_stream,
                                passthrough_stream)
from guardrail.policy import RegeneratorFactory, resolve_policy
from guardrail.types import Action, Grounding
from guardrail.upstream import UpstreamClient, UpstreamStream
from guardrail.verifier import Verifier, load_local_verifier


DEFAULT_TENANT = "default"  # requests without a tenant (no or unknown key)


class ContextLookup(Protocol):
    """The per-tenant context store (``guardrail.cache``); ``get`` raises NotFound."""

    async def get(self, tenant: str, context_id: str) -> "HasDocuments": ...


class HasDocuments(Protocol):
    documents: Sequence[str]


class Metrics:
    """Prometheus metrics on a registry of the app's own (apps in one process don't clash);
    also the pipeline's ``StreamObserver``."""

    def __init__(self, queue_depth: Callable[[], int]):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("guardrail_requests", "Requests by route kind and whether "
                                "they are checked", ["mode", "checked"], registry=r)
        self.errors = Counter("guardrail_errors", "Error responses by type", ["type"],
                              registry=r)
        self.sentences = Counter("guardrail_sentences", "Sentences by action",
                                 ["action", "checked"], registry=r)
        self.checks = Histogram("guardrail_check_seconds", "Check latency (queueing "
                                "included) by exit layer", ["exit_layer"], registry=r,
                                buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10))
        self.queue = Gauge("guardrail_queue_depth", "Checks queued or running", registry=r)
        self.queue.set_function(lambda: float(queue_depth()))

    def request(self, mode: str, checked: bool) -> None:
        self.requests.labels(mode, str(checked).lower()).inc()

    def error(self, kind: str) -> None:
        self.errors.labels(kind).inc()

    def on_sentence(self, action: Action, checked: bool) -> None:
        self.sentences.labels(action.value, str(checked).lower()).inc()

    def on_check(self, seconds: float, exit_layer: Optional[int]) -> None:
        self.checks.labels(str(exit_layer)).observe(seconds)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


@dataclass
class AppState:
    config: GuardrailConfig
    upstream: UpstreamClient
    verifier: Verifier
    regenerators: RegeneratorFactory
    metrics: Metrics
    contexts: Optional[ContextLookup] = None
    in_flight: int = 0


def _state(request: Request) -> AppState:
    return request.app.state.guardrail


async def _read_body(request: Request, limit: int) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BadRequest(f"request body exceeds {limit} bytes", status=413,
                             code="body_too_large")
    return bytes(body)


def _tenant(st: AppState, authorization: Optional[str]) -> Optional[str]:
    key = authorization[7:].strip() if authorization and \
        authorization[:7].lower() == "bearer " else None
    tenant = st.config.tenant_for_key(key)
    if tenant is None and st.config.server.require_api_key:
        raise Unauthorized("a valid API key is required (Authorization: Bearer ...)")
    return tenant


async def _grounding(st: AppState, g: Grounding, tenant: Optional[str]) -> Grounding:
    if g.context_id is None:
        return g
    if st.contexts is None:
        if hasattr(st.verifier, "for_tenant"):
            return g  # the scheduler resolves context ids itself, per tenant
        raise BadRequest("'guardrail.context_id' needs a context store; this server has none")
    stored = await st.contexts.get(tenant or DEFAULT_TENANT, g.context_id)
    return Grounding(tuple(stored.documents) + g.documents, g.question, g.context_id)


async def _settings(st: AppState, grounding: Grounding, override: Optional[PolicyOverride],
                    tenant: Optional[str], auth: Optional[str], *, n: int = 1,
                    model: str = "") -> GuardSettings:
    cfg = st.config
    if n > 1 and cfg.verification.other_choices == "reject":
        raise BadRequest(f"'n'={n} with grounding context: only choice 0 can be checked "
                         "and this server rejects n>1 (verification.other_choices=reject)")
    policy = resolve_policy(cfg, tenant, override)
    return GuardSettings(await _grounding(st, grounding, tenant), policy, cfg.verification,
                         stream_id=f"gr-{uuid.uuid4().hex}", model=model,
                         regenerator=st.regenerators.for_request(auth),
                         observer=st.metrics)


def _verifier_for(st: AppState, tenant: Optional[str]) -> Verifier:
    """The seam bound to the tenant when the verifier is tenant-aware (the scheduler)."""
    bind = getattr(st.verifier, "for_tenant", None)
    return bind(tenant) if bind is not None and tenant is not None else st.verifier


class _Admission:
    """One in-flight slot; released exactly once, by the stream end or the background."""

    def __init__(self, st: AppState):
        limit = st.config.server.max_concurrent_requests
        if st.in_flight >= limit:
            raise Overloaded(f"{st.in_flight} requests in flight (limit {limit})")
        self.st, self.up = st, None
        st.in_flight += 1

    async def release(self) -> None:
        if self.st is not None:
            self.st.in_flight -= 1
            self.st = None
        if self.up is not None:
            up, self.up = self.up, None
            # shielded: this runs while the response is being cancelled (disconnect)
            with anyio.move_on_after(CLEANUP_TIMEOUT_S, shield=True):
                await up.aclose()


async def _streaming(body: AsyncIterator[bytes], slot: _Admission) -> AsyncIterator[bytes]:
    try:
        async with contextlib.aclosing(body):
            async for out in body:
                yield out
    finally:
        await slot.release()  # closes the upstream: it learns the client has gone


async def chat_completions(request: Request) -> Response:
    st = _state(request)
    raw = await _read_body(request, st.config.server.max_body_bytes)
    req = parse_chat_request(raw, st.config.context)
    auth = request.headers.get("authorization")
    tenant = _tenant(st, auth)
    settings = None
    if req.checked:
        st.verifier.admit()  # refuse early (503) rather than fail mid-stream
        settings = await _settings(st, req.grounding, req.policy, tenant, auth, n=req.n,
                                   model=req.model)
    st.metrics.request("stream" if req.stream else "json", settings is not None)
    slot = _Admission(st)
    if not req.stream:
        try:
            return await _complete(st, req, settings, auth, _verifier_for(st, tenant))
        finally:
            await slot.release()
    try:
        up: UpstreamStream = await st.upstream.open_stream("chat/completions",
                                                           req.forward_bytes, auth)
    except BaseException:
        await slot.release()
        raise
    slot.up = up
    if settings is None:
        body, headers = passthrough_stream(up.chunks()), {"x-guardrail-verified": "false"}
    else:
        body = guarded_stream(up.chunks(), settings, _verifier_for(st, tenant))
        headers = {"x-guardrail-verified": "true", "x-guardrail-stream-id": settings.stream_id}
    return EventSourceResponse(_streaming(body, slot), headers=headers,
                               ping=st.config.server.ping_interval_s,
                               background=BackgroundTask(slot.release))


async def _complete(st: AppState, req: ChatRequest, settings: Optional[GuardSettings],
                    auth: Optional[str], verifier: Verifier) -> Response:
    reply = await st.upstream.request("POST", "chat/completions", req.forward_bytes, auth)
    if settings is None:
        return Response(reply.content, reply.status, media_type=reply.content_type,
                        headers={"x-guardrail-verified": "false"})
    result = await guarded_completion(reply.json(), settings, verifier)
    headers = {"x-guardrail-verified": "true",
               "x-guardrail-hallucination": str(result.detected).lower(),
               "x-guardrail-spans": str(result.span_count),
               "x-guardrail-action": result.action.value}
    if result.blocked is not None:
        return JSONResponse({**result.blocked.to_json(), "guardrail": result.report},
                            result.blocked.status, headers=headers)
    return JSONResponse(result.body, headers=headers)


def _verify_input(body: dict) -> tuple[Grounding, str, Optional[PolicyOverride]]:
    unknown = sorted(set(body) - {"context", "question", "answer", "policy"})
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}; known: answer, context, "
                         "policy, question")
    docs = body.get("context")
    docs = [docs] if isinstance(docs, str) else docs
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs) \
            or not any(d.strip() for d in docs):
        raise BadRequest("'context' must be a non-empty string or array of strings")
    _, _, policy = parse_extension({"context": docs, "policy": body.get("policy")})
    question = body.get("question", "")
    if not isinstance(question, str):
        raise BadRequest("'question' must be a string")
    answer = body.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise BadRequest("'answer' must be a non-empty string")
    return Grounding(tuple(docs), question), answer, policy


async def verify(request: Request) -> Response:
    """Check a (context, question, answer) triple as a non-streaming answer would be."""
    st = _state(request)
    body = parse_json_object(await _read_body(request, st.config.server.max_body_bytes))
    grounding, answer, override = _verify_input(body)
    tenant = _tenant(st, request.headers.get("authorization"))
    settings = await _settings(st, grounding, override, tenant, None)
    st.metrics.request("verify", True)
    completion = {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}
    result = await guarded_completion(completion, settings, _verifier_for(st, tenant))
    return JSONResponse({"object": "guardrail.verification",
                         "hallucination_detected": result.detected,
                         "span_count": result.span_count, "action": result.action.value,
                         "released": result.body["choices"][0]["message"]["content"],
                         "guardrail": result.report})


async def models(request: Request) -> Response:
    st = _state(request)
    reply = await st.upstream.request("GET", "models",
                                      client_auth=request.headers.get("authorization"))
    return Response(reply.content, reply.status, media_type=reply.content_type)


async def healthz(request: Request) -> Response:
    st = _state(request)
    return JSONResponse({"status": "ok", "verifier": st.verifier.info(),
                         "upstream": st.config.upstream.base_url, "in_flight": st.in_flight})


async def metrics(request: Request) -> Response:
    body, content_type = _state(request).metrics.render()
    return Response(body, media_type=content_type)


async def _guardrail_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GuardrailError)
    _state(request).metrics.error(exc.type)
    headers = {"retry-after": str(max(1, round(exc.retry_after)))} \
        if isinstance(exc, Overloaded) else None
    return JSONResponse(exc.to_json(), exc.status, headers=headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": {"message": exc.detail, "type": "invalid_request_error",
                                   "code": exc.status_code}}, exc.status_code)


def create_app(config: Optional[GuardrailConfig] = None, verifier: Optional[Verifier] = None,
               upstream_transport: Optional[httpx.AsyncBaseTransport] = None, *,
               verifier_factory: Callable[[GuardrailConfig], Verifier] = load_local_verifier,
               contexts: Optional[ContextLookup] = None) -> Starlette:
    """The app.  ``verifier`` (injected) is not closed by the app; one it builds is."""
    config = config or GuardrailConfig()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        owned = verifier is None
        v = verifier if verifier is not None else \
            await asyncio.to_thread(verifier_factory, config)
        upstream = UpstreamClient(config.upstream, transport=upstream_transport)
        regenerators = RegeneratorFactory(config.policy.regenerate, upstream)
        app.state.guardrail = AppState(config, upstream, v, regenerators,
                                       Metrics(v.queue_depth), contexts)
        try:
            yield
        finally:
            await regenerators.aclose()
            await upstream.aclose()
            if owned:
                await v.aclose()

    routes = [Route("/v1/chat/completions", chat_completions, methods=["POST"]),
              Route("/v1/models", models, methods=["GET"]),
              Route("/v1/verify", verify, methods=["POST"]),
              Route("/healthz", healthz, methods=["GET"]),
              Route("/metrics", metrics, methods=["GET"])]
    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={GuardrailError: _guardrail_error,
                                         HTTPException: _http_error})
