"""What the engine reports of itself: ``SchedulerStats`` for /metrics and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SchedulerStats:
    """A snapshot for /metrics and benchmarks."""

    pending_checks: int          # preparing, queued or in the model
    queued_in_flight: int        # sequences waiting, by class
    queued_end_of_stream: int
    queued_tokens: int
    batches_in_model: int
    batches: int                 # forwards run
    sequences: int               # sequences forwarded
    real_tokens: int
    padded_tokens: int           # batch size x longest, summed over batches
    batch_sizes: dict[int, int]  # sequences per batch -> batches
    exits_used: dict[int, int]   # Detection.exit_layer -> checks
    checks_done: int
    checks_failed: int
    checks_dropped: int          # aborted, cancelled or timed out
    checks_rejected: int         # Overloaded at admission or verify
    checks_timed_out: int
    shallower_exits: int         # in-flight checks moved to a shallower exit under load
    skipped_sequences: int       # handed to the model thread but dropped before running
    # time per batch, summed over batches: queueing (mean over the batch's sequences of
    # queued -> forward starts, waiting behind other batches included) and the forward
    queue_wait_s: float
    model_s: float
    in_flight_batches: int       # the same three for in-flight batches only
    in_flight_queue_wait_s: float
    in_flight_model_s: float
    layer_tokens_per_s: float
    drain_time_s: float
    contexts: Any = None         # the context cache's CacheStats

    @property
    def mean_batch_size(self) -> float:
        return self.sequences / self.batches if self.batches else 0.0

    @property
    def mean_queue_wait_ms(self) -> float:
        """Mean queueing per batch (see ``queue_wait_s``)."""
        return 1000 * self.queue_wait_s / self.batches if self.batches else 0.0

    @property
    def mean_model_ms(self) -> float:
        """Mean forward time per batch."""
        return 1000 * self.model_s / self.batches if self.batches else 0.0

    @property
    def padding_ratio(self) -> float:
        """Padded tokens per real token (1.0 = no padding)."""
        return self.padded_tokens / self.real_tokens if self.real_tokens else 1.0
