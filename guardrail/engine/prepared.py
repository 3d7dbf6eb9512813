"""Prepared (tokenized) grounding contexts, cached per tenant in two tiers.

    get_or_prepare(tenant, documents, prepare_fn, model=...)
        in-process LRU hit   -> the PreparedContext object itself
        Redis hit            -> PreparedContext.from_bytes (no pickle), kept in the LRU
        miss                 -> await prepare_fn(documents) once, however many callers
                                ask for it at the same time (single flight); kept in
                                the LRU and written to Redis in the background

The key is ``context_key(documents, model)``, the same sha256 the detector gives
``PreparedContext.key`` (``model`` is the tokenizer name), namespaced by tenant.
Redis failures are logged and counted (``redis_errors``) and never reach callers:
the request goes on from the LRU or by preparing the context again.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable, Optional, Sequence

from guardrail.config.cache import CacheConfig
from guardrail.contexts.lru import LRUCache
from guardrail.contexts.redis_store import CacheUnavailable, RedisStore, tenant_tag

if TYPE_CHECKING:  # the detector package imports torch; the server must not
    from guardrail.model.inputs import PreparedContext

log = logging.getLogger(__name__)
KIND = "prep"
PrepareFn = Callable[[Sequence[str]], Awaitable["PreparedContext"]]


@dataclass(frozen=True)
class CacheStats:
    local_hits: int
    redis_hits: int
    misses: int          # contexts prepared again
    shared_waits: int    # callers that joined another caller's preparation
    redis_errors: int    # failed Redis calls (also counted while skipping: redis_skipped)
    redis_skipped: int
    redis_corrupt: int   # unreadable or mismatched values found in Redis
    local_entries: int
    local_bytes: int
    local_evictions: int


def prepared_size(ctx: "PreparedContext") -> int:
    """Approximate memory of a prepared context (token arrays + text)."""
    return int(ctx.tokens.ids.nbytes + ctx.tokens.offsets.nbytes + sys.getsizeof(ctx.text))


class PreparedContextCache:
    def __init__(self, config: CacheConfig = CacheConfig(), *,
                 redis: Optional[RedisStore] = None):
        self.config = config
        self.redis = redis if redis is not None else RedisStore.from_config(config)
        self.local: LRUCache["PreparedContext"] = LRUCache(config.local_max_bytes,
                                                         config.local_tenant_max_bytes)
        self._flights: dict[tuple[str, str], "asyncio.Future[PreparedContext]"] = {}
        self._writes: set[asyncio.Task] = set()
        self._local_hits = self._redis_hits = self._misses = self._shared = self._corrupt = 0

    @property
    def redis_errors(self) -> int:
        return self.redis.errors if self.redis else 0

    async def get_or_prepare(self, tenant: str, documents: Sequence[str],
                             prepare_fn: PrepareFn, *, model: str = "") -> "PreparedContext":
        from guardrail.model.inputs import context_key

        tenant_tag(tenant)  # validates
        key = context_key(list(documents), model)
        ctx = self.local.get(tenant, key)
        if ctx is not None:
            self._local_hits += 1
            return ctx
        flight = self._flights.get((tenant, key))
        if flight is None:
            flight = asyncio.ensure_future(self._fill(tenant, key, documents, prepare_fn))
            self._flights[(tenant, key)] = flight
            flight.add_done_callback(lambda f: self._landed(tenant, key, f))
        else:
            self._shared += 1
        # shield: a caller that gives up must not cancel the others' preparation
        return await asyncio.shield(flight)

    async def _fill(self, tenant: str, key: str, documents: Sequence[str],
                    prepare_fn: PrepareFn) -> "PreparedContext":
        ctx = await self._from_redis(tenant, key)
        if ctx is None:
            self._misses += 1
            ctx = await prepare_fn(documents)
            if self.redis is not None:
                self._write_behind(tenant, key, ctx)
        self.local.put(tenant, key, ctx, prepared_size(ctx))
        return ctx

    def _landed(self, tenant: str, key: str, flight: asyncio.Future) -> None:
        self._flights.pop((tenant, key), None)
        if not flight.cancelled():
            flight.exception()  # retrieved here: every waiter may have gone

    async def _from_redis(self, tenant: str, key: str) -> Optional["PreparedContext"]:
        from guardrail.model.inputs import PreparedContext

        if self.redis is None:
            return None
        try:
            data = await self.redis.get(KIND, tenant, key,
                                        touch_ttl_s=self.config.prepared_ttl_s)
        except CacheUnavailable:
            return None
        if data is None:
            return None
        try:
            ctx = PreparedContext.from_bytes(data)
        except Exception as e:  # a foreign or damaged value is a miss, not an error
            log.warning("unreadable prepared context %s in redis: %s", key[:12], e)
            ctx = None
        if ctx is None or ctx.key != key:
            self._corrupt += 1
            return None
        self._redis_hits += 1
        return ctx

    def _write_behind(self, tenant: str, key: str, ctx: "PreparedContext") -> None:
        async def write() -> None:
            try:
                await self.redis.put(KIND, tenant, key, ctx.to_bytes(),
                                     ttl_s=self.config.prepared_ttl_s,
                                     cap_bytes=self.config.tenant_max_bytes)
            except CacheUnavailable:
                pass  # logged and counted by the store
        task = asyncio.ensure_future(write())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def flush(self) -> None:
        """Wait for background Redis writes (tests, shutdown)."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    def stats(self) -> CacheStats:
        r = self.redis
        return CacheStats(self._local_hits, self._redis_hits, self._misses, self._shared,
                          r.errors if r else 0, r.skipped if r else 0, self._corrupt,
                          len(self.local), self.local.bytes, self.local.evictions)

    async def aclose(self) -> None:
        await self.flush()
        if self.redis is not None:
            await self.redis.aclose()
