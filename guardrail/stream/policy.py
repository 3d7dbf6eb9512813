"""Verdict -> action: what the client receives in place of a checked sentence.

    resolve_policy(config, tenant, request override) -> EffectivePolicy   (limits enforced)
    assess(detection, start, end, threshold)           -> Assessment       (sentence score, spans)
    judged(detection, start, end, judge, evidence, ...) -> Assessment      (the sentence judge's)
    redact(text, spans, mode, marker)                  -> str              (one clean span or all)
    decide(sentence, assessment, policy)               -> Outcome          (pure)

Pure functions of their arguments: no I/O, no awaiting.  When ``decide`` says
REGENERATE, the answer runs the FLARE-style rewrite loop (``stream.regenerate``) with
a ``Regenerator`` (the hooks live in ``proxy.hooks``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Literal, Optional, Protocol

from guardrail.config import GuardrailConfig, PolicyOverride, check_hold_action
from guardrail.errors import BadRequest
from guardrail.evidence.features import ContextEvidence, SentenceEvidence
from guardrail.evidence.judge import Explanation, SentenceJudge
from guardrail.evidence.words import content_words
from guardrail.stream.jsontext import redact_values
from guardrail.types import (REFINES, Action, Detection, Grounding, Rewrite, SentenceVerdict,
                             Span)


SEVERITY = (Action.RELEASE, Action.ANNOTATE, Action.REDACT, Action.REGENERATE, Action.BLOCK)
"""Actions from mildest to most severe (the report names the most severe one taken)."""


@dataclass(frozen=True)
class EffectivePolicy:
    """The policy one request runs under, after tenant and request overrides."""

    action: Action
    threshold: Optional[float]          # None: the detector's (per exit) threshold
    hold: bool
    redact_mode: Literal["spans", "sentence"]
    redact_marker: str
    max_attempts: int
    tenant: Optional[str] = None
    by_kind: tuple[tuple[str, Action], ...] = ()   # explanation kind -> action
    by_basis: tuple[tuple[str, Action], ...] = ()  # explanation basis -> action (first)

    def action_for(self, why: Optional[Explanation]) -> Action:
        """The action for a flag explained by ``why``: by its basis in its form of
        grounding, else by its basis, else by the basis it refines (``value_missing``
        for ``value_worked_out``) in the same order, else by its kind."""
        if why is None:
            return self.action
        by_basis = dict(self.by_basis)
        for basis in (why.basis, REFINES.get(why.basis or "")):
            for key in (f"{why.grounding}.{basis}", basis):
                if basis and key in by_basis:
                    return by_basis[key]
        return dict(self.by_kind).get(why.kind, self.action)

    def to_json(self) -> dict:
        return {"action": self.action.value, "threshold": self.threshold, "hold": self.hold,
                "redact_mode": self.redact_mode, "max_attempts": self.max_attempts,
                "tenant": self.tenant,
                "by_kind": {k: a.value for k, a in self.by_kind} or None,
                "by_basis": {k: a.value for k, a in self.by_basis} or None}


def _merge(p: EffectivePolicy, o: PolicyOverride) -> EffectivePolicy:
    return EffectivePolicy(
        action=o.action if o.action is not None else p.action,
        threshold=o.threshold if o.threshold is not None else p.threshold,
        hold=o.hold if o.hold is not None else p.hold,
        redact_mode=o.redact_mode or p.redact_mode, redact_marker=p.redact_marker,
        max_attempts=o.max_attempts if o.max_attempts is not None else p.max_attempts,
        tenant=p.tenant,
        by_kind=tuple(sorted(o.by_kind.items())) if o.by_kind is not None else p.by_kind,
        by_basis=tuple(sorted(o.by_basis.items())) if o.by_basis is not None
        else p.by_basis)


def _check_limits(o: PolicyOverride, cfg: GuardrailConfig, where: str) -> None:
    lim = cfg.limits
    if not lim.allow_override:
        raise BadRequest(f"'{where}' is not allowed by this server", code="policy_limit")
    for name, action in [("action", o.action), *(
            (f"by_kind.{k}", a) for k, a in (o.by_kind or {}).items()), *(
            (f"by_basis.{k}", a) for k, a in (o.by_basis or {}).items())]:
        if action is not None and action not in lim.allowed_actions:
            raise BadRequest(f"'{where}.{name}' {action.value!r} is not allowed; "
                             f"allowed: {', '.join(a.value for a in lim.allowed_actions)}",
                             code="policy_limit")
    if o.threshold is not None and not lim.min_threshold <= o.threshold <= lim.max_threshold:
        raise BadRequest(f"'{where}.threshold' {o.threshold} is outside the allowed "
                         f"range [{lim.min_threshold}, {lim.max_threshold}]", code="policy_limit")
    if o.hold is False and not lim.allow_hold_off:
        raise BadRequest(f"'{where}.hold' cannot be turned off on this server",
                         code="policy_limit")
    if o.max_attempts is not None and o.max_attempts > lim.max_regenerate_attempts:
        raise BadRequest(f"'{where}.max_attempts' {o.max_attempts} exceeds the limit "
                         f"{lim.max_regenerate_attempts}", code="policy_limit")


def resolve_policy(cfg: GuardrailConfig, tenant: Optional[str] = None,
                   request: Optional[PolicyOverride] = None,
                   where: str = "guardrail.policy") -> EffectivePolicy:
    """Default policy, then the tenant's changes, then the request's (within limits);
    ``where``: the request policy's name in errors (``policy`` in ``/v1/verify``)."""
    p = cfg.policy
    policy = EffectivePolicy(p.action, p.threshold, p.hold, p.redact_mode, p.redact_marker,
                             p.regenerate.max_attempts, tenant, tuple(sorted(p.by_kind.items())),
                             tuple(sorted(p.by_basis.items())))
    if tenant is not None and tenant in cfg.tenants:
        policy = _merge(policy, cfg.tenants[tenant].policy)
    if request is not None:
        _check_limits(request, cfg, where)
        policy = _merge(policy, request)
    try:
        for action in (policy.action, *(a for _, a in policy.by_kind + policy.by_basis)):
            check_hold_action(policy.hold, action)
    except ValueError as e:
        raise BadRequest(f"'{where}': {e}", code="policy_conflict") from None
    return policy


@dataclass(frozen=True)
class Assessment:
    """A sentence's result from one check; spans are relative to the sentence."""

    score: float
    spans: tuple[Span, ...]
    flagged: bool
    exit_layer: int
    explanation: Optional[Explanation] = None   # why it is flagged (with a sentence judge)
    claim: bool = True                          # False: nothing to check in it


def _spans_from_tokens(det: Detection, start: int, end: int, threshold: float
                       ) -> tuple[Span, ...]:
    """Runs of adjacent tokens at or above ``threshold`` inside ``[start, end)``."""
    runs: list[list[float | int]] = []  # [start, end, max prob]
    for (s, e), p in zip(det.token_offsets, det.token_probs):
        if p < threshold or e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        if runs and not det.response[int(runs[-1][1]):s].strip():
            runs[-1][1], runs[-1][2] = e, max(runs[-1][2], p)
        else:
            runs.append([s, e, p])
    return tuple(Span(int(s) - start, int(e) - start, det.response[int(s):int(e)], float(p))
                 for s, e, p in runs)


def assess(det: Detection, start: int, end: int, threshold: Optional[float] = None
           ) -> Assessment:
    """Score ``det.response[start:end]``; flagged when its score reaches the threshold
    (the policy's if set, else the detector's for the exit that ran)."""
    t = det.threshold if threshold is None else threshold
    score = det.score_in(start, end)
    spans = det.spans_in(start, end) if t == det.threshold \
        else _spans_from_tokens(det, start, end, t)
    return Assessment(score, spans, score >= t, det.exit_layer)


def judged(det: Detection, start: int, end: int, judge: SentenceJudge,
           evidence: ContextEvidence, threshold: Optional[float] = None,
           features: Optional[SentenceEvidence] = None) -> Assessment:
    """The sentence judge's decision on ``det.response[start:end]`` (``features``: its
    evidence features, where already read): its probability is
    the score, and a flag carries its explanation.  The spans are the detector's (at
    its own threshold) and, when the context lacks one number of the sentence, that
    number: instead of several spans, beside one elsewhere (two spans apart redact
    the sentence, so a wrong value never stays visible beside a marker)."""
    text = det.response[start:end]
    j = judge.judge(evidence, text, det.probs_in(start, end), det.exit_layer, threshold,
                    det.response[:start], features)
    if not j.flagged:
        return Assessment(j.prob, (), False, det.exit_layer, None, j.claim)
    spans = det.spans_in(start, end)
    missing = j.evidence.missing_numbers if j.evidence is not None else ()
    if len(missing) == 1:
        n = missing[0]
        number = Span(n.start, n.end, text[n.start:n.end], j.prob)
        if len(spans) != 1:
            spans = (number,)
        elif spans[0].end <= n.start or spans[0].start >= n.end:
            spans = (*spans, number)
    return Assessment(j.prob, spans, True, det.exit_layer, j.explanation, True)


def _joined(text: str, i: int) -> bool:
    """``text[i]`` joins the characters around it into one word or value: the point or
    comma inside a number ("53.61", "1,200") or a hyphen inside a compound ("Double-check",
    "30-day")."""
    if not 0 < i < len(text) - 1 or text[i] not in ".,-":
        return False
    before, after = text[i - 1], text[i + 1]
    if text[i] == "-":
        return before.isalnum() and after.isalnum()
    return before.isdigit() and after.isdigit()


def _word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` to whole words and whole values: never leave half a word,
    part of a number or its currency sign or percent behind a marker ("$[x].61")."""
    while start > 0 and (text[start - 1].isalnum() or _joined(text, start - 1)):
        start -= 1
    while end < len(text) and (text[end].isalnum() or _joined(text, end)):
        end += 1
    if start > 0 and text[start].isdigit() and unicodedata.category(text[start - 1]) == "Sc":
        start -= 1  # "$", "£", "₪"
    if end < len(text) and text[end - 1].isdigit() and (
            text[end] == "%" or unicodedata.category(text[end]) == "Sc"):
        end += 1  # "87%", "40€"
    return start, end


MAX_SPAN_SHARE = 0.5
"""A span covering more of a sentence's letters and digits than this redacts the sentence."""


def clean_span(text: str, spans: tuple[Span, ...]) -> Optional[tuple[int, int]]:
    """The one span worth redacting inside ``text``, widened to whole words; None when
    the sentence should go whole: no span with a letter or digit in it, spans apart by
    words (several fragment replacements read as nonsense), or one span covering most
    of it.  A span on punctuation alone ("330 meters[.]") is no span, nor one of
    function words alone ("The tower is [in] Paris.": the marker would say nothing of
    what is wrong)."""
    runs: list[list[int]] = []
    for sp in sorted(spans, key=lambda s: s.start):
        if not any(c.isalnum() for c in text[sp.start:sp.end]):
            continue
        s, e = _word_bounds(text, sp.start, sp.end)
        if runs and not any(c.isalnum() for c in text[runs[-1][1]:s]):
            runs[-1][1] = max(runs[-1][1], e)  # apart only by spaces or punctuation
        else:
            runs.append([s, e])
    if len(runs) != 1:
        return None
    s, e = runs[0]
    if not content_words(text[s:e]) and not any(c.isdigit() for c in text[s:e]):
        return None
    letters = sum(c.isalnum() for c in text)
    return (s, e) if sum(c.isalnum() for c in text[s:e]) <= MAX_SPAN_SHARE * letters else None


def redact(text: str, spans: tuple[Span, ...], mode: str, marker: str) -> str:
    """Replace one clean span (``clean_span``) with ``marker``, or the whole sentence in
    ``sentence`` mode or when there is no clean span; surrounding whitespace is kept."""
    core = text.strip()
    if not core:
        return text
    lead = text[:len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    span = clean_span(text, spans) if mode == "spans" else None
    if span is None:
        item = _ITEM.match(core)  # a list item keeps its marker, so the list stays a list
        head = item.group(0) if item and item.end() < len(core) else ""
        return lead + head + (_table_row(core, marker) or marker) + trail
    return text[:span[0]] + marker + text[span[1]:]


_ITEM = re.compile(r"(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")


def _table_row(row: str, marker: str) -> Optional[str]:
    """A Markdown table row redacted whole keeps its cells, so the table still renders:
    the first names the row ("| Height | 330 m |" -> "| Height | [x] |"), the others say
    what is claimed of it.  None: not a table row."""
    if not (row.startswith("|") and row.endswith("|") and row.count("|") >= 3):
        return None
    first, *rest = row[1:-1].split("|")
    return "|" + "|".join([first, *(f" {marker} " for _ in rest)]) + "|"


@dataclass(frozen=True)
class RegenerateRequest:
    """What a regeneration hook gets; it returns the rewritten sentence, or a ``Rewrite``
    with the documents it retrieved for it."""

    grounding: Grounding
    answer_so_far: str   # text already released before this sentence
    sentence: str        # the flagged sentence, without surrounding whitespace
    spans: tuple[Span, ...]
    attempt: int         # 1-based
    previous: tuple[str, ...] = ()  # earlier rejected rewrites
    model: str = ""

    def to_json(self) -> dict:
        return {"context": list(self.grounding.documents), "question": self.grounding.question,
                "answer_so_far": self.answer_so_far, "sentence": self.sentence,
                "spans": [s.to_json() for s in self.spans], "attempt": self.attempt,
                "previous": list(self.previous), "model": self.model}


class Regenerator(Protocol):
    async def rewrite(self, req: RegenerateRequest) -> "str | Rewrite": ...


@dataclass(frozen=True)
class Outcome:
    """The policy's result for one sentence."""

    action: Action
    released: str
    attempts: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


UNREAD = Explanation("unverifiable", "low")
"""Why a sentence no check could read was withheld: nothing verified it."""


def withheld(verdict: SentenceVerdict, policy: EffectivePolicy,
             values: Optional[bytes] = None) -> SentenceVerdict:
    """The verdict of a sentence sent as the redaction marker whole (a list item's marker
    kept; in a JSON answer, its string-value text only): text no check could read, where
    none may go out unverified (``verification.other_languages: withhold``)."""
    text, marker = verdict.original, policy.redact_marker
    released = redact_values(text, (), "sentence", marker, values) if values is not None \
        else redact(text, (), "sentence", marker)
    return replace(verdict, action=Action.REDACT, released=released, explanation=UNREAD)


def decide(text: str, a: Assessment, policy: EffectivePolicy,
           values: Optional[bytes] = None) -> Outcome:
    """What to send for sentence ``text`` (pure).  BLOCK is returned, not raised;
    REGENERATE means the answer must run its rewrite loop (``stream.regenerate``),
    whose outcome replaces this one.  ``values``: the answer is a JSON document and
    these are the sentence's characters' kinds (``stream.jsontext``); a redaction
    replaces string-value text only, and a rewrite, which could not go in whole, is
    a redaction."""
    action = policy.action_for(a.explanation)
    if values is not None and action is Action.REGENERATE:
        action = Action.REDACT
    if values is not None and a.flagged and action is Action.REDACT:
        span = clean_span(text, a.spans) if policy.redact_mode == "spans" else None
        return Outcome(Action.REDACT, redact_values(text, a.spans, policy.redact_mode,
                                                    policy.redact_marker, values, span))
    if not a.flagged or action is Action.RELEASE:
        return Outcome(Action.RELEASE, text)
    if action is Action.ANNOTATE:
        return Outcome(Action.ANNOTATE, text)
    if action is Action.BLOCK:
        return Outcome(Action.BLOCK, "")
    if action is Action.REGENERATE and policy.max_attempts > 0:
        return Outcome(Action.REGENERATE, text)
    return Outcome(Action.REDACT, redact(text, a.spans, policy.redact_mode, policy.redact_marker))
