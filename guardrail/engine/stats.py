"""What an engine reports of itself: ``EngineInfo`` (static facts, for /healthz) and
``EngineStats`` (counters and queue state, for /metrics, admission and benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class EngineInfo:
    """What the engine serves."""

    engine: str                      # "batching" (the scheduler), "local", or a custom name
    model: str
    n_layers: int
    exit_layers: tuple[int, ...]
    shallow_exit_layer: int          # the layer in-flight checks exit at (n_layers: full depth)
    threshold: Optional[float]
    judge: Optional[dict] = None     # the sentence judge's parameters (evidence.judge), if any
    attention: str = "cross"         # "pcw": contexts encoded once and cached (model.pcw)
    keeps_answer: bool = False       # checks keep the answer so far for the next (answer blocks)
    dtype: str = "float32"           # of the weights (``detector.dtype``)

    @classmethod
    def of(cls, engine: str, model: str, detector: Any, shallow: Optional[int]) -> "EngineInfo":
        """What ``detector`` serves, in-flight checks exiting at ``shallow`` (None: full)."""
        meta = getattr(detector, "meta", {})
        params = getattr(getattr(detector, "model", None), "parameters", None)
        first = next(iter(params()), None) if callable(params) else None
        dtype = str(first.dtype).removeprefix("torch.") if first is not None else "float32"
        return cls(engine, model, detector.n_layers, tuple(detector.exit_layers),
                   shallow or detector.n_layers, getattr(detector, "threshold", None),
                   meta.get("judge"), meta.get("attention", "cross"),
                   bool(getattr(detector, "answer_blocks", False)), dtype)

    def to_json(self) -> dict:
        return {"model": self.model, "n_layers": self.n_layers,
                "exit_layers": list(self.exit_layers),
                "shallow_exit_layer": self.shallow_exit_layer, "threshold": self.threshold,
                "scheduler": self.engine, "attention": self.attention,
                "keeps_answer": self.keeps_answer, "dtype": self.dtype}


@dataclass(frozen=True)
class EngineStats:
    """A snapshot for /metrics and benchmarks (an engine without batches reports zeros
    for the batch fields)."""

    pending_checks: int          # preparing, queued or in the model
    batching: bool = False       # the engine batches (the batch and queue fields mean something)
    queued_in_flight: int = 0        # sequences waiting, by class
    queued_end_of_stream: int = 0
    queued_tokens: int = 0
    batches_in_model: int = 0
    batches: int = 0                 # forwards run
    sequences: int = 0               # sequences forwarded
    real_tokens: int = 0
    padded_tokens: int = 0           # batch size x longest, summed over batches
    batch_sizes: dict[int, int] = field(default_factory=dict)  # sequences per batch -> batches
    exits_used: dict[int, int] = field(default_factory=dict)   # Detection.exit_layer -> checks
    checks_done: int = 0
    checks_failed: int = 0
    checks_dropped: int = 0          # aborted, cancelled or timed out
    checks_rejected: int = 0         # Overloaded at admission or verify
    checks_timed_out: int = 0
    shallower_exits: int = 0         # in-flight checks moved to a shallower exit under load
    checks_coalesced: int = 0        # in-flight checks answered by the waiting check they joined
    skipped_sequences: int = 0       # handed to the model thread but dropped before running
    # time per batch, summed over batches: queueing (mean over the batch's sequences of
    # queued -> forward starts, waiting behind other batches included) and the forward
    queue_wait_s: float = 0.0
    model_s: float = 0.0
    in_flight_batches: int = 0       # the same three for in-flight batches only
    in_flight_queue_wait_s: float = 0.0
    in_flight_model_s: float = 0.0
    layer_tokens_per_s: float = 0.0
    drain_time_s: float = 0.0
    streams_active: int = 0          # checked streams admitted and not yet ended
    stream_limit: int = 0            # the adaptive limit on them (engine.admission)
    contexts: Any = None         # the context cache's CacheStats
    context_states: Any = None   # encoded contexts (model.states.StateStats), PCW models only
    answer_states: Any = None    # answers so far kept by checks (StateStats), answer blocks only

    @classmethod
    def counted(cls, counters: Mapping[str, float], **fields: Any) -> "EngineStats":
        """A snapshot of ``fields`` and of a scheduler's ``counters`` (``_COUNTED``)."""
        return cls(**{f: counters.get(name, 0) for f, name in _COUNTED.items()}, **fields)

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


_COUNTED = {  # EngineStats field -> the scheduler's counter
    "batches": "batches", "sequences": "sequences", "real_tokens": "real_tokens",
    "padded_tokens": "padded_tokens", "checks_done": "done", "checks_failed": "failed",
    "checks_dropped": "dropped", "checks_rejected": "rejected", "checks_timed_out": "timed_out",
    "checks_coalesced": "coalesced", "shallower_exits": "shallower", "skipped_sequences": "skipped",
    "queue_wait_s": "queue_wait_s", "model_s": "model_s", "in_flight_batches": "in_flight_batches",
    "in_flight_queue_wait_s": "in_flight_queue_wait_s", "in_flight_model_s": "in_flight_model_s"}
