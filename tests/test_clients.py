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

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from conftest import TEST_LATENCY_BUDGET_S

from guardrail.testing.fake_upstream import DEMO

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ROOT / "examples" / "clients"
_spec = importlib.util.spec_from_file_location("clients_run", CLIENTS / "run.py")
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)
EXAMPLES_BIN, NODE_DIR = runner.EXAMPLES_BIN, runner.NODE_DIR
REQUIRE = os.environ.get("GUARDRAIL_REQUIRE_EXAMPLES") == "1"

# The demo LLM's answer (the rule that answers the Eiffel question): two supported
# sentences around the hallucinated one.
FIRST, HALLUCINATED, LAST = re.split(r"(?<=\.) ", DEMO["upstream"]["rules"][-1]["reply"])
assert "1950" in HALLUCINATED


@pytest.fixture(scope="module")
def guardrail_url(tmp_path_factory) -> Iterator[str]:
    """``guardrail serve`` (the shipped detector, default policy) in front of the demo's
    fake LLM, both started by examples/clients/run.py; its /v1 URL."""
    env = {"GUARDRAIL_SCHEDULER__LATENCY_BUDGET_S": str(TEST_LATENCY_BUDGET_S),
           "GUARDRAIL_SCHEDULER__INITIAL_STREAMS": "64"}
    with runner.demo(env, tmp_path_factory.mktemp("clients")) as url:
        yield url


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


def test_python_responses(guardrail_url):
    """The openai SDK's Responses API (client.responses.create, stream=True)."""
    check_printed(run([sys.executable, CLIENTS / "python_responses.py"],
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
    require(EXAMPLES_BIN / "litellm", ".venv-examples (litellm[proxy])")
    with runner.litellm_proxy(guardrail_url, tmp_path, tmp_path / "litellm.log") as env:
        out = run([EXAMPLES_BIN / "python", CLIENTS / "litellm_proxy" / "client.py"], **env)
    check_printed(out)
    assert re.search(r"^stream id: gr-\w+$", out, re.M), out  # guardrail's header, passed on


def test_one_command_runs_a_recipe_against_its_own_demo():
    """examples/clients/run.py: fake LLM + guardrail + the recipe, then all stopped."""
    check_printed(run([sys.executable, CLIENTS / "run.py", "python_openai"]))


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
