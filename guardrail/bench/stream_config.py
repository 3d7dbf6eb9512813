"""The stream benchmark's knobs: the load and which variants run."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from guardrail.bench.stream_proxy import ABLATIONS


@dataclass(frozen=True)
class StreamBenchConfig:
    """The load and which variants run; how checks run is the shipped config's."""

    streams: tuple[int, ...] = (1, 4, 16, 64)
    rate: float = 30.0                       # upstream tokens (word pieces) per second
    context_tokens: tuple[int, ...] = (4096,)
    answer_tokens: int = 240                 # pieces per answer (~8 s at 30 tok/s)
    hallucination_rate: float = 0.1          # share of answer sentences not in the context
    naive_streams: tuple[int, ...] = (1, 16)
    ablations: tuple[str, ...] = ABLATIONS
    ablation_streams: tuple[int, ...] = (16,)
    windows: Optional[str] = None            # override scheduler.in_flight_windows: all | topk
    top_k: Optional[int] = None              # override scheduler.in_flight_top_k
    final_pass: bool = True
    admission: bool = False                  # the scheduler's 503 when its backlog is too long
    warm_contexts: bool = False              # PUT each stream's documents first (a tenant's
                                             # cached documents): prepared, and encoded by a
                                             # cached-context model, before the streams start
    deadline_s: float = 45.0                 # a configuration's streams are cut after this
    throughput_tokens: int = 2000            # pieces per unthrottled pass-through stream
    probe_repeats: int = 10
    stagger_s: float = 0.5                   # stream starts spread over this
    model: Optional[str] = None
    device: Optional[str] = None
    data_dir: Optional[str] = None
    seed: int = 0
    config: Optional[str] = None             # a YAML config file under the settings above

    @classmethod
    def quick(cls, **kw: Any) -> "StreamBenchConfig":
        base = cls(streams=(1, 2), rate=40.0, context_tokens=(256,), answer_tokens=36,
                   naive_streams=(1,), ablations=("no_batching",), ablation_streams=(2,),
                   deadline_s=30.0, throughput_tokens=200, probe_repeats=3, stagger_s=0.1)
        return replace(base, **kw)
