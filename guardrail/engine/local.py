"""``LocalVerifier``: one detector, one check at a time in a worker thread.

The simple baseline engine (``verification.engine: local``): a priority queue in
front of one worker thread (in-flight sentence checks before end-of-stream passes),
``abort(stream_id)`` dropping a stream's queued checks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Optional, Sequence

from guardrail.config import SchedulerConfig
from guardrail.engine.admission import Admission
from guardrail.engine.checks import shallow_exit, shift_detection, target_end, window_selectors
from guardrail.engine.seam import DetectorLike
from guardrail.engine.stats import EngineInfo, EngineStats
from guardrail.errors import DetectorError, GuardrailError, Overloaded
from guardrail.types import DEFAULT_TENANT, CheckRequest, Detection, Priority


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
        self.shallow_layer = shallow_exit(detector, cfg)
        self.admission = Admission(cfg)
        self._c: Counter = Counter()
        self._exits: Counter = Counter()
        self._selectors = window_selectors(cfg) if hasattr(detector, "detect_batch") else None
        self._heap: list[_Job] = []
        self._seq = itertools.count()
        self._running: Optional[_Job] = None
        self._wakeup: Optional[asyncio.Event] = None
        self._worker: Optional[asyncio.Task] = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guardrail-check")

    # -- the Protocol ---------------------------------------------------------------------
    async def verify(self, req: CheckRequest) -> Detection:
        # A check belongs to a stream admitted already: only the queue bound applies here
        # (as in the scheduler), never the stream limit, which counts that very stream.
        if (depth := self.queue_depth()) >= self.cfg.max_pending_checks:
            self._c["rejected"] += 1
            raise Overloaded(f"{depth} checks are pending; retry later",
                             retry_after=self.admission.refusal(depth, 0.0)[1])
        loop = asyncio.get_running_loop()
        job = _Job(int(req.priority), next(self._seq), req, loop.create_future())
        heapq.heappush(self._heap, job)
        self._ensure_worker().set()
        outcome, t0 = "failed", time.monotonic()
        try:
            det = await asyncio.wait_for(asyncio.shield(job.future), self.cfg.check_timeout_s)
            outcome = "done"
            if req.priority == Priority.IN_FLIGHT:
                self.admission.observe(time.monotonic() - t0)
            self._exits[det.exit_layer] += 1
            return det
        except asyncio.TimeoutError:
            outcome = "timed_out"
            raise DetectorError(f"check timed out after {self.cfg.check_timeout_s}s",
                                code="check_timeout") from None
        except asyncio.CancelledError:
            outcome = "dropped"
            raise
        finally:
            self._c[outcome] += 1
            if not job.future.done():
                job.future.cancel()  # the worker skips it, or discards its result

    def abort(self, stream_id: str) -> None:
        self.admission.ended(stream_id)
        for job in self._heap:
            if job.req.stream_id == stream_id and not job.future.done():
                job.future.cancel()

    def queue_depth(self) -> int:
        return sum(1 for j in self._heap if not j.future.done()) + (self._running is not None)

    def admit(self, stream_id: Optional[str] = None) -> None:
        refusal = self.admission.refusal(self.queue_depth(), 0.0)
        if refusal is not None:
            self._c["rejected"] += 1
            raise Overloaded(f"{refusal[0]}; retry later", retry_after=refusal[1])
        if stream_id is not None:
            self.admission.admitted(stream_id)

    async def warm(self, documents: Sequence[str], *,
                   tenant: str = DEFAULT_TENANT) -> Optional[int]:
        """Nothing to keep (this engine prepares each check's context anew), but the
        documents are prepared once to see that they can be (``ContextError``: over the
        model's context limit), before a check fails on them."""
        prepare = getattr(self.detector, "prepare_context", None)
        if prepare is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, prepare,
                                                             list(documents))
        return None

    def stats(self) -> EngineStats:
        c = self._c
        return EngineStats(pending_checks=self.queue_depth(), exits_used=dict(self._exits),
                           checks_done=c["done"], checks_failed=c["failed"],
                           checks_dropped=c["dropped"], checks_rejected=c["rejected"],
                           checks_timed_out=c["timed_out"])

    def info(self) -> EngineInfo:
        return EngineInfo.of("local", self.model_name, self.detector, self.shallow_layer)

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
        end = target_end(req)
        g = req.grounding
        text, layer = req.response[:end], self._exit_layer(req)
        try:
            if self._selectors is None:
                det = self.detector.detect(g.documents, g.question, text, exit_layer=layer)
            else:
                from guardrail.model import DetectInput

                det = self.detector.detect_batch(
                    [DetectInput(g.documents, g.question, text, req.target_start, req.blocks,
                                 keep=req.priority == Priority.IN_FLIGHT)],
                    exit_layer=layer, selector=self._selectors[req.priority])[0]
        except GuardrailError:
            raise
        except Exception as e:
            raise DetectorError(f"the detector failed: {type(e).__name__}: {e}") from e
        return shift_detection(det, req.response, 0)
