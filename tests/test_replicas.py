"""Two `guardrail serve` processes on one Redis behave as one service: a context stored
through one is checked against by the other, a report written by one is read from the
other, and tenants stay isolated across both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from typing import Iterator

import httpx
from conftest import EIFFEL_TOOL, REDIS_URL, free_port

ACME = {"authorization": "Bearer key-acme"}
GLOBEX = {"authorization": "Bearer key-globex"}


@contextmanager
def replica(upstream: str, prefix: str) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "GUARDRAIL_SCHEDULER__LATENCY_BUDGET_S": "120",
           "GUARDRAIL_SCHEDULER__INITIAL_STREAMS": "64",
           "GUARDRAIL_CACHE__KEY_PREFIX": prefix,
           "GUARDRAIL_TENANTS__ACME__API_KEYS": "[key-acme]",
           "GUARDRAIL_TENANTS__GLOBEX__API_KEYS": "[key-globex]"}
    proc = subprocess.Popen([sys.executable, "-m", "guardrail.cli", "serve", "--upstream",
                             upstream, "--port", str(port), "--redis-url", REDIS_URL,
                             "--log-level", "warning"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read().decode()
            try:
                if httpx.get(url + "/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "a replica did not come up"
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.stdout.close()


def test_two_replicas_on_one_redis_are_one_service(fake_upstream, redis_prefix):
    with ExitStack() as stack:
        a, b = (stack.enter_context(replica(fake_upstream.url + "/v1", redis_prefix))
                for _ in range(2))
        put = httpx.put(a + "/v1/contexts", json={"documents": [EIFFEL_TOOL]}, headers=ACME,
                        timeout=60)
        assert put.status_code == 200, put.text
        cid = put.json()["context_id"]
        body = {"model": "fake-llm", "stream": False,
                "messages": [{"role": "user", "content": "Tell me about the Eiffel tower."}],
                "guardrail": {"context_id": cid}}
        on_b = httpx.post(b + "/v1/chat/completions", json=body, headers=ACME, timeout=120)
        other = httpx.post(b + "/v1/chat/completions", json=body, headers=GLOBEX, timeout=60)
        sid = on_b.headers["x-guardrail-stream-id"]
        deadline = time.monotonic() + 5
        report = httpx.get(f"{a}/v1/guardrail/reports/{sid}", headers=ACME)
        while report.status_code == 404 and time.monotonic() < deadline:  # written behind
            time.sleep(0.05)
            report = httpx.get(f"{a}/v1/guardrail/reports/{sid}", headers=ACME)
        hidden = httpx.get(f"{a}/v1/guardrail/reports/{sid}", headers=GLOBEX)
    assert on_b.status_code == 200 and on_b.headers["x-guardrail-verified"] == "true"
    assert on_b.json()["guardrail"]["sentences"]  # checked against A's stored context
    assert other.status_code == 404  # globex cannot use acme's context id
    assert report.status_code == 200 and report.json()["guardrail"]["stream_id"] == sid
    assert hidden.status_code == 404
