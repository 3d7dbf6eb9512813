"""Context caches: prepared (tokenized) contexts and contexts stored by id.

Two tiers, both namespaced by tenant: an in-process LRU (``LRUCache``) in front of
Redis (``RedisStore``; optional, ``CacheConfig.redis_url``).  Redis failures never
reach callers: they are logged, counted, and the in-process tier carries on.
"""

from guardrail.cache.config import CacheConfig
from guardrail.cache.contexts import ContextInfo, ContextStore, StoredContext, context_id_for
from guardrail.cache.lru import LRUCache
from guardrail.cache.prepared import CacheStats, PreparedContextCache, prepared_size
from guardrail.cache.redis_store import RedisEntry, RedisStore, tenant_tag

__all__ = ["CacheConfig", "CacheStats", "ContextInfo", "ContextStore", "LRUCache",
           "PreparedContextCache", "RedisEntry", "RedisStore", "StoredContext",
           "context_id_for", "prepared_size", "tenant_tag"]
