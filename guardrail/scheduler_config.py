"""Settings, statistics and the per-tenant view of the verification scheduler.

Kept apart from ``guardrail.scheduler`` so ``guardrail.config`` and the server can
import them without importing the detector (torch).  ``SchedulerConfig`` is the
``scheduler`` section of ``GuardrailConfig`` and the one place that says how checks
run (exits, context windows, batching, left context, admission, timeouts), for
``Scheduler`` and ``LocalVerifier`` alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guardrail.types import CheckRequest, Detection

DEFAULT_TENANT = "default"


class SchedulerConfig(BaseModel):
    """How sentence checks run (the ``scheduler`` section of the config)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    max_batch_tokens: int = Field(8192, ge=1)
    """Padded tokens (batch size x longest sequence) in one forward; at least the
    detector's max_length."""
    max_batch_size: int = Field(64, ge=1)
    """Sequences in one forward."""
    max_wait_ms: float = Field(4.0, ge=0)
    """How long a lane's oldest sequence waits for its batch to fill before it runs."""
    max_batches_in_flight: int = Field(2, ge=1)
    """Batches handed to the model thread at once: 2 forms the next batch while one
    runs; 1 keeps priority order exact (no batch waits behind another)."""
    eos_every: int = Field(4, ge=1)
    """Starvation guard: after this many consecutive batches taken while end-of-stream
    work waits, the next batch is end-of-stream work."""
    in_flight_exit: Optional[int] = Field(None, ge=1)
    """Exit (layer) whose head checks sentences while streaming, the ``exit_layer`` of
    each sentence in the guardrail object; None: the detector's deepest early exit
    (layer 4 of the default model; full depth when it has none).  A check's own
    ``exit_layer`` replaces it."""
    depth_ladder: tuple[int, ...] = (64, 256)
    """Adaptive depth: queued in-flight sequences at which a new in-flight check steps
    one exit shallower per threshold reached (e.g. 4 -> 2 from 64 queued), never below
    the detector's first exit.  End-of-stream checks keep their depth.  Empty: off."""
    left_context_chars: int = Field(600, ge=0)
    """Characters of the answer so far kept before the checked sentence (cut at a
    word boundary); the returned Detection still indexes the whole response."""
    max_pending_checks: int = Field(1024, ge=1)
    """Checks pending across streams (the queue bound): new checked requests are
    refused at it, and ``verify`` beyond it raises Overloaded."""
    latency_budget_s: float = Field(2.0, gt=0)
    """``is_overloaded()`` once the queued work would take longer than this to run:
    the server then answers new checked requests 503 (or 429,
    ``server.overload_status``) with Retry-After instead of queueing them."""
    initial_layer_tokens_per_s: float = Field(200_000.0, gt=0)
    """Throughput prior (tokens x layers per second) for the backlog estimate, until
    the first batch is measured."""
    check_timeout_s: Optional[float] = Field(30.0, gt=0)
    """Deadline of one check, queueing included (DetectorError code check_timeout)."""
    prepare_threads: int = Field(1, ge=1)
    """Threads tokenizing contexts and building sequences (overlapping the model)."""
    in_flight_windows: Literal["all", "topk"] = "topk"
    """Context windows an in-flight (streaming) check scores when the context does not
    fit one window: ``topk`` the ``in_flight_top_k`` most relevant to the checked text
    (BM25 over the context, index built once per context), ``all`` every window.  A
    token counts as supported if any scored window supports it, so fewer windows can
    only flag more, never let more through.  A context that fits one window is
    unaffected."""
    in_flight_top_k: int = Field(3, ge=1)
    """Windows per in-flight check with ``in_flight_windows: topk``."""
    final_windows: Literal["all", "topk"] = "all"
    """Context windows the end-of-stream full-depth pass scores (as
    ``in_flight_windows``); ``all`` keeps the final verdict exact."""
    final_top_k: int = Field(8, ge=1)
    """Windows per end-of-stream check with ``final_windows: topk``."""

    @model_validator(mode="after")
    def _check_ladder(self) -> "SchedulerConfig":
        ladder = self.depth_ladder
        if any(t < 1 for t in ladder) or list(ladder) != sorted(set(ladder)):
            raise ValueError(f"scheduler.depth_ladder must be strictly increasing positive "
                             f"queue depths, got {list(ladder)}")
        return self


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
