"""Cross-stream verification scheduler: every sentence check of every stream, batched.

One per process, behind the ``Verifier`` seam (``verify``/``abort``).  A check travels
through three stages joined by bounded queues (see docs/ARCHITECTURE.md)::

    verify(req)  -- context from the cache (PCW states: engine.encoding), det.prepare
                 -> WorkQueue lanes (in-flight before end-of-stream, never starving it)
                 -> batch loop: cut a batch under a token budget within max_wait_ms
                 -> det.forward in ONE model thread (it keeps the cores for the matmuls)
                 -> det.finish in the post-process thread when a check's last sequence
                    returns -> the check's future -> verify returns the Detection

Cancellation: the caller's task being cancelled or ``abort(stream_id)`` drops the
check's waiting sequences; the model thread skips them even in a batch handed to it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Optional

from guardrail.config import SchedulerConfig
from guardrail.contexts import ContextStore
from guardrail.engine.admission import Admission
from guardrail.engine.batching import Batch, WorkQueue, shallower_under_load
from guardrail.engine.checks import (normal_exit, shallow_exit, shift_detection, target_end,
                                     window_selectors)
from guardrail.engine.coalesce import Pending
from guardrail.engine.encoding import Encodings
from guardrail.engine.prepared import PreparedContextCache
from guardrail.engine.stats import EngineInfo, EngineStats
from guardrail.errors import DetectorError, InputError, Overloaded
from guardrail.model import DetectInput
from guardrail.types import DEFAULT_TENANT, CheckRequest, Detection, Priority

log = logging.getLogger(__name__)
__all__ = ["Scheduler"]


class Scheduler:
    def __init__(self, detector: Any, config: SchedulerConfig = SchedulerConfig(), *,
                 contexts: Optional[PreparedContextCache] = None,
                 store: Optional[ContextStore] = None, model_name: str = "default"):
        """``contexts``: the prepared-context cache (default: an in-process one, owned and
        closed by the scheduler); ``store``: resolves a Grounding that carries only a
        ``context_id``.  Window selection: ``engine.checks.Selectors``."""
        self.det, self.config, self.model_name, self.store = detector, config, model_name, store
        self.selectors = window_selectors(config, detector)
        self._ladder: list[Optional[int]] = [*sorted(detector.exit_layers), None]
        self.in_flight_exit = shallow_exit(detector, config)
        if config.max_batch_tokens < detector.max_length:
            raise ValueError(f"scheduler.max_batch_tokens ({config.max_batch_tokens}) is below "
                             f"the detector's max_length ({detector.max_length})")
        self.admission = Admission(config)
        self._owns_contexts = contexts is None
        self.contexts = contexts or PreparedContextCache()
        self._model_key = getattr(detector, "context_key_name", None) or \
            getattr(getattr(detector, "tokenizer", None), "name_or_path", "")
        self._queue = WorkQueue(**{k: getattr(config, k) for k in (
            "max_batch_tokens", "max_batch_size", "eos_every", "eos_batch_tokens")})
        self._streams: dict[str, set[Pending]] = {}
        self._pending, self._rate, self._measured = 0, config.initial_layer_tokens_per_s, False
        self._in_forward: set[asyncio.Future] = set()
        self._c, self._batch_sizes, self._exits = Counter(), Counter(), Counter()
        self._wake: Optional[asyncio.Event] = None
        self._arrivals = itertools.count()  # Pending.order
        self._loop_task, self._closed = None, False
        self._prepare_pool = ThreadPoolExecutor(config.prepare_threads, "guardrail-prepare")
        self._model_pool = ThreadPoolExecutor(1, "guardrail-forward")
        self._post_pool = ThreadPoolExecutor(1, "guardrail-finish")
        self._encodings = Encodings(detector, config.final_state_wait_s)  # its encode thread
        self._coalesce = config.coalesce_sentences * (not getattr(detector, "answer_blocks", 0))

    # -- lifecycle ---------------------------------------------------------------------------
    async def __aenter__(self) -> "Scheduler":
        self._ensure_started()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    def _ensure_started(self) -> asyncio.Event:
        if self._closed:
            raise Overloaded("the verification scheduler is shutting down", retry_after=1.0)
        if self._wake is None:
            self._wake = asyncio.Event()
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.get_running_loop().create_task(
                self._batch_loop(), name="guardrail-batch-loop")
            self._loop_task.add_done_callback(self._loop_ended)
        return self._wake

    def _loop_ended(self, task: asyncio.Task) -> None:
        """A crashed batch loop fails every pending check with its exception (the next
        ``verify`` starts a new loop) instead of leaving them to time out."""
        if task.cancelled() or task.exception() is None:
            return
        log.error("the batch loop crashed", exc_info=task.exception())
        for check in self._checks():
            check.fail(task.exception())

    def _checks(self) -> list[Pending]:
        return [c for checks in self._streams.values() for c in checks]

    async def aclose(self) -> None:
        """Stop: pending checks are cancelled, the running batch is waited for."""
        if self._closed:
            return
        self._closed = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        for check in self._checks():
            self._drop(check)
        await asyncio.gather(*self._in_forward, return_exceptions=True)
        for pool in (self._prepare_pool, self._model_pool, self._post_pool):
            pool.shutdown(wait=False, cancel_futures=True)  # idle threads exit
        self._encodings.shutdown()
        if self._owns_contexts:
            await self.contexts.aclose()

    close = aclose

    # -- the Verifier seam ---------------------------------------------------------------------
    async def verify(self, req: CheckRequest) -> Detection:
        """Check ``req.response[target_start:target_end]`` with the text before it as
        left context (the stream bounds it), against contexts of ``req.tenant``; the
        Detection's offsets index ``req.response``."""
        wake = self._ensure_started()
        if self._pending >= self.config.max_pending_checks:
            self._c["rejected"] += 1
            raise Overloaded(f"{self._pending} checks are pending; retry later",
                             retry_after=self.retry_after())
        end = target_end(req)
        requested = req.exit_layer if req.exit_layer is not None else (
            self.in_flight_exit if req.priority == Priority.IN_FLIGHT else None)
        check = Pending(req, req.response[:end],
                        normal_exit(self.det, requested, "exit_layer", InputError),
                        asyncio.get_running_loop().create_future(), order=next(self._arrivals))
        self._pending += 1
        self._streams.setdefault(req.stream_id, set()).add(check)
        check.task = asyncio.get_running_loop().create_task(self._prepare(check, wake))
        t0 = time.monotonic()
        try:
            async with asyncio.timeout(self.config.check_timeout_s):
                det = await check.future
            if req.priority == Priority.IN_FLIGHT:
                self.admission.observe(time.monotonic() - t0)
            return det
        except TimeoutError:
            self._c["timed_out"] += 1
            raise DetectorError(f"check timed out after {self.config.check_timeout_s}s",
                                code="check_timeout") from None
        finally:
            self._drop(check)

    def abort(self, stream_id: str) -> None:
        """Drop every check of the stream; its awaiting callers get ``CancelledError``."""
        self.admission.ended(stream_id)
        for check in list(self._streams.get(stream_id, ())):
            self._drop(check)

    async def warm(self, documents, *, tenant: str = DEFAULT_TENANT) -> int:
        """Prepare ``documents`` into the tenant's cache now, encoded however long that
        takes (``PUT /v1/contexts``, a stream's start); returns their token count."""
        ctx = await self.contexts.get_or_prepare(tenant, list(documents),
                                                 self._prepare_context, model=self._model_key)
        await self._encodings.ready(ctx, bounded=False)
        return ctx.n_tokens

    def info(self) -> EngineInfo:
        return EngineInfo.of("batching", self.model_name, self.det, self.in_flight_exit)

    # -- admission control -----------------------------------------------------------------------
    def drain_time_s(self) -> float:
        """Estimated seconds to run every queued sequence at the measured throughput."""
        return self._queue.work / max(self._rate, 1.0)

    def _refusal(self) -> Optional[tuple[str, float]]:
        return self.admission.refusal(self._pending, self.drain_time_s())

    def is_overloaded(self) -> bool:
        return self._refusal() is not None

    def retry_after(self) -> float:
        """Whole seconds a rejected client should wait (see ``engine.admission``)."""
        return (self._refusal() or ("", 1.0))[1]

    def admit(self, stream_id: Optional[str] = None) -> None:
        """Raise ``Overloaded`` (503/429 + Retry-After) when a new request should be
        refused; else ``stream_id`` holds a place until ``abort(stream_id)``."""
        if (refusal := self._refusal()) is not None:
            self._c["rejected"] += 1
            raise Overloaded(f"{refusal[0]}; retry later", retry_after=refusal[1])
        if stream_id is not None:
            self.admission.admitted(stream_id)

    def stats(self) -> EngineStats:
        q = self._queue
        return EngineStats.counted(
            self._c, pending_checks=self._pending, batching=True,
            queued_in_flight=q.queued(Priority.IN_FLIGHT),
            queued_end_of_stream=q.queued(Priority.END_OF_STREAM), queued_tokens=q.tokens,
            batches_in_model=len(self._in_forward), batch_sizes=dict(self._batch_sizes),
            exits_used=dict(self._exits), layer_tokens_per_s=self._rate,
            drain_time_s=self.drain_time_s(), contexts=self.contexts.stats(),
            streams_active=self.admission.active(), stream_limit=int(self.admission.limit),
            context_states=self.det.states.stats() if hasattr(self.det, "states") else None,
            answer_states=getattr(self.det, "answer_stats", lambda: None)())

    # -- stage 1: prepare -----------------------------------------------------------------------
    async def _prepare(self, check: Pending, wake: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        g = check.req.grounding
        if await self._join(check):
            return
        try:
            docs = g.documents
            if g.empty and g.context_id is not None and self.store is not None:
                docs = (await self.store.get(check.req.tenant, g.context_id)).documents
            ctx = await self.contexts.get_or_prepare(check.req.tenant, docs,
                                                     self._prepare_context, model=self._model_key)
            in_flight = check.req.priority == Priority.IN_FLIGHT
            ready = await self._encodings.ready(ctx, wait=not in_flight)
            prep = await loop.run_in_executor(  # not ready: read a few windows meanwhile
                self._prepare_pool, self.det.prepare if ready else self.det.prepare_cold,
                DetectInput(ctx, g.question, check.text, check.req.target_start,
                            check.req.blocks, keep=in_flight),
                self.selectors.pick(check.req.priority, len(self._queue), self._rate,
                                    self.drain_time_s()))
        except Exception as e:
            if not check.future.done():
                check.future.set_exception(e)
            return
        if check.dropped:
            return
        check.ctx, check.prep, check.remaining = ctx if ready else None, prep, len(prep.sequences)
        check.probs = [None] * len(prep.sequences)
        check.exit_layer = self._adapt(check)
        layers = check.exit_layer or self.det.n_layers
        self._queue.push(check, check.req.priority, check.exit_layer, prep.sequences, layers,
                         time.monotonic())
        wake.set()

    async def _join(self, check: Pending) -> bool:
        """Join ``check`` to its stream's waiting check before it (``engine.coalesce``)."""
        if self._coalesce < 2 or check.req.priority != Priority.IN_FLIGHT:
            return False
        host = await check.host_before(self._streams.get(check.req.stream_id, ()))
        if host is None or (joined := host.joinable(check, self._coalesce)) is None:
            return False
        prep, run = host.prep, joined.run
        try:
            new = await asyncio.get_running_loop().run_in_executor(
                self._prepare_pool, self.det.prepare,
                DetectInput(host.ctx, run.grounding.question, run.response[:target_end(run)],
                            run.target_start, run.blocks, keep=True),
                self.selectors[Priority.IN_FLIGHT])
        except Exception:
            return False  # it runs on its own; its own preparation reports the error
        if host.prep is not prep or host.joinable(check, self._coalesce) != joined:
            return False  # the model took it meanwhile
        self._queue.replace(host, new.sequences)
        host.adopt(check, joined, new)
        self._c["coalesced"] += 1
        return True

    async def _prepare_context(self, documents):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._prepare_pool, self.det.prepare_context,
                                          list(documents))

    def _adapt(self, check: Pending) -> Optional[int]:
        """Adaptive depth: deep in-flight queues step in-flight checks to shallower exits."""
        if check.req.priority != Priority.IN_FLIGHT:
            return check.exit_layer
        q, queued = self._queue, self._queue.queued(Priority.IN_FLIGHT)
        chosen = shallower_under_load(self._ladder, check.exit_layer, queued,
                                      self.config.depth_ladder, check.prep.sequences, q.keeping,
                                      getattr(self.det, "deepens_answer", False))
        if chosen != check.exit_layer:
            self._c["shallower"] += 1
        return chosen

    # -- stage 2: batches through the model ------------------------------------------------------
    async def _batch_loop(self) -> None:
        wake, cfg = self._wake, self.config
        while True:
            wake.clear()
            lane = self._queue.next_lane()
            if lane is None or len(self._in_forward) >= cfg.max_batches_in_flight:
                await wake.wait()
                continue
            delay = self._queue.wait_time(lane, time.monotonic(), cfg.max_wait_ms / 1000)
            if delay > 0:
                try:
                    async with asyncio.timeout(delay):
                        await wake.wait()
                except TimeoutError:
                    pass
                continue
            batch = self._queue.take(lane)
            for it in batch.items:
                it.job.taken = True
            fut = asyncio.get_running_loop().run_in_executor(
                self._model_pool, self._forward, batch)
            self._in_forward.add(fut)
            fut.add_done_callback(partial(self._forwarded, batch))

    def _forward(self, batch: Batch) -> tuple[list, list, float, float]:
        """Runs in the model thread; skips sequences whose check was dropped meanwhile.
        Returns the live items, their probabilities, the forward's seconds and the mean
        seconds its sequences waited (queued -> now, behind other batches included)."""
        live = [it for it in batch.items if not it.job.dropped]
        if not live:
            return [], [], 0.0, 0.0
        now = time.monotonic()  # the clock of Item.enqueued
        waited = sum(now - it.enqueued for it in live) / len(live)
        t0 = time.perf_counter()
        probs = self.det.forward([it.seq for it in live], batch.exit_layer)
        return live, probs, time.perf_counter() - t0, waited

    def _forwarded(self, batch: Batch, fut: asyncio.Future) -> None:
        self._in_forward.discard(fut)
        self._queue.ran(batch.items)
        if self._wake is not None:
            self._wake.set()
        if fut.cancelled():
            return
        exc = fut.exception()
        if exc is not None:
            for check in {id(it.job): it.job for it in batch.items}.values():
                check.fail(exc)
            return
        live, probs, seconds, waited = fut.result()
        self.admission.busy(seconds)
        self._c["skipped"] += len(batch.items) - len(live)
        if not live:
            return
        padded = len(live) * max(it.length for it in live)
        self._c.update(batches=1, sequences=len(live), padded_tokens=padded,
                       real_tokens=sum(it.length for it in live), queue_wait_s=waited,
                       model_s=seconds)
        if batch.priority == Priority.IN_FLIGHT:
            self._c.update(in_flight_batches=1, in_flight_queue_wait_s=waited,
                           in_flight_model_s=seconds)
        self._batch_sizes[len(live)] += 1
        if seconds > 0:
            sample = padded * live[0].layers / seconds
            self._rate = sample if not self._measured else 0.8 * self._rate + 0.2 * sample
            self._measured = True
        for it, p in zip(live, probs):
            check = it.job
            if check.future.done():
                continue
            check.probs[it.index] = p
            check.remaining -= 1
            if check.remaining == 0:
                done = asyncio.get_running_loop().run_in_executor(
                    self._post_pool, self._finish, check)
                done.add_done_callback(partial(self._resolve, check))

    # -- stage 3: post-process ---------------------------------------------------------------------
    def _finish(self, check: Pending) -> Detection:
        """Runs in the post-process thread."""
        d = self.det.finish(check.prep, check.probs, check.exit_layer)
        return shift_detection(d, (check.joined.run if check.joined else check.req).response, 0)

    def _resolve(self, check: Pending, fut: asyncio.Future) -> None:
        for d in check.settle(fut):  # a joined check answers each of its sentences
            self._exits[d.exit_layer] += 1

    # -- bookkeeping -----------------------------------------------------------------------------
    def _drop(self, check: Pending) -> None:
        """Forget a check (idempotent): its waiting sequences leave the queue."""
        if check.dropped:
            return
        check.dropped = True
        self._pending -= 1
        self._queue.drop(check)
        if check.task is not None and not check.task.done():
            check.task.cancel()
        fut = check.future
        if not fut.done():
            fut.cancel()
        self._c["dropped" if fut.cancelled() else
                "done" if fut.exception() is None else "failed"] += 1
        for r in check.unseat():  # the check they joined is gone before its forward
            r.task = asyncio.get_running_loop().create_task(self._prepare(r, self._wake))
        checks = self._streams.get(check.req.stream_id)
        if checks is not None:
            checks.discard(check)
            if not checks:
                del self._streams[check.req.stream_id]
