"""When the engine refuses a new checked request (503/429 + ``Retry-After``).

A request is refused before anything goes upstream when any of four signals says the
engine cannot keep ``scheduler.latency_budget_s``:

1. the queue bound: ``max_pending_checks`` checks are pending;
2. the backlog: the queued work (tokens x layers) at the measured throughput would
   take longer than the budget to run;
3. the real latency: the median in-flight check of the last ``window_s`` seconds took
   longer than the budget;
4. the stream limit: as many checked streams are running as the engine has shown it
   can serve within the budget.  Streams admitted together queue their sentences only
   later, so the first three signals let a burst in (every client retrying after the
   same Retry-After) that then falls behind all at once.  The limit is adaptive
   (as TCP and concurrency limiters are) and aims below the budget, at ``TARGET`` of
   it, so that the release delay's tail stays within the budget: it starts at
   ``initial_streams``; while checks come back in under half the target with the limit
   in use, and none has been over the target nor the limit changed for ``CALM_S``
   seconds, it grows to the streams the model's measured busy share says fit at
   ``MAX_BUSY`` (one more at least, double at most: a slow start), and not at all when
   one more stream would take the model past it (a queue near saturation has a long
   tail); it shrinks by a quarter when a check takes longer than the target, at most
   once a second.  A stream holds its place from ``admit`` to ``abort`` (which every
   answer calls when it ends), or ``stream_ttl_s`` at most.

``Retry-After`` is the wait the signal implies, in whole seconds, at least 1; a refusal
for the stream limit adds up to half as much again at random, so the clients it turns
away do not all come back in the same second.  The latency signal speaks only while
checks are pending: with nothing queued, a slow minute past is no reason to refuse.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections import deque
from typing import Callable, Optional

from guardrail.config import SchedulerConfig

MIN_STREAMS = 1
STREAM_TTL_S = 600.0
CALM_S = 5.0  # no check over the target for this long before the limit may grow
TARGET = 0.5  # the stream limit keeps checks within this share of the budget, so that
              # the release delay's tail (ordering, bursts) stays within the budget
MAX_BUSY = 0.8  # the limit grows only to as many streams as keep the model this busy


class Admission:
    def __init__(self, config: SchedulerConfig, *, window_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic,
                 stream_ttl_s: float = STREAM_TTL_S, rng: Optional[random.Random] = None):
        self.config, self.window_s, self.clock = config, window_s, clock
        self.rng = rng or random.Random()
        self.stream_ttl_s = stream_ttl_s
        self._recent: deque[tuple[float, float]] = deque(maxlen=256)  # (when, latency)
        self._busy: deque[tuple[float, float]] = deque(maxlen=4096)   # (when, model s)
        self.limit = float(min(config.initial_streams, config.max_streams))
        self._streams: dict[str, float] = {}  # admitted stream -> when
        self._changed = -math.inf
        self._slow = -math.inf  # when a check last took longer than the budget

    # -- what the engine tells it ---------------------------------------------------------
    def observe(self, latency_s: float) -> None:
        """An in-flight check finished after ``latency_s`` (queueing included)."""
        now = self.clock()
        self._recent.append((now, latency_s))
        target = self.config.latency_budget_s * TARGET
        if latency_s > target:
            self._slow = now
        if now - self._changed < 1.0:
            return
        if latency_s > target:
            self.limit = max(MIN_STREAMS, math.floor(self.limit * 0.75))
            self._changed = now
        elif latency_s <= target / 2 and now - max(self._slow, self._changed) >= CALM_S \
                and self.active() >= int(self.limit):
            grown = self._room(now)
            if grown > self.limit:
                self.limit = float(min(self.config.max_streams, grown))
                self._changed = now

    def busy(self, seconds: float) -> None:
        """The model worked ``seconds`` (one batch)."""
        self._busy.append((self.clock(), seconds))

    def busy_share(self, since: float) -> float:
        """The share of the time since ``since`` that the model spent working."""
        while self._busy and self._busy[0][0] < self.clock() - self.window_s:
            self._busy.popleft()
        span = self.clock() - since
        return sum(s for t, s in self._busy if t >= since) / span if span > 0 else 0.0

    def _room(self, now: float) -> int:
        """The streams the model serves at ``MAX_BUSY``, measured at the current limit
        (since it last changed): one more at least, twice as many at most (slow start);
        the current limit when one more would already be too many."""
        n = max(self.active(), 1)
        share = self.busy_share(max(self._changed, now - self.window_s))
        if share * (n + 1) / n > MAX_BUSY:
            return int(self.limit)
        fits = math.floor(n * MAX_BUSY / share) if share > 0 else math.inf
        return int(min(max(self.limit + 1, fits), 2 * self.limit))

    def admitted(self, stream_id: str) -> None:
        self._streams[stream_id] = self.clock()

    def ended(self, stream_id: str) -> None:
        self._streams.pop(stream_id, None)

    # -- what it says -----------------------------------------------------------------------
    def active(self) -> int:
        """Checked streams holding a place (older than ``stream_ttl_s`` are let go)."""
        since = self.clock() - self.stream_ttl_s
        for sid in [s for s, t in self._streams.items() if t < since]:
            del self._streams[sid]
        return len(self._streams)

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
        latency = self.recent_latency_s() if pending else None
        if latency is not None and latency > budget:
            return (f"sentence checks take {latency:.1f}s (median of the last "
                    f"{self.window_s:g}s), over the latency budget ({budget:g}s)",
                    _seconds(latency))
        if self.active() >= int(self.limit):
            wait = _seconds(max(budget, latency or 0.0))
            return (f"{self.active()} checked streams are running, as many as the engine "
                    f"now serves within the latency budget ({budget:g}s)",
                    wait + self.rng.randint(0, int(wait // 2)))
        return None


def _seconds(s: float) -> float:
    return float(max(1, math.ceil(s)))
