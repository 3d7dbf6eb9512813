"""The HTTP face: a Starlette app, OpenAI-compatible.

    POST /v1/chat/completions   streaming and not; checked when the request has grounding
    POST /v1/responses          the Responses API, the same way (chat.py, responses_api.py)
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
from typing import Any, AsyncIterator, Callable, Optional
from urllib.parse import quote

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from guardrail.config import GuardrailConfig, redact_url
from guardrail.contexts import ContextStore, RedisStore, ReportStore
from guardrail.engine.build import build_verifier
from guardrail.engine.prepared import PreparedContextCache
from guardrail.engine.seam import Verifier
from guardrail.errors import (GuardrailError, NotFound, Overloaded, StoreUnavailable,
                              UpstreamStatusError)
from guardrail.proxy import contexts_api, ui
from guardrail.proxy.chat import chat_completions, report, responses, verify
from guardrail.proxy.hooks import RegeneratorFactory
from guardrail.proxy.metrics import Metrics
from guardrail.proxy.state import AppState, Drain, state_of
from guardrail.proxy.tenants import Tenants
from guardrail.proxy.upstream import UpstreamClient

log = logging.getLogger(__name__)
__all__ = ["create_app"]


async def models(request: Request) -> Response:
    """The upstream's ``/models`` (or one of them, ``/models/{id}``: the SDK's
    ``models.retrieve``), as it answers."""
    st = state_of(request)
    st.tenants.resolve(request.headers.get("authorization"))  # 401 as on every route
    model_id = request.path_params.get("model_id")
    if model_id is not None and (not model_id or {".", ".."} & set(model_id.split("/"))):
        raise NotFound(f"no model {model_id!r}", code="model_not_found")  # stays under models/
    path = "models" if model_id is None else "models/" + quote(model_id, safe="/:@")
    reply = await st.upstream.request("GET", path,
                                      client_auth=request.headers.get("authorization"))
    return Response(reply.content, reply.status, media_type=reply.content_type)


async def healthz(request: Request) -> Response:
    st = state_of(request)
    redis = st.store.redis
    return JSONResponse({"status": "ok", "verifier": st.verifier.info().to_json(),
                         "upstream": redact_url(st.config.upstream.base_url),
                         "in_flight": st.in_flight,
                         "tenants": "single" if st.tenants.single else len(st.tenants.names),
                         "context_cache": "in-process" if redis is None else
                         ("redis" if await redis.ping() else "in-process (redis unavailable)")})


async def readyz(request: Request) -> Response:
    """Readiness: 200 once the engine is built (the app answers nothing before), 503
    while draining, so a load balancer stops sending new requests."""
    st = state_of(request)
    if st.drain.started:
        return JSONResponse({"status": "draining"}, 503)
    return JSONResponse({"status": "ready", "in_flight": st.in_flight})


async def metrics(request: Request) -> Response:
    body, content_type = state_of(request).metrics.render()
    return Response(body, media_type=content_type)


async def _guardrail_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GuardrailError)
    st = state_of(request)
    st.metrics.error(exc.type)
    status, headers = exc.status, None
    if isinstance(exc, UpstreamStatusError) and exc.retry_after:
        headers = {"retry-after": exc.retry_after}
    if isinstance(exc, Overloaded):
        headers = {"retry-after": str(max(1, round(exc.retry_after)))}
        if not isinstance(exc, StoreUnavailable):
            status = st.config.server.overload_status
    return JSONResponse(exc.to_json(), status, headers=headers)


ROUTES = ("POST /v1/chat/completions, POST /v1/responses, GET /v1/models[/{id}], "
          "POST /v1/verify, "
          "PUT|GET /v1/contexts, GET|DELETE /v1/contexts/{id}, "
          "GET /v1/guardrail/reports/{stream_id}, GET /healthz, GET /readyz, GET /metrics")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = exc.detail
    if exc.status_code in (404, 405):
        message = (f"{request.method} {request.url.path} is not served here "
                   f"({exc.detail}); guardrail serves {ROUTES}")
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code,
                                                            f"http_{exc.status_code}")
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error",
                                   "code": code}}, exc.status_code,  # a string, as the
                        headers=exc.headers)                      # other errors' codes


def create_app(config: Optional[GuardrailConfig] = None, verifier: Optional[Verifier] = None,
               upstream_transport: Optional[httpx.AsyncBaseTransport] = None, *,
               verifier_factory: Optional[Callable[[GuardrailConfig], Verifier]] = None,
               contexts: Optional[ContextStore] = None, detector: Any = None,
               chat_page: bool = False) -> Starlette:
    """The app.  Without ``verifier``, one is built at start-up: ``verifier_factory(config)``
    or, by default, ``build_verifier`` around ``detector`` (default: the configured
    detector, loaded then).  ``contexts``: the context store (default: one built from
    ``config.cache``).  What the app builds it closes; what it is given it does not.
    ``chat_page``: also serve the copilot chat page at ``/ui/`` (proxy/ui.py)."""
    config = config or GuardrailConfig()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        c = config.cache
        redis = RedisStore.from_config(c) if contexts is None else None
        store = contexts if contexts is not None else ContextStore(c, redis=redis)
        prepared = PreparedContextCache(c, redis=store.redis)  # one Redis client for all
        reports = ReportStore(c, redis=store.redis)
        if verifier is not None:
            v = verifier
        elif verifier_factory is not None:
            v = await asyncio.to_thread(verifier_factory, config)
        else:
            v = await asyncio.to_thread(build_verifier, config, detector=detector,
                                        contexts=prepared, store=store)
        tenants = Tenants(config)
        log.info("guardrail: %s", tenants.describe())
        log.info("guardrail: verifier %s; context cache: %s", v.info().engine,
                 f"redis at {redact_url(c.redis_url)} + in-process LRU" if store.redis
                 else "in-process LRU only (no cache.redis_url)")
        upstream = UpstreamClient(config.upstream, transport=upstream_transport)
        regenerators = RegeneratorFactory(config.policy.regenerate, upstream)
        meters = Metrics(v)
        meters.watch(v, (store.redis, prepared.redis))
        app.state.guardrail = AppState(config, upstream, v, regenerators, meters, store,
                                       tenants, reports, Drain(config.server.drain_grace_s))
        try:
            yield
        finally:
            await regenerators.aclose()
            await upstream.aclose()
            if verifier is None:
                await v.aclose()
            await prepared.flush()
            await reports.flush()
            if redis is not None:
                await redis.aclose()

    routes = [Route("/v1/chat/completions", chat_completions, methods=["POST"]),
              Route("/v1/responses", responses, methods=["POST"]),
              Route("/v1/models", models, methods=["GET"]),
              Route("/v1/models/{model_id:path}", models, methods=["GET"]),
              Route("/v1/verify", verify, methods=["POST"]),
              Route("/v1/guardrail/reports/{stream_id}", report, methods=["GET"]),
              *contexts_api.routes,
              Route("/healthz", healthz, methods=["GET"]),
              Route("/readyz", readyz, methods=["GET"]),
              Route("/metrics", metrics, methods=["GET"]),
              *(ui.routes() if chat_page else ())]
    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={GuardrailError: _guardrail_error,
                                         HTTPException: _http_error})
