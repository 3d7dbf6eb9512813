"""What the end-of-stream pass reads: the whole answer at once, or the answer as its
in-flight checks read it.

A model that keeps the answer so far (``EngineInfo.keeps_answer``: it reads the answer
block-causally by sentence) checked each sentence over the text from the check's start
(``SentenceCheck.base``) to the sentence's end, and consecutive sentences from one start
form a run whose last check holds all the others.  Its final pass reads each run as
that last check did, a block at every checked sentence, at full depth: the engine
resumes the last check from its exit, so the layers below are not run again, and each
sentence is judged by the answer before it, never by what follows it.  Any other model
reads the whole answer at once, and so does this one when the last check of a run read
its context before it was encoded (``SentenceCheck.cold``: a long context's first
seconds): nothing resumable was kept, and runs read one by one would read each run's
answer so far again.  No I/O: plans and arithmetic only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

from guardrail.stream.policy import SEVERITY, Assessment, assess
from guardrail.types import Action, Detection, Span


@dataclass(frozen=True)
class FinalRead:
    """One request of the final pass: ``answer[base:end]``, checking from ``start`` (an
    offset into it), a block at every offset in ``blocks``; ``sentences``: the indices
    into the answer's checks that it judges."""

    base: int
    end: int
    start: int
    blocks: tuple[int, ...]
    sentences: tuple[int, ...]


def final_reads(checks: Sequence, answer_len: int, by_sentence: bool) -> list[FinalRead]:
    """The final pass's requests over ``checks`` (``SentenceCheck``s in answer order):
    one per run of checked claims sharing a start, or one over the whole answer."""
    judged = [i for i, c in enumerate(checks) if c.verdict is not None
              and c.sentence.checkable and c.verdict.claim and not c.verdict.skipped]
    runs: dict[int, list[int]] = {}
    for i in judged:
        if checks[i].task is not None:  # (a sentence of whitespace had no check)
            runs.setdefault(checks[i].base, []).append(i)
    if not by_sentence or any(checks[idx[-1]].cold for idx in runs.values()):
        return [FinalRead(0, answer_len, 0, (), tuple(judged))]
    reads = []
    for base, idx in runs.items():
        starts = [checks[i].sentence.start - base for i in idx]
        reads.append(FinalRead(base, checks[idx[-1]].sentence.end, starts[0],
                               tuple(starts[1:]), tuple(idx)))
    return reads


@dataclass(frozen=True)
class FinalView:
    """The final pass over the answer, as the report's ``final`` object shows it."""

    assessment: Assessment          # score, spans (answer offsets) and flag
    exit_layer: int
    n_layers: int
    context_truncated: bool
    response_split: bool


def final_view(parts: Sequence[tuple[FinalRead, Detection]], threshold: Optional[float]
               ) -> Optional[FinalView]:
    """One view of every read's token assessment (``policy.assess``, spans relative to
    the read's start): the highest score, every span in answer offsets, flagged if any
    read is."""
    if not parts:
        return None
    seen = [(r, det, assess(det, r.start, r.end - r.base, threshold)) for r, det in parts]
    spans: tuple[Span, ...] = tuple(sp.shifted(r.base + r.start)
                                    for r, _, a in seen for sp in a.spans)
    first = seen[0][1]
    best = max((a for *_, a in seen), key=lambda a: a.score)
    return FinalView(Assessment(best.score, spans, any(a.flagged for *_, a in seen),
                                first.exit_layer),
                     first.exit_layer, first.n_layers,
                     any(det.context_truncated for _, det, _ in seen),
                     any(det.response_split for _, det, _ in seen))


def as_judged(view: Optional[FinalView], checks: Sequence) -> Optional[FinalView]:
    """The view as the sentence judge decided at full depth, so that the report's
    ``final`` agrees with its sentences and ``hallucination_detected``: flagged when it
    flags a sentence, that sentence's spans (answer offsets), the highest probability it
    gave a sentence.  The token rule alone over-flags what the judge passes."""
    if view is None:
        return None
    judged = [(c.sentence.start, c.verdict) for c in checks
              if c.verdict is not None and c.verdict.final_score is not None]
    if not judged:
        return view
    spans = tuple(sp.shifted(start) for start, v in judged if v.final_hallucinated
                  for sp in v.final_spans)
    flagged = any(v.final_hallucinated for _, v in judged)
    score = max(v.final_score for _, v in judged)
    return replace(view, assessment=Assessment(score, spans, flagged,
                                               view.assessment.exit_layer))


def summary(checks: Sequence, judged: bool, final: Optional[Assessment]
            ) -> tuple[bool, int, Action]:
    """The report's (hallucination detected, unsupported span count, most severe
    action) over an answer's ``SentenceCheck``s; ``judged``: a sentence judge decided
    (on sentences, at either depth), else the token rule and ``final``, the final pass."""
    verdicts = [c.verdict for c in checks if c.verdict is not None]
    if judged:
        final_flag = any(v.final_hallucinated for v in verdicts)
    else:
        final_flag = bool(final and final.flagged)
    detected = any(c.flagged for c in checks) or final_flag
    if judged:  # the sentences it flagged (at either depth) count, one span at least each
        spans = sum(max(1, len(c.verdict.spans)) if c.flagged else
                    max(1, len(c.verdict.final_spans)) if c.verdict.final_hallucinated
                    else 0 for c in checks if c.verdict is not None)
    else:
        spans = len(final.spans) if final is not None \
            else sum(len(v.spans) for v in verdicts)
    action = max((v.action for v in verdicts), key=SEVERITY.index, default=Action.RELEASE)
    return detected, spans, action
