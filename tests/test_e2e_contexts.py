"""Stored contexts, tenants and the Redis tier through the running server.

The proxy runs as ``guardrail serve`` wires it (scheduler + prepared-context cache +
context store, one Redis client) on a loopback port, with the real default detector,
the scripted fake upstream and the real Redis server on 127.0.0.1:6379 (each test in
a key prefix of its own).  A Redis that is down is a closed loopback port, or a
``redis-server`` of the test's own that it kills.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Optional

import httpx
import openai
import pytest
import redis
from conftest import (EIFFEL_ANSWER, EIFFEL_TOOL, REDIS_URL, free_port, proxy_config, scrape,
                      serve, wait_until)

from guardrail.proxy.app import create_app

QUESTION = "When was the Eiffel Tower built?"


def chat(url: str, key: str = "sk-none", **guardrail) -> tuple[str, dict]:
    """One streamed answer through the openai SDK: (text, guardrail object)."""
    with openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0, timeout=120) as c:
        chunks = list(c.chat.completions.create(
            model="fake-llm", stream=True, messages=[{"role": "user", "content": QUESTION}],
            extra_body={"guardrail": {**guardrail, "policy": {"threshold": 1.0}}}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, chunks[-1].model_extra["guardrail"]


def chat_status(client: httpx.Client, context_id: str, key: str = "") -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return client.post("/v1/chat/completions", headers=headers, json={
        "model": "fake-llm", "stream": True, "messages": [{"role": "user", "content": QUESTION}],
        "guardrail": {"context_id": context_id}})


def redis_cfg(prefix: str, **cache) -> dict:
    # loopback Redis timeouts a busy machine does not trip (test_cache.conf says why)
    return {"redis_url": REDIS_URL, "key_prefix": prefix, "down_cooldown_s": 0.0,
            "socket_timeout_s": 5.0, "connect_timeout_s": 5.0, **cache}


# -- the round trip -------------------------------------------------------------------------

@pytest.mark.redis
def test_contexts_round_trip_through_redis(fake_upstream, detector, redis_prefix):
    cfg = proxy_config(fake_upstream.url, cache=redis_cfg(redis_prefix))
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:
        r = c.put("/v1/contexts", json={"documents": [EIFFEL_TOOL]})
        assert r.status_code == 200, r.text
        put = r.json()
        cid = put["context_id"]
        assert cid.startswith("ctx_") and put["documents"] == 1
        assert put["tokens"] > 40  # prepared (tokenized) at the PUT, once
        assert put["ttl_s"] == pytest.approx(86400, abs=5)
        assert put["expires_at"] == pytest.approx(time.time() + 86400, abs=5)
        assert c.put("/v1/contexts", json={"context": EIFFEL_TOOL}).json()["context_id"] == cid

        text, g = chat(p.url, context_id=cid)  # the id instead of the documents
        assert text == EIFFEL_ANSWER
        assert "".join(s["original"] for s in g["sentences"]) == EIFFEL_ANSWER
        assert all(s["checked"] for s in g["sentences"]) and g["final"]["exit_layer"] == 6
        assert "guardrail" not in fake_upstream.app.state.log[-1].body

        got = c.get(f"/v1/contexts/{cid}").json()
        assert got["context"] == [EIFFEL_TOOL] and got["context_id"] == cid
        assert [i["context_id"] for i in c.get("/v1/contexts").json()["data"]] == [cid]
        m = scrape(p.url)
        assert m[("guardrail_context_cache_lookups_total", (("result", "miss"),))] == 1
        assert m[("guardrail_context_cache_lookups_total", (("result", "local_hit"),))] >= 1
        assert m[("guardrail_cache_redis_errors_total", ())] == 0

    raw = redis.Redis.from_url(REDIS_URL)
    try:  # both kinds, in the default tenant's namespace
        assert raw.exists(f"{redis_prefix}:{{default}}:ctx:{cid}")
        assert list(raw.scan_iter(match=f"{redis_prefix}:{{default}}:prep:*"))
    finally:
        raw.close()

    # a fresh process (empty in-process tiers) finds both in Redis
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:
        assert c.get(f"/v1/contexts/{cid}").status_code == 200
        text, _ = chat(p.url, context_id=cid)
        assert text == EIFFEL_ANSWER
        m = scrape(p.url)
        assert m[("guardrail_context_cache_lookups_total", (("result", "redis_hit"),))] == 1
        assert m[("guardrail_context_cache_lookups_total", (("result", "miss"),))] == 0

        r = c.delete(f"/v1/contexts/{cid}")
        assert r.status_code == 200 and r.json()["deleted"] is True
        r = c.get(f"/v1/contexts/{cid}")
        assert r.status_code == 404
        assert r.json()["error"] == {"message": f"no context '{cid}' (unknown or expired)",
                                     "type": "not_found", "code": "context_not_found"}
        calls = len(fake_upstream.app.state.log)
        r = chat_status(c, cid)
        assert r.status_code == 404 and r.json()["error"]["code"] == "context_not_found"
        assert len(fake_upstream.app.state.log) == calls  # refused before going upstream
        assert c.delete(f"/v1/contexts/{cid}").status_code == 404
        assert c.get("/v1/contexts").json()["data"] == []


@pytest.mark.parametrize("body, message", [
    ({}, "exactly one of 'documents' or 'context'"),
    ({"documents": ["a"], "context": ["b"]}, "exactly one of"),
    ({"documents": []}, "holds no text"),
    ({"documents": ["  "]}, "holds no text"),
    ({"documents": [1]}, "must be a string or an array of strings"),
    ({"documents": ["a"], "ttl_s": "long"}, "'ttl_s' must be a number"),
    ({"documents": ["a"], "ttl_s": -1}, "ttl must be in"),
    ({"documents": ["a"], "ttl_s": 10**9}, "ttl must be in"),
    ({"documents": ["a"], "tags": []}, "unknown field(s) tags"),
])
def test_bad_context_bodies_are_400(fake_upstream, detector, body, message):
    with serve(create_app(proxy_config(fake_upstream.url), detector=detector)) as p:
        r = httpx.put(p.url + "/v1/contexts", json=body)
        assert r.status_code == 400, r.text
        assert message in r.json()["error"]["message"]
        r = httpx.put(p.url + "/v1/contexts", content=b"[1, 2]")
        assert r.status_code == 400 and "JSON object" in r.json()["error"]["message"]
        assert httpx.get(p.url + "/v1/contexts/not-an-id").status_code == 404


def test_embedded_store_and_ttl_expiry(fake_upstream, detector):
    """No Redis configured: the in-process tier alone stores contexts; both the
    configured default TTL and a PUT's own ``ttl_s`` expire."""
    cfg = proxy_config(fake_upstream.url, cache={"context_ttl_s": 1.0})
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:
        short = c.put("/v1/contexts", json={"documents": ["Short-lived."], "ttl_s": 0.5}).json()
        dflt = c.put("/v1/contexts", json={"documents": [EIFFEL_TOOL]}).json()
        assert dflt["ttl_s"] == pytest.approx(1.0, abs=0.2) and short["ttl_s"] <= 0.5
        text, _ = chat(p.url, context_id=dflt["context_id"])
        assert text == EIFFEL_ANSWER
        for ctx in (short, dflt):
            wait_until(lambda: c.get(f"/v1/contexts/{ctx['context_id']}").status_code == 404,
                       10, "the context to expire")
        r = chat_status(c, dflt["context_id"])
        assert r.status_code == 404 and "unknown or expired" in r.json()["error"]["message"]
        assert c.get("/v1/contexts").json()["data"] == []


@pytest.mark.redis
def test_ttl_expiry_in_redis(fake_upstream, detector, redis_prefix):
    cfg = proxy_config(fake_upstream.url, cache=redis_cfg(redis_prefix))
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:
        cid = c.put("/v1/contexts", json={"documents": [EIFFEL_TOOL], "ttl_s": 1}).json()[
            "context_id"]
        assert chat(p.url, context_id=cid)[0] == EIFFEL_ANSWER
        raw = redis.Redis.from_url(REDIS_URL)
        try:
            key = f"{redis_prefix}:{{default}}:ctx:{cid}"
            assert 0 < raw.pttl(key) <= 1000  # the TTL is Redis's own
            wait_until(lambda: not raw.exists(key), 10, "Redis to expire the key")
        finally:
            raw.close()
        r = chat_status(c, cid)
        assert r.status_code == 404 and r.json()["error"]["code"] == "context_not_found"
        assert c.get(f"/v1/contexts/{cid}").status_code == 404


# -- tenants ---------------------------------------------------------------------------------

TENANTS = {"acme": {"api_keys": ["sk-acme"]}, "globex": {"api_keys": ["sk-globex"]}}


@pytest.mark.redis
def test_tenants_never_reach_each_others_contexts(fake_upstream, detector, redis_prefix,
                                                   caplog):
    caplog.set_level(logging.INFO, logger="guardrail")
    cfg = proxy_config(fake_upstream.url, tenants=TENANTS, cache=redis_cfg(redis_prefix))
    a, b = {"authorization": "Bearer sk-acme"}, {"authorization": "Bearer sk-globex"}
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:
        assert "2 tenant(s) configured (acme, globex)" in caplog.text
        assert "single default tenant" not in caplog.text
        cid = c.put("/v1/contexts", headers=a, json={"documents": [EIFFEL_TOOL]}).json()[
            "context_id"]
        never = "ctx_" + "0" * 32
        # B cannot read, use, list or delete it: a 404 exactly like an id that never was
        for method in ("GET", "DELETE"):
            mine, other = (c.request(method, f"/v1/contexts/{i}", headers=b)
                           for i in (cid, never))
            assert mine.status_code == other.status_code == 404
            assert mine.json()["error"]["message"].replace(cid, never) == \
                other.json()["error"]["message"]
        assert c.get("/v1/contexts", headers=b).json()["data"] == []
        assert chat_status(c, cid, "sk-globex").status_code == 404
        with pytest.raises(openai.NotFoundError):
            chat(p.url, "sk-globex", context_id=cid)
        # A still has it, and uses it
        assert c.get(f"/v1/contexts/{cid}", headers=a).status_code == 200
        assert chat(p.url, "sk-acme", context_id=cid)[1]["policy"]["tenant"] == "acme"
        # the same documents stored by B are B's own entry (ids are content hashes)
        assert c.put("/v1/contexts", headers=b, json={"documents": [EIFFEL_TOOL]}).json()[
            "context_id"] == cid
        assert c.delete(f"/v1/contexts/{cid}", headers=b).status_code == 200
        assert c.get(f"/v1/contexts/{cid}", headers=a).status_code == 200
        assert [i["context_id"] for i in c.get("/v1/contexts", headers=a).json()["data"]] \
            == [cid]
        # keys are required once tenants are configured
        for headers in ({}, {"authorization": "Bearer sk-nobody"}):
            r = c.get("/v1/contexts", headers=headers)
            assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
            assert chat_status(c, cid, headers.get("authorization", "")[7:]).status_code == 401
    raw = redis.Redis.from_url(REDIS_URL)
    try:
        assert raw.exists(f"{redis_prefix}:{{acme}}:ctx:{cid}")
        assert not raw.exists(f"{redis_prefix}:{{globex}}:ctx:{cid}")
    finally:
        raw.close()


# -- Redis down ------------------------------------------------------------------------------

def test_serve_with_redis_down_falls_back_and_logs_the_default_tenant(fake_upstream):
    """``guardrail serve --redis-url`` at a closed port: checked chats and the contexts
    API still work (in-process tier), the failures are counted in /metrics, and the
    start-up log names the single default tenant."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "guardrail.cli", "serve", "--upstream", fake_upstream.url + "/v1",
         "--port", str(port), "--redis-url", f"redis://127.0.0.1:{free_port()}/0",
         "--log-level", "info"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "GUARDRAIL_CACHE__DOWN_COOLDOWN_S": "0"})
    url = f"http://127.0.0.1:{port}"
    try:
        def up() -> bool:
            assert proc.poll() is None, proc.stdout.read().decode()
            try:
                return httpx.get(url + "/healthz").status_code == 200
            except httpx.TransportError:
                return False
        wait_until(up, 120, "guardrail serve to come up")
        text, g = chat(url, context=[EIFFEL_TOOL])
        assert text == EIFFEL_ANSWER and all(s["checked"] for s in g["sentences"])
        with httpx.Client(base_url=url, timeout=60) as c:
            cid = c.put("/v1/contexts", json={"documents": [EIFFEL_TOOL]}).json()["context_id"]
            assert c.get(f"/v1/contexts/{cid}").json()["context"] == [EIFFEL_TOOL]
            assert chat(url, context_id=cid)[0] == EIFFEL_ANSWER
            # asked, not remembered: no cool-down runs (0 s), and Redis does not answer
            assert c.get("/healthz").json()["context_cache"] == "in-process (redis unavailable)"
        assert scrape(url)[("guardrail_cache_redis_errors_total", ())] >= 3
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
        log = proc.stdout.read().decode()
        proc.stdout.close()
    assert "running as a single default tenant ('default')" in log
    assert "redis" in log and "using the in-process tier" in log  # the failure, logged
    assert "Traceback" not in log


@pytest.mark.redis
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_an_id_only_redis_holds_is_503_while_redis_is_down(fake_upstream, detector):
    server, url = own_redis()
    try:
        cfg = proxy_config(fake_upstream.url, cache={"redis_url": url, "down_cooldown_s": 0})
        with serve(create_app(cfg, detector=detector)) as p:
            cid = httpx.put(p.url + "/v1/contexts", json={"documents": [EIFFEL_TOOL]}).json()[
                "context_id"]
    finally:
        server.terminate()
        server.wait(10)
    with serve(create_app(cfg, detector=detector)) as p, \
            httpx.Client(base_url=p.url, timeout=60) as c:  # a fresh process, Redis gone
        for r in (chat_status(c, cid), c.get(f"/v1/contexts/{cid}")):
            assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
            assert r.json()["error"]["type"] == "store_unavailable"
        text, _ = chat(p.url, context=[EIFFEL_TOOL])  # inline context: still checked
        assert text == EIFFEL_ANSWER


@pytest.mark.redis
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_healthz_says_whether_redis_answers_now(fake_upstream, detector):
    """Not the last call's outcome: Redis stopped is reported at the next /healthz,
    before any request has needed it, and reported back once it answers again."""
    server, url = own_redis()
    port = url.rsplit(":", 1)[1].split("/")[0]
    cfg = proxy_config(fake_upstream.url, cache={"redis_url": url, "down_cooldown_s": 0})
    try:
        with serve(create_app(cfg, detector=detector)) as p, \
                httpx.Client(base_url=p.url, timeout=60) as c:
            assert c.get("/healthz").json()["context_cache"] == "redis"
            server.terminate()
            server.wait(10)
            assert c.get("/healthz").json()["context_cache"] == \
                "in-process (redis unavailable)"
            server, _ = own_redis(int(port))
            assert c.get("/healthz").json()["context_cache"] == "redis"
    finally:
        server.terminate()
        server.wait(10)


def own_redis(port: Optional[int] = None) -> tuple[subprocess.Popen, str]:
    """A redis-server of the test's own (it is stopped, paused), and its URL."""
    port = port or free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    wait_until(lambda: _pings(url), 10, "redis-server to start")
    return server, url


def _pings(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=0.2)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


@pytest.mark.redis
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_delete_redis_cannot_take_is_503_and_the_context_stays(fake_upstream, detector):
    """Redis is the truth of stored contexts: a DELETE it cannot take (paused past the
    socket timeout) is a 503, not a ``deleted: true`` after which the context comes back
    to every replica once Redis answers; one that only this process holds (written while
    Redis was down) is deleted."""
    server, url = own_redis()
    try:
        cfg = proxy_config(fake_upstream.url, cache={"redis_url": url, "down_cooldown_s": 0})
        admin = redis.Redis.from_url(url)
        with serve(create_app(cfg, detector=detector)) as p, \
                httpx.Client(base_url=p.url, timeout=60) as c:
            cid = c.put("/v1/contexts", json={"documents": [EIFFEL_TOOL]}).json()["context_id"]
            admin.execute_command("CLIENT", "PAUSE", 2000, "ALL")
            r = c.delete(f"/v1/contexts/{cid}")
            assert r.status_code == 503 and r.json()["error"]["type"] == "store_unavailable"
            wait_until(lambda: _pings(url), 10, "Redis to answer again")
            assert c.get(f"/v1/contexts/{cid}").status_code == 200  # still there
            assert c.delete(f"/v1/contexts/{cid}").json()["deleted"] is True
            assert c.get(f"/v1/contexts/{cid}").status_code == 404
            admin.close()
            server.terminate()
            server.wait(10)
            local = c.put("/v1/contexts", json={"documents": ["Only here."]}).json()
            assert c.delete(f"/v1/contexts/{local['context_id']}").status_code == 200
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(10)
