"""The shared tier: byte values in Redis, per tenant, with TTL and a per-tenant size cap.

Key layout (``kind`` is ``prep`` for prepared contexts, ``ctx`` for stored ones)::

    {prefix}:{<tenant>}:<kind>:<id>          the value (SET ... PX ttl)
    {prefix}:{<tenant>}:<kind>:~index        sorted set: key -> expiry (ms, Redis clock)
    {prefix}:{<tenant>}:<kind>:~sizes        hash: key -> bytes

The braces are a Redis Cluster hash tag: all of a tenant's keys share one slot, so
the Lua scripts below stay atomic on a cluster too.  A put evicts entries closest to
expiry until the tenant's bytes fit the cap; index rows whose value expired are
dropped on the way.  Tenant names outside ``[A-Za-z0-9_.-]`` are hashed, so no name
can reach into another tenant's keys.

Every call is bounded by short socket timeouts; a failure raises ``CacheUnavailable``
(internal to the cache package: the tiers above catch it), is counted in ``errors``,
and opens a cool-down during which calls are skipped (``skipped``) instead of paying
the timeout again on every request.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Optional, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from guardrail.config import CacheConfig, redact_url

log = logging.getLogger(__name__)
T = TypeVar("T")

_TENANT_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
_NOW = ("local t = redis.call('TIME') "
        "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) ")

_PUT = _NOW + """
local ttl, cap, size = tonumber(ARGV[2]), tonumber(ARGV[3]), string.len(ARGV[1])
if size > cap then return -1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('ZREM', KEYS[2], k)
  redis.call('HDEL', KEYS[3], k)
end
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[3])) do total = total + tonumber(v) end
local evicted = 0
while total > cap do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not oldest then break end
  total = total - tonumber(redis.call('HGET', KEYS[3], oldest) or '0')
  redis.call('DEL', oldest)
  redis.call('ZREM', KEYS[2], oldest)
  redis.call('HDEL', KEYS[3], oldest)
  evicted = evicted + 1
end
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]
if last then
  redis.call('PEXPIREAT', KEYS[2], last)
  redis.call('PEXPIREAT', KEYS[3], last)
end
return evicted
"""

_GET_TOUCH = """
local v = redis.call('GET', KEYS[1])
if not v then return false end
""" + _NOW + """
local exp = now + tonumber(ARGV[1])
redis.call('PEXPIREAT', KEYS[1], exp)
redis.call('ZADD', KEYS[2], exp, KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], string.len(v))
for _, k in ipairs({KEYS[2], KEYS[3]}) do
  local left = redis.call('PTTL', k)
  if left < 0 or now + left < exp then redis.call('PEXPIREAT', k, exp) end
end
return v
"""

_DELETE = """
local n = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
redis.call('HDEL', KEYS[3], KEYS[1])
return n
"""

_ENTRIES = _NOW + """
local out = {}
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], rows[i]) or '0'
end
return {now, out}
"""


class CacheUnavailable(Exception):
    """Redis could not serve a call: down, too slow, or skipped during the cool-down."""


@dataclass(frozen=True)
class RedisEntry:
    key: str          # the id, without the namespace
    size: int         # bytes
    expires_in_s: float


def tenant_tag(tenant: str) -> str:
    """The tenant's part of a key: its name, or a hash of it when the name is unusual."""
    if not isinstance(tenant, str) or not tenant:
        raise ValueError(f"a tenant must be a non-empty string, got {tenant!r}")
    if _TENANT_OK.fullmatch(tenant):
        return tenant
    return "~" + hashlib.sha256(tenant.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class RedisStore:
    def __init__(self, url: str, *, prefix: str = "guardrail", socket_timeout_s: float = 0.25,
                 connect_timeout_s: float = 0.25, down_cooldown_s: float = 5.0):
        self.url = url
        self.prefix = prefix
        self.down_cooldown_s = down_cooldown_s
        self.errors = 0    # failed calls (connection refused, timeout, bad reply)
        self.skipped = 0   # calls not attempted during a cool-down
        self._op_timeout = socket_timeout_s + connect_timeout_s
        self._down_until = 0.0
        self._healthy = True
        self._client = aioredis.from_url(
            url, socket_timeout=socket_timeout_s, socket_connect_timeout=connect_timeout_s,
            retry=Retry(NoBackoff(), 0), health_check_interval=0)
        self._put = self._client.register_script(_PUT)
        self._get_touch = self._client.register_script(_GET_TOUCH)
        self._delete = self._client.register_script(_DELETE)
        self._entries = self._client.register_script(_ENTRIES)

    @classmethod
    def from_config(cls, config: CacheConfig) -> Optional["RedisStore"]:
        """The client ``cache`` describes (None without ``cache.redis_url``)."""
        if not config.redis_url:
            return None
        return cls(config.redis_url, prefix=config.key_prefix,
                   socket_timeout_s=config.socket_timeout_s,
                   connect_timeout_s=config.connect_timeout_s,
                   down_cooldown_s=config.down_cooldown_s)

    # -- keys ------------------------------------------------------------------------------
    def key(self, kind: str, tenant: str, key: str) -> str:
        return f"{self.prefix}:{{{tenant_tag(tenant)}}}:{kind}:{key}"

    def _meta(self, kind: str, tenant: str) -> tuple[str, str]:
        return self.key(kind, tenant, "~index"), self.key(kind, tenant, "~sizes")

    # -- operations ------------------------------------------------------------------------
    async def put(self, kind: str, tenant: str, key: str, value: bytes, *, ttl_s: float,
                  cap_bytes: int) -> int:
        """Store with a TTL; returns entries evicted for the cap (-1: value over the cap)."""
        keys = [self.key(kind, tenant, key), *self._meta(kind, tenant)]
        args = [value, max(1, int(ttl_s * 1000)), cap_bytes]
        return int(await self._call("put", lambda: self._put(keys=keys, args=args)))

    async def get(self, kind: str, tenant: str, key: str, *,
                  touch_ttl_s: Optional[float] = None) -> Optional[bytes]:
        """The value or None; ``touch_ttl_s`` restarts its TTL (a sliding expiry)."""
        k = self.key(kind, tenant, key)
        if touch_ttl_s is None:
            return await self._call("get", lambda: self._client.get(k))
        keys = [k, *self._meta(kind, tenant)]
        ttl = max(1, int(touch_ttl_s * 1000))
        return await self._call("get", lambda: self._get_touch(keys=keys, args=[ttl]))

    async def delete(self, kind: str, tenant: str, key: str) -> bool:
        keys = [self.key(kind, tenant, key), *self._meta(kind, tenant)]
        return bool(await self._call("delete", lambda: self._delete(keys=keys)))

    async def entries(self, kind: str, tenant: str) -> list[RedisEntry]:
        """The tenant's live entries of one kind, soonest to expire first."""
        now, rows = await self._call(
            "entries", lambda: self._entries(keys=list(self._meta(kind, tenant))))
        head = self.key(kind, tenant, "").encode()
        out = []
        for i in range(0, len(rows), 3):
            name = rows[i][len(head):].decode() if rows[i].startswith(head) else None
            if name:
                out.append(RedisEntry(name, int(rows[i + 2]),
                                      (float(rows[i + 1]) - int(now)) / 1000.0))
        return out

    @property
    def available(self) -> bool:
        """False during a cool-down after a failure."""
        return time.monotonic() >= self._down_until

    async def ping(self) -> bool:
        """Whether Redis answers now (a failure starts a cool-down, as any call's does)."""
        try:
            return bool(await self._call("ping", self._client.ping))
        except CacheUnavailable:
            return False

    async def aclose(self) -> None:
        await self._client.aclose()

    # -- failure handling --------------------------------------------------------------------
    async def _call(self, what: str, op: Callable[[], Awaitable[T]]) -> T:
        if time.monotonic() < self._down_until:
            self.skipped += 1
            raise CacheUnavailable(f"redis {what} skipped: cooling down after a failure")
        try:
            result = await asyncio.wait_for(op(), self._op_timeout)
        except (RedisError, OSError, asyncio.TimeoutError) as e:
            self.errors += 1
            self._down_until = time.monotonic() + self.down_cooldown_s
            if self._healthy:
                log.warning("redis %s at %s failed (%s: %s); using the in-process tier for "
                            "%.1fs", what, redact_url(self.url), type(e).__name__, e,
                            self.down_cooldown_s)
            self._healthy = False
            raise CacheUnavailable(f"redis {what} failed: {type(e).__name__}: {e}") from e
        if not self._healthy:
            log.info("redis at %s is reachable again", redact_url(self.url))
            self._healthy = True
        return result
