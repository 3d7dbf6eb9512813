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

import asyncio
import dataclasses
import heapq
import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Optional, Protocol, Sequence

from guardrail.config import GuardrailConfig
from guardrail.errors import DetectorError, GuardrailError, Overloaded
from guardrail.scheduler_config import SchedulerConfig
from guardrail.types import CheckRequest, Detection, Priority

if TYPE_CHECKING:
    from guardrail.cache import ContextStore, PreparedContextCache


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


def window_selectors(cfg: SchedulerConfig) -> "dict[Priority, Any]":
    """The window selector of each check priority (``in_flight_windows`` /
    ``final_windows``), sharing one BM25 index cache.  Imports the detector package."""
    from guardrail.detector.windows import IndexCache, make_selector

    cache = IndexCache()
    return {Priority.IN_FLIGHT: make_selector(cfg.in_flight_windows, cfg.in_flight_top_k, cache),
            Priority.END_OF_STREAM: make_selector(cfg.final_windows, cfg.final_top_k, cache)}


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
    def __init__(self, detector: DetectorLike, cfg: SchedulerConfig = SchedulerConfig(), *,
                 model_name: str = "default"):
        """``cfg``: the ``scheduler`` section (in-flight exit, context windows, left
        context, queue bound, timeout; batching fields do not apply).  Window selection
        needs a detector with ``detect_batch(..., selector=)`` (the real one); a stand-in
        with only ``detect`` scores whatever it scores."""
        self.detector, self.cfg, self.model_name = detector, cfg, model_name
        layer = cfg.in_flight_exit
        if layer is not None and layer not in detector.exit_layers and layer != detector.n_layers:
            raise ValueError(f"scheduler.in_flight_exit={layer} is not an exit of the "
                             f"detector (exits {list(detector.exit_layers)}, depth "
                             f"{detector.n_layers})")
        self.shallow_layer = layer if layer is not None else \
            (max(detector.exit_layers) if detector.exit_layers else None)
        self._selectors = window_selectors(cfg) if hasattr(detector, "detect_batch") else None
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
                "threshold": d.threshold, "scheduler": "local"}

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
        text, layer = req.response[cut:end], self._exit_layer(req)
        try:
            if self._selectors is None:
                det = self.detector.detect(g.documents, g.question, text, exit_layer=layer)
            else:
                from guardrail.detector import DetectInput

                det = self.detector.detect_batch(
                    [DetectInput(g.documents, g.question, text)], exit_layer=layer,
                    selector=self._selectors[req.priority])[0]
        except GuardrailError:
            raise
        except Exception as e:
            raise DetectorError(f"the detector failed: {type(e).__name__}: {e}") from e
        return shift_detection(det, req.response, cut)


def load_detector(config: GuardrailConfig) -> Any:
    """The configured detector (torch is imported here, not at module import)."""
    from guardrail.detector import Detector

    return Detector.from_pretrained(config.detector.model, device=config.detector.device)


def load_local_verifier(config: GuardrailConfig) -> LocalVerifier:
    """A ``LocalVerifier`` around the configured detector (``guardrail check``, demo)."""
    return LocalVerifier(load_detector(config), config.scheduler,
                         model_name=config.detector.model or "default")


def build_verifier(config: GuardrailConfig, *, detector: Any = None,
                   contexts: "Optional[PreparedContextCache]" = None,
                   store: "Optional[ContextStore]" = None) -> Verifier:
    """The verifier ``verification.engine`` names, around ``detector`` (default: the
    configured one, loaded here).  The scheduler uses ``contexts`` (default: its own
    in-process cache) and resolves bare context ids with ``store``."""
    detector = detector if detector is not None else load_detector(config)
    name = config.detector.model or "default"
    if config.verification.engine == "local":
        return LocalVerifier(detector, config.scheduler, model_name=name)
    from guardrail.scheduler import Scheduler

    return Scheduler(detector, config.scheduler, contexts=contexts, store=store,
                     model_name=name)
