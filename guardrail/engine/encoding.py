"""Encoding contexts for a cached-context (Parallel Context Windows) detector.

A context's states are encoded once, in a thread of their own, so that the cheap
preparation of other streams' checks never queues behind an encoding (at 32K tokens
one takes seconds on a CPU).  An in-flight check whose context is still being encoded
need not wait for it: ``ready(ctx, wait=False)`` starts the encoding and says "not
yet", and the check reads the few windows its selector picks (``prepare_cold``).  An
end-of-stream check waits for the states and reads every window.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any


class Encodings:
    """The encode thread and the encodings in progress, by context key."""

    def __init__(self, detector: Any):
        self.det = detector
        self.cached = hasattr(detector, "context_states")  # else: nothing to encode
        self._pool = ThreadPoolExecutor(1, "guardrail-encode")
        self._running: dict[str, asyncio.Future] = {}

    async def ready(self, ctx: Any, *, wait: bool = True) -> bool:
        """Whether ``ctx``'s states are ready (always, for a detector without them);
        starts their encoding if needed and, with ``wait``, waits for it (its error is
        raised here)."""
        if not self.cached or self.det.states.peek(ctx.key) is not None:
            return True
        job = self._running.get(ctx.key)
        if job is None:
            job = asyncio.get_running_loop().run_in_executor(self._pool,
                                                             self.det.context_states, ctx)
            self._running[ctx.key] = job
            job.add_done_callback(lambda f, key=ctx.key: self._done(key, f))
        if wait:
            await asyncio.shield(job)  # a caller giving up does not stop the encoding
        return wait

    def _done(self, key: str, job: asyncio.Future) -> None:
        self._running.pop(key, None)
        if not job.cancelled():
            job.exception()  # retrieved: a check that waits for it raises it

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
