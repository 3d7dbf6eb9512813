"""Context caches: the in-process LRU, and the Redis tier against a real Redis server.

Redis tests use a unique key prefix each and delete their keys afterwards; the shared
server on 127.0.0.1:6379 is never stopped.  Tests of a Redis going away start their
own ``redis-server`` on a free loopback port and kill it.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess

import numpy as np
import pytest
from conftest import REDIS_URL as SHARED, cache_conf as conf, free_port
import redis.asyncio as aioredis

from guardrail.config import CacheConfig
from guardrail.contexts import ContextStore, LRUCache, RedisStore, context_id_for, tenant_tag
from guardrail.engine.prepared import PreparedContextCache
from guardrail.errors import BadRequest, NotFound, StoreUnavailable
from guardrail.model.inputs import PreparedContext, Tokenized, context_key

MODEL = "tok"
DOCS = ("Paris is the capital of France.", "The Seine flows through it.")


class Preparer:
    """A ``prepare_fn`` that counts its calls (a real detector is not needed here)."""

    def __init__(self):
        self.calls = 0

    async def __call__(self, documents):
        self.calls += 1
        await asyncio.sleep(0)
        text = "\n\n".join(documents)
        ids = np.arange(len(text.split()), dtype=np.int32)
        offsets = np.stack([ids, ids + 1], axis=1).astype(np.int32)
        return PreparedContext(context_key(list(documents), MODEL), text,
                               Tokenized(ids, offsets), MODEL)


# -- in-process tier ----------------------------------------------------------------------------
def test_lru_byte_budget_tenant_share_and_expiry():
    now = [0.0]
    lru = LRUCache(100, 60, clock=lambda: now[0])
    lru.put("a", "k1", 1, 30)
    lru.put("a", "k2", 2, 30)
    lru.get("a", "k1")                    # k1 is now the most recent of a's
    lru.put("a", "k3", 3, 30)             # a's share (60) forces a's least recent out: k2
    assert lru.get("a", "k2") is None and lru.get("a", "k1") == 1
    lru.put("b", "k1", 10, 40)            # total 100: fits
    assert lru.get("b", "k1") == 10 and lru.get("a", "k1") == 1 and lru.bytes == 100
    assert lru.get("b", "k3") is None     # tenants never see each other's keys
    assert not lru.put("a", "huge", 0, 61)
    lru.put("b", "t", "ttl", 10, ttl_s=5)
    now[0] = 4.9
    assert lru.get("b", "t") == "ttl"
    now[0] = 5.0
    assert lru.get("b", "t") is None and lru.tenant_bytes("b") <= 40
    assert lru.evictions == 2


async def test_embedded_context_store_without_redis_expires_by_its_clock():
    now = [1000.0]
    store = ContextStore(CacheConfig(context_ttl_s=60), clock=lambda: now[0])
    ctx = await store.put("acme", list(DOCS))
    assert ctx.context_id == context_id_for(DOCS) and ctx.context_id.startswith("ctx_")
    assert (await store.get("acme", ctx.context_id)).documents == DOCS
    assert [i.context_id for i in await store.list("acme")] == [ctx.context_id]
    now[0] += 60
    with pytest.raises(NotFound):
        await store.get("acme", ctx.context_id)
    with pytest.raises(BadRequest):
        await store.put("acme", "not a list")
    with pytest.raises(BadRequest, match="ttl"):
        await store.put("acme", list(DOCS), ttl_s=10**9)


async def test_a_context_no_tier_can_keep_is_refused_not_given_an_id():
    store = ContextStore(CacheConfig(local_tenant_max_bytes=40))
    with pytest.raises(BadRequest, match="local_tenant_max_bytes: 40") as err:
        await store.put("acme", list(DOCS))  # 59 bytes
    assert err.value.code == "context_too_large" and await store.list("acme") == []
    assert (await store.put("acme", [DOCS[0]])).n_bytes == 31  # one that fits is kept


@pytest.mark.redis
async def test_a_context_over_the_redis_tenant_cap_is_refused_not_kept_locally(prefix):
    store = ContextStore(conf(prefix, tenant_max_bytes=100))
    with pytest.raises(BadRequest, match="tenant_max_bytes: 100") as err:
        await store.put("acme", list(DOCS))  # fits the local tier, not the Redis cap
    assert err.value.code == "context_too_large" and await store.list("acme") == []
    with pytest.raises(NotFound):
        await store.get("acme", context_id_for(DOCS))
    await store.aclose()


async def test_embedded_prepared_cache_prepares_once_for_concurrent_callers():
    cache = PreparedContextCache(CacheConfig())
    prep = Preparer()
    got = await asyncio.gather(*(cache.get_or_prepare("acme", DOCS, prep, model=MODEL)
                                 for _ in range(5)))
    assert prep.calls == 1 and all(g is got[0] for g in got)
    assert got[0].key == context_key(list(DOCS), MODEL)
    await cache.get_or_prepare("other", DOCS, prep, model=MODEL)
    assert prep.calls == 2  # a tenant never uses another tenant's entry
    st = cache.stats()
    assert (st.misses, st.shared_waits, st.local_hits) == (2, 4, 0)
    await cache.aclose()


# -- Redis tier ----------------------------------------------------------------------------------
@pytest.mark.redis
async def test_prepared_context_round_trip_through_redis(prefix):
    first, second = PreparedContextCache(conf(prefix)), PreparedContextCache(conf(prefix))
    prep = Preparer()
    made = await first.get_or_prepare("acme", DOCS, prep, model=MODEL)
    await first.flush()
    client = aioredis.from_url(SHARED)
    key = f"{prefix}:{{acme}}:prep:{made.key}"
    assert await client.exists(key) and 0 < await client.pttl(key) <= 3600_000
    await client.aclose()
    loaded = await second.get_or_prepare("acme", DOCS, prep, model=MODEL)  # a new process
    assert prep.calls == 1 and loaded is not made
    assert loaded.key == made.key and loaded.text == made.text
    np.testing.assert_array_equal(loaded.tokens.ids, made.tokens.ids)
    np.testing.assert_array_equal(loaded.tokens.offsets, made.tokens.offsets)
    assert second.stats().redis_hits == 1 and second.redis_errors == 0
    assert await second.get_or_prepare("acme", DOCS, prep, model=MODEL) is loaded  # LRU now
    await first.aclose()
    await second.aclose()


@pytest.mark.redis
async def test_context_store_round_trip_list_delete(prefix):
    store = ContextStore(conf(prefix))
    ctx = await store.put("acme", list(DOCS), ttl_s=120)
    assert (await store.put("acme", list(DOCS))).context_id == ctx.context_id  # idempotent
    fresh = ContextStore(conf(prefix))  # another replica: nothing in its local tier
    got = await fresh.get("acme", ctx.context_id)
    assert got.documents == DOCS and got.n_bytes == sum(len(d) for d in DOCS)
    [info] = await fresh.list("acme")
    assert info.context_id == ctx.context_id and 0 < info.expires_in_s <= 86400
    await fresh.delete("acme", ctx.context_id)
    for s in (store, fresh):  # the delete is seen by the other replica too
        with pytest.raises(NotFound):
            await s.get("acme", ctx.context_id)
    with pytest.raises(NotFound):
        await store.delete("acme", ctx.context_id)
    with pytest.raises(NotFound):
        await store.get("acme", "ctx_../../etc")
    assert await store.list("acme") == []
    await store.aclose()
    await fresh.aclose()


@pytest.mark.redis
async def test_ttl_expiry_in_redis(prefix):
    store = ContextStore(conf(prefix, context_ttl_s=0.3))
    cache = PreparedContextCache(conf(prefix, prepared_ttl_s=0.3))
    prep = Preparer()
    ctx = await store.put("acme", list(DOCS))
    made = await cache.get_or_prepare("acme", DOCS, prep, model=MODEL)
    await cache.flush()
    client = aioredis.from_url(SHARED)
    keys = [f"{prefix}:{{acme}}:ctx:{ctx.context_id}", f"{prefix}:{{acme}}:prep:{made.key}"]
    assert await client.exists(*keys) == 2
    for _ in range(500):
        if not await client.exists(*keys):
            break
        await asyncio.sleep(0.02)
    assert await client.exists(*keys) == 0
    await client.aclose()
    with pytest.raises(NotFound):
        await ContextStore(conf(prefix)).get("acme", ctx.context_id)
    with pytest.raises(NotFound):  # the same replica's local copy expired with it
        await store.get("acme", ctx.context_id)
    assert await store.list("acme") == []
    later = PreparedContextCache(conf(prefix))
    await later.get_or_prepare("acme", DOCS, prep, model=MODEL)
    assert prep.calls == 2 and later.stats().redis_hits == 0
    for c in (store, cache, later):
        await c.aclose()


@pytest.mark.redis
async def test_tenants_never_see_each_others_contexts(prefix):
    a, b = ContextStore(conf(prefix)), ContextStore(conf(prefix))
    ctx = await a.put("tenant-a", list(DOCS))
    with pytest.raises(NotFound):
        await b.get("tenant-b", ctx.context_id)
    with pytest.raises(NotFound):
        await b.delete("tenant-b", ctx.context_id)
    assert await b.list("tenant-b") == []
    assert (await b.get("tenant-a", ctx.context_id)).documents == DOCS  # still there
    # a tenant name built to look like another tenant's key path is hashed, not spliced
    sneaky = "tenant-a}:ctx:x"
    assert tenant_tag(sneaky).startswith("~")
    with pytest.raises(NotFound):
        await b.get(sneaky, ctx.context_id)
    assert await b.list(sneaky) == []
    # prepared contexts: the same documents under another tenant are prepared again
    prep = Preparer()
    await PreparedContextCache(conf(prefix)).get_or_prepare("tenant-a", DOCS, prep, model=MODEL)
    other = PreparedContextCache(conf(prefix))
    await other.get_or_prepare("tenant-b", DOCS, prep, model=MODEL)
    assert prep.calls == 2 and other.stats().redis_hits == 0
    await a.aclose()
    await b.aclose()


@pytest.mark.redis
async def test_per_tenant_size_cap_evicts_the_oldest(prefix):
    store = RedisStore(SHARED, prefix=prefix)
    for i in range(5):
        evicted = await store.put("prep", "small", f"k{i}", b"x" * 400, ttl_s=60 + i,
                                  cap_bytes=1000)
        assert evicted == (1 if i >= 2 else 0)
    await store.put("prep", "other", "k0", b"y" * 900, ttl_s=60, cap_bytes=1000)
    left = await store.entries("prep", "small")
    assert [e.key for e in left] == ["k3", "k4"] and sum(e.size for e in left) <= 1000
    assert await store.get("prep", "small", "k0") is None
    assert await store.get("prep", "small", "k4") == b"x" * 400
    assert await store.get("prep", "other", "k0") == b"y" * 900  # other tenants untouched
    assert await store.put("prep", "small", "big", b"z" * 1001, ttl_s=60, cap_bytes=1000) == -1
    assert await store.delete("prep", "small", "k4") and not await store.delete("prep", "small",
                                                                               "k4")
    assert [e.key for e in await store.entries("prep", "small")] == ["k3"]
    await store.aclose()


# -- Redis unavailable ------------------------------------------------------------------------------
async def test_closed_port_falls_back_to_the_in_process_tier():
    config = CacheConfig(redis_url=f"redis://127.0.0.1:{free_port()}/0", down_cooldown_s=60)
    cache, store = PreparedContextCache(config), ContextStore(config)
    prep = Preparer()
    ctx = await cache.get_or_prepare("acme", DOCS, prep, model=MODEL)
    assert prep.calls == 1 and ctx.key == context_key(list(DOCS), MODEL)
    await cache.flush()  # the write-behind failed quietly (skipped: cooling down)
    assert await cache.get_or_prepare("acme", DOCS, prep, model=MODEL) is ctx
    st = cache.stats()
    assert st.redis_errors >= 1 and st.redis_errors + st.redis_skipped >= 2
    stored = await store.put("acme", list(DOCS))
    assert (await store.get("acme", stored.context_id)).documents == DOCS
    assert [i.context_id for i in await store.list("acme")] == [stored.context_id]
    with pytest.raises(StoreUnavailable) as info:  # only Redis could know: 503, not 404
        await store.get("acme", "ctx_" + "0" * 32)
    assert info.value.status == 503 and info.value.retry_after >= 1
    assert store.redis.errors >= 1
    await cache.aclose()
    await store.aclose()


@pytest.mark.redis
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
async def test_a_redis_that_dies_and_returns(tmp_path):
    port = free_port()
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(tmp_path)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        await wait_for_redis(url)
        config = CacheConfig(redis_url=url, down_cooldown_s=0.0)
        cache, store = PreparedContextCache(config), ContextStore(config)
        prep = Preparer()
        first = await cache.get_or_prepare("acme", DOCS, prep, model=MODEL)
        await cache.flush()
        stored = await store.put("acme", list(DOCS))
        proc.kill()
        proc.wait()
        # Redis is gone: the local tier serves, a new context is prepared, nothing raises
        assert await cache.get_or_prepare("acme", DOCS, prep, model=MODEL) is first
        docs2 = ("Another document.",)
        await cache.get_or_prepare("acme", docs2, prep, model=MODEL)
        await cache.flush()
        assert prep.calls == 2 and cache.redis_errors >= 1
        assert (await store.get("acme", stored.context_id)).documents == DOCS
        offline = await store.put("acme", ["written while Redis was down"])
        # it comes back (empty): the offline context is written through on its next get
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await wait_for_redis(url)
        assert (await store.get("acme", offline.context_id)).documents == \
            ("written while Redis was down",)
        other = ContextStore(CacheConfig(redis_url=url))
        assert (await other.get("acme", offline.context_id)).context_id == offline.context_id
        with pytest.raises(NotFound):  # Redis is the truth again: lost with the old server
            await other.get("acme", stored.context_id)
        for c in (cache, store, other):
            await c.aclose()
    finally:
        proc.kill()
        proc.wait()


async def wait_for_redis(url: str) -> None:
    client = aioredis.from_url(url, socket_connect_timeout=0.2)
    try:
        for _ in range(250):
            try:
                await client.ping()
                return
            except Exception:
                await asyncio.sleep(0.02)
        raise AssertionError(f"redis-server at {url} did not start")
    finally:
        await client.aclose()


def test_urls_are_shown_without_their_password():
    from guardrail.config import redact_url

    assert redact_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert redact_url("redis://:s3cret@h:1/0") == "redis://***@h:1/0"
    assert redact_url("rediss://user:s3cret@h/0") == "rediss://***@h/0"
    assert redact_url("unix://:s3cret@/run/redis.sock") == "unix://***@/run/redis.sock"
    assert redact_url("redis://h:1/0?password=s3cret&db=1") == \
        "redis://h:1/0?password=***&db=1"  # as redis-py reads a socket's password
    assert redact_url("http://svc:s3cret@llm:8000/v1") == "http://***@llm:8000/v1"
    assert redact_url("redis//:s3cret@h") == "***@h"  # not a URL as written: still hidden
    assert redact_url(None) is None


async def test_a_failing_and_recovering_redis_is_logged_without_its_password(caplog):
    """The outage and recovery lines name Redis as the start-up line does: no password."""
    import logging

    from guardrail.contexts.redis_store import RedisStore

    port = free_port()
    store = RedisStore(f"redis://:s3cret@127.0.0.1:{port}/0?password=s3cret",
                       down_cooldown_s=0)
    with caplog.at_level(logging.INFO, logger="guardrail"):
        assert not await store.ping()
    await store.aclose()
    lines = [r.getMessage() for r in caplog.records]
    assert any("failed" in line and "***@127.0.0.1" in line for line in lines), lines
    assert not any("s3cret" in line for line in lines)
