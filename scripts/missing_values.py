"""What decides the judge on hand-written tool turns (docs/model-card.md, "Four more
held-out sets, and why no rule was added").

    .venv/bin/python scripts/missing_values.py [ROWS_CACHE]

Over the 25 sets `turns.jsonl`, `turns-b` .. `turns-y` of docs/model-card/paraphrases
(claims only, in flight at exit 4, each sentence decided by its own head):
1. supported kept and unsupported stopped, at the shipped thresholds and with the tool
   heads' threshold raised to 0.5 and 0.7;
2. how many stopped sentences have "a value the grounding lacks" as their only evidence
   (with or without a detector probability over 0.5);
3. a generic search for how each still-missing value could be worked out: the
   sentence's other values, the values of the records it is about and each column's
   sum, mean, count, max and min, combined by +, -, x, / and shares (and units x1000,
   /60, ...), a match counted only where fewer than 0.05 matches are expected by
   chance near the value (candidates within [v/2, 2v] x the value's tolerance).  Run
   with the written tolerance ("plain") and with whole numbers given half a unit.
The detector's probabilities are cached in ROWS_CACHE (default runs/rows-cache.json):
the first run scores the sets (minutes), later ones read them.
"""

import json
import sys
from pathlib import Path

import numpy as np

from guardrail.commands.judge import _rows
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import FEATURES, SentenceJudge
from guardrail.evidence.values import numbers
from guardrail.evidence.words import content_words, stem
from guardrail.model import Detector

SETS = ["turns"] + [f"turns-{c}" for c in "bcdefghijklmnopqrstuvwxy"]
P = Path("docs/model-card/paraphrases")
SCALES = np.array([1, 1000, 1 / 1000, 60, 1 / 60, 100, 1 / 100, 24, 1 / 24, 7, 1 / 7, 12,
                   1 / 12, 52])
F = {f: i for i, f in enumerate(FEATURES)}


def decisions(rows, judge, threshold=None):
    s = F["structured"]
    return [judge.decide(r.x, 4, True, threshold)[1] if r.x[s] > .5
            else judge.decide(r.x, 4, False)[1] for r in rows]


def _positive(xs):
    a = np.array(sorted(set(xs)), dtype=float)
    return a[a > 0]


def _unary(ops):
    return (_positive(ops)[:, None] * SCALES[None, :]).ravel()


def _binary(xs, ys, ints):
    a, b = _positive(xs), _positive(ys)
    if not len(a) or not len(b):
        return np.array([])
    A, B = (m.ravel() for m in np.meshgrid(a, b))
    out = np.concatenate([A + B, np.abs(A - B), A * B, A / B, B / A, 100 * A / B, 100 * B / A,
                          100 * np.abs(A - B) / B, 100 * np.abs(A - B) / A])
    ks = np.array(sorted({k for k in ints if 2 <= k <= 1000}), dtype=float)
    if len(ks):
        out = np.concatenate([out, ((A + B)[:, None] * ks[None, :]).ravel()])
    out = np.concatenate([out, out / 1000, out * 1000, out / 60, out * 60])
    return out[np.isfinite(out) & (out > 0)]


def _explained(n, tiers, whole_half_unit, limit=0.05):
    v, t = n.value, max(n.precision, 1e-9)
    if v <= 0:
        return False
    tol = max(t, 0.5) if whole_half_unit and float(v).is_integer() else t
    for cands in tiers:
        if len(cands) and (np.abs(cands - v) <= t).any():
            near = ((cands >= v / 2) & (cands <= 2 * v)).sum()
            if near * 2 * tol / (1.5 * v) < limit:
                return True
    return False


def search(whole_half_unit):
    counts = {False: [0, 0], True: [0, 0]}  # gold -> [with a missing value, explained]
    for name in SETS:
        for r in map(json.loads, open(P / f"{name}.jsonl")):
            ev = ContextEvidence.build([r["context"]], r["question"])
            for s in r["sentences"]:
                text, before = r["response"][s["start"]:s["end"]], r["response"][:s["start"]]
                sev = ev.features(text, before)
                if not sev.missing_numbers:
                    continue
                nums = numbers(text)
                miss = {m.start for m in sev.missing_numbers}
                about = ev._where.about(text, [stem(w) for w in content_words(text)], nums,
                                        before).records
                recs = ev._record_numbers(about)
                said = [m.value for m in nums if m.start not in miss
                        and m.kind in ("number", "count")]
                rec = [v for x in recs for v in x] if len(recs) <= 3 else []
                aggs = [a for c in (ev.fields.columns if ev.fields else ())
                        for a in (sum(c.values), sum(c.values) / len(c.values),
                                  len(c.values), max(c.values), min(c.values))]
                ints = [m.value for m in nums if m.value.is_integer()
                        and m.kind in ("number", "count")]
                tiers = [_unary(said + rec + aggs), _binary(said, said + rec + aggs, ints),
                         _binary(rec, rec, ints)]
                values = [m for m in sev.missing_numbers if m.kind in ("number", "count")]
                ok = bool(values) and len(values) == len(sev.missing_numbers) and all(
                    _explained(m, tiers, whole_half_unit) for m in values)
                gold = s["label"] != "supported"
                counts[gold][0] += 1
                counts[gold][1] += ok
    return counts


def main():
    cache = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/rows-cache.json")
    det = Detector.from_pretrained(None)
    judge = SentenceJudge.from_json(det.meta["judge"])
    rows = [r for r in _rows(det, [str(P / f"{s}.jsonl") for s in SETS], [4], None, "", cache)
            if r.claim]
    gold = np.array([r.gold for r in rows])
    print(f"{len(rows)} claims, {gold.sum()} unsupported")
    for t in (None, 0.5, 0.7):
        flag = np.array(decisions(rows, judge, t))
        print(f"tool-head threshold {t or 'shipped'}: kept {1 - flag[~gold].mean():.3f}, "
              f"stopped {flag[gold].mean():.3f}")
    flag = decisions(rows, judge)
    only = lambda r: r.x[F["number_missing"]] > .5 and not any(  # noqa: E731
        r.x[F[k]] > (0 if k == "record_gap" else .5) for k in
        ("field_changed", "line_value_changed", "record_gap", "name_missing"))
    for g, what in ((False, "supported"), (True, "unsupported")):
        stopped = [r for r, f in zip(rows, flag) if f and r.gold == g]
        print(f"{what} stopped: {len(stopped)}, only a missing value: "
              f"{sum(only(r) for r in stopped)}")
    for half in (False, True):
        c = search(half)
        print(f"search ({'whole numbers half a unit' if half else 'plain'} tolerance): "
              f"supported {c[False][1]} of {c[False][0]}, unsupported {c[True][1]} of {c[True][0]}")


if __name__ == "__main__":
    main()
