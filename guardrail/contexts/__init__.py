"""Context storage, namespaced by tenant: an in-process LRU and Redis.

Two tiers: an in-process ``LRUCache`` in front of Redis (``RedisStore``; optional,
``cache.redis_url``).  Redis failures never reach callers: they are logged, counted,
and the in-process tier carries on.  ``ContextStore`` keeps contexts stored by id
(``/v1/contexts``); the engine's prepared-context cache builds on the same tiers.
"""

from guardrail.contexts.lru import LRUCache
from guardrail.contexts.redis_store import RedisEntry, RedisStore, tenant_tag
from guardrail.contexts.reports import ReportStore
from guardrail.contexts.stored import ContextInfo, ContextStore, StoredContext, context_id_for

__all__ = ["ContextInfo", "ContextStore", "LRUCache", "RedisEntry", "RedisStore",
           "ReportStore", "StoredContext", "context_id_for", "tenant_tag"]
