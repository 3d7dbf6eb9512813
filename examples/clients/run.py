"""Run one client recipe against the demo, in one command, offline.

    .venv/bin/python examples/clients/run.py python_openai [--async]
    .venv/bin/python examples/clients/run.py python_responses | node | langchain | litellm
    .venv/bin/python examples/clients/run.py litellm_proxy | curl

Starts the demo's scripted LLM (examples/fake_upstream.py) and ``guardrail serve`` in
front of it (and, for ``litellm_proxy``, LiteLLM's proxy in front of guardrail) as real
processes on free loopback ports, runs the recipe against them, stops them, and exits
with the recipe's status.  Installs the recipes' libraries first if they are missing
(scripts/setup-examples).  tests/test_clients.py starts the same processes from here.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Optional

from guardrail.testing.processes import free_port, running

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXAMPLES_BIN = ROOT / ".venv-examples" / "bin"
NODE_DIR = HERE / "node"
OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # LiteLLM fetches its cost map otherwise


def recipe(name: str, args: list[str]) -> list:
    """The command that runs recipe ``name``."""
    python = EXAMPLES_BIN / "python"
    return {"python_openai": [sys.executable, HERE / "python_openai.py"],
            "python_responses": [sys.executable, HERE / "python_responses.py"],
            "node": [shutil.which("node") or "node", NODE_DIR / "stream.mjs"],
            "langchain": [python, HERE / "langchain_rag.py"],
            "litellm": [python, HERE / "litellm_sdk.py"],
            "litellm_proxy": [python, HERE / "litellm_proxy" / "client.py"],
            "curl": ["bash", HERE / "curl.sh"]}[name] + args


def needs_setup(name: str) -> bool:
    if name == "node":
        return not (NODE_DIR / "node_modules" / "openai").exists()
    return name in ("langchain", "litellm", "litellm_proxy") and \
        not (EXAMPLES_BIN / "python").exists()


@contextlib.contextmanager
def demo(env: Optional[dict] = None, logs: Optional[Path] = None) -> Iterator[str]:
    """The fake LLM and guardrail running; yields guardrail's /v1 URL."""
    up, port = f"http://127.0.0.1:{free_port()}", free_port()
    log = (lambda n: logs / n) if logs else (lambda n: None)
    with running([sys.executable, ROOT / "examples" / "fake_upstream.py", "--port",
                  up.rsplit(":", 1)[1], "--delay", "0"], up + "/v1/models",
                 name="fake LLM", log=log("upstream.log")), \
            running([sys.executable, "-m", "guardrail.cli", "serve", "--upstream", up + "/v1",
                     "--port", port, "--log-level", "warning"],
                    f"http://127.0.0.1:{port}/readyz", name="guardrail",
                    log=log("guardrail.log"), env=env):
        yield f"http://127.0.0.1:{port}/v1"


@contextlib.contextmanager
def litellm_proxy(guardrail_url: str, cwd: Path,
                  log: Optional[Path] = None) -> Iterator[dict[str, str]]:
    """LiteLLM's proxy (config.yaml) in front of guardrail; yields the client's env."""
    port, key = free_port(), "sk-" + secrets.token_hex(32)
    env = {"GUARDRAIL_URL": guardrail_url, "GUARDRAIL_API_KEY": "client-key",
           "LITELLM_MASTER_KEY": key, **OFFLINE}
    with running([EXAMPLES_BIN / "litellm", "--config", HERE / "litellm_proxy" / "config.yaml",
                  "--host", "127.0.0.1", "--port", port],
                 f"http://127.0.0.1:{port}/health/liveliness", name="litellm proxy",
                 log=log, env=env, cwd=cwd):
        yield {"LITELLM_URL": f"http://127.0.0.1:{port}/v1", "LITELLM_MASTER_KEY": key}


def main(argv: list[str]) -> int:
    names = ("python_openai", "python_responses", "node", "langchain", "litellm",
             "litellm_proxy", "curl")
    if not argv or argv[0] not in names:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    name, args = argv[0], argv[1:]
    if needs_setup(name):
        subprocess.run(["bash", ROOT / "scripts" / "setup-examples"], check=True)
    print("starting the fake LLM and guardrail (it loads its detector)...", file=sys.stderr)
    with demo() as url, contextlib.ExitStack() as stack:
        env = {**os.environ, "GUARDRAIL_URL": url, **OFFLINE}
        if name == "litellm_proxy":
            env.update(stack.enter_context(litellm_proxy(url, ROOT)))
        return subprocess.run(recipe(name, args), env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
