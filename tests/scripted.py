"""A scripted ``Verifier`` (the collaborator of the pipeline and server tests): it flags
every word of a chosen set, can hold a check on a gate, and can fail."""

from __future__ import annotations

import asyncio
import re
from typing import Optional

from guardrail.engine.stats import EngineInfo, EngineStats
from guardrail.errors import Overloaded
from guardrail.types import DEFAULT_TENANT, CheckRequest, Detection, Priority, Span


class ScriptedVerifier:
    """Flags every word in ``bad``; ``gates`` hold a check until released; ``fail`` raises."""

    def __init__(self, bad=("1950",), *, fail: Optional[Exception] = None,
                 fail_final: Optional[Exception] = None, shallow_misses=()):
        self.bad, self.fail, self.fail_final = set(bad), fail, fail_final
        self.shallow_misses = set(shallow_misses)
        self.requests: list[CheckRequest] = []
        self.completed: list[str] = []      # sentence texts whose check finished
        self.gates: dict[str, asyncio.Event] = {}
        self.aborted: list[str] = []
        self.cancelled = 0
        self.overloaded = False

    async def verify(self, req: CheckRequest) -> Detection:
        self.requests.append(req)
        target = req.response[req.target_start:req.target_end]
        try:
            for key, gate in self.gates.items():
                if key in target:
                    await gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        final = req.priority == Priority.END_OF_STREAM
        if self.fail and not final:
            raise self.fail
        if self.fail_final and final:
            raise self.fail_final
        bad = self.bad | (self.shallow_misses if final else set())
        self.completed.append(target)
        return detection(req.response, bad, 6 if final else 2)

    def abort(self, stream_id: str) -> None:
        self.aborted.append(stream_id)

    async def warm(self, documents, *, tenant: str = DEFAULT_TENANT) -> Optional[int]:
        return None

    def stats(self) -> EngineStats:
        return EngineStats(pending_checks=0)

    def admit(self, stream_id=None) -> None:
        if self.overloaded:
            raise Overloaded("busy", retry_after=3)

    def info(self) -> EngineInfo:
        return EngineInfo("scripted", "scripted", 6, (2,), 2, 0.5)

    async def aclose(self) -> None:
        pass


def detection(response: str, bad: set[str], layer: int) -> Detection:
    offs, probs, spans = [], [], []
    for m in re.finditer(r"[\w'-]+", response):
        hit = m.group() in bad
        offs.append((m.start(), m.end()))
        probs.append(0.95 if hit else 0.05)
        if hit:
            spans.append(Span(m.start(), m.end(), m.group(), 0.95))
    return Detection(response, tuple(spans), tuple(offs), tuple(probs), 0.5, layer, 6)
