"""Refit the judge's tool heads with hand-written tool turns, and measure on sets held out
(docs/model-card.md, "Tool heads refitted on 47 hand-written sets").  Writes no weights.

    .venv/bin/python scripts/refit_tool_heads.py [--layer 4] [--keep 0.95] HELD_OUT.jsonl ...

The shipped judge's tool heads were fitted on generated tool turns only.  This fits the
head of one exit layer three more ways, each with ``guardrail judge fit``'s own rule
(``train/judge.fit``: each family weighs alike, the threshold keeps ``--keep`` of the
supported sentences), and prints kept / stopped, stop F1 and AUROC as the proxy would
decide in flight:

- ``refit gen``: the generated turns the shipped heads were fitted on, today's evidence;
- ``gen+old``: those and the hand-written sets written up to the eleventh session
  (``turns``, ``-b`` .. ``-ac``), so that the later sets (``new``) are held out;
- ``gen+all``: those and every hand-written set but the ones named on the command line.

The sets named on the command line are never fitted on.  The detector's probabilities
come from the same rows caches as ``guardrail judge eval --rows-cache`` (runs/); the
first run scores every set (about 40 minutes on 2 cores), later ones take seconds.  Then
the evidence each supported and unsupported sentence of the fitted-on sets carries is
counted, with what the shipped judge decided.
"""

from __future__ import annotations

import argparse
import glob
from collections import Counter
from dataclasses import replace
from pathlib import Path

from guardrail.commands.judge import _rows
from guardrail.evidence.judge import FEATURES, SentenceJudge
from guardrail.model import Detector
from guardrail.train.judge import fit, measure

P = "docs/model-card/paraphrases"
X = "data/external"
RT = "../shared/data/ragtruth_qa_test_subset"
FITTED = [f"{RT}@calib", "runs/toolctx/judge.jsonl", "runs/toolctx/calib.jsonl",
          f"{X}/halueval-qa.jsonl@calib", f"{X}/vitaminc.jsonl@calib"]
"""What the shipped judge was fitted on (its ``fitted_on``), 300 examples of each."""
GENERATED = ["runs/toolctx/dev.jsonl", "runs/toolctx/holdout.jsonl"]
OLD = {"turns", *(f"turns-{c}" for c in "bcdefghijklmnopqrstuvwxyz"), "turns-aa", "turns-ab",
       "turns-ac"}
_S = FEATURES.index("structured")
_F = {f: FEATURES.index(f) for f in FEATURES}
_TALLY = {"a value the result lacks": "number_missing", "a field says otherwise":
          "field_changed", "a line says otherwise": "line_value_changed",
          "another record's value": "record_gap", "every value found": "values_all_found"}


def _tools(rows):
    return [r for r in rows if r.x[_S] > 0.5]


def _line(label: str, judge: SentenceJudge, groups: dict) -> str:
    out = [f"{label:10s}"]
    for name, rows in groups.items():
        m = measure(rows, judge)["all"]
        out.append(f"{name} {m['supported_kept']:.3f}/{m['unsupported_stopped']:.3f} "
                   f"F1 {m['stop_f1']:.3f} AUC {m['auroc']:.3f}")
    return " | ".join(out)


def _tally(rows, judge: SentenceJudge, layer: int) -> None:
    claims = [r for r in rows if r.claim]
    print(f"\n{len(claims)} claims of the hand-written sets fitted on, "
          f"{sum(r.gold for r in claims)} unsupported; the shipped judge's stops:")
    for label, feature in _TALLY.items():
        c: Counter = Counter()
        for r in claims:
            if r.x[_F[feature]] > 0.5 if feature != "record_gap" else r.x[_F[feature]] > 0:
                c[(r.gold, judge.decide(r.x, layer, r.x[_S] > 0.5)[1])] += 1
        sup, uns = c[(False, True)] + c[(False, False)], c[(True, True)] + c[(True, False)]
        print(f"  {label:26s} supported {sup:5d} (stopped {c[(False, True)]:4d})   "
              f"unsupported {uns:4d} (stopped {c[(True, True)]:4d})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("held_out", nargs="+", help="hand-written sets never fitted on")
    ap.add_argument("--layer", type=int, default=4)
    ap.add_argument("--keep", type=float, default=0.95)
    args = ap.parse_args()
    det = Detector.from_pretrained(None)
    shipped = SentenceJudge.from_json(det.meta["judge"])
    layer = args.layer
    held = [str(Path(p)) for p in args.held_out]
    sets = [s for s in sorted(glob.glob(f"{P}/turns*.jsonl")) if str(Path(s)) not in held]
    cache = Path(f"runs/rows-cache-{layer}.json")
    fitted = _rows(det, FITTED, [layer], 300, "halueval-qa,vitaminc",
                   Path(f"runs/rows-fit-{layer}.json"))
    hand = {s: _rows(det, [s], [layer], None, "", cache) for s in sets + held}
    generated = _rows(det, GENERATED, [layer], 400, "", Path(f"runs/rows-gen-{layer}.json"))
    old = [r for s in sets if Path(s).stem in OLD for r in hand[s]]
    every = [r for s in sets for r in hand[s]]
    groups = {f"old{sum(Path(s).stem in OLD for s in sets)}": old,
              f"new{sum(Path(s).stem not in OLD for s in sets)}":
              [r for s in sets if Path(s).stem not in OLD for r in hand[s]],
              "generated": generated, **{Path(s).stem: hand[s] for s in held}}

    def hand_family(rows):  # the hand-written sets weigh as one family of data
        return [replace(r, dataset=f"hand/{r.dataset}") for r in _tools(rows)]

    heads = {"refit gen": fit(_tools(fitted), args.keep, every_source=True),
             "gen+old": fit(_tools(fitted) + hand_family(old), args.keep, every_source=True),
             "gen+all": fit(_tools(fitted) + hand_family(every), args.keep, every_source=True)}
    print(_line("shipped", shipped, groups))
    for label, head in heads.items():
        judge = SentenceJudge(shipped.heads, {**shipped.structured_heads, layer: head})
        print(_line(label, judge, groups))
    print("\nthreshold and weights (standardised features):")
    for label, head in [("shipped", shipped.structured_heads[layer]), *heads.items()]:
        w = {f: round(float(v), 2) for f, v in zip(head.features, head.weights)}
        print(f"  {label}: threshold {head.threshold:.3f}, number_missing "
              f"{w['number_missing']}, field_changed {w['field_changed']}, values_all_found "
              f"{w['values_all_found']}, logit_p_max {w['logit_p_max']}")
    _tally(every, shipped, layer)


if __name__ == "__main__":
    main()
