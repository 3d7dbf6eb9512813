"""The policy sections: what happens to a flagged sentence, what a tenant or a request may
change of it, and the ``regenerate`` action's settings."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, Field, StrictBool, model_validator

from guardrail.config.base import Section
from guardrail.types import BASES, BASIS_KEYS, Action

def _bases(by_basis: dict[str, Action]) -> dict[str, Action]:
    unknown = sorted(set(by_basis) - set(BASIS_KEYS))
    if unknown:
        raise ValueError(f"unknown basis {', '.join(map(repr, unknown))}; one of "
                         f"{', '.join(BASES)}, optionally after 'structured.' or "
                         "'prose.'")
    return by_basis


ByBasis = Annotated[dict[str, Action], AfterValidator(_bases)]
"""An action per basis of a flag (``guardrail.types.BASIS_KEYS``); unknown keys refused."""

DEFAULT_REGENERATE_PROMPT = """\
Rewrite one sentence of an answer so that it states only what the documents support.

Documents:
{context}

Question: {question}

Answer so far:
{answer_so_far}

Sentence to rewrite:
{sentence}

Reply with the rewritten sentence only. If the documents do not support any version \
of it, reply with an empty line."""


class RegenerateConfig(Section):
    max_attempts: int = Field(2, ge=0, le=10)
    """Rewrites tried per flagged sentence before falling back to redaction."""
    hook: Optional[str] = None
    """None: built-in upstream rewrite. ``module:function`` (sync or async callable
    taking a ``RegenerateRequest`` and returning the new sentence) or an
    ``http(s)://`` URL receiving the request as JSON and answering ``{"text": ...}``."""
    prompt: str = DEFAULT_REGENERATE_PROMPT
    """Built-in rewrite prompt; fields ``{context} {question} {answer_so_far} {sentence}``."""
    model: Optional[str] = None
    """Upstream model for the rewrite; None uses the request's model."""
    temperature: float = Field(0.0, ge=0, le=2)
    """Sampling temperature of the rewrite call."""
    max_tokens: int = Field(200, ge=1)
    """Token cap of the rewrite call."""
    timeout_s: float = Field(30.0, gt=0)
    """Deadline of one rewrite call (hook or upstream)."""

    @model_validator(mode="after")
    def _check_hook(self) -> "RegenerateConfig":
        h = self.hook
        if h is not None and not h.startswith(("http://", "https://")):
            mod, sep, fn = h.partition(":")
            if not (sep and mod and fn.isidentifier()):
                raise ValueError(f"policy.regenerate.hook must be 'module:function' or an "
                                 f"http(s) URL, got {h!r}")
        for name in ("context", "question", "answer_so_far", "sentence"):
            if "{" + name + "}" not in self.prompt:
                raise ValueError(f"policy.regenerate.prompt lacks the {{{name}}} field")
        return self


class PolicyConfig(Section):
    action: Action = Action.REDACT
    """What happens to a sentence whose score reaches the threshold."""
    threshold: Optional[float] = Field(None, ge=0, le=1)
    """Hallucination probability at which a sentence is flagged; None: the detector's."""
    hold: bool = True
    """Hold each sentence until its verdict (no unchecked text reaches the client).
    False streams text at once and only annotates or blocks afterwards."""
    redact_mode: Literal["spans", "sentence"] = "spans"
    """Redact only the unsupported spans, or the whole sentence."""
    redact_marker: str = "[unsupported]"
    """Text that replaces redacted content."""
    by_kind: dict[Literal["contradicted", "unverifiable"], Action] = {}
    """Another action per kind of flag, e.g. ``{"unverifiable": "annotate"}``."""
    by_basis: ByBasis = {"structured.value_worked_out": Action.ANNOTATE,
                         "structured.other_record": Action.ANNOTATE}
    """Another action per basis of a flag (``guardrail.types.BASIS_KEYS``), before
    ``by_kind``.  The default marks, and does not redact, two flags against tool results
    that mostly fall on correct sentences: a value that a sentence says it worked out
    ("in total", "comes to", "that leaves") or states beside quantities the result holds
    (its operands), and that no rule reproduces (four such flags in five fall on correct
    arithmetic), and a value found only in another record than the one the sentence
    seems to be about (nine in ten fall on correct sentences; a record given another
    record's value of a field it names is ``value_changed``).
    Setting ``by_basis`` replaces the whole mapping; ``{}`` redacts them too,
    ``{"structured.value_missing": "annotate"}`` marks every value a tool result lacks."""
    regenerate: RegenerateConfig = RegenerateConfig()
    """Settings of the ``regenerate`` action."""

    @model_validator(mode="after")
    def _check_hold(self) -> "PolicyConfig":
        for action in (self.action, *self.by_kind.values(), *self.by_basis.values()):
            check_hold_action(self.hold, action)
        return self


def check_hold_action(hold: bool, action: Action) -> None:
    """Text already sent cannot be rewritten: without hold only release/annotate/block."""
    if not hold and action in (Action.REDACT, Action.REGENERATE):
        raise ValueError(f"policy.hold=false cannot be combined with action={action.value}: "
                         "sentences are sent before their verdict; use annotate or block")


class PolicyOverride(Section):
    """A partial policy: from a tenant's config or a request's ``guardrail.policy``."""

    action: Optional[Action] = None
    """Replaces ``policy.action``."""
    threshold: Optional[float] = Field(None, ge=0, le=1, allow_inf_nan=False)
    """Replaces ``policy.threshold``."""
    hold: Optional[StrictBool] = None
    """Replaces ``policy.hold`` (true or false: "no" is not read as false)."""
    redact_mode: Optional[Literal["spans", "sentence"]] = None
    """Replaces ``policy.redact_mode``."""
    max_attempts: Optional[int] = Field(None, ge=0, le=10)
    """Replaces ``policy.regenerate.max_attempts``."""
    by_kind: Optional[dict[Literal["contradicted", "unverifiable"], Action]] = None
    """Replaces ``policy.by_kind``."""
    by_basis: Optional[ByBasis] = None
    """Replaces ``policy.by_basis``."""


class PolicyLimits(Section):
    """What a request may change through ``guardrail.policy`` (tenant config is not limited)."""

    allow_override: bool = True
    """False rejects any request-level policy (400)."""
    allowed_actions: tuple[Action, ...] = tuple(Action)
    """Actions a request may choose."""
    min_threshold: float = Field(0.0, ge=0, le=1)
    """Lowest threshold a request may set."""
    max_threshold: float = Field(1.0, ge=0, le=1)
    """Highest threshold a request may set (a high one lets more through)."""
    allow_hold_off: bool = False
    """Whether a request may turn hold off (and so see unchecked text)."""
    max_regenerate_attempts: int = Field(3, ge=0, le=10)
    """Most rewrite attempts a request may ask for."""

    @model_validator(mode="after")
    def _check_range(self) -> "PolicyLimits":
        if self.min_threshold > self.max_threshold:
            raise ValueError(f"limits.min_threshold ({self.min_threshold}) exceeds "
                             f"limits.max_threshold ({self.max_threshold})")
        return self
