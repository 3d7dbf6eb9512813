"""Shared fixtures.

Proxy fixtures (guardrail/fake_upstream.py + guardrail/server.py): real uvicorn servers on
127.0.0.1 with free ports, each in its own thread and event loop (``ServerThread``), so
both the sync openai SDK and async httpx clients can drive them.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import pytest

from guardrail.fake_upstream import FakeScript, Rule, ServerThread, create_fake_upstream

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
