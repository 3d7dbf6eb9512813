"""Evaluation metrics: gold :class:`Example` s against predicted :class:`Detection` s.

Five views of the same predictions, each micro-averaged:

    example   is the response hallucinated?       pred = detection.hallucinated   all examples
    sentence  is this sentence hallucinated?      pred = its highest token prob   span-labelled only
                                                         >= threshold
    token     is this scored response token?      pred = token prob >= threshold  span-labelled only
    span      RAGTruth-style character overlap    pred = detection.spans          span-labelled only
    auroc     ranking quality of detection.score  against the example label       all examples

``sentence`` is what the proxy decides: it cuts the answer with its own segmenter and
flags a sentence when any token in it reaches the threshold; a sentence is gold-positive
when it overlaps a gold span.

Conventions: a ratio with a zero denominator is 0.0 (so "no predictions" scores
precision 0), and the raw counts travel with every ratio so a reader can tell.
A token is gold-positive when its character range overlaps a gold span;
zero-width tokens (special tokens) are not scored.  Pure Python and numpy.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

import numpy as np

from guardrail.model.inputs import clean_text
from guardrail.train.data import Example, merge_spans
from guardrail.types import Detection


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 with the counts they came from (items or characters)."""

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int

    @classmethod
    def from_counts(cls, tp: int, fp: int, fn: int) -> "PRF":
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return cls(p, r, f, tp, fp, fn)

    def to_json(self) -> dict:
        d = asdict(self)
        for k in ("precision", "recall", "f1"):
            d[k] = round(d[k], 4)
        return d


def _check(examples: Sequence[Example], detections: Sequence[Detection]) -> None:
    if len(examples) != len(detections):
        raise ValueError(f"{len(examples)} examples but {len(detections)} detections")
    for i, (ex, det) in enumerate(zip(examples, detections)):
        # the detector reads a cleaned copy (a control or format character such as
        # U+200E becomes one space): offsets are the same, the text may differ there
        if ex.response != det.response and clean_text(ex.response) != det.response:
            raise ValueError(f"detection {i} is for another response than example {ex.id!r}")


def example_prf(examples: Sequence[Example], detections: Sequence[Detection]) -> PRF:
    """Example-level P/R/F1 of the class "hallucinated"."""
    _check(examples, detections)
    tp = sum(ex.hallucinated and det.hallucinated for ex, det in zip(examples, detections))
    fp = sum(not ex.hallucinated and det.hallucinated for ex, det in zip(examples, detections))
    fn = sum(ex.hallucinated and not det.hallucinated for ex, det in zip(examples, detections))
    return PRF.from_counts(tp, fp, fn)


@functools.lru_cache(maxsize=1)
def _segmenter():
    from guardrail.stream.segmenter import SentenceSegmenter

    return SentenceSegmenter()


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each checkable sentence of ``text``, cut as the proxy cuts it."""
    seg = _segmenter()
    pieces = seg.feed(text) + seg.flush()
    return [(p.start, p.end) for p in pieces if p.checkable and text[p.start:p.end].strip()]


def sentence_scores(examples: Sequence[Example], detections: Sequence[Detection]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(gold, score, threshold)`` per sentence of the span-labelled examples."""
    _check(examples, detections)
    gold, score, thr = [], [], []
    for ex, det in zip(examples, detections):
        if not ex.has_spans:
            continue
        for s, e in sentence_bounds(ex.response):
            gold.append(any(a < e and b > s for a, b in ex.spans))
            score.append(det.score_in(s, e))
            thr.append(det.threshold)
    return (np.asarray(gold, dtype=bool), np.asarray(score, dtype=np.float64),
            np.asarray(thr, dtype=np.float64))


def sentence_prf(examples: Sequence[Example], detections: Sequence[Detection]
                 ) -> Optional[PRF]:
    """Sentence-level P/R/F1 over the span-labelled examples (``None`` when there are none)."""
    if not any(ex.has_spans for ex in examples):
        return None
    gold, score, thr = sentence_scores(examples, detections)
    pred = score >= thr
    return PRF.from_counts(int(np.sum(gold & pred)), int(np.sum(~gold & pred)),
                           int(np.sum(gold & ~pred)))


def token_labels(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """For each token ``(start, end)``: does it overlap any span?"""
    if not offsets:
        return np.zeros(0, dtype=bool)
    tok = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    if not spans:
        return np.zeros(len(tok), dtype=bool)
    sp = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    overlap = (tok[:, None, 0] < sp[None, :, 1]) & (tok[:, None, 1] > sp[None, :, 0])
    return overlap.any(axis=1)


def token_prf(examples: Sequence[Example], detections: Sequence[Detection]) -> Optional[PRF]:
    """Token-level P/R/F1 over every scored token of the span-labelled examples
    (``None`` when there are none)."""
    _check(examples, detections)
    tp = fp = fn = 0
    seen = False
    for ex, det in zip(examples, detections):
        if not ex.has_spans:
            continue
        seen = True
        keep = [i for i, (s, e) in enumerate(det.token_offsets) if e > s]
        gold = token_labels([det.token_offsets[i] for i in keep], ex.spans)
        pred = np.asarray([det.token_probs[i] for i in keep], dtype=np.float64) >= det.threshold
        tp += int(np.sum(gold & pred))
        fp += int(np.sum(~gold & pred))
        fn += int(np.sum(gold & ~pred))
    return PRF.from_counts(tp, fp, fn) if seen else None


def _length(spans: Sequence[tuple[int, int]]) -> int:
    return sum(e - s for s, e in spans)


def _overlap(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> int:
    """Characters in both of two sorted, merged span lists."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def predicted_spans(det: Detection) -> tuple[tuple[int, int], ...]:
    """The detection's spans at or above its threshold, merged."""
    return merge_spans(((s.start, s.end) for s in det.spans if s.confidence >= det.threshold),
                       len(det.response))


def span_prf(examples: Sequence[Example], detections: Sequence[Detection]) -> Optional[PRF]:
    """Character-overlap P/R/F1 (RAGTruth style) over the span-labelled examples:
    precision = overlapping chars / predicted chars, recall = overlapping chars / gold
    chars, both summed over examples.  ``tp/fp/fn`` are character counts."""
    _check(examples, detections)
    both = pred_chars = gold_chars = 0
    seen = False
    for ex, det in zip(examples, detections):
        if not ex.has_spans:
            continue
        seen = True
        pred = predicted_spans(det)
        gold = merge_spans(ex.spans, len(ex.response))
        both += _overlap(pred, gold)
        pred_chars += _length(pred)
        gold_chars += _length(gold)
    return PRF.from_counts(both, pred_chars - both, gold_chars - both) if seen else None


def auroc(labels: Sequence[bool], scores: Sequence[float]) -> Optional[float]:
    """Area under the ROC curve from ranks (Mann-Whitney U); tied scores count one half.
    ``None`` when only one class is present."""
    y = np.asarray(labels, dtype=bool)
    x = np.asarray(scores, dtype=np.float64)
    if y.shape != x.shape:
        raise ValueError(f"{y.size} labels but {x.size} scores")
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    # average 1-based rank of each distinct score: the tied group's mid rank
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts
    ranks = (first + (counts + 1) / 2.0)[inverse]
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def best_threshold(examples: Sequence[Example], detections: Sequence[Detection],
                   unit: str = "example", pool: str = "all") -> tuple[float, float]:
    """The threshold ``t`` maximising F1 at ``unit`` level; returns ``(t, f1)``.

    ``example``: an example is flagged iff any of its token probabilities is ``>= t``;
    ``sentence``: likewise each sentence of the span-labelled examples (what the proxy
    decides).  Candidates are the units' highest token probabilities; among equal F1 the
    highest threshold wins (fewest flags).

    ``pool="all"`` counts every unit together, so the largest data set sets the
    threshold; ``pool="source"`` maximises the mean of each source's F1 (a source is a
    data set's family: ``toolctx/train/json-array`` counts as ``toolctx/train``), so one
    threshold serves a small set as much as a large one.
    """
    _check(examples, detections)
    if pool not in ("all", "source"):
        raise ValueError(f"pool must be 'all' or 'source', got {pool!r}")
    if unit == "example":
        scores = np.asarray([max(d.token_probs, default=0.0) for d in detections], dtype=np.float64)
        gold = np.asarray([ex.hallucinated for ex in examples], dtype=bool)
        names = [ex.dataset for ex in examples]
    elif unit == "sentence":
        gold, scores, _ = sentence_scores(examples, detections)
        names = [ex.dataset for ex in examples if ex.has_spans
                 for _ in sentence_bounds(ex.response)]
    else:
        raise ValueError(f"unit must be 'example' or 'sentence', got {unit!r}")
    if not scores.size:
        raise ValueError(f"best_threshold needs at least one {unit}")
    cands = np.unique(scores)[::-1]  # descending: the first best is the highest threshold
    if pool == "all":
        f1 = _f1_at(cands, scores, gold)
    else:
        source = np.asarray(["/".join(n.split("/")[:2]) for n in names])
        f1 = np.mean([_f1_at(cands, scores[source == s], gold[source == s])
                      for s in np.unique(source)], axis=0)
    best = int(np.flatnonzero(f1 == f1.max())[0])
    return float(cands[best]), float(f1[best])


def _f1_at(thresholds: np.ndarray, scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """F1 of flagging ``scores >= t`` for each ``t`` of ``thresholds``."""
    pos = np.sort(scores[gold])
    neg = np.sort(scores[~gold])
    tp = pos.size - np.searchsorted(pos, thresholds, side="left")
    fp = neg.size - np.searchsorted(neg, thresholds, side="left")
    fn = pos.size - tp
    return np.where(tp > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)


def evaluate(examples: Sequence[Example], detections: Sequence[Detection], seconds: float) -> dict:
    """All metrics as a JSON-ready dict; ``token``/``span`` only when some example has spans,
    ``by_dataset`` only when the examples come from more than one dataset."""
    _check(examples, detections)
    result: dict = {
        "n_examples": len(examples),
        "n_hallucinated": sum(ex.hallucinated for ex in examples),
        "example": example_prf(examples, detections).to_json(),
    }
    token, span = token_prf(examples, detections), span_prf(examples, detections)
    sentence = sentence_prf(examples, detections)
    if token is not None and span is not None and sentence is not None:
        result["n_span_labelled"] = sum(ex.has_spans for ex in examples)
        result["sentence"] = sentence.to_json()
        result["token"] = token.to_json()
        result["span"] = span.to_json()
    roc = auroc([ex.hallucinated for ex in examples], [d.score for d in detections])
    result["auroc"] = None if roc is None else round(roc, 4)
    result["seconds"] = round(seconds, 3)
    result["examples_per_s"] = round(len(examples) / seconds, 3) if seconds > 0 else None
    names = sorted({ex.dataset for ex in examples})
    if len(names) > 1:
        result["by_dataset"] = {}
        for name in names:
            idx = [i for i, ex in enumerate(examples) if ex.dataset == name]
            sub_ex, sub_det = [examples[i] for i in idx], [detections[i] for i in idx]
            sub = evaluate(sub_ex, sub_det, 0.0)
            result["by_dataset"][name] = {k: sub[k] for k in
                                          ("n_examples", "n_hallucinated", "example", "sentence",
                                           "token", "span", "auroc")
                                          if k in sub}
    return result


def _fmt(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_report(result: dict) -> str:
    """A compact table of an :func:`evaluate` result."""
    rows = [("all", result)] + sorted(result.get("by_dataset", {}).items())
    header = f"{'dataset':<24}{'n':>7}{'halluc':>8}  {'ex P':>6}{'ex R':>6}{'ex F1':>7}" \
             f"  {'sent F1':>8}{'tok F1':>7}{'span P':>7}{'span R':>7}{'span F1':>8}  {'AUROC':>6}"
    lines = [header, "-" * len(header)]
    for name, r in rows:
        ex, tok, sp = r["example"], r.get("token", {}), r.get("span", {})
        sent = r.get("sentence", {})
        lines.append(
            f"{name:<24}{r['n_examples']:>7}{r['n_hallucinated']:>8}  "
            f"{_fmt(ex['precision']):>6}{_fmt(ex['recall']):>6}{_fmt(ex['f1']):>7}  "
            f"{_fmt(sent.get('f1')):>8}{_fmt(tok.get('f1')):>7}"
            f"{_fmt(sp.get('precision')):>7}{_fmt(sp.get('recall')):>7}"
            f"{_fmt(sp.get('f1')):>8}  {_fmt(r.get('auroc')):>6}")
    if result.get("examples_per_s") is not None:
        lines.append(f"{result['examples_per_s']:.2f} examples/s over {result['seconds']:.1f} s")
    if result.get("judge"):
        head = f"{'the sentence judge':<24}{'answers':>8}{'ex P':>7}{'ex R':>6}{'ex F1':>7}" \
               f"  {'kept':>6}{'stopped':>8}{'stop F1':>8}{'kind ok':>8}"
        lines += ["", head, "-" * len(head)]
        for name, j in result["judge"].items():
            # kind ok: the flags whose contradicted/unverifiable agrees with the data's
            lines.append(f"{name[:24]:<24}{j['answers']:>8}{_fmt(j['example_precision']):>7}"
                         f"{_fmt(j['example_recall']):>6}{_fmt(j['example_f1']):>7}  "
                         f"{_fmt(j['supported_kept']):>6}{_fmt(j['unsupported_stopped']):>8}"
                         f"{_fmt(j['stop_f1']):>8}{_fmt(j.get('explanation_accuracy')):>8}")
    return "\n".join(lines)
