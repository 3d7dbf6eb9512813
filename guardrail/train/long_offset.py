"""A score offset for `pcw` checks that read a few of many windows, fitted on long sets.

Over more than ``top_windows`` windows a check reads the windows each block attends to
most; the more windows there are to choose from, and the sharper the read
(``pcw.sharpen``), the lower its hallucination scores run against what the same
answer scores beside its own passages alone.  ``pcw.long_offset`` adds a constant per
layer to the hallucination logit of such checks (``model.queries``).  It is fitted here,
on long-context sets built from the model's calibration split (``guardrail data longctx
--split calib``): the smallest offset, in steps of ``STEP``, at which every long cell
(a length and depth) of every set recalls at least ``RATIO`` of what the same items
recall with their passages alone, at the layer's own threshold -- issue 13's
long-context gate, asked of the calibration split.  Nothing here touches a dev split.

    guardrail calibrate-long --model DIR --data runs/lcal8s --data runs/lcal32r ...
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional, Sequence

STEP = 0.1
MAX_OFFSET = 6.0
RATIO = 0.9  # of the passages-alone recall, in every cell


@dataclasses.dataclass(frozen=True)
class Scored:
    """One answer's highest token probability: ``cell`` is ``"LENGTH/DEPTH"`` for the
    answer over its long context, ``"ev"`` for it over its passages alone."""

    id: str
    cell: str
    hallucinated: bool
    score: float


def score_set(det, path: str, layers: Sequence[int]) -> dict[int, list[Scored]]:
    """Every answer of a `guardrail data longctx` set at each of ``layers``, read a block
    per sentence as the proxy reads it, over its long context and over its passages
    alone; raw scores (the model's own ``long_offset`` is not applied).  An answer is
    read at every layer before the next, so its context is encoded once."""
    from guardrail.train.data import load_any
    from guardrail.train.evaluate import detect_all
    from guardrail.train.longctx_eval import evidence_only, read_fields

    fields = read_fields(path)
    examples = load_any(path)
    short = evidence_only(examples, fields)
    if not fields or not short:
        raise ValueError(f"{path}: not a long-context set (`guardrail data longctx` writes "
                         "each item's depth, length and evidence)")
    offset, det.long_offset = det.long_offset, {}
    out: dict[int, list[Scored]] = {layer: [] for layer in layers}
    try:
        for ex, long in [*((ex, True) for ex in examples), *((ex, False) for ex in short)]:
            f = fields[ex.id]
            cell = f"{f['length']}/{f['depth']:g}" if long else "ev"
            for layer in layers:
                (d,), _ = detect_all(det, [ex], exit_layer=layer, progress=False,
                                     by_sentence=True)
                out[layer].append(Scored(ex.id, cell, bool(ex.hallucinated),
                                         max(d.token_probs, default=0.0)))
        return out
    finally:
        det.long_offset = offset


def shifted(score: float, offset: float) -> float:
    """``score`` with ``offset`` added to its logit."""
    p = min(max(score, 1e-7), 1 - 1e-7)
    return 1 / (1 + math.exp(-(math.log(p / (1 - p)) + offset)))


def recall(rows: Sequence[Scored], threshold: float, offset: float = 0.0) -> Optional[float]:
    bad = [r.score for r in rows if r.hallucinated]
    return sum(shifted(s, offset) >= threshold for s in bad) / len(bad) if bad else None


def cell_ratios(rows: Sequence[Scored], threshold: float, offset: float) -> dict[str, float]:
    """Each long cell's recall (its scores moved by ``offset``) over the evidence-only
    recall of the same set; empty when the passages alone recall nothing."""
    ev = recall([r for r in rows if r.cell == "ev"], threshold)
    if not ev:
        return {}
    cells = sorted({r.cell for r in rows} - {"ev"})
    return {c: recall([r for r in rows if r.cell == c], threshold, offset) / ev for c in cells}


def fit_offset(sets: Sequence[Sequence[Scored]], threshold: float) -> float:
    """The smallest offset (steps of ``STEP``) at which every long cell of ``sets``
    recalls at least ``RATIO`` of what its passages alone do; ``ValueError`` when none
    up to ``MAX_OFFSET`` does, or when no set has a hallucinated answer its passages flag."""
    for step in range(int(MAX_OFFSET / STEP) + 1):
        ratios = [r for rows in sets for r in cell_ratios(rows, threshold, step * STEP).values()]
        if not ratios:
            raise ValueError("no set has a hallucinated answer that its passages alone flag")
        if min(ratios) >= RATIO - 1e-9:  # 9 of 10 is 0.9, whatever the rounding
            return round(step * STEP, 6)
    raise ValueError(f"no offset up to {MAX_OFFSET} brings every long cell to {RATIO:g} of "
                     "the recall of its passages alone")
