"""The example's three processes on loopback, and a streaming chat client.

``Services`` starts the extractive upstream, the FLARE hook and a real ``guardrail
serve`` (config ``guardrail.yaml``; the ports are chosen here, the hook URL goes in by
environment), waits until each answers, and stops them.  ``stream_chat`` sends one
streaming request with httpx and times it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import httpx

from examples.flare.data import HERE
from guardrail.testing.processes import Running, free_port, running, wait_ready

ROOT = HERE.parent.parent
CONFIG = HERE / "guardrail.yaml"


class Services:
    """Context manager: upstream, hook and guardrail running; their URLs as attributes."""

    def __init__(self, delay: float = 0.02, k: int = 3, withhold: bool = False,
                 start_timeout_s: float = 240.0):
        self.delay, self.k, self.withhold = delay, k, withhold
        self.start_timeout_s = start_timeout_s
        self.logs = Path(tempfile.mkdtemp(prefix="flare-"))
        self._stack = contextlib.ExitStack()
        ports = [free_port() for _ in range(3)]
        self.upstream = f"http://127.0.0.1:{ports[0]}/v1"
        self.hook = f"http://127.0.0.1:{ports[1]}"
        self.proxy = f"http://127.0.0.1:{ports[2]}/v1"
        self._ports = ports

    def _start(self, name: str, args: list, env: Optional[dict] = None) -> Running:
        return self._stack.enter_context(running(
            [sys.executable, *args], None, name=name, log=self.logs / f"{name}.log",
            env={"PYTHONPATH": str(ROOT), **(env or {})}, cwd=ROOT))

    def __enter__(self) -> "Services":
        try:  # all three start at once; then each is waited for
            started = [
                (self._start("upstream", ["-m", "examples.flare.upstream", "--port",
                                          self._ports[0], "--delay", self.delay]),
                 self.upstream + "/models"),
                (self._start("hook", ["-m", "examples.flare.hook", "--port", self._ports[1],
                                      "--upstream", self.upstream, "--k", self.k]
                             + (["--withhold-documents"] if self.withhold else [])),
                 self.hook + "/healthz"),
                (self._start("guardrail", ["-m", "guardrail.cli", "serve", "--config", CONFIG,
                                           "--upstream", self.upstream, "--port",
                                           self._ports[2], "--log-level", "warning"],
                             env={"GUARDRAIL_POLICY__REGENERATE__HOOK": self.hook + "/rewrite"}),
                 self.proxy.removesuffix("/v1") + "/healthz")]
            for p, url in started:
                wait_ready(p, url, self.start_timeout_s)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()
        shutil.rmtree(self.logs, ignore_errors=True)  # a failure has quoted its log already

    def hook_stats(self) -> dict:
        return httpx.get(self.hook + "/stats", timeout=10).json()


@dataclass
class StreamResult:
    """One streamed answer as the client saw it."""

    text: str = ""
    status: int = 0
    first_content_s: Optional[float] = None  # from the request to the first content
    done_s: Optional[float] = None           # from the request to data: [DONE]
    report: Optional[dict] = None            # the finish chunk's "guardrail" object
    errors: list[str] = field(default_factory=list)


def stream_chat(client: httpx.Client, base_url: str, body: dict,
                timeout_s: float = 120.0) -> StreamResult:
    out = StreamResult()
    t0 = time.perf_counter()
    with client.stream("POST", base_url + "/chat/completions", json=body,
                       timeout=timeout_s) as r:
        out.status = r.status_code
        if r.status_code != 200:
            out.errors.append(r.read().decode(errors="replace"))
            return out
        for line in r.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                out.done_s = time.perf_counter() - t0
                break
            chunk = json.loads(data)
            if "error" in chunk:
                out.errors.append(json.dumps(chunk["error"]))
            if "guardrail" in chunk:
                out.report = chunk["guardrail"]
            for choice in chunk.get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                if choice.get("index", 0) == 0 and piece:
                    if out.first_content_s is None:
                        out.first_content_s = time.perf_counter() - t0
                    out.text += piece
    return out
