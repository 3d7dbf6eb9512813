"""Finished ``guardrail`` reports by stream id, per tenant, for a while.

LangChain, streaming LiteLLM and the openai SDK's ``.stream()`` helper keep only the
chunk fields they know and drop the report; such a client has the
``x-guardrail-stream-id`` response header and reads the report back
(``GET /v1/guardrail/reports/{stream_id}``, same key, same tenant).  Reports live
``cache.report_ttl_s`` in the in-process LRU and, with ``cache.redis_url``, in Redis,
so any replica can answer; each tenant keeps at most ``cache.report_tenant_max_bytes``.
Storing never fails a stream: a Redis error is counted and the local copy serves.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Optional

from guardrail.config import CacheConfig
from guardrail.contexts.lru import LRUCache
from guardrail.contexts.redis_store import CacheUnavailable, RedisStore

log = logging.getLogger(__name__)
KIND = "report"


class ReportStore:
    def __init__(self, config: CacheConfig = CacheConfig(), *,
                 redis: Optional[RedisStore] = None):
        self.config, self.redis = config, redis
        self.local: LRUCache[bytes] = LRUCache(
            max(config.report_tenant_max_bytes, config.local_max_bytes // 4),
            config.report_tenant_max_bytes)
        self._writes: set[asyncio.Task] = set()

    def put(self, tenant: str, stream_id: str, report: dict) -> None:
        """Keep ``report`` (now, in-process; Redis behind, in the background)."""
        data = json.dumps(report, ensure_ascii=True, separators=(",", ":")).encode()
        ttl = self.config.report_ttl_s
        self.local.put(tenant, stream_id, data, len(data), ttl)
        if self.redis is not None:
            task = asyncio.get_running_loop().create_task(self._write(tenant, stream_id, data))
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    async def _write(self, tenant: str, stream_id: str, data: bytes) -> None:
        try:
            await self.redis.put(KIND, tenant, stream_id, data,
                                 ttl_s=self.config.report_ttl_s,
                                 cap_bytes=self.config.report_tenant_max_bytes)
        except CacheUnavailable:
            pass  # counted by the store; the in-process copy serves this replica

    async def get(self, tenant: str, stream_id: str) -> Optional[dict]:
        """The report, or None when unknown, expired or another tenant's."""
        data = self.local.get(tenant, stream_id)
        if data is None and self.redis is not None:
            try:
                data = await self.redis.get(KIND, tenant, stream_id)
            except CacheUnavailable:
                data = None
        return None if data is None else json.loads(data)

    async def flush(self) -> None:
        """Wait for background writes (shutdown)."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
