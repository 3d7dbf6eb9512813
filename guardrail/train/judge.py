"""Fit and measure the sentence judge (``guardrail.evidence.judge``).

    scored = score(detector, examples, layer)    the detector's probabilities per sentence
    rows = rows_from(examples, scored)            one row per sentence the proxy would check
    head = fit(rows, keep=0.95)                  logistic model + the threshold that keeps
                                                 ``keep`` of the supported sentences
    report = measure(rows, judge)                what the proxy would do, per data set

A row is what the proxy sees for one sentence: the detector's token probabilities for it
(an in-flight check reads the answer up to the sentence's end; the end-of-stream pass,
at full depth, reads the whole answer) and the evidence features against the context.
Sentences that make no claim are passed without a check in the proxy and are counted
apart here (``no_claim``).  A sentence is unsupported when it overlaps a gold span.

Fit on data the detector did not train on; measure on data neither saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from guardrail.evidence.claims import is_claim
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.focus import FocusedEvidence, evidence_for
from guardrail.evidence.judge import (FEATURES, FITTED_FEATURES, Head, SentenceJudge, explain,
                                      feature_vector)
from guardrail.train.data import Example, grounding
from guardrail.train.kinds import KindOf
from guardrail.train.scores import auroc, sentence_bounds


@dataclass(frozen=True)
class Row:
    dataset: str
    example_id: str
    sentence: str
    gold: bool                 # overlaps a gold span
    claim: bool
    x: tuple[float, ...]       # FEATURES
    layer: int
    kind: Optional[str] = None       # the data's kind for an unsupported sentence, if known
    explained: Optional[str] = None  # the kind the judge's explanation gives it


@dataclass(frozen=True)
class Scored:
    """What the detector said about one sentence: its token probabilities, at ``layer``.
    The model's part of a row, kept apart so that a cache of it outlives a change of the
    evidence features."""

    example: int   # its example's position in the examples scored
    start: int
    end: int
    layer: int
    probs: tuple[float, ...]


def score(detector, examples: Sequence[Example], layer: Optional[int] = None, *,
          progress: bool = False, batch: int = 16, selector=None) -> list[Scored]:
    """The detector's probabilities for every sentence of the span-labelled examples, at
    ``layer`` (None: full depth, over the whole answer, each sentence a block as the
    proxy's final pass reads it with a model that keeps the answer; else in-flight, up
    to each sentence's end, the sentence's start given as the proxy gives it).  ``selector``:
    the windows of a long context each check reads (default: every window, the
    detector's own)."""
    from guardrail.model.detector import DetectInput

    depth = layer or detector.n_layers
    jobs = [(i, ex, s, e) for i, ex in enumerate(examples) if ex.has_spans
            for s, e in sentence_bounds(ex.response)]
    out: list[Scored] = []
    if layer is None or layer >= detector.n_layers:
        blocks: dict[int, list[int]] = {}
        for i, _, s, _ in jobs:
            blocks.setdefault(i, []).extend([s] if s > 0 else [])
        todo = sorted(blocks)
        whole = {}
        for k in range(0, len(todo), batch):
            part = todo[k:k + batch]
            dets = detector.detect_batch([DetectInput(
                grounding(examples[i]), examples[i].question, examples[i].response,
                blocks=tuple(blocks[i])) for i in part],
                selector=selector)
            whole.update(zip(part, dets))
        return [Scored(i, s, e, depth, tuple(whole[i].probs_in(s, e))) for i, _, s, e in jobs]
    for k in range(0, len(jobs), batch):
        part = jobs[k:k + batch]
        dets = detector.detect_batch([DetectInput(grounding(ex), ex.question, ex.response[:e], s)
                                      for _, ex, s, e in part], exit_layer=layer,
                                     selector=selector)
        out += [Scored(i, s, e, depth, tuple(d.probs_in(s, e)))
                for d, (i, _, s, e) in zip(dets, part)]
    if progress:
        print(f"  collected {len(jobs)} sentences at layer {layer}")
    return out


def rows_from(examples: Sequence[Example], scored: Sequence[Scored],
              kind_of: Optional[KindOf] = None) -> list[Row]:
    """One row per scored sentence: the evidence features against its example's context
    (read now, so they follow the code) and the detector's probabilities."""
    evidence: dict[int, ContextEvidence | FocusedEvidence] = {}
    rows: list[Row] = []
    for sc in scored:
        ex = examples[sc.example]
        if sc.example not in evidence:
            evidence[sc.example] = evidence_for(list(ex.documents) or [ex.context],
                                                ex.question)
        ev, s, e = evidence[sc.example], sc.start, sc.end
        text = ex.response[s:e]
        gold = any(a < e and b > s for a, b in ex.spans)
        sev = ev.features(text, ex.response[:s])
        x = feature_vector(sev, sc.probs, ev.structured)
        kind = kind_of(ex, s, e) if kind_of is not None and gold else None
        rows.append(Row(ex.dataset, ex.id, text, gold, is_claim(text), tuple(x), sc.layer,
                        kind, explain(sev, 1.0, ev.structured, ev.asks_value).kind
                        if gold else None))
    return rows


def _standardise(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-6] = 1.0
    return mean, scale


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50,
                 weights: Optional[np.ndarray] = None) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (IRLS)."""
    n, d = X.shape
    A = np.hstack([X, np.ones((n, 1))])
    w = np.zeros(d + 1)
    sw = np.ones(n) if weights is None else weights
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(A @ w, -40, 40)))
        g = A.T @ (sw * (p - y)) + reg * w
        H = (A * (sw * p * (1 - p))[:, None]).T @ A + np.diag(reg + 1e-9)
        step = np.linalg.solve(H, g)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w[:-1], float(w[-1])


def keep_threshold(probs: np.ndarray, gold: np.ndarray, keep: float,
                   weights: Optional[np.ndarray] = None) -> float:
    """The lowest threshold at which at least ``keep`` of the supported sentences pass
    (``weights``: each sentence's share of that count)."""
    w = np.ones(len(probs)) if weights is None else np.asarray(weights, dtype=np.float64)
    order = np.argsort(probs[~gold])
    neg, wn = probs[~gold][order], w[~gold][order]
    if len(neg) == 0:
        return 0.5
    share = np.cumsum(wn) / wn.sum()
    k = min(len(neg) - 1, int(np.searchsorted(share, keep - 1e-12)))
    return float(min(0.999, max(0.05, neg[k] + 1e-6)))


def fit(rows: Sequence[Row], keep: float = 0.95, l2: float = 1.0,
        every_source: bool = False) -> Head:
    """One head over ``rows``.  With ``every_source``, the threshold keeps ``keep`` of
    the supported sentences of every source of data (``toolctx/calib`` as well as
    ``toolctx/train``), not only of all of them together.  Families and sources too
    small to count alone (hand-written sets of two dozen turns) count as one
    (``pooled``)."""
    claims = [r for r in rows if r.claim]
    if not claims or all(r.gold for r in claims) or not any(r.gold for r in claims):
        raise ValueError("fitting the judge needs supported and unsupported sentences")
    use = [FEATURES.index(f) for f in FITTED_FEATURES]
    X = np.asarray([[r.x[i] for i in use] for r in claims], dtype=np.float64)
    y = np.asarray([r.gold for r in claims], dtype=np.float64)
    sw = family_weights(claims)
    mean, scale = _standardise(X)
    w, b = fit_logistic((X - mean) / scale, y, l2=l2, weights=sw)
    head = Head(tuple(mean), tuple(scale), tuple(w), b, 0.5, FITTED_FEATURES)
    probs = np.asarray([head.prob(r.x) for r in claims])
    # ``keep`` of the supported sentences pass, each family weighing the same (the
    # strictest family alone would let one hard set, e.g. claims that need inference,
    # set the threshold for all)
    thr = keep_threshold(probs, y.astype(bool), keep, sw)
    if every_source:
        src = np.asarray(pooled([source(r.dataset) for r in claims],
                                [not r.gold for r in claims]))
        thr = max([thr] + [keep_threshold(probs[src == g], y[src == g].astype(bool), keep)
                           for g in set(src) if (y[src == g] == 0).sum() >= MIN_POOLED])
    return Head(head.mean, head.scale, head.weights, head.bias, thr, FITTED_FEATURES)


MIN_POOLED = 200
"""Sentences a family of data needs to weigh as one (and supported sentences a source
needs for a threshold of its own); smaller ones are pooled (``pooled``), and the pool
weighs as one family (keeps ``keep`` of its own) once it holds as many."""
SMALL = "(small sets)"


def family_weights(rows: Sequence[Row]) -> np.ndarray:
    """Each row's weight in a fit: each family (``toolctx/train/x`` -> ``toolctx``) weighs
    the same, so the largest does not decide alone; the small ones together as one."""
    fam = pooled([family(r.dataset) for r in rows])
    counts: dict[str, int] = {}
    for f in fam:
        counts[f] = counts.get(f, 0) + 1
    return np.asarray([len(rows) / (len(counts) * max(counts[f], MIN_POOLED * (f == SMALL)))
                       for f in fam])


def pooled(names: Sequence[str], counted: Optional[Sequence[bool]] = None) -> list[str]:
    """``names`` with those of fewer than ``MIN_POOLED`` counted rows (``counted``:
    which rows count; default all) renamed ``SMALL``.  Twenty hand-written tool turns
    weighing as much as a thousand generated ones, or keeping 95 % of their hundred
    supported sentences each, would let one or two sentences move the threshold."""
    counted = [True] * len(names) if counted is None else counted
    n: dict[str, int] = {}
    for name, c in zip(names, counted):
        n[name] = n.get(name, 0) + int(c)
    return [name if n[name] >= MIN_POOLED else SMALL for name in names]


MIN_UNSUPPORTED = 20
"""Unsupported sentences each kind of context needs for heads of its own."""


def fit_judge(rows: Sequence[Row], keep: float = 0.95, l2: float = 1.0,
              split: bool = True) -> SentenceJudge:
    """Heads per layer; with ``split``, sentences grounded in structured contexts get
    heads of their own when both kinds of context have ``MIN_UNSUPPORTED`` unsupported
    sentences at every layer (else one set of heads for all).  Their thresholds keep
    ``keep`` of the supported sentences of every source of tool turns: a family of
    schemas the detector never saw gets sentences it is less sure of, and the promise
    that supported text passes is made per family, not on average."""
    s = FEATURES.index("structured")
    layers = rows_by_layer(rows)
    kinds = {layer: ([r for r in part if r.x[s] <= 0.5], [r for r in part if r.x[s] > 0.5])
             for layer, part in layers.items()}
    if split and all(sum(r.gold and r.claim for r in k) >= MIN_UNSUPPORTED
                     for prose, tools in kinds.values() for k in (prose, tools)):
        return SentenceJudge(
            {layer: fit(prose, keep, l2) for layer, (prose, _) in kinds.items()},
            {layer: fit(tools, keep, l2, every_source=True)
             for layer, (_, tools) in kinds.items()})
    return SentenceJudge({layer: fit(part, keep, l2) for layer, part in layers.items()})


def fit_tool_heads(judge: SentenceJudge, rows: Sequence[Row], keep: float = 0.95,
                   l2: float = 1.0) -> SentenceJudge:
    """``judge`` with its heads for structured contexts refitted on the structured rows
    of ``rows`` at their layers (thresholds as ``fit_judge`` chooses them); its prose
    heads, and its tool heads at other layers, unchanged."""
    if any(h.features != FITTED_FEATURES for h in judge.heads.values()):
        raise ValueError("the judge's prose heads read older features: refit the whole judge")
    s = FEATURES.index("structured")
    tools = {layer: [r for r in part if r.x[s] > 0.5]
             for layer, part in rows_by_layer(rows).items()}
    short = [layer for layer, part in tools.items()
             if sum(r.gold and r.claim for r in part) < MIN_UNSUPPORTED]
    if not tools or short:
        raise ValueError(f"tool heads need {MIN_UNSUPPORTED} unsupported sentences grounded in "
                         f"structured contexts at every layer (short at {short or 'all'})")
    return SentenceJudge(judge.heads, {**judge.structured_heads,
                                       **{layer: fit(part, keep, l2, every_source=True)
                                          for layer, part in tools.items()}})


def family(dataset: str) -> str:
    return dataset.split("/")[0]


def source(dataset: str) -> str:
    """``toolctx/calib/json-array`` -> ``toolctx/calib``: one generator's family of schemas."""
    return "/".join(dataset.split("/")[:2])


def _group_report(rows: Sequence[Row], flagged: Sequence[bool], probs: Sequence[float]) -> dict:
    gold = np.asarray([r.gold for r in rows], dtype=bool)
    pred = np.asarray(flagged, dtype=bool)
    sup, uns = ~gold, gold
    tp, fp, fn = int(np.sum(gold & pred)), int(np.sum(~gold & pred)), int(np.sum(gold & ~pred))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    known = [(r.kind, r.explained) for r, f in zip(rows, pred) if f and r.gold and r.kind]
    return {**_example_report(rows, pred, probs),
        "explanation_accuracy": round(sum(k == e for k, e in known) / len(known), 4)
        if known else None, "explained_flags": len(known),
        "sentences": len(rows), "unsupported": int(gold.sum()),
        "no_claim": sum(1 for x in rows if not x.claim),
        "supported_kept": round(float(np.mean(~pred[sup])), 4) if sup.any() else None,
        "unsupported_stopped": round(float(np.mean(pred[uns])), 4) if uns.any() else None,
        "stop_precision": round(p, 4), "stop_recall": round(r, 4),
        "stop_f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
        "auroc": auroc(list(gold), list(probs)),
    }


def _example_report(rows: Sequence[Row], flagged: Sequence[bool], probs: Sequence[float]
                    ) -> dict:
    """Per answer: it is flagged when the proxy stops any of its sentences, hallucinated
    when any of its sentences is unsupported; its score is its highest sentence score."""
    answers: dict[tuple[str, str], list[bool]] = {}
    for r, f, p in zip(rows, flagged, probs):
        a = answers.setdefault((r.dataset, r.example_id), [False, False, 0.0])
        a[0], a[1], a[2] = a[0] or r.gold, a[1] or bool(f), max(a[2], p)
    gold = [g for g, _, _ in answers.values()]
    tp = sum(g and f for g, f, _ in answers.values())
    fp = sum(f and not g for g, f, _ in answers.values())
    fn = sum(g and not f for g, f, _ in answers.values())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"answers": len(answers), "hallucinated_answers": sum(gold),
            "example_precision": round(p, 4), "example_recall": round(r, 4),
            "example_f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "example_f1_interval": f1_interval(gold, [f for _, f, _ in answers.values()]),
            "example_auroc": auroc(gold, [s for _, _, s in answers.values()])}


def f1_interval(gold: Sequence[bool], flagged: Sequence[bool], resamples: int = 1000,
                seed: int = 0) -> Optional[list[float]]:
    """The 95 % bootstrap interval of F1 over these answers (resampled with replacement):
    how precisely a set of this size measures it.  None without both labels."""
    g, f = np.asarray(gold, dtype=bool), np.asarray(flagged, dtype=bool)
    if g.all() or not g.any():
        return None
    pick = np.random.default_rng(seed).integers(0, len(g), size=(resamples, len(g)))
    g, f = g[pick], f[pick]
    tp, wrong = (g & f).sum(1), (g ^ f).sum(1)
    f1 = 2 * tp / np.maximum(1, 2 * tp + wrong)
    return [round(float(v), 4) for v in np.percentile(f1, [2.5, 97.5])]


def measure(rows: Sequence[Row], judge: Optional[SentenceJudge],
            threshold: Optional[float] = None) -> dict:
    """Per data set and overall: what the proxy would do with these sentences.  Without
    a judge, the old rule (the sentence's highest token probability >= ``threshold``)."""
    flagged, probs = decisions(rows, judge, threshold)
    return {name: _group_report([rows[i] for i in idx], [flagged[i] for i in idx],
                                [probs[i] for i in idx])
            for name, idx in groups(rows).items()}


def groups(rows: Sequence[Row]) -> dict[str, list[int]]:
    """The rows' positions reported together: all of them, then each data set and each
    family of data sets (``toolctx`` for ``toolctx/dev/...``)."""
    out = {"all": list(range(len(rows)))}
    names = {r.dataset for r in rows}
    for name in sorted(names | {family(n) for n in names if family(n) != n}):
        out[name] = [i for i, r in enumerate(rows)
                     if r.dataset == name or family(r.dataset) == name]
    return out


def decisions(rows: Sequence[Row], judge: Optional[SentenceJudge],
              threshold: Optional[float] = None) -> tuple[list[bool], list[float]]:
    """Each sentence: stopped or not, and its score (``measure``'s rules)."""
    flagged, probs = [], []
    for r in rows:
        if judge is None:
            prob = r.x[FEATURES.index("p_max")]
            flagged.append(prob >= (threshold if threshold is not None else 0.5))
        elif not r.claim:
            prob = 0.0
            flagged.append(False)
        else:
            prob, flag = judge.decide(r.x, r.layer, r.x[FEATURES.index("structured")] > 0.5)
            flagged.append(flag)
        probs.append(prob)
    return flagged, probs


def format_measure(result: dict) -> str:
    lines = [f"{'data':34s} {'sent':>5s} {'unsup':>5s} {'kept':>6s} {'stopped':>7s} "
             f"{'stopF1':>6s} {'AUROC':>6s} {'kind ok':>7s} {'answers':>7s} {'exF1':>6s} "
             f"{'(95 %)':>11s} {'exAUC':>6s}"]
    for name, m in result.items():
        lines.append(f"{name[:34]:34s} {m['sentences']:5d} {m['unsupported']:5d} "
                     f"{_f(m['supported_kept']):>6s} {_f(m['unsupported_stopped']):>7s} "
                     f"{_f(m['stop_f1']):>6s} {_f(m['auroc']):>6s} "
                     f"{_f(m['explanation_accuracy']):>7s} {m['answers']:7d} "
                     f"{_f(m['example_f1']):>6s} {_interval(m['example_f1_interval']):>11s} "
                     f"{_f(m['example_auroc']):>6s}")
    return "\n".join(lines)


def _f(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.3f}"


def _interval(v: Optional[list[float]]) -> str:
    return "-" if v is None else f"{v[0]:.2f}-{v[1]:.2f}"


def rows_by_layer(rows: Iterable[Row]) -> dict[int, list[Row]]:
    out: dict[int, list[Row]] = {}
    for r in rows:
        out.setdefault(r.layer, []).append(r)
    return out
