"""Shared fixtures.

Proxy fixtures (guardrail/fake_upstream.py + guardrail/server.py): real uvicorn servers on
127.0.0.1 with free ports, each in its own thread and event loop, so both the sync
openai SDK and async httpx clients can drive them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Iterator

import pytest
import uvicorn

from guardrail.fake_upstream import FakeScript, Rule, create_fake_upstream

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


class LoopbackServer:
    """uvicorn serving ``app`` on 127.0.0.1:<free port> in a background thread."""

    def __init__(self, app, *, lifespan: str = "on"):
        self.app = app
        self.config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                     lifespan=lifespan, timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    def _run(self) -> None:
        asyncio.run(self.server.serve())

    def __enter__(self) -> "LoopbackServer":
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("uvicorn failed to start")
            self.thread.join(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def serve(app, **kw) -> Iterator[LoopbackServer]:
    with LoopbackServer(app, **kw) as s:
        yield s


@pytest.fixture(scope="module")
def fake_upstream_server() -> Iterator[LoopbackServer]:
    """The scripted fake LLM on a loopback port (module-scoped; log cleared per test)."""
    with serve(create_fake_upstream(PROXY_SCRIPT)) as s:
        yield s


@pytest.fixture
def fake_upstream(fake_upstream_server: LoopbackServer) -> LoopbackServer:
    fake_upstream_server.app.state.log.clear()
    return fake_upstream_server
