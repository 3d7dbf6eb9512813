"""A detector trained with hand-written tool turns, and its judge's tool heads fitted on
other hand-written turns: measured on turns neither saw (docs/model-card.md, "v6-H2").

    .venv/bin/python scripts/hand_judge.py [--model runs/h2 --cache runs/gpu-c/h2.json]

The hand-written sets of docs/model-card/paraphrases/, in the order written, are cut in
three: ``A`` (``turns`` .. ``turns-cl``) is what v6-H2 trained on, ``B`` (``turns-cm`` ..
``turns-dw``) is what the tool heads may be fitted on, ``C`` (``turns-dx`` and later) is
held out from both.  For the model named (default: the shipped v5) it prints supported
kept / unsupported stopped, stop F1 and AUROC as the proxy decides in flight (layer 4)
on ``C``, on the generated dev and holdout families and on RAGTruth QA's dev split, for:

- ``shipped``: the shipped judge as it is (for another detector: its heads read that
  detector's probabilities);
- ``refit gen``: the tool heads fitted as ``guardrail judge fit --tool-heads-only`` fits
  them on the shipped judge's own data (its ``fitted_on``, 300 examples of each);
- ``gen+B``: the same with the sets of ``B`` beside them, weighing as one family;
- ``gen+B prose``: ``gen+B`` with the prose heads refitted too, on the same data.

The detector's probabilities come from a rows cache (``--cache``) that ``guardrail judge
eval --rows-cache`` reads too; a missing entry is computed on this machine (slow on a
CPU: the device run of the model card wrote them).  Writes no weights.
"""

from __future__ import annotations

import argparse
import glob
import os
from dataclasses import replace
from pathlib import Path

from guardrail.commands.judge import _rows
from guardrail.evidence.judge import FEATURES, SentenceJudge
from guardrail.model import Detector
from guardrail.train.judge import fit, measure

P = "docs/model-card/paraphrases"
RT = "../shared/data/ragtruth_qa_test_subset"
X = "data/external"
FITTED = [f"{RT}@calib", "runs/toolctx/judge.jsonl", "runs/toolctx/calib.jsonl",
          f"{X}/halueval-qa.jsonl@calib", f"{X}/vitaminc.jsonl@calib"]
GENERATED = ["runs/toolctx/dev.jsonl", "runs/toolctx/holdout.jsonl"]
LAYER = 4
_S = FEATURES.index("structured")


def order(path: str) -> tuple[int, str]:
    """A set's place in the order the sets were written: ``turns``, ``-b`` .. ``-z``,
    ``-aa`` .. """
    s = os.path.basename(path)[len("turns"):-len(".jsonl")].lstrip("-")
    return (len(s), s)


def parts() -> dict[str, list[str]]:
    sets = sorted(glob.glob(f"{P}/turns*.jsonl"), key=order)
    cut = {"A": ("", "cl"), "B": ("cm", "dw"), "C": ("dx", "zz")}
    return {k: [s for s in sets if (len(lo), lo) <= order(s) <= (len(hi), hi)]
            for k, (lo, hi) in cut.items()}


def _tools(rows):
    return [r for r in rows if r.x[_S] > 0.5]


def _prose(rows):
    return [r for r in rows if r.x[_S] <= 0.5]


def _hand(rows):  # the hand-written sets weigh as one family of data
    return [replace(r, dataset=f"hand/{r.dataset}") for r in _tools(rows)]


def _cell(rows, judge: SentenceJudge) -> str:
    m = measure(rows, judge)["all"]
    stopped = m["unsupported_stopped"]
    auc = "-" if m["auroc"] is None else f"{m['auroc']:.3f}"
    return (f"{m['supported_kept']:.3f}/{'-' if stopped is None else f'{stopped:.3f}'} "
            f"F1 {m['stop_f1']:.3f} AUC {auc}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="model directory (default: the shipped v5)")
    ap.add_argument("--cache", type=Path, default=Path("runs/gpu-c/v5.json"))
    ap.add_argument("--keep", type=float, default=0.95)
    ap.add_argument("--pairs", action="store_true", help="also each pair of C")
    args = ap.parse_args()
    det = Detector.from_pretrained(args.model)
    shipped = SentenceJudge.from_json(Detector.from_pretrained(None).meta["judge"])
    sets = parts()
    hand = {s: _rows(det, [s], [LAYER], None, "", args.cache) for s in sets["B"] + sets["C"]}
    fitted = _rows(det, FITTED, [LAYER], 300, "halueval-qa,vitaminc", args.cache)
    generated = _rows(det, GENERATED, [LAYER], None, "", args.cache)
    prose = _rows(det, [f"{RT}@dev"], [LAYER], None, "", args.cache)
    b_rows = [r for s in sets["B"] for r in hand[s]]
    groups = {f"C ({len(sets['C'])} sets)": [r for s in sets["C"] for r in hand[s]],
              "generated": generated, "RAGTruth dev": prose}
    if args.pairs:
        cs = sets["C"]
        for a, b in zip(cs[::2], cs[1::2]):
            groups[f"{Path(a).stem}/{Path(b).stem[6:]}"] = hand[a] + hand[b]
    gen_b = fit(_tools(fitted) + _hand(b_rows), args.keep, every_source=True)
    judges = {
        "shipped": shipped,
        "refit gen": SentenceJudge(shipped.heads, {**shipped.structured_heads, LAYER:
                                                   fit(_tools(fitted), args.keep,
                                                       every_source=True)}),
        "gen+B": SentenceJudge(shipped.heads, {**shipped.structured_heads, LAYER: gen_b}),
        "gen+B prose": SentenceJudge({**shipped.heads, LAYER: fit(_prose(fitted), args.keep)},
                                     {**shipped.structured_heads, LAYER: gen_b}),
    }
    print(f"model {det.name}; A {len(sets['A'])} sets, B {len(sets['B'])}, C {len(sets['C'])}"
          f"; kept/stopped, stop F1, AUROC in flight (layer {LAYER})")
    for label, judge in judges.items():
        print(f"{label:12s} " + " | ".join(f"{g}: {_cell(rows, judge)}"
                                          for g, rows in groups.items()))


if __name__ == "__main__":
    main()
