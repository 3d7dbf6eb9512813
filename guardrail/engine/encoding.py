"""Encoding contexts for a cached-context (Parallel Context Windows) detector.

A context's states are encoded once, in a thread of their own, so that the cheap
preparation of other streams' checks never queues behind an encoding (at 32K tokens
one takes seconds on a CPU).  An in-flight check whose context is still being encoded
need not wait for it: ``ready(ctx, wait=False)`` starts the encoding and says "not
yet", and the check reads the few windows its selector picks (``prepare_cold``).  An
end-of-stream check waits for the states and reads every window, for at most
``scheduler.final_state_wait_s``; then, or at once when the encodings ahead and its own
should take longer than that, it reads the few windows too.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional


class Encodings:
    """The encode thread and the encodings in progress, by context key, in the order
    they run.  The encode rate (context tokens per second, of the last encodings) says
    when a queued or running encoding should be done."""

    def __init__(self, detector: Any, wait_s: Optional[float] = None):
        self.det = detector
        self.wait_s = wait_s  # the longest a waiting caller waits (None: the whole encoding)
        self.cached = hasattr(detector, "context_states")  # else: nothing to encode
        self._pool = ThreadPoolExecutor(1, "guardrail-encode")
        self._running: dict[str, tuple[asyncio.Future, int]] = {}  # key: (job, tokens)
        self._started: dict[str, float] = {}
        self.rate: Optional[float] = None  # tokens/s

    async def ready(self, ctx: Any, *, wait: bool = True, bounded: bool = True) -> bool:
        """Whether ``ctx``'s states are ready (always, for a detector without them);
        starts their encoding if needed and, with ``wait``, waits for it (its error is
        raised here): with ``bounded``, at most ``wait_s``, and not at all when the
        encodings ahead of it and its own should take longer than that; else until it
        is done (``PUT /v1/contexts``: a stored context is encoded when the call returns)."""
        if not self.cached or self.det.states.peek(ctx.key) is not None:
            return True
        if ctx.key not in self._running:
            job = asyncio.get_running_loop().run_in_executor(self._pool, self._encode, ctx)
            self._running[ctx.key] = (job, ctx.n_tokens)
            job.add_done_callback(lambda f, key=ctx.key: self._done(key, f))
        job = self._running[ctx.key][0]
        limit = self.wait_s if bounded else None
        if not wait or (limit is not None and self.expected_s(ctx.key) > limit):
            return False
        try:  # a caller giving up does not stop the encoding
            await asyncio.wait_for(asyncio.shield(job), limit)
        except asyncio.TimeoutError:
            return False
        return True

    def expected_s(self, key: str) -> float:
        """Seconds until ``key``'s encoding should be done: its tokens and those of the
        encodings ahead of it at the measured rate, less what the running one has done
        (0 before any encoding was measured)."""
        if self.rate is None or key not in self._running:
            return 0.0
        tokens = 0
        for k, (_, n) in self._running.items():
            tokens += n
            if k == key:
                break
        first = next(iter(self._running), None)
        done = time.monotonic() - self._started.get(first, time.monotonic())
        return max(0.0, tokens / self.rate - done)

    def _encode(self, ctx: Any) -> Any:
        t0 = self._started[ctx.key] = time.monotonic()
        states = self.det.context_states(ctx)
        rate = ctx.n_tokens / max(time.monotonic() - t0, 1e-6)
        self.rate = rate if self.rate is None else 0.5 * (self.rate + rate)
        return states

    def _done(self, key: str, job: asyncio.Future) -> None:
        self._running.pop(key, None)
        self._started.pop(key, None)
        if not job.cancelled():
            job.exception()  # retrieved: a check that waits for it raises it

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
