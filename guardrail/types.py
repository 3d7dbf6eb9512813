"""The contract: the data every stage of guardrail passes to the next.

A request flows  upstream SSE -> Delta -> Sentence -> CheckRequest -> Detection
-> SentenceVerdict -> downstream SSE.  Everything here is a frozen dataclass or an
enum; stages never pass bare dicts to each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional

DEFAULT_TENANT = "default"
"""The tenant of every request when no tenant is configured with API keys."""


class Action(str, enum.Enum):
    """What the policy does with a checked sentence."""

    RELEASE = "release"        # send as is
    REDACT = "redact"          # replace unsupported spans (or the sentence) with a marker
    REGENERATE = "regenerate"  # ask the LLM to rewrite the sentence from the context
    BLOCK = "block"            # stop the stream with an error event
    ANNOTATE = "annotate"      # send as is, but mark it in the guardrail object


class Priority(enum.IntEnum):
    """Scheduling class of a check: lower value runs first."""

    IN_FLIGHT = 0      # shallow exit; a stream waits on it to release a sentence
    END_OF_STREAM = 1  # full-depth pass over the whole answer; throughput work


@dataclass(frozen=True)
class Span:
    """An unsupported stretch of the response, as character offsets into it."""

    start: int
    end: int
    text: str
    confidence: float

    def shifted(self, offset: int) -> "Span":
        return Span(self.start + offset, self.end + offset, self.text, self.confidence)

    def to_json(self) -> dict:
        return {"start": self.start, "end": self.end, "text": self.text,
                "confidence": round(self.confidence, 4)}


@dataclass(frozen=True)
class Detection:
    """The detector's answer for one (context, question, response) triple.

    ``token_offsets``/``token_probs`` give every scored response token's character
    range and its hallucination probability (aggregated over context windows), so a
    caller can score any character range of the response (a sentence) without
    running the model again.
    """

    response: str
    spans: tuple[Span, ...]
    token_offsets: tuple[tuple[int, int], ...]
    token_probs: tuple[float, ...]
    threshold: float
    exit_layer: int                  # layer whose head produced the labels; == n_layers for full depth
    n_layers: int                    # depth of the backbone
    windows_total: int = 1           # context windows the context was split into
    windows_scored: int = 1          # windows actually scored (after window selection)
    response_split: bool = False     # the response did not fit one window and was scored in pieces
    context_truncated: bool = False  # some context was not scored (selection dropped windows)

    @property
    def score(self) -> float:
        """Highest token hallucination probability (0.0 for an empty response)."""
        return max(self.token_probs, default=0.0)

    @property
    def hallucinated(self) -> bool:
        return any(s.confidence >= self.threshold for s in self.spans)

    @property
    def full_depth(self) -> bool:
        return self.exit_layer >= self.n_layers

    def probs_in(self, start: int, end: int) -> list[float]:
        """Probabilities of the tokens overlapping ``[start, end)``."""
        return [p for (s, e), p in zip(self.token_offsets, self.token_probs)
                if s < end and e > start]

    def score_in(self, start: int, end: int) -> float:
        """Highest token probability among tokens overlapping ``[start, end)``."""
        return max(self.probs_in(start, end), default=0.0)

    def spans_in(self, start: int, end: int) -> tuple[Span, ...]:
        """Spans overlapping ``[start, end)``, clipped to it, offsets relative to ``start``."""
        out = []
        for sp in self.spans:
            s, e = max(sp.start, start), min(sp.end, end)
            if s < e:
                out.append(Span(s - start, e - start, self.response[s:e], sp.confidence))
        return tuple(out)


@dataclass(frozen=True)
class Delta:
    """One upstream chat chunk, split for the stream: choice 0's new text (to check) and
    the rest of the chunk (passed through as is: role, tool calls, finish_reason, other
    choices, usage)."""

    chunk: dict                       # the upstream chunk as it came
    text: str = ""                    # choice 0's new content ("" if none)
    rest: Optional[dict] = None       # the chunk without that text; None if nothing is left
    finished: bool = False            # choice 0 has its finish_reason
    other_choices: tuple[int, ...] = ()
    tool_call: bool = False           # choice 0 calls a tool or refuses: the text before
    # it is complete, and goes first


@dataclass(frozen=True)
class Sentence:
    """A finished sentence of the answer: ``answer[start:end] == text``."""

    index: int
    text: str
    start: int
    end: int
    checkable: bool = True  # False for code blocks and whitespace-only pieces


@dataclass(frozen=True)
class Grounding:
    """What a response is checked against: documents plus the user's question."""

    documents: tuple[str, ...]
    question: str = ""
    context_id: Optional[str] = None

    @property
    def empty(self) -> bool:
        return not any(d.strip() for d in self.documents)

    @property
    def text(self) -> str:
        return "\n\n".join(d for d in self.documents if d.strip())


@dataclass(frozen=True)
class Rewrite:
    """A regenerate hook's answer when it retrieved more grounding (FLARE): the new
    sentence, and the documents to add to the answer's grounding before it is checked
    (later sentences and the final pass read them too)."""

    text: str
    documents: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckRequest:
    """One sentence to check: ``response[target_start:target_end]`` is the sentence,
    the text before it is the answer so far (its left context)."""

    grounding: Grounding
    response: str
    target_start: int = 0
    target_end: Optional[int] = None
    stream_id: str = ""
    priority: Priority = Priority.IN_FLIGHT
    exit_layer: Optional[int] = None  # None: the engine's configured default for the priority
    tenant: str = DEFAULT_TENANT      # whose cached and stored contexts the check may use
    blocks: tuple[int, ...] = ()      # where more checked sentences begin after target_start


@dataclass(frozen=True)
class Explanation:
    """Why a sentence is flagged: the context says otherwise (``contradicted``) or says
    nothing of it (``unverifiable``), how bad it is, the context line it is closest to,
    what the judge found (``basis``, one of ``BASES``) and in what form of grounding
    (``grounding``: a tool result or table read as records, or prose)."""

    kind: str        # "contradicted" | "unverifiable"
    severity: str    # "low" | "medium" | "high"
    evidence: Optional[str] = None
    basis: Optional[str] = None
    grounding: Optional[str] = None   # "structured" | "prose"

    def to_json(self) -> dict:
        return {"kind": self.kind, "severity": self.severity, "evidence": self.evidence,
                "basis": self.basis, "grounding": self.grounding}


BASES = ("value_changed", "other_record", "general", "unlisted", "value_missing",
         "value_worked_out", "negation", "words")
"""What a flag rests on, strongest first: the grounding states one of the sentence's
values otherwise (a field, its closest line, a yes/no said the other way round, values
swapped between records); a value that only another record holds; a claim of what
usually happens ("usually", "typically", "tend to") beside a tool result that holds
fewer than half of its words; an extra the sentence adds to what a tool result lists
("also includes a one-year warranty") of which the result names fewer than half of the
words; a value the grounding
does not hold at all; such a value in a sentence that says it worked it out ("in total",
"comes to", "that leaves") or, against a tool result, states quantities the result holds
beside it (its operands): arithmetic no rule reproduced; a negation its closest line
does not share; none of these (the detector's probabilities and the words)."""
REFINES = {"value_worked_out": "value_missing"}
"""A basis that narrows another: where ``policy.by_basis`` names only the wider one, its
action applies."""
BASIS_KEYS = (*BASES, *(f"{form}.{b}" for form in ("structured", "prose") for b in BASES))
"""What ``policy.by_basis`` may name: a basis, or a basis in one form of grounding
(``structured.value_missing``: only where the grounding is a tool result or a table)."""


@dataclass(frozen=True)
class SentenceVerdict:
    """What happened to one sentence, as reported in the final ``guardrail`` object."""

    index: int
    original: str
    released: str
    action: Action
    score: float
    spans: tuple[Span, ...]
    exit_layer: Optional[int]
    checked: bool = True
    attempts: int = 0                      # regeneration attempts made
    final_score: Optional[float] = None    # full-depth pass
    final_hallucinated: Optional[bool] = None
    final_spans: tuple[Span, ...] = field(default_factory=tuple)
    missed_by_shallow: bool = False        # full depth flags what the shallow check released
    explanation: Optional[Explanation] = None  # why it was flagged (with a sentence judge)
    claim: bool = True                     # False: it makes no claim and passed unchecked
    skipped: Optional[str] = None          # why it passed unchecked: "language"

    def to_json(self) -> dict:
        return {
            "index": self.index,
            "original": self.original,
            "released": self.released,
            "action": self.action.value,
            "checked": self.checked,
            "score": round(self.score, 4),
            "spans": [s.to_json() for s in self.spans],
            "exit_layer": self.exit_layer,
            "attempts": self.attempts,
            "claim": self.claim,
            "skipped": self.skipped,
            "explanation": self.explanation.to_json() if self.explanation else None,
            "final": None if self.final_score is None else {
                "score": round(self.final_score, 4),
                "hallucinated": self.final_hallucinated,
                "spans": [s.to_json() for s in self.final_spans],
                "missed_by_shallow": self.missed_by_shallow,
            },
        }


@dataclass(frozen=True)
class FinalVerdict:
    """The end-of-stream full-depth pass over the whole answer."""

    exit_layer: int
    n_layers: int
    score: float
    hallucinated: bool
    spans: tuple[Span, ...]
    context_truncated: bool
    response_split: bool

    def to_json(self) -> dict:
        return {"exit_layer": self.exit_layer, "n_layers": self.n_layers,
                "score": round(self.score, 4), "hallucinated": self.hallucinated,
                "spans": [sp.to_json() for sp in self.spans],
                "context_truncated": self.context_truncated,
                "response_split": self.response_split}


@dataclass(frozen=True)
class Report:
    """The ``guardrail`` object that ends every checked answer."""

    partial: bool                        # the answer was cut short (blocked, failed)
    hallucination_detected: bool
    action: Action                       # the most severe action taken
    span_count: int
    policy: dict                         # the effective policy, as sent
    sentences: tuple[SentenceVerdict, ...]
    final: Optional[FinalVerdict]
    missed_by_shallow: tuple[int, ...]   # sentences the full-depth pass flags, released as is
    unchecked_choices: tuple[int, ...]
    errors: tuple[str, ...]
    stream_id: str
    added_documents: tuple[str, ...] = ()  # grounding a regenerate hook retrieved

    def to_json(self) -> dict:
        return {
            "verified": True,
            "partial": self.partial,
            "hallucination_detected": self.hallucination_detected,
            "action": self.action.value,
            "span_count": self.span_count,
            "policy": dict(self.policy),
            "sentences": [v.to_json() for v in self.sentences],
            "final": None if self.final is None else self.final.to_json(),
            "missed_by_shallow": list(self.missed_by_shallow),
            "unchecked_choices": list(self.unchecked_choices),
            "errors": list(self.errors),
            "stream_id": self.stream_id,
            "added_documents": list(self.added_documents),
        }
