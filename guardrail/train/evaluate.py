"""Run a detector over labelled examples and score it (``guardrail eval``)."""

from __future__ import annotations

import dataclasses
import time
from typing import Optional, Sequence

from tqdm.auto import tqdm

from guardrail.model.detector import DetectInput, Detector
from guardrail.model.spans import merge_spans
from guardrail.model.windows import WindowSelector
from guardrail.train import scores as metrics
from guardrail.train.data import Example, grounding
from guardrail.train.kinds import KindOf
from guardrail.types import Detection


def detect_all(det: Detector, examples: Sequence[Example], *, exit_layer: Optional[int] = None,
               chunk: int = 16, selector: Optional[WindowSelector] = None,
               progress: bool = True, by_sentence: bool = False
               ) -> tuple[list[Detection], float]:
    """Detections for every example, and the seconds the checking took.

    ``by_sentence``: each sentence of an answer (cut as the proxy cuts it) is a block of
    its own, as the proxy's checks and its final pass read it with a model that keeps
    the answer so far: a PCW model's blocks then choose their context windows each.
    Other models read the answer as before."""
    out: list[Detection] = []
    start = time.perf_counter()
    with tqdm(total=len(examples), desc=f"eval@{det.model.resolve(exit_layer)}",
              disable=not progress) as bar:
        for i in range(0, len(examples), chunk):
            part = examples[i:i + chunk]
            out.extend(det.detect_batch(
                [DetectInput(grounding(ex), ex.question, ex.response,
                             blocks=_starts(ex.response) if by_sentence else ())
                 for ex in part],
                exit_layer=exit_layer, selector=selector))
            bar.update(len(part))
    return out, time.perf_counter() - start


def reads_by_sentence(det: Detector) -> bool:
    """Whether the proxy reads ``det``'s answers a block per sentence (a model that keeps
    the answer so far): how `guardrail eval` and `guardrail calibrate` read them too."""
    return bool(getattr(det, "answer_blocks", False))


def _starts(response: str) -> tuple[int, ...]:
    return tuple(s for s, _ in metrics.sentence_bounds(response) if s > 0)


def rethreshold(d: Detection, threshold: float) -> Detection:
    """The same detection decided at another threshold (no model run)."""
    return dataclasses.replace(d, threshold=threshold, spans=merge_spans(
        d.response, d.token_offsets, d.token_probs, threshold))


def evaluate(det: Detector, examples: Sequence[Example], *, exit_layer: Optional[int] = None,
             selector: Optional[WindowSelector] = None, progress: bool = True,
             by_sentence: bool = False, kind_of: Optional[KindOf] = None) -> dict:
    """The detector's metrics on ``examples`` and, with a judge, the proxy's decisions;
    ``kind_of`` (``train.kinds``): the data's kind of each unsupported sentence, so the
    explanations are measured too."""
    detections, seconds = detect_all(det, examples, exit_layer=exit_layer, selector=selector,
                                     progress=progress, by_sentence=by_sentence)
    result = metrics.evaluate(list(examples), detections, seconds)
    result["exit_layer"] = det.model.resolve(exit_layer)
    result["threshold"] = det.threshold_for(exit_layer)
    result["response_split"] = sum(d.response_split for d in detections)
    result["windowed"] = sum(d.windows_total > 1 for d in detections)
    decided = judged(det, examples, detections, result["exit_layer"], kind_of)
    if decided:
        result["judge"] = decided
    return result


def judged(det: Detector, examples: Sequence[Example], detections: Sequence[Detection],
           layer: int, kind_of: Optional[KindOf] = None) -> Optional[dict]:
    """What the proxy would do with these answers: the model's sentence judge on each
    sentence of the span-labelled examples, the token probabilities read over the whole
    answer.  Per data set and overall: supported sentences kept, unsupported stopped,
    stop F1, and per answer (flagged when any sentence is stopped) example P/R/F1."""
    from guardrail.evidence.judge import SentenceJudge
    from guardrail.train.judge import Scored, measure, rows_from

    params = det.meta.get("judge")
    if not params:
        return None
    scored = [Scored(i, s, e, layer, tuple(d.probs_in(s, e)))
              for i, (ex, d) in enumerate(zip(examples, detections)) if ex.has_spans
              for s, e in metrics.sentence_bounds(ex.response)]
    if not scored:
        return None
    return measure(rows_from(examples, scored, kind_of), SentenceJudge.from_json(params))


def calibrate(det: Detector, examples: Sequence[Example], layers: Sequence[int],
              progress: bool = True, unit: str = "example", pool: str = "all"
              ) -> dict[int, tuple[float, float]]:
    """Best F1 threshold per exit layer on ``examples``: {layer: (t, f1)}, F1 counted per
    example or per sentence (``unit``) over all of them or as the mean over sources
    (``pool``, see :func:`metrics.best_threshold`).  A model that keeps the answer so
    far reads each answer a block per sentence, as the proxy reads it.

    Empty when there is nothing to calibrate on (the thresholds then stay as they are).
    """
    found: dict[int, tuple[float, float]] = {}
    if not examples:
        return found
    for layer in layers:
        detections, _ = detect_all(det, examples, exit_layer=layer, progress=progress,
                                   by_sentence=reads_by_sentence(det))
        found[layer] = metrics.best_threshold(list(examples), detections, unit, pool)
    return found
