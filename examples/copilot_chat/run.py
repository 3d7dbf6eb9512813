"""The copilot chat demo, offline, in one command.

    .venv/bin/python examples/copilot_chat/run.py                # scripted fake LLM
    .venv/bin/python examples/copilot_chat/run.py --upstream http://llm:8000/v1

Starts the scripted fake LLM (examples/fake_upstream.py playing scenario.yaml) and
``guardrail serve --ui`` (with guardrail.yaml: two demo tenants) as real processes on
loopback ports, prints the chat page's address and runs until Ctrl-C.  With
``--upstream`` guardrail proxies that OpenAI-compatible server instead and no fake
starts (set GUARDRAIL_UPSTREAM__API_KEY for its key).

tests/test_ui.py starts guardrail with ``start_guardrail`` from here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Iterator, Optional

from guardrail.testing.processes import Running, free_port, stop, wait_ready

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCENARIO = HERE / "scenario.yaml"
CONFIG = HERE / "guardrail.yaml"
TENANTS = {"acme": "sk-acme-demo", "globex": "sk-globex-demo"}  # as in guardrail.yaml


def start_fake(port: int, delay: Optional[float] = None,
               log: Optional[IO] = None) -> subprocess.Popen:
    cmd = [sys.executable, str(ROOT / "examples" / "fake_upstream.py"), "--script",
           str(SCENARIO), "--port", str(port)]
    if delay is not None:
        cmd += ["--delay", str(delay)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT if log else None)
    _ready(proc, f"http://127.0.0.1:{port}/v1/models", "the fake LLM", log)
    return proc


def start_guardrail(upstream: str, port: int, *, env: Optional[dict] = None,
                    log: Optional[IO] = None, log_level: str = "warning") -> subprocess.Popen:
    """``guardrail serve --ui`` with the demo's config in front of ``upstream`` (…/v1);
    returns once it answers (the detector is loaded)."""
    cmd = [sys.executable, "-m", "guardrail.cli", "serve", "--ui", "--config", str(CONFIG),
           "--upstream", upstream, "--port", str(port), "--log-level", log_level]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=log,
                            stderr=subprocess.STDOUT if log else None)
    _ready(proc, f"http://127.0.0.1:{port}/readyz", "guardrail", log)
    return proc


def _ready(proc: subprocess.Popen, url: str, name: str, log: Optional[IO]) -> None:
    """Wait until ``url`` answers; stop ``proc`` if it never does."""
    try:
        wait_ready(Running(name, proc, Path(getattr(log, "name", os.devnull))), url)
    except BaseException:
        stop(proc)
        raise


def page_url(port: int) -> str:
    """The chat page; the fragment fills its tenant picker (it never leaves the browser)."""
    tenants = ",".join(f"{name}:{key}" for name, key in TENANTS.items())
    return f"http://127.0.0.1:{port}/ui/#tenants={tenants}"


@contextlib.contextmanager
def demo(port: int, upstream: Optional[str] = None, delay: Optional[float] = None,
         log: Optional[IO] = None) -> Iterator[str]:
    """The fake LLM (unless ``upstream``) and guardrail, running; yields the page URL."""
    procs = []
    try:
        if upstream is None:
            fake_port = free_port()
            procs.append(start_fake(fake_port, delay, log))
            upstream = f"http://127.0.0.1:{fake_port}/v1"
        procs.append(start_guardrail(upstream, port, log=log, log_level="info"))
        yield page_url(port)
    finally:
        for proc in reversed(procs):
            stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="guardrail's port (8080)")
    parser.add_argument("--upstream", help="an OpenAI-compatible base URL (…/v1) instead "
                        "of the scripted fake LLM")
    parser.add_argument("--delay", type=float, help="the fake LLM's seconds per token")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the children on SIGTERM too
    print("starting the demo (guardrail loads its detector: a few seconds)...", flush=True)
    with demo(args.port, args.upstream, args.delay) as url:
        print(f"\n  open {url}\n", flush=True)
        print("  the examples on the right fill in a turn; tenants: "
              + ", ".join(f"{n} ({k})" for n, k in TENANTS.items())
              + "; no key: the default tenant.  Ctrl-C stops.\n", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    main()
