"""Shared fixtures.

Proxy fixtures (guardrail/testing/fake_upstream.py + guardrail/proxy/app.py): real uvicorn servers on
127.0.0.1 with free ports, each in its own thread and event loop (``ServerThread``), so
both the sync openai SDK and async httpx clients can drive them.  ``detector`` is the
real default detector (loaded once); ``redis_prefix`` a key namespace of one test's own
on the real Redis server at 127.0.0.1:6379.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Iterator

import pytest

from guardrail.config import GuardrailConfig
from guardrail.testing.fake_upstream import (FakeScript, Rule, ServerThread,
                                             create_fake_upstream)
from guardrail.testing.processes import free_port  # noqa: F401  (tests import it from here)

EIFFEL_TOOL = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
               "Paris. It was built from 1887 to 1889 by the company of Gustave Eiffel as "
               "the entrance to the 1889 World's Fair. It is 330 metres tall.")
EIFFEL_ANSWER = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. "
                 "It was completed in 1950 by a team of Italian architects. "
                 "It is 330 metres tall.")
EIFFEL_REWRITE = "It was built from 1887 to 1889 by the company of Gustave Eiffel."

PROXY_SCRIPT = FakeScript(rules=[
    Rule(match="completed in 1950", reply=EIFFEL_REWRITE),   # the regenerate call
    Rule(match="weather tool", reply="", tool_calls=(
        {"name": "get_weather", "arguments": '{"city": "Paris"}'},)),
    Rule(match="Eiffel", reply=EIFFEL_ANSWER),
], model="fake-llm")


@contextlib.contextmanager
def serve(app) -> Iterator[ServerThread]:
    with ServerThread(app) as s:
        yield s


@pytest.fixture(scope="module")
def fake_upstream_server() -> Iterator[ServerThread]:
    """The scripted fake LLM on a loopback port (module-scoped; log cleared per test)."""
    with serve(create_fake_upstream(PROXY_SCRIPT)) as s:
        yield s


@pytest.fixture
def fake_upstream(fake_upstream_server: ServerThread) -> ServerThread:
    fake_upstream_server.app.state.log.clear()
    return fake_upstream_server


REDIS_URL = "redis://127.0.0.1:6379/0"


REDIS_URL = "redis://127.0.0.1:6379/0"  # the shared server, never stopped by a test


@pytest.fixture
async def prefix():
    """A Redis key prefix of this test's own; its keys are deleted afterwards (skips
    without a Redis server on loopback)."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
    try:
        await client.ping()
    except Exception as e:  # pragma: no cover - depends on the machine
        await client.aclose()
        pytest.skip(f"no Redis server on 127.0.0.1:6379: {e}")
    p = "gtest" + uuid.uuid4().hex[:12]
    yield p
    keys = [k async for k in client.scan_iter(match=f"{p}:*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


def cache_conf(prefix: str, **kw):
    """The cache settings of a test on the shared Redis under ``prefix``."""
    from guardrail.config import CacheConfig

    # a live Redis on loopback: timeouts long enough that a loaded machine (2 cores busy
    # with other tests) does not turn a slow connect into "Redis is down" (seen once:
    # "Timeout connecting to server" at the default 0.25 s, and the put went local)
    return CacheConfig(**{"redis_url": REDIS_URL, "key_prefix": prefix, "down_cooldown_s": 0.0,
                          "socket_timeout_s": 5.0, "connect_timeout_s": 5.0, **kw})


@pytest.fixture(scope="session")
def tok():
    """The default backbone's tokenizer (all-MiniLM-L6-v2), with no length limit."""
    from transformers import AutoTokenizer

    from guardrail.train.train import minilm_path

    t = AutoTokenizer.from_pretrained(minilm_path())
    t.model_max_length = 1 << 30
    return t


@pytest.fixture(scope="session")
def detector():
    """The real default detector, loaded once per test session (torch imported here),
    in float32: the reference the pins and the numeric tests hold it to, whatever
    ``detector.dtype: auto`` picks on this CPU."""
    from guardrail.config import GuardrailConfig
    from guardrail.engine.build import load_detector

    return load_detector(GuardrailConfig.model_validate({"detector": {"dtype": "float32"}}))


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A Redis key prefix of this test's own on the shared server (127.0.0.1:6379); its
    keys are deleted afterwards.  Skips when no Redis answers."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError as e:  # pragma: no cover - depends on the machine
        client.close()
        pytest.skip(f"no Redis server on 127.0.0.1:6379: {e}")
    prefix = "gtest" + uuid.uuid4().hex[:12]
    yield prefix
    keys = list(client.scan_iter(match=f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()


# The real model on 2 shared CPU cores: checks can take seconds while a test loads the
# machine.  Tests about other things run with a latency budget that admission control
# (engine.admission) never reaches, and a stream limit no test reaches;
# tests/test_admission.py tests both on purpose.
TEST_LATENCY_BUDGET_S = 120.0


def proxy_config(upstream_url: str, **sections) -> GuardrailConfig:
    """A proxy config in front of ``upstream_url`` (the fake upstream) plus ``sections``."""
    sections["scheduler"] = {"latency_budget_s": TEST_LATENCY_BUDGET_S, "initial_streams": 64,
                             **sections.get("scheduler", {})}
    return GuardrailConfig.model_validate(
        {"upstream": {"base_url": upstream_url + "/v1", "api_key": "sk-upstream"}, **sections})


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    """``/metrics`` as {(sample name, sorted label pairs): value}."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(url + "/metrics", timeout=30).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def wait_until(predicate, timeout: float = 30.0, what: str = "a condition"):
    """Poll ``predicate`` until it returns a true value (which is returned)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
