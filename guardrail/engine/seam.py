"""The seam between the proxy and the model: ``Verifier``, the engine's one face.

The proxy and the stream stages know only this Protocol, as vLLM's API layer knows only
its ``EngineClient``: ``verify``, ``abort``, ``admit``, ``warm``, ``stats``, ``info``,
``aclose``, and nothing behind them.  Two engines implement it:

* ``engine.scheduler.Scheduler`` (the default, ``verification.engine: scheduler``):
  every check of every stream batched across streams, contexts prepared once and
  cached per tenant;
* ``engine.local.LocalVerifier`` (``engine: local``): one detector, one check at a
  time in a worker thread; the simple baseline.

Both read the ``scheduler`` section (``SchedulerConfig``).  ``engine.build`` picks one
and is the only place that loads the model (torch), so the proxy never imports it.
"""

from __future__ import annotations

from typing import Optional, Protocol, Sequence, runtime_checkable

from guardrail.engine.stats import EngineInfo, EngineStats
from guardrail.types import DEFAULT_TENANT, CheckRequest, Detection

__all__ = ["DetectorLike", "EngineInfo", "EngineStats", "Verifier"]


@runtime_checkable
class Verifier(Protocol):
    async def verify(self, req: CheckRequest) -> Detection:
        """Check ``req.response[target_start:target_end]`` given the text before it,
        against ``req.grounding`` in ``req.tenant``'s namespace; offsets of the returned
        Detection index ``req.response``.  Raises ``Overloaded`` when the queue is
        full, ``DetectorError`` when the check fails or times out."""
        ...

    def abort(self, stream_id: str) -> None:
        """Drop every queued check of ``stream_id`` (its awaiting callers get
        ``CancelledError``); a check already running finishes and is discarded."""
        ...

    def admit(self, stream_id: Optional[str] = None) -> None:
        """Raise ``Overloaded`` (503/429 + Retry-After) when a new checked request
        should be refused rather than queued; an admitted ``stream_id`` counts as
        running until ``abort(stream_id)``."""
        ...

    async def warm(self, documents: Sequence[str], *,
                   tenant: str = DEFAULT_TENANT) -> Optional[int]:
        """Prepare ``documents`` now (``PUT /v1/contexts``) so the first check that
        uses them finds them ready; their token count, or None for an engine that
        keeps no prepared contexts."""
        ...

    def stats(self) -> EngineStats:
        """Counters and queue state, read at scrape time."""
        ...

    def info(self) -> EngineInfo:
        """Static facts for ``/healthz`` and the start-up log."""
        ...

    async def aclose(self) -> None:
        """Stop: pending checks are cancelled; what the engine built it closes."""
        ...


class DetectorLike(Protocol):
    n_layers: int
    exit_layers: tuple[int, ...]
    threshold: float

    def detect(self, context: "str | Sequence[str]", question: str, response: str, *,
               exit_layer: Optional[int] = None) -> Detection: ...
