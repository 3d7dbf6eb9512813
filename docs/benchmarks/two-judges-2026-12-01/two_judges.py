"""The default's and `pcw`'s in-flight decisions (layer 4), each with its own judge,
joined sentence by sentence, and simple ensembles of the two (context-states.md, "Two
readers, one decision: measured, not built").  Run from the repository root after the
two `judge eval` runs of run.sh, which leave their rows caches in runs/ens/:

    .venv/bin/python docs/benchmarks/two-judges-2026-12-01/two_judges.py

Cells: supported kept / unsupported stopped / example F1 (an answer is flagged when any
of its sentences is).  ``margin``: each judge's log-odds over its own threshold, mixed
with weight w for `pcw`, flagged above 0."""

import math
from pathlib import Path

from guardrail.commands.judge import _rows
from guardrail.evidence.judge import FEATURES, SentenceJudge
from guardrail.model import Detector

X = "data/external"
SPECS = {"tool dev": "runs/toolctx/dev.jsonl", "tool holdout": "runs/toolctx/holdout.jsonl",
         "RT dev": "runs/ragtruth/derived_ragtruth_format@dev",
         "RT calib": "runs/ragtruth/derived_ragtruth_format@calib",
         "HaluEval QA": f"{X}/halueval-qa.jsonl@dev", "VitaminC": f"{X}/vitaminc.jsonl@dev"}
S = FEATURES.index("structured")


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def decisions(name: str) -> dict:
    """(set, answer, sentence) -> (unsupported, flagged, margin over the threshold)."""
    det = Detector.from_pretrained(f"guardrail/models/{name}")
    judge = SentenceJudge.from_json(det.meta["judge"])
    out = {}
    for label, spec in SPECS.items():
        for r in _rows(det, [spec], [4], 400, "halueval-qa,vitaminc",
                       Path(f"runs/ens/{name}-cache.json")):
            if not r.claim:
                out[(label, r.example_id, r.sentence)] = (r.gold, False, -math.inf)
                continue
            tool = r.x[S] > 0.5
            p, flag = judge.decide(r.x, r.layer, tool)
            out[(label, r.example_id, r.sentence)] = (
                r.gold, flag, logit(p) - logit(judge.head(r.layer, tool).threshold))
    return out


def cells(keys, gold, flag) -> str:
    parts = []
    for label in SPECS:
        mine = [k for k in keys if k[0] == label]
        sup = [flag(k) for k in mine if not gold(k)]
        uns = [flag(k) for k in mine if gold(k)]
        answers: dict = {}
        for k in mine:
            a = answers.setdefault(k[1], [False, False])
            a[0], a[1] = a[0] or gold(k), a[1] or flag(k)
        tp = sum(g and f for g, f in answers.values())
        fp = sum(f and not g for g, f in answers.values())
        fn = sum(g and not f for g, f in answers.values())
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        parts.append(f"{1 - sum(sup) / len(sup):.3f} / {sum(uns) / len(uns):.3f} / {f1:.3f}")
    return " | ".join(parts)


def main() -> None:
    a, b = decisions("default"), decisions("pcw")
    keys = [k for k in a if k in b]
    gold = lambda k: a[k][0]  # noqa: E731
    print(f"{len(keys)} sentences joined\n| rule | {' | '.join(SPECS)} |")
    print("|---" * (len(SPECS) + 1) + "|")
    rules = {"default": lambda k: a[k][1], "pcw": lambda k: b[k][1],
             "either flags": lambda k: a[k][1] or b[k][1],
             "both flag": lambda k: a[k][1] and b[k][1]}
    for w in (0.3, 0.5, 0.7):
        rules[f"margin, w {w}"] = lambda k, w=w: (1 - w) * a[k][2] + w * b[k][2] > 0
    for name, rule in rules.items():
        print(f"| {name} | {cells(keys, gold, rule)} |")


if __name__ == "__main__":
    main()
