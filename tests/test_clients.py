"""The client recipes of examples/clients/, each run as a real subprocess against a real
``guardrail serve`` process in front of the demo's scripted LLM (examples/fake_upstream.py,
its own process), everything on loopback ports.

Each recipe must print the demo answer's supported sentences verbatim, never the
hallucinated 1950 sentence, and the report it read back (the redacted sentence).  The
LangChain and LiteLLM recipes run in .venv-examples and the Node one needs its
node_modules, both made by ``scripts/setup-examples``: without them these tests skip,
unless ``GUARDRAIL_REQUIRE_EXAMPLES=1`` (CI), when they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from conftest import TEST_LATENCY_BUDGET_S, free_port, wait_until

from guardrail.testing.fake_upstream import DEMO

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ROOT / "examples" / "clients"
EXAMPLES_BIN = ROOT / ".venv-examples" / "bin"
NODE_DIR = CLIENTS / "node"
REQUIRE = os.environ.get("GUARDRAIL_REQUIRE_EXAMPLES") == "1"

# The demo LLM's answer (the rule that answers the Eiffel question): two supported
# sentences around the hallucinated one.
FIRST, HALLUCINATED, LAST = re.split(r"(?<=\.) ", DEMO["upstream"]["rules"][-1]["reply"])
assert "1950" in HALLUCINATED


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.TransportError:
        return False


@contextlib.contextmanager
def process(cmd: list, ready_url: str, log: Path, **kw) -> Iterator[subprocess.Popen]:
    """Run ``cmd`` (output to ``log``) until the block ends; ready once ``ready_url``
    answers 200."""
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, **kw)
        try:
            def ready() -> bool:
                assert proc.poll() is None, f"{cmd[:3]} exited:\n{log.read_text()[-4000:]}"
                return answers(ready_url)
            wait_until(ready, 180, f"{' '.join(map(str, cmd[:3]))} to answer {ready_url}")
            yield proc
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


@pytest.fixture(scope="module")
def guardrail_url(tmp_path_factory) -> Iterator[str]:
    """``guardrail serve`` (the shipped detector, default policy) in front of the demo's
    fake LLM; its /v1 URL."""
    logs = tmp_path_factory.mktemp("clients")
    up, port = f"http://127.0.0.1:{free_port()}", free_port()
    env = {**os.environ, "GUARDRAIL_SCHEDULER__LATENCY_BUDGET_S": str(TEST_LATENCY_BUDGET_S),
           "GUARDRAIL_SCHEDULER__INITIAL_STREAMS": "64"}
    with process([sys.executable, ROOT / "examples" / "fake_upstream.py", "--port",
                  up.rsplit(":", 1)[1], "--delay", "0"], up + "/v1/models",
                 logs / "upstream.log"), \
            process([sys.executable, "-m", "guardrail.cli", "serve", "--upstream", up + "/v1",
                     "--port", str(port), "--log-level", "warning"],
                    f"http://127.0.0.1:{port}/readyz", logs / "guardrail.log", env=env):
        yield f"http://127.0.0.1:{port}/v1"


def require(path: Path | str | None, what: str) -> Path:
    """``path`` if it exists; else skip, or fail under GUARDRAIL_REQUIRE_EXAMPLES=1."""
    if not path or not Path(path).exists():
        message = f"{what} is missing: run scripts/setup-examples"
        if REQUIRE:
            pytest.fail(message + " (GUARDRAIL_REQUIRE_EXAMPLES=1)")
        pytest.skip(message)
    return Path(path)


def run(cmd: list, **env: str) -> str:
    """Run a recipe to its end; its stdout."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **env})
    assert r.returncode == 0, f"{cmd} exited {r.returncode}:\n{r.stdout}\n{r.stderr[-4000:]}"
    return r.stdout


def check_printed(out: str) -> None:
    """What a recipe printed: the released answer, then the report it read."""
    text, marker, report = out.partition("--- guardrail report")
    assert marker, out
    assert FIRST in text and LAST in text, out  # supported: released verbatim
    assert "1950" not in text, out
    assert re.search(r"action: redact\s+hallucination_detected: (True|true)", report), out
    assert f"redact: {HALLUCINATED!r}" in report or f"redact: {json.dumps(HALLUCINATED)}" \
        in report, out


@pytest.mark.parametrize("flag", [[], ["--async"]], ids=["sync", "async"])
def test_python_openai(guardrail_url, flag):
    """The openai SDK of guardrail's own .venv (a dev dependency): no skip."""
    check_printed(run([sys.executable, CLIENTS / "python_openai.py", *flag],
                      GUARDRAIL_URL=guardrail_url))


def test_node_openai(guardrail_url):
    node = require(shutil.which("node"), "node")
    require(NODE_DIR / "node_modules" / "openai", "examples/clients/node/node_modules")
    check_printed(run([node, NODE_DIR / "stream.mjs"], GUARDRAIL_URL=guardrail_url))


def test_langchain_rag(guardrail_url):
    python = require(EXAMPLES_BIN / "python", ".venv-examples")
    check_printed(run([python, CLIENTS / "langchain_rag.py"], GUARDRAIL_URL=guardrail_url))


def test_litellm_sdk(guardrail_url):
    python = require(EXAMPLES_BIN / "python", ".venv-examples")
    check_printed(run([python, CLIENTS / "litellm_sdk.py"], GUARDRAIL_URL=guardrail_url))


def test_litellm_proxy(guardrail_url, tmp_path):
    """app -> the real LiteLLM proxy process (config.yaml) -> guardrail -> fake LLM."""
    litellm = require(EXAMPLES_BIN / "litellm", ".venv-examples (litellm[proxy])")
    port, key = free_port(), "sk-" + secrets.token_hex(32)
    env = {**os.environ, "GUARDRAIL_URL": guardrail_url, "GUARDRAIL_API_KEY": "client-key",
           "LITELLM_MASTER_KEY": key, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with process([litellm, "--config", CLIENTS / "litellm_proxy" / "config.yaml",
                  "--host", "127.0.0.1", "--port", str(port)],
                 f"http://127.0.0.1:{port}/health/liveliness", tmp_path / "litellm.log",
                 env=env, cwd=tmp_path):
        out = run([EXAMPLES_BIN / "python", CLIENTS / "litellm_proxy" / "client.py"],
                  LITELLM_URL=f"http://127.0.0.1:{port}/v1", LITELLM_MASTER_KEY=key)
    check_printed(out)
    assert re.search(r"^stream id: gr-\w+$", out, re.M), out  # guardrail's header, passed on


def test_curl(guardrail_url):
    out = run(["bash", CLIENTS / "curl.sh"], GUARDRAIL_URL=guardrail_url)
    streamed, _, whole = out.partition("=== non-streaming")
    assert re.search(r"^x-guardrail-stream-id: gr-\w+\r?$", streamed, re.M), streamed
    events = [json.loads(line[6:]) for line in streamed.splitlines()
              if line.startswith("data: {")]
    streamed_text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events
                            if e["choices"])
    (streamed_report,) = [e["guardrail"] for e in events if "guardrail" in e]
    headers, body = whole.strip().rsplit("\n", 1)
    assert "x-guardrail-action: redact" in headers and "x-guardrail-hallucination: true" in \
        headers, headers
    completion = json.loads(body)
    for text, report in ((streamed_text, streamed_report),
                         (completion["choices"][0]["message"]["content"], completion["guardrail"])):
        assert FIRST in text and LAST in text and "1950" not in text, text
        flagged = [s for s in report["sentences"] if s["action"] == "redact"]
        assert [s["original"].strip() for s in flagged] == [HALLUCINATED], report
