"""What every route shares: the app's state and the in-flight admission slot."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import anyio
from starlette.requests import Request

from guardrail.config import GuardrailConfig
from guardrail.contexts import ContextStore, ReportStore
from guardrail.engine.seam import Verifier
from guardrail.errors import Overloaded
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
    in_flight: int = 0


def state_of(request: Request) -> AppState:
    return request.app.state.guardrail


class _Admission:
    """One in-flight slot; released exactly once, by the stream end or the background."""

    def __init__(self, st: AppState):
        limit = st.config.server.max_concurrent_requests
        if st.in_flight >= limit:
            raise Overloaded(f"{st.in_flight} requests in flight (limit {limit})")
        self.st: Optional[AppState] = st
        self.up: Optional[UpstreamStream] = None
        st.in_flight += 1

    async def release(self) -> None:
        if self.st is not None:
            self.st.in_flight -= 1
            self.st = None
        if self.up is not None:
            up, self.up = self.up, None
            # shielded: this runs while the response is being cancelled (disconnect)
            with anyio.move_on_after(CLEANUP_TIMEOUT_S, shield=True):
                await up.aclose()
