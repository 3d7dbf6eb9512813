"""What every route shares: the app's state and the in-flight admission slot."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Optional, Union

import anyio
from starlette.requests import Request

from guardrail.config import GuardrailConfig
from guardrail.contexts import ContextStore, ReportStore
from guardrail.engine.seam import Verifier
from guardrail.errors import Overloaded
from guardrail.evidence.judge import SentenceJudge
from guardrail.proxy.hooks import RegeneratorFactory
from guardrail.proxy.metrics import Metrics
from guardrail.proxy.tenants import Tenants
from guardrail.proxy.upstream import UpstreamClient, UpstreamStream
from guardrail.stream.pipeline import CLEANUP_TIMEOUT_S


@dataclass
class AppState:
    config: GuardrailConfig
    upstream: UpstreamClient
    verifier: Verifier
    regenerators: RegeneratorFactory
    metrics: Metrics
    store: ContextStore
    tenants: Tenants
    reports: ReportStore
    drain: "Drain"
    in_flight: int = 0
    _judge: Union[SentenceJudge, bool, None] = field(default=None, repr=False)

    def left_context(self) -> tuple[int, int]:
        """``scheduler.left_context_chars`` and ``left_context_step_chars`` as they apply
        to this engine."""
        return self.config.scheduler.left_context(self.keeps_answer())

    def keeps_answer(self) -> bool:
        """Whether the engine keeps the answer so far (its final pass resumes checks)."""
        return self.verifier.info().keeps_answer

    def sentence_judge(self) -> Optional[SentenceJudge]:
        """The model's sentence judge (``verification.sentence_judge``), read once from
        the engine; None when it is off or the model ships none."""
        if not self.config.verification.sentence_judge:
            return None
        if self._judge is None:
            params = self.verifier.info().judge
            self._judge = SentenceJudge.from_json(params) if params else False
        return self._judge or None


def state_of(request: Request) -> AppState:
    return request.app.state.guardrail


class _Admission:
    """One in-flight slot; released exactly once, by the stream end or the background."""

    def __init__(self, st: AppState):
        if st.drain.started:
            raise Overloaded("the server is shutting down; retry (on another replica)",
                             code="shutting_down")
        limit = st.config.server.max_concurrent_requests
        if st.in_flight >= limit:
            raise Overloaded(f"{st.in_flight} requests in flight (limit {limit})")
        self.st: Optional[AppState] = st
        self.up: Optional[UpstreamStream] = None
        st.in_flight += 1

    def streaming(self, up: UpstreamStream) -> None:
        """The request now streams from ``up``: a drain may have to end it."""
        self.up = up
        assert self.st is not None
        self.st.drain.streams.add(up)

    async def release(self) -> None:
        if self.up is not None and self.st is not None:
            self.st.drain.streams.discard(self.up)
        if self.st is not None:
            self.st.in_flight -= 1
            self.st = None
        if self.up is not None:
            up, self.up = self.up, None
            # shielded: this runs while the response is being cancelled (disconnect)
            with anyio.move_on_after(CLEANUP_TIMEOUT_S, shield=True):
                await up.aclose()


class Drain:
    """Graceful shutdown.  ``begin()`` (on SIGTERM) refuses new requests (503
    ``shutting_down``, ``/readyz`` 503); after ``grace_s`` every stream still running
    is stopped at its upstream, so it ends the way an upstream failure ends it: the
    sentences already checked, then an error event and ``[DONE]``."""

    def __init__(self, grace_s: float):
        self.grace_s = grace_s
        self.started: Optional[float] = None
        self.streams: set[UpstreamStream] = set()

    def begin(self) -> None:
        if self.started is None:
            self.started = time.monotonic()
            asyncio.get_running_loop().call_later(self.grace_s, self._expire)

    def _expire(self) -> None:
        for up in list(self.streams):
            up.stop(Overloaded("the server is shutting down; the answer was cut at the end "
                               "of its grace period", code="shutting_down"))
