"""The ``scheduler`` section: how sentence checks run.

``SchedulerConfig`` is the one place that says how checks run (exits, context
windows, batching, left context, admission, timeouts), for every engine.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guardrail.types import DEFAULT_TENANT

__all__ = ["DEFAULT_TENANT", "SchedulerConfig"]


class SchedulerConfig(BaseModel):
    """How sentence checks run (the ``scheduler`` section of the config)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    max_batch_tokens: int = Field(8192, ge=1)
    """Padded tokens (batch size x longest sequence) in one forward; at least the
    detector's max_length."""
    max_batch_size: int = Field(64, ge=1)
    """Sequences in one forward."""
    eos_batch_tokens: int = Field(1024, ge=1)
    """Padded tokens in one end-of-stream forward (one sequence at least, however long):
    a full-depth batch holds the model thread while in-flight checks wait behind it.
    16 streams x 4K contexts (pcw), release delay p99: median 3.4 s of seven runs with
    8192, 1.6 s of five with 1024, lower in each pair (docs/context-states.md)."""
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
    depth_ladder: tuple[int, ...] = (6, 64)
    """Adaptive depth: queued in-flight sequences at which a new in-flight check steps
    one exit shallower per threshold reached (4 -> 2 from 6 queued: two checks of three
    windows), never below the detector's first exit.  End-of-stream checks keep their
    depth.  Empty: off.  On 2 cores, (6, 64) kept a 32-stream soak's median release
    delay within the 2 s budget where (64, 256) did not (docs/benchmarks.md)."""
    left_context_chars: Optional[int] = Field(None, ge=0)
    """Characters of the answer so far that a sentence check reads before the sentence
    (cut at a word boundary, by the stream: the engine checks the text it is given).
    None (default): 600, or 900 for a model that keeps the answer so far (a pcw model
    with answer blocks): it reads what the check before it kept, so a longer answer so
    far costs it tokens only when the start moves (``left_context_step_chars``)."""
    left_context_step_chars: Optional[int] = Field(None, ge=0)
    """How the start of that text moves as the answer grows: 0 slides it with every
    sentence (always ``left_context_chars`` before the sentence); N > 0 moves it in
    steps of N characters, so consecutive checks read the same answer so far (between
    ``left_context_chars - N`` and ``left_context_chars`` of it) and a model that keeps
    the answer so far reuses it instead of re-reading it.  None (default): for such a
    model two thirds of the budget (600 of 900: a check reads 300 to 900 characters of
    the answer so far, and reads them again once every 600), else 0."""
    coalesce_sentences: int = Field(4, ge=1)
    """In-flight checks of one stream that wait in the queue together run as one check
    of up to this many consecutive sentences (1: never), at the first one's place: a
    model that reads the context again for every check (the cross-encoder) reads it
    once for all of them, so a backlog shrinks instead of growing.  Each sentence is
    judged on its own tokens, read with the sentences after it in view (as the
    end-of-stream pass reads them).  Models that keep the answer so far run a stream's
    waiting sentences one after another instead (``engine.coalesce``)."""
    max_pending_checks: int = Field(1024, ge=1)
    """Checks pending across streams (the queue bound): new checked requests are
    refused at it, and ``verify`` beyond it raises Overloaded."""
    latency_budget_s: float = Field(2.0, gt=0)
    """``is_overloaded()`` once the queued work would take longer than this to run:
    the server then answers new checked requests 503 (or 429,
    ``server.overload_status``) with Retry-After instead of queueing them."""
    initial_streams: int = Field(1, ge=1)
    """Checked streams admitted at once to start with; the limit then adapts to the
    latency budget (``engine.admission``: while checks are fast, up to the streams the
    model's measured busy share says fit, at most doubling; x0.75 when a check takes
    over half the budget)."""
    max_streams: int = Field(256, ge=1)
    """The most checked streams admitted at once, however fast the checks are."""
    initial_layer_tokens_per_s: float = Field(200_000.0, gt=0)
    """Throughput prior (tokens x layers per second) for the backlog estimate, until
    the first batch is measured."""
    check_timeout_s: Optional[float] = Field(30.0, gt=0)
    """Deadline of one check, queueing included (DetectorError code check_timeout)."""
    prepare_threads: int = Field(1, ge=1)
    """Threads tokenizing contexts and building sequences (overlapping the model)."""
    in_flight_windows: Literal["all", "topk", "blocks"] = "blocks"
    """Context windows an in-flight (streaming) check scores when the context does not
    fit one window: ``topk`` the ``in_flight_top_k`` most relevant to the checked text
    (BM25 over the context, index built once per context), ``blocks`` a context of up
    to ``in_flight_top_k`` windows whole and a longer one as ONE window packed from
    its most relevant passages of 128 tokens (``model.windows.TopBlocks``: a third of
    ``topk``'s model time at 4K tokens and more), ``all`` every window.  A token counts
    as supported if any scored window supports it, so fewer windows can only flag
    more, never let more through.  A context that fits one window is unaffected."""
    in_flight_top_k: int = Field(3, ge=1)
    """Windows per in-flight check with ``in_flight_windows: topk``; with ``blocks``,
    the most windows a context has to be read whole."""
    in_flight_context_tokens: Optional[int] = Field(None, ge=32)
    """With ``in_flight_windows: blocks``, the most context tokens of a packed window
    (None: as many as a plain window holds), so that an in-flight check over a long
    context is a shorter sequence.  A trade, off by default: at 16 streams x 4K, 256
    tokens halved the release p50 and 160 cut it to a third, but at 8K the share of
    supported sentences released untouched fell from 0.991 to 0.980 and 0.931
    (docs/benchmarks.md)."""
    final_windows: Literal["all", "topk", "own"] = "own"
    """Context windows the end-of-stream full-depth pass scores: ``own`` (default) judges
    each sentence by its own ``final_sentence_windows`` most relevant windows only
    (``model.windows.OwnWindows``; the pass reads their union, at most
    ``final_max_windows``), ``all`` every window (up to ``final_max_windows``), ``topk``
    the ``final_top_k`` most relevant to the whole answer.  A token is supported if a
    window it is read against supports it, and this 6-layer cross-encoder finds some
    unrelated window "supporting" nearly every hallucinated token once it reads a few
    dozen: at 8K tokens every window found 0.08 of the hallucinated answers and each
    sentence's own window 0.35 (19x faster), at 32K 0.00 and 0.47 (docs/benchmarks.md).
    A context of one window is read the same either way."""
    final_top_k: int = Field(8, ge=1)
    """Windows per end-of-stream check with ``final_windows: topk``."""
    final_sentence_windows: int = Field(1, ge=1)
    """The windows each sentence is judged by with ``final_windows: own``."""
    final_top_k_under_load: Optional[int] = Field(8, ge=1)
    """An end-of-stream check prepared while the proxy is behind (at least the first
    ``depth_ladder`` step of sequences waiting, in flight or end of stream: streams
    that end together queue each other's passes) scores only this many windows,
    those BM25 ranks highest for the answer, and the report says ``context_truncated``.
    With every window of a 4K context (about 30 of 512 tokens for the default model, at
    full depth) the end-of-stream passes are most of the model's work at 16 streams and
    ``[DONE]`` comes tens of seconds late.  None (or an empty ladder): always
    ``final_windows``.  Models that read encoded contexts (pcw) read every window
    anyway."""
    final_budget_s: Optional[float] = Field(1.0, gt=0)
    """An end-of-stream pass of a model that reads the context's windows again for
    every check (the cross-encoder) scores no more windows than the model runs in
    this long at full depth, at its measured rate and after the work queued ahead of
    it (BM25's most relevant first, never fewer than ``final_top_k_under_load``), and
    the report says ``context_truncated``.  Reading every window of a 32K context on 2
    CPU cores (64 windows, the ``final_max_windows`` bound) took 10.6 s after the
    upstream's ``[DONE]`` with one stream and 22-31 s with four.  None: no budget
    (``final_max_windows`` bounds the pass alone).  Models that read encoded contexts
    (pcw) read every window anyway."""
    final_state_wait_s: Optional[float] = Field(1.0, ge=0)
    """Cached-context (PCW) engines: how long an end-of-stream check waits for its
    context's states when the context came with the request and is still being
    encoded (a 32K context takes seconds on a CPU).  After that, or at once when at
    the measured encode rate the encodings ahead of it and its own should take longer,
    it reads the windows BM25 picks, as in-flight checks do meanwhile, the report says
    ``context_truncated``, and the encoding goes on for the next check.  The client's
    ``[DONE]`` then comes within about this long plus one check, not after the whole
    encoding.  None: always wait for the states (every window is read)."""
    final_max_windows: Optional[int] = Field(64, ge=1)
    """The budget of one end-of-stream pass with ``final_windows: all``: a context of
    more windows (64 x 512 tokens is ~25K tokens) scores the most relevant this many
    (BM25), and the report says ``context_truncated``; a stream's cost stays bounded
    and its neighbours keep their latency.  None: every window, whatever the size."""

    @model_validator(mode="after")
    def _check_ladder(self) -> "SchedulerConfig":
        ladder = self.depth_ladder
        if any(t < 1 for t in ladder) or list(ladder) != sorted(set(ladder)):
            raise ValueError(f"scheduler.depth_ladder must be strictly increasing positive "
                             f"queue depths, got {list(ladder)}")
        return self

    def left_context(self, keeps_answer: bool) -> tuple[int, int]:
        """``(left_context_chars, left_context_step_chars)`` for an engine whose checks
        keep the answer so far (``keeps_answer``) or not, the unset ones resolved."""
        budget = self.left_context_chars
        if budget is None:
            budget = 900 if keeps_answer else 600
        step = self.left_context_step_chars
        if step is None:
            step = budget - budget // 3 if keeps_answer else 0
        return budget, step
