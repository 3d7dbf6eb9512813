"""The seam between the server and the model: ``Verifier``.

The server and the pipeline know only this Protocol (as vLLM's API layer knows only
``generate``/``abort``).  Two implementations:

* ``guardrail.scheduler.Scheduler`` (the default, ``verification.engine: scheduler``):
  every check of every stream batched across streams, contexts prepared once and cached;
* ``LocalVerifier`` (``engine: local``): one detector, one ``detect`` at a time in a
  dedicated worker thread, a priority queue in front of it (in-flight sentence checks
  before end-of-stream passes), ``abort(stream_id)`` dropping a stream's queued checks.
  The simple baseline.

Both read the ``scheduler`` section (``SchedulerConfig``) for exits, context windows
(``window_selectors``), left context, queue bound and timeout.  ``build_verifier`` picks one; it imports
``guardrail.detector`` (torch) lazily, so the server never imports torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Protocol, Sequence

from guardrail.types import CheckRequest, Detection

if TYPE_CHECKING:
    pass


class Verifier(Protocol):
    async def verify(self, req: CheckRequest) -> Detection:
        """Check ``req.response[target_start:target_end]`` given the text before it;
        offsets of the returned Detection index ``req.response``."""
        ...

    def abort(self, stream_id: str) -> None:
        """Drop every queued check of ``stream_id`` (its awaiting callers get
        ``CancelledError``); a check already running finishes and is discarded."""
        ...

    def queue_depth(self) -> int:
        """Checks queued or running, across streams (for metrics and overload)."""
        ...

    def admit(self) -> None:
        """Raise ``Overloaded`` when a new checked request should be refused (503)."""
        ...

    def info(self) -> dict:
        """Static facts for ``/healthz``: model, layers, exits, threshold."""
        ...

    async def aclose(self) -> None: ...


class DetectorLike(Protocol):
    n_layers: int
    exit_layers: tuple[int, ...]
    threshold: float

    def detect(self, context: "str | Sequence[str]", question: str, response: str, *,
               exit_layer: Optional[int] = None) -> Detection: ...


class TenantVerifier:
    """``Verifier`` view of the scheduler bound to one tenant (what a pipeline holds)."""

    def __init__(self, scheduler: Any, tenant: str):
        self.scheduler, self.tenant = scheduler, tenant

    async def verify(self, req: CheckRequest) -> Detection:
        return await self.scheduler.verify(req, tenant=self.tenant)

    def abort(self, stream_id: str) -> None:
        self.scheduler.abort(stream_id)

    def queue_depth(self) -> int:
        return self.scheduler.queue_depth()

    def info(self) -> dict:
        return self.scheduler.info()

    async def aclose(self) -> None:
        """The scheduler is shared: closing a view closes nothing."""
