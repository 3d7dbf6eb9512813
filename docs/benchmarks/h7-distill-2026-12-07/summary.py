"""The sums of docs/model-card.md, "v6-H7", read from the `sentences.jsonl` files here and
in ../h4-cpu-2026-12-07/ and ../h5-lwf-2026-12-07/ (from the repository root):

    python3 docs/benchmarks/h7-distill-2026-12-07/summary.py

Kept = supported sentences released verbatim, stopped = unsupported ones redacted,
rewritten or blocked, summed over sets. RAGTruth's streamed example F1 (an answer is
flagged when any of its sentences is stopped) comes with a paired bootstrap of its
difference from v6-H2's: 2,000 resamples of the 145 answers, seed 0.
"""

import json
import os
import random
from collections import defaultdict

HERE = "docs/benchmarks/h7-distill-2026-12-07"
FOLDERS = (HERE, "docs/benchmarks/h5-lwf-2026-12-07", "docs/benchmarks/h4-cpu-2026-12-07")
GROUPS = {"ez..fg": "ez fa fb fc fd fe ff fg", "fh/fi": "fh fi", "fj/fk": "fj fk"}


def rows(name: str) -> list[dict]:
    folder = next(f for f in FOLDERS if os.path.exists(f"{f}/{name}"))
    return [json.loads(line) for line in open(f"{folder}/{name}/sentences.jsonl")]


def kept_stopped(rs: list[dict]) -> str:
    sup = [r for r in rs if not r["gold"]]
    uns = [r for r in rs if r["gold"]]
    kept = sum(not r["stopped"] for r in sup)
    stopped = sum(r["stopped"] for r in uns)
    changed = len(sup) - kept
    f1 = 2 * stopped / max(1, 2 * stopped + changed + len(uns) - stopped)
    return (f"{kept / len(sup):.3f} / {stopped / len(uns):.3f} ({f1:.3f}): "
            f"{kept} of {len(sup)}, {stopped} of {len(uns)}")


def answers(rs: list[dict]) -> tuple[dict, dict]:
    gold, flagged = defaultdict(bool), defaultdict(bool)
    for r in rs:
        gold[r["example"]] |= r["gold"]
        flagged[r["example"]] |= r["stopped"]
    return gold, flagged


def example_f1(ids: list[str], gold: dict, flagged: dict) -> float:
    tp = sum(gold[i] and flagged[i] for i in ids)
    fp = sum(flagged[i] and not gold[i] for i in ids)
    fn = sum(gold[i] and not flagged[i] for i in ids)
    return 2 * tp / max(1, 2 * tp + fp + fn)


def main() -> None:
    for group, sets in GROUPS.items():
        for model in ("h2", "h5", "h6", "h7", "h7s", "pcw"):
            names = [f"{s}-{model}" for s in sets.split()]
            if all(any(os.path.exists(f"{f}/{n}") for f in FOLDERS) for n in names):
                print(f"{group:7s} {model:4s} {kept_stopped([r for n in names for r in rows(n)])}")
    base = None
    for model in ("h2", "h5", "h6", "h7", "h7s"):
        rs = rows(f"wide-{model}")
        prose = [r for r in rs if r["dataset"].startswith("ragtruth")]
        tools = [r for r in rs if not r["dataset"].startswith("ragtruth")]
        print(f"wide    {model:4s} RAGTruth {kept_stopped(prose)} | holdout {kept_stopped(tools)}")
        ex = answers(prose)
        ids = sorted(ex[0])
        if base is None:
            base = ex
            print(f"        RAGTruth streamed example F1 {example_f1(ids, *ex):.3f}")
            continue
        rnd, diffs = random.Random(0), []
        for _ in range(2000):
            sample = [rnd.choice(ids) for _ in ids]
            diffs.append(example_f1(sample, *ex) - example_f1(sample, *base))
        diffs.sort()
        print(f"        RAGTruth streamed example F1 {example_f1(ids, *ex):.3f}, against v6-H2 "
              f"{example_f1(ids, *ex) - example_f1(ids, *base):+.3f} "
              f"(95 % interval {diffs[50]:+.3f} .. {diffs[1949]:+.3f})")


if __name__ == "__main__":
    main()
