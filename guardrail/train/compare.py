"""Two detectors on the same sentences: their difference, and how sure a set can be of it.

    paired = pair(rows_a, rows_b)             the same sentences, as each model saw them
    report = compare(paired, decide_a, decide_b)
                                             per data set: each model's kept, stopped,
                                             stop F1, AUROC, example F1, example AUROC,
                                             A - B, and its 95 % paired bootstrap interval

A candidate and the shipped model differ on a few sentences of a few answers; whether the
difference is more than the set's own noise is what a decision to ship needs.  Both
models are read on the same resampled answers (the answer, not the sentence, is the unit
resampled: an answer's sentences share its context and its errors), so what the answers
have in common cancels out of the difference.  ``decide_*(rows) -> (flagged, scores)``
are what the proxy would do with each sentence and its score (``judge.decisions``), or
what it did in a streamed run (``streamed``: no scores).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from guardrail.train.judge import Row, groups

METRICS = ("supported_kept", "unsupported_stopped", "stop_f1", "auroc", "example_f1",
           "example_auroc")
Decide = Callable[[Sequence[Row]], tuple[Sequence[bool], Optional[Sequence[float]]]]


@dataclass(frozen=True)
class Paired:
    a: list[Row]
    b: list[Row]


def pair(rows_a: Sequence[Row], rows_b: Sequence[Row]) -> Paired:
    """Both models' rows in one order: each sentence of each answer at each layer.  The
    two must hold the same sentences, else ``ValueError`` says which differ (a split by
    source that each model's metadata draws otherwise, or data that changed between)."""
    def keyed(rows: Sequence[Row]) -> dict:
        out, times = {}, Counter()
        for r in rows:
            k = (r.dataset, r.example_id, r.layer, r.sentence)
            out[(*k, times[k])] = r  # a sentence said twice in one answer ("Yes.") twice
            times[k] += 1
        return out

    ka, kb = keyed(rows_a), keyed(rows_b)
    if ka.keys() != kb.keys():
        only = sorted({k[:2] for k in ka.keys() ^ kb.keys()})
        raise ValueError(f"the two models were read on different sentences ({len(only)} "
                         f"answers differ, e.g. {only[0][1]!r} of {only[0][0]!r}): compare "
                         f"on files both read whole, or on a split both models draw alike")
    bad = [k for k in ka if ka[k].gold != kb[k].gold]
    if bad:
        raise ValueError(f"{len(bad)} sentences are labelled otherwise in the two models' "
                         f"rows, e.g. {bad[0][1]!r} of {bad[0][0]!r}")
    keys = sorted(ka)
    return Paired([ka[k] for k in keys], [kb[k] for k in keys])


def compare(paired: Paired, decide_a: Decide, decide_b: Decide, resamples: int = 1000,
            seed: int = 0) -> dict:
    """Per layer, data set and family: both models' metrics, A - B and its interval."""
    out: dict = {}
    layers = sorted({r.layer for r in paired.a})
    for layer in layers:
        idx = [i for i, r in enumerate(paired.a) if r.layer == layer]
        a = [paired.a[i] for i in idx]
        b = [paired.b[i] for i in idx]
        fa, sa = decide_a(a)
        fb, sb = decide_b(b)
        out[layer] = {name: _group([a[i] for i in g], _pick(fa, g), _pick(sa, g),
                                   _pick(fb, g), _pick(sb, g), resamples, seed)
                      for name, g in groups(a).items()}
    return out


def streamed(folders: Sequence[str]) -> tuple[list[Row], Decide]:
    """The sentences of `guardrail bench verdicts` runs (each folder's ``sentences.jsonl``)
    as rows, and their decisions: stopped as the proxy released them.  A streamed run
    keeps no score, so its AUROCs are None."""
    rows, stopped = [], {}
    for folder in folders:
        path = Path(folder) / "sentences.jsonl"
        if not path.is_file():
            raise ValueError(f"{folder}: no sentences.jsonl (a `guardrail bench verdicts` "
                             f"--out folder)")
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            row = Row(d["dataset"], d["example"], d["original"], bool(d["gold"]),
                      bool(d["claim"]), (), 0)
            rows.append(row)
            stopped[id(row)] = bool(d["stopped"])
    return rows, lambda part: ([stopped[id(r)] for r in part], None)


class _Group:
    """One group's sentences, laid out for weighted metrics: a resample is a weight per
    answer (how often it was drawn), each sentence weighing as its answer."""

    def __init__(self, rows: Sequence[Row]):
        answers: dict[tuple[str, str], int] = {}
        self.answer = np.asarray([answers.setdefault((r.dataset, r.example_id), len(answers))
                                  for r in rows])
        self.n_answers = len(answers)
        self.gold = np.asarray([r.gold for r in rows], dtype=bool)
        self.gold_answer = self.per_answer(self.gold)

    def per_answer(self, flags: np.ndarray) -> np.ndarray:
        """An answer is flagged (or hallucinated) when any of its sentences is."""
        return np.bincount(self.answer, weights=flags.astype(np.float64),
                           minlength=self.n_answers) > 0


class _Decided:
    """One model's decisions on a group, with what every resample reads of them computed
    once: each answer's flag, and the ranks of the sentence and answer scores."""

    def __init__(self, grp: _Group, flagged: Sequence[bool],
                 scores: Optional[Sequence[float]]):
        self.grp = grp
        self.f = np.asarray(flagged, dtype=bool)
        self.fa = grp.per_answer(self.f)
        self.ranks = None
        if scores is not None:
            s = np.asarray(scores, dtype=np.float64)
            sa = np.full(grp.n_answers, -np.inf)
            np.maximum.at(sa, grp.answer, s)
            self.ranks = (np.unique(s, return_inverse=True)[1],
                          np.unique(sa, return_inverse=True)[1])

    def metrics(self, weights: np.ndarray) -> dict[str, Optional[float]]:
        grp, f, fa = self.grp, self.f, self.fa
        w, g = weights[grp.answer], grp.gold
        sup, uns = w[~g].sum(), w[g].sum()
        tp, fp, fn = w[g & f].sum(), w[~g & f].sum(), w[g & ~f].sum()
        ga, wa = grp.gold_answer, weights
        etp, efp, efn = wa[ga & fa].sum(), wa[~ga & fa].sum(), wa[ga & ~fa].sum()
        ranked = self.ranks or (None, None)
        return {"supported_kept": _ratio(w[~g & ~f].sum(), sup),
                "unsupported_stopped": _ratio(tp, uns),
                "stop_f1": _ratio(2 * tp, 2 * tp + fp + fn) if uns else None,
                "example_f1": _ratio(2 * etp, 2 * etp + efp + efn) if wa[ga].sum() else None,
                "auroc": _ranked_auroc(g, ranked[0], w),
                "example_auroc": _ranked_auroc(ga, ranked[1], wa)}


def _group(rows: Sequence[Row], fa, sa, fb, sb, resamples: int, seed: int) -> dict:
    grp = _Group(rows)
    da, db = _Decided(grp, fa, sa), _Decided(grp, fb, sb)
    ones = np.ones(grp.n_answers)
    ma, mb = da.metrics(ones), db.metrics(ones)
    draws = np.random.default_rng(seed).integers(0, grp.n_answers,
                                                 size=(resamples, grp.n_answers))
    diffs: dict[str, list[float]] = {m: [] for m in METRICS}
    for d in draws:
        w = np.bincount(d, minlength=grp.n_answers).astype(np.float64)
        xa, xb = da.metrics(w), db.metrics(w)
        for m in METRICS:
            if xa[m] is not None and xb[m] is not None:
                diffs[m].append(xa[m] - xb[m])
    report = {"sentences": len(rows), "unsupported": int(grp.gold.sum()),
              "answers": grp.n_answers, "hallucinated_answers": int(grp.gold_answer.sum())}
    for m in METRICS:
        diff = None if ma[m] is None or mb[m] is None else ma[m] - mb[m]
        # an interval only where nearly every resample holds both labels
        ok = diff is not None and len(diffs[m]) >= 0.9 * resamples
        report[m] = {"a": _round(ma[m]), "b": _round(mb[m]), "diff": _round(diff),
                     "interval": [_round(v) for v in np.percentile(diffs[m], [2.5, 97.5])]
                     if ok else None}
    return report


def _pick(values: Optional[Sequence], idx: Sequence[int]) -> Optional[list]:
    return None if values is None else [values[i] for i in idx]


def _ratio(num: float, den: float) -> Optional[float]:
    return float(num / den) if den else None


def _round(v: Optional[float]) -> Optional[float]:
    return None if v is None else round(float(v), 4)


def _weighted_auroc(gold: np.ndarray, scores: np.ndarray, w: np.ndarray) -> Optional[float]:
    """Mann-Whitney AUROC with each item counted ``w`` times; ties count one half."""
    return _ranked_auroc(gold, np.unique(scores, return_inverse=True)[1], w)


def _ranked_auroc(gold: np.ndarray, rank: Optional[np.ndarray], w: np.ndarray
                  ) -> Optional[float]:
    """The same from each item's rank among the distinct scores (None: unscored)."""
    pos, neg = w[gold].sum(), w[~gold].sum()
    if rank is None or not pos or not neg:
        return None
    p = np.bincount(rank, weights=w * gold)
    n = np.bincount(rank, weights=w * ~gold)
    below = np.cumsum(n) - n
    return float((p * (below + n / 2)).sum() / (pos * neg))


def format_compare(result: dict, a: str, b: str) -> str:
    """One table per layer: each metric as A, B, A - B (95 % interval); a star where the
    interval leaves out zero."""
    lines = [f"A = {a}\nB = {b}"]
    for layer, by_group in result.items():
        lines.append(f"layer {layer}:" if layer != "streamed" else "streamed:")
        lines.append(f"{'data':30s} {'metric':20s} {'A':>6s} {'B':>6s} {'A - B':>7s} "
                     f"{'(95 %)':>16s}")
        for name, g in by_group.items():
            lines.append(f"{name[:30]:30s} {g['sentences']} sentences ({g['unsupported']} "
                         f"unsupported), {g['answers']} answers ({g['hallucinated_answers']} "
                         f"hallucinated)")
            for m in METRICS:
                v = g[m]
                if v["diff"] is None:
                    continue
                iv = v["interval"]
                star = " *" if iv and (iv[0] > 0 or iv[1] < 0) else ""
                span = f"{iv[0]:+.3f}..{iv[1]:+.3f}" if iv else "-"
                lines.append(f"{'':30s} {m:20s} {v['a']:6.3f} {v['b']:6.3f} "
                             f"{v['diff']:+7.3f} {span:>16s}{star}")
    return "\n".join(lines)
