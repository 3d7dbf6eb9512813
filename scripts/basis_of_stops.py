"""What the judge's in-flight stops on the hand-written tool turns rest on
(docs/model-card.md, "What a flag rests on, and a policy for it").

    .venv/bin/python scripts/basis_of_stops.py [ROWS_CACHE]
    .venv/bin/python scripts/basis_of_stops.py --runs RUN_DIR ...

``--runs``: of `guardrail bench verdicts` runs (their sentences.jsonl), the sentences
stopped by the basis of their explanation, supported / unsupported, per data set (the
first part of its name); runs no model.

Over every `turns*.jsonl` of docs/model-card/paraphrases (claims only, exit 4, each
sentence decided by its own head, as `guardrail judge eval --layers 4` decides):
1. supported and unsupported sentences stopped, by the basis their explanation gives;
2. the AUROC of the detector's highest token probability among the sentences whose basis
   would be ``value_missing``, and over all claims;
3. kept and stopped with every flag stopped (``policy.by_basis: {}``), as shipped (the
   ``value_worked_out`` flags against tool results released, marked), and with the
   ``value_missing`` (and so ``value_worked_out``) or the ``other_record`` flags
   against tool results released (what ``{structured.value_missing: annotate}`` or
   ``{structured.other_record: annotate}`` sends verbatim);
4. ``scripts/missing_values.py``'s generic search for worked-out values over all the sets.
The detector's probabilities are cached in ROWS_CACHE (default runs/rows-hw4.json): the
first run scores the sets (about 20 minutes on 2 cores), later ones read them.
"""

import collections
import json
import sys
from pathlib import Path

import numpy as np

import missing_values
from guardrail.commands.judge import _rows
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import SentenceJudge, basis
from guardrail.types import REFINES
from guardrail.model import Detector

P = Path("docs/model-card/paraphrases")


def auroc(gold, score) -> float:
    pos = np.array([s for g, s in zip(gold, score) if g])
    neg = np.array([s for g, s in zip(gold, score) if not g])
    return float((pos[:, None] > neg).mean() + 0.5 * (pos[:, None] == neg).mean())


def runs(dirs: list[str]) -> None:
    for d in dirs:
        stopped = collections.Counter()
        for r in map(json.loads, open(Path(d) / "sentences.jsonl", encoding="utf-8")):
            if r["stopped"]:
                why = (r.get("explanation") or {}).get("basis")
                stopped[(r["dataset"].split("/")[0].split("-")[0], why, r["gold"])] += 1
        print(d)
        for name, why in sorted({k[:2] for k in stopped}, key=str):
            print(f"  {name:10s} {str(why):14s} {stopped[(name, why, False)]:4d} / "
                  f"{stopped[(name, why, True)]:4d}")


def main() -> None:
    if sys.argv[1:2] == ["--runs"]:
        return runs(sys.argv[2:])
    cache = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/rows-hw4.json")
    sets = sorted(str(p) for p in P.glob("turns*.jsonl"))
    det = Detector.from_pretrained(None)
    judge = SentenceJudge.from_json(det.meta["judge"])
    examples = {d["id"]: d for p in sets for d in map(json.loads, open(p, encoding="utf-8"))}
    evidence: dict[str, ContextEvidence] = {}
    by_basis, tally, every = collections.Counter(), collections.Counter(), collections.Counter()
    released = {b: collections.Counter() for b in ("value_missing", "other_record")}
    missing_gold, missing_p, all_gold, all_p = [], [], [], []
    for r in _rows(det, sets, [4], None, "", cache):
        if not r.claim:
            continue
        d = examples[r.example_id]
        if d["id"] not in evidence:
            evidence[d["id"]] = ContextEvidence.build([d["context"]], d["question"])
        start = d["response"].find(r.sentence)
        why = basis(evidence[d["id"]].features(r.sentence, d["response"][:start]))
        structured = evidence[d["id"]].structured
        _, flagged = judge.decide(r.x, 4, structured)
        every[(r.gold, flagged)] += 1
        # the shipped default marks a structured value_worked_out flag (types.REFINES:
        # releasing value_missing releases it too)
        tally[(r.gold, flagged and not (structured and why == "value_worked_out"))] += 1
        for b, t in released.items():
            t[(r.gold, flagged and not (structured and (
                why == b or why == "value_worked_out" and REFINES.get(why) == b)))] += 1
        if flagged:
            by_basis[(why, r.gold)] += 1
        all_gold.append(r.gold)
        all_p.append(r.x[0])
        if why == "value_missing":
            missing_gold.append(r.gold)
            missing_p.append(r.x[0])
    print("stopped by basis (supported / unsupported):")
    for b in sorted({b for b, _ in by_basis}):
        print(f"  {b:14s} {by_basis[(b, False)]:4d} / {by_basis[(b, True)]:4d}")
    print(f"AUROC of p_max: value_missing {auroc(missing_gold, missing_p):.3f} "
          f"({len(missing_gold)} claims), all {auroc(all_gold, all_p):.3f} ({len(all_gold)})")
    for name, t in (("every flag stopped (by_basis {})", every), ("shipped", tally),
                    *((f"{b} released", t) for b, t in released.items())):
        kept = t[(False, False)] / (t[(False, False)] + t[(False, True)])
        stopped = t[(True, True)] / (t[(True, True)] + t[(True, False)])
        print(f"{name}: kept {kept:.3f}, stopped {stopped:.3f}")
    missing_values.SETS = [Path(p).stem for p in sets]
    print("generic search (supported / unsupported: with a missing value, explained):",
          missing_values.search(False))


if __name__ == "__main__":
    main()
