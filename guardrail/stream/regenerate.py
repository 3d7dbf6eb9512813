"""The answer's FLARE-style rewrite loop for one flagged sentence.

A ``Regenerator`` (``proxy.hooks``: the upstream, a callable or an HTTP hook) rewrites
the sentence from the context and the released answer so far; ``recheck`` (the
answer's own check of the rewrite after its supported text) accepts or rejects it;
after ``policy.max_attempts`` failures, or an empty rewrite, the sentence is redacted.
A hook that fails is a failed attempt, never a failed stream.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Awaitable, Callable, Optional

from guardrail.errors import describe
from guardrail.stream.policy import (Assessment, EffectivePolicy, Outcome, RegenerateRequest,
                                     Regenerator, redact)
from guardrail.stream.segmenter import SentenceSegmenter
from guardrail.types import Action, Grounding, Rewrite

Recheck = Callable[[str], Awaitable[Assessment]]
Extend = Callable[[tuple[str, ...]], Awaitable[Grounding]]  # add documents -> the grounding


async def regenerate(text: str, a: Assessment, policy: EffectivePolicy, regen: Regenerator,
                     recheck: Recheck, base: RegenerateRequest,
                     extend: Optional[Extend] = None) -> Outcome:
    """REGENERATE with the accepted rewrite (``text``'s surrounding whitespace kept), or
    REDACT when no rewrite passes; ``notes`` says what happened to each attempt.  A
    ``Rewrite`` with documents has them added to the grounding (``extend``) before its
    check: later attempts, sentences and the final pass read them too.  Documents the
    grounding cannot take (``extend`` raises: over the size limits, or more than the
    engine can encode) are left out, and the rewrite is checked without them."""
    lead = text[:len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    previous: list[str] = []
    notes: list[str] = []
    attempts = 0
    while attempts < policy.max_attempts:
        attempts += 1
        req = RegenerateRequest(base.grounding, base.answer_so_far, text.strip(), a.spans,
                                attempts, tuple(previous), base.model)
        try:
            out = await regen.rewrite(req)
        except Exception as e:  # a hook failing is a failed attempt, not a failed stream
            notes.append(f"attempt {attempts}: {type(e).__name__}: {e}")
            continue
        if isinstance(out, Rewrite):
            if out.documents and extend is not None:
                try:
                    base = replace(base, grounding=await extend(out.documents))
                except Exception as e:
                    notes.append(f"attempt {attempts}: the hook's documents were not added: "
                                 f"{describe(e)}")
            out = out.text
        new = out.strip()
        if not new:  # the rewriter says nothing of it is supported
            notes.append(f"attempt {attempts}: the rewrite was empty")
            break
        if not await _flagged(new, lead, recheck):
            return Outcome(Action.REGENERATE, lead + new + trail, attempts, tuple(notes))
        previous.append(new)
        notes.append(f"attempt {attempts}: the rewrite was flagged too")
    return Outcome(Action.REDACT, redact(text, a.spans, policy.redact_mode, policy.redact_marker),
                   attempts, tuple(notes))


async def _flagged(new: str, lead: str, recheck: Recheck) -> bool:
    """Whether a rewrite is rejected: the whole of it, or any one of its sentences,
    flagged.  Read only as a whole, a long rewrite would dilute one false sentence among
    many true ones, and nothing checks a rewrite again afterwards."""
    if (await recheck(lead + new)).flagged:
        return True
    seg = SentenceSegmenter()
    sentences = [s.text.strip() for s in seg.feed(new) + seg.flush() if s.checkable]
    if len(sentences) < 2:
        return False
    for sentence in sentences:
        if sentence and (await recheck(lead + sentence)).flagged:
            return True
    return False
