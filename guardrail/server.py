"""The HTTP face: a Starlette app, OpenAI-compatible.

    POST /v1/chat/completions   streaming and not; checked when the request has grounding
    GET  /v1/models             passed through from the upstream
    POST /v1/verify             check (context, question, answer) without an upstream
    PUT|GET|DELETE /v1/contexts stored grounding contexts, per tenant (contexts_api.py)
    GET  /healthz               liveness plus the loaded model's facts
    GET  /metrics               Prometheus (metrics.py)

The server knows one seam, the ``Verifier``; it never imports torch.  Without an
injected verifier, the lifespan builds the one ``verification.engine`` names (by
default the cross-stream ``Scheduler`` with the prepared-context cache) in a worker
thread, sharing one Redis client with the context store.  Per request: the tenant
from ``Authorization`` (401), admission (``verifier.admit()``: 503/429 +
Retry-After), ``guardrail.context_id`` resolved in the tenant's namespace (404), then
the stream runs against ``verifier.for_tenant(tenant)``.  Every ``GuardrailError``
becomes ``{"error": {...}}`` with its status; mid-stream errors are SSE error events.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Optional

import anyio
import httpx
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from guardrail import contexts_api
from guardrail.cache import ContextStore, PreparedContextCache, RedisStore
from guardrail.config import GuardrailConfig, PolicyOverride
from guardrail.context import (ChatRequest, parse_chat_request, parse_extension,
                               parse_json_object, read_body)
from guardrail.errors import BadRequest, GuardrailError, Overloaded, StoreUnavailable
from guardrail.guard import GuardSettings
from guardrail.metrics import Metrics
from guardrail.pipeline import (CLEANUP_TIMEOUT_S, guarded_completion, guarded_stream,
                                passthrough_stream)
from guardrail.policy import RegeneratorFactory, resolve_policy
from guardrail.tenants import DEFAULT_TENANT, Tenants
from guardrail.types import Grounding
from guardrail.upstream import UpstreamClient, UpstreamStream
from guardrail.verifier import Verifier, build_verifier

log = logging.getLogger(__name__)
__all__ = ["DEFAULT_TENANT", "AppState", "create_app"]


@dataclass
class AppState:
    config: GuardrailConfig
    upstream: UpstreamClient
    verifier: Verifier
    regenerators: RegeneratorFactory
    metrics: Metrics
    store: ContextStore
    tenants: Tenants
    in_flight: int = 0


def _state(request: Request) -> AppState:
    return request.app.state.guardrail


async def _grounding(st: AppState, g: Grounding, tenant: str) -> Grounding:
    """Stored documents of ``context_id`` (in the tenant's namespace) before the inline
    ones; unknown or expired is NotFound (404), a Redis-only id while Redis is down
    StoreUnavailable (503).  Resolved before anything goes upstream."""
    if g.context_id is None:
        return g
    stored = await st.store.get(tenant, g.context_id)
    return Grounding(tuple(stored.documents) + g.documents, g.question, g.context_id)


async def _settings(st: AppState, grounding: Grounding, override: Optional[PolicyOverride],
                    tenant: str, auth: Optional[str], *, n: int = 1,
                    model: str = "") -> GuardSettings:
    cfg = st.config
    if n > 1 and cfg.verification.other_choices == "reject":
        raise BadRequest(f"'n'={n} with grounding context: only choice 0 can be checked "
                         "and this server rejects n>1 (verification.other_choices=reject)")
    policy = resolve_policy(cfg, st.tenants.policy_name(tenant), override)
    return GuardSettings(await _grounding(st, grounding, tenant), policy, cfg.verification,
                         stream_id=f"gr-{uuid.uuid4().hex}", model=model,
                         regenerator=st.regenerators.for_request(auth),
                         observer=st.metrics,
                         left_context_chars=cfg.scheduler.left_context_chars)


def _verifier_for(st: AppState, tenant: str) -> Verifier:
    """The seam bound to the tenant when the verifier is tenant-aware (the scheduler)."""
    bind = getattr(st.verifier, "for_tenant", None)
    return bind(tenant) if bind is not None else st.verifier


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
    auth = request.headers.get("authorization")
    tenant = st.tenants.resolve(auth)
    raw = await read_body(request.stream(), st.config.server.max_body_bytes)
    req = parse_chat_request(raw, st.config.context)
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
    tenant = st.tenants.resolve(request.headers.get("authorization"))
    body = parse_json_object(await read_body(request.stream(), st.config.server.max_body_bytes))
    grounding, answer, override = _verify_input(body)
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
    redis = st.store.redis
    return JSONResponse({"status": "ok", "verifier": st.verifier.info(),
                         "upstream": st.config.upstream.base_url, "in_flight": st.in_flight,
                         "tenants": "single" if st.tenants.single else len(st.tenants.names),
                         "context_cache": "in-process" if redis is None else
                         ("redis" if redis.available else "in-process (redis unavailable)")})


async def metrics(request: Request) -> Response:
    body, content_type = _state(request).metrics.render()
    return Response(body, media_type=content_type)


async def _guardrail_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GuardrailError)
    st = _state(request)
    st.metrics.error(exc.type)
    status, headers = exc.status, None
    if isinstance(exc, Overloaded):
        headers = {"retry-after": str(max(1, round(exc.retry_after)))}
        if not isinstance(exc, StoreUnavailable):
            status = st.config.server.overload_status
    return JSONResponse(exc.to_json(), status, headers=headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": {"message": exc.detail, "type": "invalid_request_error",
                                   "code": exc.status_code}}, exc.status_code)


def create_app(config: Optional[GuardrailConfig] = None, verifier: Optional[Verifier] = None,
               upstream_transport: Optional[httpx.AsyncBaseTransport] = None, *,
               verifier_factory: Optional[Callable[[GuardrailConfig], Verifier]] = None,
               contexts: Optional[ContextStore] = None, detector: Any = None) -> Starlette:
    """The app.  Without ``verifier``, one is built at start-up: ``verifier_factory(config)``
    or, by default, ``build_verifier`` around ``detector`` (default: the configured
    detector, loaded then).  ``contexts``: the context store (default: one built from
    ``config.cache``).  What the app builds it closes; what it is given it does not."""
    config = config or GuardrailConfig()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        c = config.cache
        redis = RedisStore(c.redis_url, prefix=c.key_prefix, socket_timeout_s=c.socket_timeout_s,
                           connect_timeout_s=c.connect_timeout_s,
                           down_cooldown_s=c.down_cooldown_s) \
            if contexts is None and c.redis_url else None
        store = contexts if contexts is not None else ContextStore(c, redis=redis)
        prepared = PreparedContextCache(c, redis=store.redis)  # one Redis client for both
        if verifier is not None:
            v = verifier
        elif verifier_factory is not None:
            v = await asyncio.to_thread(verifier_factory, config)
        else:
            v = await asyncio.to_thread(build_verifier, config, detector=detector,
                                        contexts=prepared, store=store)
        tenants = Tenants(config)
        log.info("guardrail: %s", tenants.describe())
        log.info("guardrail: verifier %s; context cache: %s", v.info().get("scheduler", "custom"),
                 f"redis at {_redacted(c.redis_url)} + in-process LRU" if store.redis
                 else "in-process LRU only (no cache.redis_url)")
        upstream = UpstreamClient(config.upstream, transport=upstream_transport)
        regenerators = RegeneratorFactory(config.policy.regenerate, upstream)
        meters = Metrics(v.queue_depth)
        inner = getattr(v, "contexts", None)  # the scheduler's prepared-context cache
        meters.watch(v, lambda: (store.redis, getattr(inner, "redis", None)))
        app.state.guardrail = AppState(config, upstream, v, regenerators, meters, store,
                                       tenants)
        try:
            yield
        finally:
            await regenerators.aclose()
            await upstream.aclose()
            if verifier is None:
                await v.aclose()
            await prepared.flush()
            if redis is not None:
                await redis.aclose()

    routes = [Route("/v1/chat/completions", chat_completions, methods=["POST"]),
              Route("/v1/models", models, methods=["GET"]),
              Route("/v1/verify", verify, methods=["POST"]),
              *contexts_api.routes,
              Route("/healthz", healthz, methods=["GET"]),
              Route("/metrics", metrics, methods=["GET"])]
    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={GuardrailError: _guardrail_error,
                                         HTTPException: _http_error})


def _redacted(url: Optional[str]) -> str:
    """A Redis URL without its password, for logs."""
    parsed = httpx.URL(url or "")
    return str(parsed.copy_with(password="***")) if parsed.password else str(parsed)
