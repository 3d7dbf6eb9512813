"""The engine seam is complete: both engines (and the test and bench stand-ins) serve
``verify``, ``abort``, ``admit``, ``warm``, ``stats``, ``info`` and ``aclose``, and
the proxy talks to nothing else (no ``getattr`` reach-ins)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from guardrail.bench.stream_proxy import CountingVerifier
from guardrail.config import CacheConfig, SchedulerConfig
from guardrail.engine.local import LocalVerifier
from guardrail.engine.prepared import PreparedContextCache
from guardrail.engine.scheduler import Scheduler
from guardrail.engine.seam import EngineInfo, EngineStats, Verifier
from guardrail.types import CheckRequest, Grounding, Priority

from scripted import ScriptedVerifier

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("verify", "abort", "admit", "warm", "stats", "info", "aclose")
DOCS = ("The Eiffel Tower was built from 1887 to 1889. It is 330 metres tall.",)


def test_the_protocol_names_exactly_the_seam():
    names = {n for n, _ in inspect.getmembers(Verifier) if not n.startswith("_")}
    assert names == set(METHODS)


@pytest.mark.parametrize("cls", [Scheduler, LocalVerifier, CountingVerifier, ScriptedVerifier])
def test_every_engine_serves_the_whole_seam(cls):
    for name in METHODS:
        assert callable(getattr(cls, name, None)), f"{cls.__name__}.{name}"
    for name in ("verify", "warm", "aclose"):
        assert inspect.iscoroutinefunction(getattr(cls, name)), f"{cls.__name__}.{name}"


def test_the_proxy_reaches_into_nothing():
    """No ``getattr``/``hasattr`` on an engine anywhere in the proxy or the stream."""
    for path in [*(ROOT / "guardrail" / "proxy").glob("*.py"),
                 *(ROOT / "guardrail" / "stream").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in \
                    ("getattr", "hasattr"):
                target = ast.unparse(node.args[0])
                assert not any(w in target for w in ("verifier", "engine", "st.", "v")), \
                    f"{path.name}: {ast.unparse(node)}"


@pytest.mark.parametrize("engine", ["scheduler", "local"])
async def test_both_engines_count_and_describe_themselves(detector, engine):
    cfg = SchedulerConfig(max_pending_checks=4)
    contexts = PreparedContextCache(CacheConfig())
    e = Scheduler(detector, cfg, contexts=contexts, model_name="m") if engine == "scheduler" \
        else LocalVerifier(detector, cfg, model_name="m")
    try:
        assert isinstance(e, Verifier)
        info = e.info()
        assert isinstance(info, EngineInfo)
        assert (info.model, info.n_layers, info.shallow_exit_layer) == ("m", 6, 4)
        assert info.to_json()["scheduler"] == ("batching" if engine == "scheduler" else "local")
        tokens = await e.warm(list(DOCS), tenant="acme")
        if engine == "scheduler":
            assert tokens and tokens > 10 and contexts.local.tenant_bytes("acme") > 0
        else:
            assert tokens is None  # keeps no prepared contexts
        g = Grounding(DOCS, "How tall is it?")
        d = await e.verify(CheckRequest(g, "It is 330 metres tall.", tenant="acme"))
        assert d.exit_layer == 4
        d = await e.verify(CheckRequest(g, "It is 330 metres tall.",
                                        priority=Priority.END_OF_STREAM))
        assert d.full_depth
        e.admit()  # nothing pending: admitted
        stats = e.stats()
        assert isinstance(stats, EngineStats)
        assert stats.checks_done == 2 and stats.pending_checks == 0
        assert stats.exits_used == {4: 1, 6: 1}
        assert stats.batching == (engine == "scheduler")
    finally:
        await e.aclose()
        await contexts.aclose()
