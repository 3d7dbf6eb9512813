"""Prometheus metrics of one app (``GET /metrics``).

``Metrics`` counts what the server sees (requests, errors, sentences, check latency)
and is the pipeline's ``StreamObserver``.  ``EngineCollector`` reads the
scheduler's and the caches' own counters at scrape time, so nothing is counted twice
and the hot path pays nothing for them:

    guardrail_scheduler_queued_sequences{priority}   sequences waiting, per class
    guardrail_scheduler_pending_checks               checks preparing, queued or running
    guardrail_scheduler_batch_size                   histogram: sequences per forward
    guardrail_scheduler_exits_total{exit_layer}      checks by the exit that judged them
    guardrail_scheduler_checks_total{outcome}        done/failed/dropped/rejected/timed_out
    guardrail_context_cache_lookups_total{result}    local_hit/redis_hit/miss/shared_wait
    guardrail_cache_redis_errors_total               failed Redis calls (all tiers)
    guardrail_context_states_{bytes,entries}         encoded contexts held (PCW models)
    guardrail_context_states_lookups_total{result}   hit/encoded/shared_wait
    guardrail_answer_states_total{event}             answers so far kept / reused / resumed
    guardrail_answer_states_bytes                    answers so far held

Each app has a registry of its own, so several apps in one process never clash.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge,
                               Histogram, generate_latest)
from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily,
                                    HistogramMetricFamily, Metric)

from guardrail.engine.seam import Verifier
from guardrail.engine.stats import EngineStats
from guardrail.types import Action

BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    def __init__(self, engine: Verifier):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("guardrail_requests", "Requests by route kind and whether "
                                "they are checked", ["mode", "checked"], registry=r)
        self.errors = Counter("guardrail_errors", "Error responses and streams ended by an "
                              "error event, by type", ["type"],
                              registry=r)
        self.ungrounded = Counter("guardrail_ungrounded_requests", "Chat requests in which "
                                  "no grounding was found (passed through unchecked)",
                                  registry=r)
        self.sentences = Counter("guardrail_sentences", "Sentences by action",
                                 ["action", "checked"], registry=r)
        self.settled = Counter("guardrail_sentences_settled", "Sentences the grounding says "
                               "again, released with no model call", registry=r)
        self.unchecked = Counter("guardrail_sentences_unchecked", "Sentences that make a "
                                 "claim released unchecked, by why (language: one the "
                                 "detector does not read)", ["reason"], registry=r)
        self.checks = Histogram("guardrail_check_seconds", "Check latency (queueing "
                                "included) by exit layer", ["exit_layer"], registry=r,
                                buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10))
        self.queue = Gauge("guardrail_queue_depth", "Checks queued or running", registry=r)
        self.queue.set_function(lambda: float(engine.stats().pending_checks))

    def request(self, mode: str, checked: bool) -> None:
        self.requests.labels(mode, str(checked).lower()).inc()

    def error(self, kind: str) -> None:
        self.errors.labels(kind).inc()

    def on_sentence(self, action: Action, checked: bool) -> None:
        self.sentences.labels(action.value, str(checked).lower()).inc()

    def on_check(self, seconds: float, exit_layer: Optional[int]) -> None:
        self.checks.labels(str(exit_layer)).observe(seconds)

    def on_settled(self) -> None:
        self.settled.inc()

    def on_skipped(self, reason: str) -> None:
        self.unchecked.labels(reason).inc()

    def on_error(self, kind: str) -> None:  # a stream's error event, after its 200
        self.error(kind)

    def watch(self, engine: Verifier, redis_stores: Iterable[Any]) -> None:
        """Also export the engine's scheduler/cache stats and the Redis error counts."""
        self.registry.register(EngineCollector(engine, redis_stores))

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class EngineCollector:
    """Engine and cache counters, read at scrape time."""

    def __init__(self, engine: Verifier, redis_stores: Iterable[Any]):
        self.engine = engine
        self.redis_stores = {id(s): s for s in redis_stores if s is not None}.values()

    def collect(self) -> Iterator[Metric]:
        stats = self.engine.stats()
        if stats.batching:  # the local engine's counters are the app's own request metrics
            yield from _scheduler_metrics(stats)
        if stats.contexts is not None:
            yield from _cache_metrics(stats.contexts)
        if stats.context_states is not None:
            yield from _state_metrics(stats.context_states)
        if stats.answer_states is not None:
            yield from _answer_metrics(stats.answer_states)
        stores = self.redis_stores
        yield CounterMetricFamily("guardrail_cache_redis_errors", "Failed Redis calls "
                                  "(the request went on from the in-process tier)",
                                  value=sum(s.errors for s in stores))
        yield CounterMetricFamily("guardrail_cache_redis_skipped", "Redis calls skipped "
                                  "during the cool-down after a failure",
                                  value=sum(s.skipped for s in stores))


def _by_label(family: type, name: str, doc: str, label: str,
              values: Iterable[tuple[Any, float]]) -> Metric:
    """One metric family with a sample per ``(label value, value)``."""
    metric = family(name, doc, labels=[label])
    for key, value in values:
        metric.add_metric([str(key)], value)
    return metric


def _scheduler_metrics(s: EngineStats) -> Iterator[Metric]:
    yield _by_label(GaugeMetricFamily, "guardrail_scheduler_queued_sequences", "Model "
                    "sequences waiting for a batch, by priority class", "priority",
                    (("in_flight", s.queued_in_flight), ("end_of_stream", s.queued_end_of_stream)))
    yield GaugeMetricFamily("guardrail_scheduler_pending_checks", "Checks preparing, "
                            "queued or in the model", value=s.pending_checks)
    yield GaugeMetricFamily("guardrail_scheduler_batches_in_model", "Batches handed to "
                            "the model thread", value=s.batches_in_model)
    yield GaugeMetricFamily("guardrail_scheduler_drain_seconds", "Estimated time to run "
                            "the queued work (admission control)", value=s.drain_time_s)
    yield GaugeMetricFamily("guardrail_admission_streams", "Checked streams admitted and "
                            "not yet ended", value=s.streams_active)
    yield GaugeMetricFamily("guardrail_admission_stream_limit", "How many checked streams "
                            "are admitted at once (adapts to the latency budget)",
                            value=s.stream_limit)
    yield GaugeMetricFamily("guardrail_scheduler_layer_tokens_per_second", "Measured "
                            "model throughput (tokens x layers per second)",
                            value=s.layer_tokens_per_s)
    buckets = [(str(float(le)), sum(n for size, n in s.batch_sizes.items() if size <= le))
               for le in BATCH_BUCKETS] + [("+Inf", s.batches)]
    yield HistogramMetricFamily("guardrail_scheduler_batch_size", "Sequences per forward "
                                "(above 1: sequences of several checks, usually of several "
                                "streams, ran together)", buckets=buckets,
                                sum_value=s.sequences)
    yield _by_label(CounterMetricFamily, "guardrail_scheduler_tokens", "Tokens forwarded: "
                    "real, and padded (batch size x longest)", "kind",
                    (("real", s.real_tokens), ("padded", s.padded_tokens)))
    yield _by_label(CounterMetricFamily, "guardrail_scheduler_exits", "Checks by the exit "
                    "layer that judged them", "exit_layer", sorted(s.exits_used.items()))
    yield _by_label(CounterMetricFamily, "guardrail_scheduler_checks", "Checks by outcome "
                    "(dropped: aborted or cancelled before a result, never computed when "
                    "still queued)", "outcome",
                    (("done", s.checks_done), ("failed", s.checks_failed),
                     ("dropped", s.checks_dropped), ("rejected", s.checks_rejected),
                     ("timed_out", s.checks_timed_out)))
    yield CounterMetricFamily("guardrail_scheduler_shallower_exits", "In-flight checks "
                              "moved to a shallower exit under load (adaptive depth)",
                              value=s.shallower_exits)
    yield CounterMetricFamily("guardrail_scheduler_coalesced_checks", "In-flight checks "
                              "that joined the waiting check of the sentence before them in "
                              "their stream (one read of the context for both)",
                              value=s.checks_coalesced)
    yield CounterMetricFamily("guardrail_scheduler_skipped_sequences", "Sequences of "
                              "dropped checks skipped in the model thread",
                              value=s.skipped_sequences)


def _cache_metrics(c: Any) -> Iterator[Metric]:
    yield _by_label(CounterMetricFamily, "guardrail_context_cache_lookups", "Prepared-context "
                    "lookups by result (miss: prepared again)", "result",
                    (("local_hit", c.local_hits), ("redis_hit", c.redis_hits),
                     ("miss", c.misses), ("shared_wait", c.shared_waits)))
    yield GaugeMetricFamily("guardrail_context_cache_local_entries", "Prepared contexts "
                            "in the in-process tier", value=c.local_entries)
    yield GaugeMetricFamily("guardrail_context_cache_local_bytes", "Bytes of the "
                            "in-process tier", value=c.local_bytes)
    yield CounterMetricFamily("guardrail_context_cache_local_evictions", "In-process "
                              "tier evictions", value=c.local_evictions)
    yield CounterMetricFamily("guardrail_context_cache_redis_corrupt", "Unreadable "
                              "values found in Redis (treated as misses)",
                              value=c.redis_corrupt)


def _answer_metrics(c: Any) -> Iterator[Metric]:
    yield _by_label(CounterMetricFamily, "guardrail_answer_states", "Answers so far kept "
                    "by checks (kept), found by the next sentence's check (reused) and "
                    "taken up from their exit by the end-of-stream pass (resumed)",
                    "event", (("kept", c.builds), ("reused", c.hits),
                              ("resumed", getattr(c, "resumed", 0))))
    yield GaugeMetricFamily("guardrail_answer_states_bytes", "Bytes of the answers so far "
                            "held (keys and values of the layers their checks ran)",
                            value=c.bytes)


def _state_metrics(c: Any) -> Iterator[Metric]:
    yield _by_label(CounterMetricFamily, "guardrail_context_states_lookups", "Encoded-context "
                    "lookups by result (encoded: every window run through the model)",
                    "result", (("hit", c.hits), ("encoded", c.builds),
                               ("shared_wait", c.shared)))
    yield GaugeMetricFamily("guardrail_context_states_entries", "Encoded contexts held",
                            value=c.entries)
    yield GaugeMetricFamily("guardrail_context_states_bytes", "Bytes of the encoded "
                            "contexts held (keys and values of every layer)", value=c.bytes)
    yield CounterMetricFamily("guardrail_context_states_evictions", "Encoded contexts "
                              "dropped to stay within cache.states_max_bytes",
                              value=c.evictions)
