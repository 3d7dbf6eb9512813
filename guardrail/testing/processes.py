"""Real processes on loopback, for the examples and the end-to-end tests: start one,
wait until it answers, stop it the way an operator would (SIGINT: guardrail drains).

    with running([sys.executable, "-m", "guardrail.cli", "serve", ...],
                 f"http://127.0.0.1:{port}/readyz", name="guardrail") as p:
        ...                          # p.proc, p.log, p.tail()
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

import httpx

__all__ = ["Running", "free_port", "running", "stop", "wait_ready"]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Running:
    name: str
    proc: subprocess.Popen
    log: Path

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def wait_ready(p: Running, url: str, timeout_s: float = 180.0) -> None:
    """Poll ``url`` until it answers 200; fail early, quoting the log, if ``p`` exits."""
    deadline = time.monotonic() + timeout_s
    while True:
        if p.proc.poll() is not None:
            raise RuntimeError(f"{p.name} exited ({p.proc.returncode}):\n{p.tail()}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{p.name} did not answer {url} within {timeout_s:.0f} s:\n"
                               f"{p.tail()}")
        time.sleep(0.1)


def stop(proc: subprocess.Popen, grace_s: float = 40.0) -> None:
    """SIGINT, then wait ``grace_s``; kill if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@contextlib.contextmanager
def running(cmd: Sequence[object], ready_url: Optional[str], *, name: Optional[str] = None,
            log: Optional[Path] = None, env: Optional[dict] = None,
            cwd: Optional[Path] = None, timeout_s: float = 180.0) -> Iterator[Running]:
    """``cmd`` running (stdout and stderr to ``log``, a temporary file by default) until
    the block ends; ready once ``ready_url`` answers 200 (None: at once)."""
    if log is None:
        fd, tmp = tempfile.mkstemp(prefix="guardrail-", suffix=".log")
        os.close(fd)
        log = Path(tmp)
    with log.open("wb") as out:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, cwd=cwd)
    p = Running(name or Path(str(cmd[0])).name, proc, log)
    try:
        if ready_url is not None:
            wait_ready(p, ready_url, timeout_s)
        yield p
    finally:
        stop(proc)
