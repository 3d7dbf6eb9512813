"""What one answer's checks run under (``GuardSettings``) and who watches them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol, Sequence

from guardrail.config import SchedulerConfig, VerificationConfig
from guardrail.evidence.judge import SentenceJudge
from guardrail.stream.policy import EffectivePolicy, Regenerator
from guardrail.stream.segmenter import SentenceSegmenter
from guardrail.types import DEFAULT_TENANT, Action, Grounding, Sentence

__all__ = ["GuardSettings", "NullObserver", "Segmenter", "StreamObserver"]


class Segmenter(Protocol):
    def feed(self, text: str) -> list[Sentence]: ...
    def flush(self) -> list[Sentence]: ...


class StreamObserver(Protocol):
    """Metrics hooks (the server implements them with Prometheus)."""

    def on_sentence(self, action: Action, checked: bool) -> None: ...
    def on_check(self, seconds: float, exit_layer: Optional[int]) -> None: ...
    def on_settled(self) -> None: ...  # a sentence released with no model call
    def on_skipped(self, reason: str) -> None: ...  # a claim released unchecked: why
    def on_error(self, kind: str) -> None: ...  # the stream ended on an error event


class NullObserver:
    def on_sentence(self, action: Action, checked: bool) -> None:
        pass

    def on_check(self, seconds: float, exit_layer: Optional[int]) -> None:
        pass

    def on_settled(self) -> None:
        pass

    def on_skipped(self, reason: str) -> None:
        pass

    def on_error(self, kind: str) -> None:
        pass


@dataclass(frozen=True)
class GuardSettings:
    """Everything one request's checks run under."""

    grounding: Grounding
    policy: EffectivePolicy
    verification: VerificationConfig
    stream_id: str
    model: str = ""
    regenerator: Optional[Regenerator] = None
    observer: StreamObserver = field(default_factory=NullObserver)
    segmenter_factory: Callable[[], Segmenter] = SentenceSegmenter
    tenant: str = DEFAULT_TENANT
    """Whose cached and stored contexts the checks may use."""
    on_report: Optional[Callable[[dict], None]] = None
    """Called once with the ``guardrail`` report as sent, when the answer ends (finished,
    blocked or failed): the proxy keeps it for ``GET /v1/guardrail/reports/{id}``."""
    grounding_limit: Optional[Callable[[Sequence[str]], None]] = None
    """The request's size rule for its grounding (the proxy's ``context`` limits):
    raises for documents over it.  Documents a regenerate hook retrieves are added only
    within it."""
    judge: Optional[SentenceJudge] = None
    """The sentence judge (from the model, ``verification.sentence_judge``); None: a
    sentence is flagged when any of its tokens reaches the threshold."""
    sentence_events: bool = False
    """Each chunk releasing a sentence says what happened to it (``guardrail.sentence``)."""
    left_context_chars: int = SchedulerConfig().left_context(keeps_answer=False)[0]
    """The left-context budget (``scheduler.left_context_chars``): how much of the
    answer so far a check and a rewrite prompt read."""
    final_by_sentence: bool = False
    """The final pass reads the answer as the in-flight checks did, a block per
    sentence (``stream.final``; for an engine that keeps the answer so far), instead of
    the whole answer at once."""
    json_answer: bool = False
    """The answer is a JSON document (``response_format`` ``json_object`` or
    ``json_schema``): a redaction replaces text inside string values only
    (``stream.jsontext``), so the client can still parse it."""
    left_context_step_chars: int = 0
    """How a check's start moves (``scheduler.left_context_step_chars``, resolved: 0
    slides with every sentence; N moves it in steps of N characters)."""
