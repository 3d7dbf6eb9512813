"""Graceful shutdown with real processes: SIGTERM to `guardrail serve` during 8 live
streams ends every one of them cleanly (its checked sentences, then an error event
``shutting_down`` and ``[DONE]``), and the process exits; /readyz says "draining"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
from conftest import EIFFEL_TOOL, free_port, serve
from scripted import ScriptedVerifier
from test_server import cfg

from guardrail.proxy.app import create_app
from guardrail.stream.sse import SSEDecoder

STREAMS = 8


def _wait_ready(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, proc.stdout.read().decode()
        try:
            if httpx.get(url + "/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "guardrail serve did not come up"
        time.sleep(0.2)


def test_sigterm_during_live_streams_ends_each_cleanly(fake_upstream):
    port = free_port()
    env = {**os.environ, "GUARDRAIL_SCHEDULER__LATENCY_BUDGET_S": "120",
           "GUARDRAIL_SCHEDULER__INITIAL_STREAMS": "64",
           "GUARDRAIL_SERVER__DRAIN_GRACE_S": "1.5",
           "GUARDRAIL_SERVER__PING_INTERVAL_S": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "guardrail.cli", "serve", "--upstream",
                             fake_upstream.url + "/v1", "--port", str(port),
                             "--log-level", "warning"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    texts = [b""] * STREAMS
    started = threading.Barrier(STREAMS + 1, timeout=120)

    def client(i: int) -> None:
        body = {"model": "fake-llm", "stream": True,
                "messages": [{"role": "user", "content": "Eiffel?"}],
                "guardrail": {"context": [EIFFEL_TOOL]},
                "fake": {"mode": "slow", "delay": 0.4}}  # ~10 s of answer
        with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as r:
            first = True
            for data in r.iter_raw():
                texts[i] += data
                if first:
                    first = False
                    started.wait()
        if first:
            started.wait()

    try:
        _wait_ready(url, proc)
        threads = [threading.Thread(target=client, args=(i,)) for i in range(STREAMS)]
        for t in threads:
            t.start()
        started.wait()  # every stream has its first bytes
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)  # the streams are in flight: the process still listens, and says no
        late = httpx.post(url + "/v1/chat/completions", timeout=10, json={
            "model": "fake-llm", "messages": [{"role": "user", "content": "hi"}]})
        ready = httpx.get(url + "/readyz", timeout=10)
        for t in threads:
            t.join(60)
        proc.wait(60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it caught
    assert took < 30
    assert late.status_code == 503 and late.json()["error"]["code"] == "shutting_down"
    assert ready.status_code == 503
    for text in texts:
        events = SSEDecoder().feed(text)
        assert events[-1].data == "[DONE]", text[-300:]
        last = json.loads(events[-2].data)
        if "error" in last:  # cut at the end of the grace period
            assert last["error"]["code"] == "shutting_down"
            assert last["guardrail"]["partial"] is True
        else:  # finished within it
            assert "guardrail" in last


def test_readyz_turns_503_while_draining_and_new_requests_are_refused(fake_upstream):
    app = create_app(cfg(fake_upstream.url), verifier=ScriptedVerifier())
    with serve(app) as s, httpx.Client(base_url=s.url, timeout=30) as c:
        assert c.get("/readyz").json()["status"] == "ready"
        drain = app.state.guardrail.drain
        s.loop.call_soon_threadsafe(drain.begin)
        deadline = time.monotonic() + 5
        while c.get("/readyz").status_code != 503:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        r = c.post("/v1/chat/completions", json={
            "model": "fake-llm", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 503 and r.json()["error"]["code"] == "shutting_down"
    assert "retry-after" in r.headers
