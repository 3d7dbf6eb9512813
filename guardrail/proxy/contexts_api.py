"""``/v1/contexts``: grounding documents stored once, referenced by id afterwards.

    PUT    /v1/contexts        {"documents": [...]} (or "context"), optional "ttl_s"
                               -> {"context_id", "documents": n, "bytes", "ttl_s",
                                   "expires_at", "tokens" (prepared now, with the scheduler)}
    GET    /v1/contexts        this tenant's live contexts
    GET    /v1/contexts/{id}   one of them, documents included ("context")
    DELETE /v1/contexts/{id}

A chat request then sends ``"guardrail": {"context_id": "ctx_..."}`` instead of the
documents.  Every route acts in the caller's tenant namespace (``guardrail.tenants``):
another tenant's id is unknown here (404, exactly as an id that never existed, so
nothing leaks about other tenants).  Storage, TTLs and Redis fallback:
``guardrail.contexts.ContextStore``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Optional

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from guardrail.contexts import ContextInfo, StoredContext
from guardrail.errors import BadRequest, ContextError, GuardrailError
from guardrail.proxy.requests import check_size, documents_list, parse_json_object, read_body

if TYPE_CHECKING:
    from guardrail.proxy.state import AppState

log = logging.getLogger(__name__)
_FIELDS = ("documents", "context", "ttl_s")


def _state(request: Request) -> "AppState":
    return request.app.state.guardrail


def parse_put(body: dict, max_documents: int) -> tuple[list[str], Optional[float]]:
    """The documents and TTL of a PUT body (``BadRequest`` naming the field)."""
    unknown = sorted(set(body) - set(_FIELDS))
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}; known: "
                         f"{', '.join(_FIELDS)}")
    given = [k for k in ("documents", "context") if k in body]
    if len(given) != 1:
        raise BadRequest("give the documents as exactly one of 'documents' or 'context'",
                         code="invalid_documents")
    field = given[0]
    docs = documents_list(body[field], field, require_text=True, code="invalid_documents")
    if len(docs) > max_documents:
        raise BadRequest(f"'{field}' has {len(docs)} documents; the limit is {max_documents}",
                         code="context_too_large")
    ttl = body.get("ttl_s")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float))):
        raise BadRequest("'ttl_s' must be a number of seconds", code="invalid_ttl")
    return docs, None if ttl is None else float(ttl)


def _info_json(info: ContextInfo, now: float) -> dict:
    return {"object": "guardrail.context", "context_id": info.context_id,
            "bytes": info.n_bytes, "ttl_s": round(info.expires_in_s, 3),
            "expires_at": round(now + info.expires_in_s, 3)}


def _stored_json(ctx: StoredContext, *, with_text: bool = False) -> dict:
    now = time.time()
    out = {**_info_json(ctx.info(now), now), "documents": len(ctx.documents)}
    if with_text:
        out["context"] = list(ctx.documents)
    return out


async def put_context(request: Request) -> Response:
    st = _state(request)
    tenant = st.tenants.resolve(request.headers.get("authorization"))
    body = parse_json_object(await read_body(request.stream(), st.config.server.max_body_bytes))
    docs, ttl = parse_put(body, st.config.context.max_documents)
    check_size(docs, st.config.context, "the context")  # as if it were sent inline
    ctx = await st.store.put(tenant, docs, ttl_s=ttl)
    out = _stored_json(ctx)
    try:  # tokenized now, not on the first chat turn that uses it
        tokens = await st.verifier.warm(ctx.documents, tenant=tenant)
    except ContextError:  # it can never be checked against: not stored
        await st.store.delete(tenant, ctx.context_id)
        raise
    except GuardrailError as e:  # e.g. overloaded: the chat that uses it prepares it
        log.warning("context %s stored but not prepared: %s", ctx.context_id, e.message)
    else:
        if tokens is not None:
            out["tokens"] = tokens
    return JSONResponse(out)


async def list_contexts(request: Request) -> Response:
    st = _state(request)
    tenant = st.tenants.resolve(request.headers.get("authorization"))
    now = time.time()
    infos = await st.store.list(tenant)
    return JSONResponse({"object": "list", "data": [_info_json(i, now) for i in infos]})


async def get_context(request: Request) -> Response:
    st = _state(request)
    tenant = st.tenants.resolve(request.headers.get("authorization"))
    ctx = await st.store.get(tenant, request.path_params["context_id"])
    return JSONResponse(_stored_json(ctx, with_text=True))


async def delete_context(request: Request) -> Response:
    st = _state(request)
    tenant = st.tenants.resolve(request.headers.get("authorization"))
    context_id = request.path_params["context_id"]
    await st.store.delete(tenant, context_id)
    return JSONResponse({"object": "guardrail.context.deleted", "context_id": context_id,
                         "deleted": True})


routes = [Route("/v1/contexts", put_context, methods=["PUT"]),
          Route("/v1/contexts", list_contexts, methods=["GET"]),
          Route("/v1/contexts/{context_id}", get_context, methods=["GET"]),
          Route("/v1/contexts/{context_id}", delete_context, methods=["DELETE"])]
