"""The seam between the server and the model: ``Verifier``.

The server and the pipeline know only this Protocol (as vLLM's API layer knows only
``generate``/``abort``).  ``LocalVerifier`` is the simple implementation: one detector,
one forward at a time in a dedicated worker thread, a priority queue in front of it
(in-flight sentence checks before end-of-stream passes), ``abort(stream_id)`` dropping
a stream's queued checks.  A cross-stream batching scheduler implements the same
Protocol and replaces it without touching the server.

This is the only module besides the CLI that touches the detector, and it imports
``guardrail.detector`` (torch) lazily, in ``load_local_verifier``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Optional, Protocol, Sequence

from guardrail.config import GuardrailConfig, VerificationConfig
from guardrail.errors import DetectorError, GuardrailError, Overloaded
from guardrail.types import CheckRequest, Detection, Priority


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


def trim_left(response: str, start: int, budget: int) -> int:
    """Where the detector input begins: at most ``budget`` characters before ``start``,
    moved forward to a word boundary so the model never sees half a word."""
    cut = start - budget
    if cut <= 0:
        return 0
    while cut < start and not response[cut - 1].isspace():
        cut += 1
    return cut


def shift_detection(det: Detection, full_response: str, offset: int) -> Detection:
    """Re-index a Detection computed on ``full_response[offset:...]`` into the full text."""
    if offset == 0 and det.response == full_response:
        return det
    return dataclasses.replace(
        det, response=full_response, spans=tuple(s.shifted(offset) for s in det.spans),
        token_offsets=tuple((s + offset, e + offset) for s, e in det.token_offsets))


@dataclasses.dataclass(order=True)
class _Job:
    priority: int
    seq: int
    req: CheckRequest = dataclasses.field(compare=False)
    future: "asyncio.Future[Detection]" = dataclasses.field(compare=False)


class LocalVerifier:
    def __init__(self, detector: DetectorLike, cfg: VerificationConfig, *,
                 model_name: str = "default"):
        self.detector, self.cfg, self.model_name = detector, cfg, model_name
        layer = cfg.shallow_exit_layer
        if layer is not None and layer not in detector.exit_layers and layer != detector.n_layers:
            raise ValueError(f"verification.shallow_exit_layer={layer} is not an exit of the "
                             f"detector (exits {list(detector.exit_layers)}, depth "
                             f"{detector.n_layers})")
        self.shallow_layer = layer if layer is not None else \
            (detector.exit_layers[0] if detector.exit_layers else None)
        self._heap: list[_Job] = []
        self._seq = itertools.count()
        self._running: Optional[_Job] = None
        self._wakeup: Optional[asyncio.Event] = None
        self._worker: Optional[asyncio.Task] = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guardrail-check")

    # -- the Protocol ---------------------------------------------------------------------
    async def verify(self, req: CheckRequest) -> Detection:
        if self.queue_depth() >= self.cfg.max_pending_checks:
            raise Overloaded(f"{self.queue_depth()} checks are queued; retry later")
        loop = asyncio.get_running_loop()
        job = _Job(int(req.priority), next(self._seq), req, loop.create_future())
        heapq.heappush(self._heap, job)
        self._ensure_worker().set()
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), self.cfg.check_timeout_s)
        except asyncio.TimeoutError:
            raise DetectorError(f"check timed out after {self.cfg.check_timeout_s}s",
                                code="check_timeout") from None
        finally:
            if not job.future.done():
                job.future.cancel()  # the worker skips it, or discards its result

    def abort(self, stream_id: str) -> None:
        for job in self._heap:
            if job.req.stream_id == stream_id and not job.future.done():
                job.future.cancel()

    def queue_depth(self) -> int:
        return sum(1 for j in self._heap if not j.future.done()) + (self._running is not None)

    def admit(self) -> None:
        if self.queue_depth() >= self.cfg.max_pending_checks:
            raise Overloaded(f"{self.queue_depth()} checks are queued; retry later")

    def info(self) -> dict:
        d = self.detector
        return {"model": self.model_name, "n_layers": d.n_layers,
                "exit_layers": list(d.exit_layers), "shallow_exit_layer": self.shallow_layer,
                "threshold": d.threshold}

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
            self._worker = None
        for job in self._heap:
            job.future.cancel()
        self._heap.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)

    # -- the worker -----------------------------------------------------------------------
    def _ensure_worker(self) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        if self._worker is None or self._worker.done() or self._worker.get_loop() is not loop:
            # (re)start on this loop: a verifier may outlive the server loop it first ran in
            self._heap = [j for j in self._heap if j.future.get_loop() is loop]
            heapq.heapify(self._heap)
            self._wakeup = asyncio.Event()
            self._worker = loop.create_task(self._work(self._wakeup), name="guardrail-verifier")
        assert self._wakeup is not None
        return self._wakeup

    async def _work(self, wakeup: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while not self._heap:
                wakeup.clear()
                await wakeup.wait()
            job = heapq.heappop(self._heap)
            if job.future.done():  # aborted or its caller gave up
                continue
            self._running = job
            try:
                det = await loop.run_in_executor(self._executor, self._check, job.req)
            except Exception as e:  # delivered to the caller, the worker lives on
                if not job.future.done():
                    job.future.set_exception(e)
            else:
                if not job.future.done():
                    job.future.set_result(det)
            finally:
                self._running = None

    def _exit_layer(self, req: CheckRequest) -> Optional[int]:
        if req.exit_layer is not None:
            return req.exit_layer
        return self.shallow_layer if req.priority == Priority.IN_FLIGHT else None

    def _check(self, req: CheckRequest) -> Detection:
        """Runs in the worker thread."""
        end = len(req.response) if req.target_end is None else req.target_end
        cut = trim_left(req.response, req.target_start, self.cfg.left_context_chars)
        g = req.grounding
        try:
            det = self.detector.detect(g.documents, g.question, req.response[cut:end],
                                       exit_layer=self._exit_layer(req))
        except GuardrailError:
            raise
        except Exception as e:
            raise DetectorError(f"the detector failed: {type(e).__name__}: {e}") from e
        return shift_detection(det, req.response, cut)


def load_local_verifier(config: GuardrailConfig) -> LocalVerifier:
    """Load the configured detector (torch is imported here, not at module import)."""
    from guardrail.detector import Detector

    detector = Detector.from_pretrained(config.detector.model, device=config.detector.device)
    return LocalVerifier(detector, config.verification,
                         model_name=config.detector.model or "default")
