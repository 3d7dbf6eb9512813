"""When the engine refuses a new checked request (503/429 + ``Retry-After``).

A request is refused before anything goes upstream when any of three signals says the
engine cannot keep ``scheduler.latency_budget_s``:

1. the queue bound: ``max_pending_checks`` checks are pending;
2. the backlog: the queued work (tokens x layers) at the measured throughput would
   take longer than the budget to run;
3. the real latency: the median in-flight check of the last ``window_s`` seconds took
   longer than the budget.  Streams admitted together queue their sentences later,
   so the backlog alone lets a burst of streams in that then all fall behind; the
   checks' own latency says so as soon as the first sentences come back, and refuses
   new streams until it is back under the budget (or no check is recent).

``Retry-After`` is the wait the signal implies, in whole seconds, at least 1.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import deque
from typing import Callable, Optional

from guardrail.config import SchedulerConfig


class Admission:
    def __init__(self, config: SchedulerConfig, *, window_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic):
        self.config, self.window_s, self.clock = config, window_s, clock
        self._recent: deque[tuple[float, float]] = deque(maxlen=256)  # (when, latency)

    def observe(self, latency_s: float) -> None:
        """An in-flight check finished after ``latency_s`` (queueing included)."""
        self._recent.append((self.clock(), latency_s))

    def recent_latency_s(self) -> Optional[float]:
        """The median in-flight check latency of the last ``window_s``; None if none."""
        since = self.clock() - self.window_s
        while self._recent and self._recent[0][0] < since:
            self._recent.popleft()
        return statistics.median(lat for _, lat in self._recent) if self._recent else None

    def refusal(self, pending: int, drain_time_s: float) -> Optional[tuple[str, float]]:
        """``(why, retry_after_s)`` when a new request should be refused, else None."""
        cfg, budget = self.config, self.config.latency_budget_s
        if pending >= cfg.max_pending_checks:
            return (f"{pending} checks are pending (limit {cfg.max_pending_checks})",
                    _seconds(drain_time_s))
        if drain_time_s > budget:
            return (f"the verification backlog (~{drain_time_s:.1f}s) exceeds the latency "
                    f"budget ({budget:g}s)", _seconds(drain_time_s))
        latency = self.recent_latency_s()
        if latency is not None and latency > budget:
            return (f"sentence checks take {latency:.1f}s (median of the last "
                    f"{self.window_s:g}s), over the latency budget ({budget:g}s)",
                    _seconds(latency))
        return None


def _seconds(s: float) -> float:
    return float(max(1, math.ceil(s)))
