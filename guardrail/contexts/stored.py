"""Contexts stored by id (``PUT/GET/DELETE /v1/contexts``), per tenant, with a TTL.

A context id is ``ctx_`` + the first 32 hex digits of the sha256 of the documents:
PUT is idempotent (the same documents give the same id, and a PUT again restarts
their TTL), and ids reveal nothing across tenants because every lookup is
namespaced by tenant.  The TTL is fixed from the PUT, so a client knows when an id
stops working; expired or unknown ids are ``NotFound`` (404).

Tiers: with Redis configured, Redis is the truth (a DELETE on one replica is seen by
all) and the in-process LRU keeps a copy used only while Redis is unavailable.  A
PUT made while Redis is down lives in this process alone until Redis answers again
(then it is written through on its next GET).  An id only Redis knows, asked for
while Redis is down, is ``StoreUnavailable`` (503 + Retry-After), not a false 404.
Without Redis the LRU alone is the store.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from guardrail.config.cache import CacheConfig
from guardrail.contexts.lru import LRUCache
from guardrail.contexts.redis_store import CacheUnavailable, RedisStore, tenant_tag
from guardrail.errors import BadRequest, NotFound, StoreUnavailable

log = logging.getLogger(__name__)
KIND = "ctx"
_ID = re.compile(r"ctx_[0-9a-f]{32}")


@dataclass(frozen=True)
class StoredContext:
    context_id: str
    documents: tuple[str, ...]
    n_bytes: int
    expires_at: float  # unix time

    def info(self, now: Optional[float] = None) -> "ContextInfo":
        left = self.expires_at - (time.time() if now is None else now)
        return ContextInfo(self.context_id, self.n_bytes, max(0.0, left))


@dataclass(frozen=True)
class ContextInfo:
    context_id: str
    n_bytes: int
    expires_in_s: float

    def to_json(self) -> dict:
        return {"context_id": self.context_id, "bytes": self.n_bytes,
                "expires_in": round(self.expires_in_s, 3)}


@dataclass(frozen=True)
class _Local:
    ctx: StoredContext
    in_redis: bool  # False: written while Redis was down; this process holds the only copy


def context_id_for(documents: Sequence[str]) -> str:
    h = hashlib.sha256()
    for d in documents:
        h.update(b"\x00doc\x00" + d.encode("utf-8", "surrogatepass"))
    return "ctx_" + h.hexdigest()[:32]


class ContextStore:
    def __init__(self, config: CacheConfig = CacheConfig(), *,
                 redis: Optional[RedisStore] = None, clock: Callable[[], float] = time.time):
        self.config = config
        self.redis = redis if redis is not None else RedisStore.from_config(config)
        self.clock = clock
        self.local: LRUCache[_Local] = LRUCache(config.local_max_bytes,
                                                config.local_tenant_max_bytes, clock=clock)

    async def put(self, tenant: str, documents: Sequence[str], *,
                  ttl_s: Optional[float] = None) -> StoredContext:
        tenant_tag(tenant)
        docs = self._check_documents(documents)
        ttl = self.config.context_ttl_s if ttl_s is None else float(ttl_s)
        if not 0 < ttl <= self.config.max_context_ttl_s:
            raise BadRequest(f"ttl must be in (0, {self.config.max_context_ttl_s:g}] seconds, "
                             f"got {ttl_s!r}", code="invalid_ttl")
        ctx = StoredContext(context_id_for(docs), docs, sum(len(d.encode("utf-8",
                            "surrogatepass")) for d in docs), self.clock() + ttl)
        in_redis = False
        if self.redis is not None:
            data = _encode(ctx)
            try:
                in_redis = await self.redis.put(KIND, tenant, ctx.context_id, data, ttl_s=ttl,
                                                cap_bytes=self.config.tenant_max_bytes) >= 0
            except CacheUnavailable:
                pass  # logged and counted by the store; this process keeps it
            else:
                if not in_redis:  # an id for a context nobody keeps would be a lie
                    raise _too_large(len(data), "cache.tenant_max_bytes",
                                     self.config.tenant_max_bytes)
        kept = self.local.put(tenant, ctx.context_id,
                              _Local(ctx, in_redis or self.redis is None), ctx.n_bytes, ttl)
        if not (kept or in_redis):
            raise _too_large(ctx.n_bytes, "cache.local_tenant_max_bytes",
                             self.local.tenant_max_bytes)
        return ctx

    async def get(self, tenant: str, context_id: str) -> StoredContext:
        tenant_tag(tenant)
        if not isinstance(context_id, str) or not _ID.fullmatch(context_id):
            raise NotFound(f"no context {context_id!r}", code="context_not_found")
        local = self.local.get(tenant, context_id)
        if self.redis is None:
            if local is None:
                raise NotFound(f"no context {context_id!r} (unknown or expired)",
                               code="context_not_found")
            return local.ctx
        try:
            data = await self.redis.get(KIND, tenant, context_id)
        except CacheUnavailable:
            if local is not None:
                return local.ctx
            raise StoreUnavailable("the context store is unavailable; retry shortly",
                                   retry_after=max(1.0, self.config.down_cooldown_s)) from None
        if data is not None:
            ctx = _decode(data)
            self.local.put(tenant, context_id, _Local(ctx, True), ctx.n_bytes,
                           max(1e-3, ctx.expires_at - self.clock()))
            return ctx
        if local is not None and not local.in_redis:
            return await self._write_through(tenant, local.ctx)
        self.local.pop(tenant, context_id)  # deleted elsewhere, or expired in Redis
        raise NotFound(f"no context {context_id!r} (unknown or expired)",
                       code="context_not_found")

    async def delete(self, tenant: str, context_id: str) -> None:
        tenant_tag(tenant)
        if not isinstance(context_id, str) or not _ID.fullmatch(context_id):
            raise NotFound(f"no context {context_id!r}", code="context_not_found")
        found = False
        if self.redis is not None:
            try:
                found = await self.redis.delete(KIND, tenant, context_id)
            except CacheUnavailable:  # Redis is the truth: deleted only where it never was
                local = self.local.get(tenant, context_id)
                if local is None or local.in_redis:
                    raise StoreUnavailable("the context store is unavailable; retry shortly",
                                           retry_after=max(1.0, self.config.down_cooldown_s)
                                           ) from None
        found = self.local.pop(tenant, context_id) is not None or found
        if not found:
            raise NotFound(f"no context {context_id!r} (unknown or expired)",
                           code="context_not_found")

    async def list(self, tenant: str) -> list[ContextInfo]:
        """The tenant's live contexts (Redis's view plus this process's local-only ones)."""
        tenant_tag(tenant)
        now = self.clock()
        local = {k: v for k, v, _ in self.local.entries(tenant)}
        out: dict[str, ContextInfo] = {}
        if self.redis is not None:
            try:
                for e in await self.redis.entries(KIND, tenant):
                    out[e.key] = ContextInfo(e.key, e.size, e.expires_in_s)
            except CacheUnavailable:
                out = {k: v.ctx.info(now) for k, v in local.items()}
        for k, v in local.items():
            if self.redis is None or not v.in_redis:
                out.setdefault(k, v.ctx.info(now))
        return sorted(out.values(), key=lambda i: i.expires_in_s)

    async def aclose(self) -> None:
        if self.redis is not None:
            await self.redis.aclose()

    # -- internals -------------------------------------------------------------------------
    def _check_documents(self, documents: Sequence[str]) -> tuple[str, ...]:
        if isinstance(documents, str) or not isinstance(documents, (list, tuple)) or \
                not all(isinstance(d, str) for d in documents):
            raise BadRequest("documents must be an array of strings", code="invalid_documents")
        docs = tuple(documents)
        if not any(d.strip() for d in docs):
            raise BadRequest("documents are empty", code="invalid_documents")
        size = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
        if size > self.config.max_context_bytes:
            raise BadRequest(f"documents hold {size} bytes, more than the limit of "
                             f"{self.config.max_context_bytes}", code="context_too_large")
        return docs

    async def _write_through(self, tenant: str, ctx: StoredContext) -> StoredContext:
        ttl = ctx.expires_at - self.clock()
        try:
            if ttl > 0 and await self.redis.put(KIND, tenant, ctx.context_id, _encode(ctx),
                                                ttl_s=ttl,
                                                cap_bytes=self.config.tenant_max_bytes) >= 0:
                self.local.put(tenant, ctx.context_id, _Local(ctx, True), ctx.n_bytes, ttl)
        except CacheUnavailable:
            pass
        return ctx


def _encode(ctx: StoredContext) -> bytes:
    return json.dumps({"id": ctx.context_id, "documents": list(ctx.documents),
                       "expires_at": ctx.expires_at}).encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> StoredContext:
    obj = json.loads(data.decode("utf-8", "surrogatepass"))
    docs = tuple(obj["documents"])
    return StoredContext(obj["id"], docs,
                         sum(len(d.encode("utf-8", "surrogatepass")) for d in docs),
                         float(obj["expires_at"]))


def _too_large(n_bytes: int, setting: str, cap: int) -> BadRequest:
    return BadRequest(f"the context takes {n_bytes} bytes to store, more than a tenant may "
                      f"keep ({setting}: {cap}); nothing was stored", code="context_too_large")
