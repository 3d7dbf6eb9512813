"""The exact training examples of a capped recipe, as small files for a GPU machine.

    python scripts/gpu_data_subset.py OUT [--cap 2000] [--seed 13]

A device call carries at most 64 MiB, and v6's PCW recipe (docs/model-card/pcw-v6/
train_gpu.sh) reads 90 MB of data files of which it keeps 2,000 examples per set.  This
writes to OUT only the examples its split and cap keep (fit and calibration, by the
same hash of each source and the same seeded sample), so the recipe run on OUT trains
on the same examples; RAGTruth QA and passages.jsonl are copied whole, and the first
700 dev-split examples of VitaminC and HaluEval QA are written as dev-*.jsonl for
`guardrail eval --split dev --limit 400` there, with the dev tool family as
dev-tool.jsonl.  It reads what `guardrail data fetch
--dest data/external` and `guardrail data toolctx --family train --n 4000 --seed 0
--out runs/toolctx/train.jsonl` write, and RAGTruth at runs/ragtruth.
"""

import argparse
import json
import shutil
from pathlib import Path

from guardrail.commands.training_data import (calib_cap, capped, labelled_examples,
                                              load_span_data, split_for_training)
from guardrail.train.data import in_dev

X = Path("data/external")
FILES = {"train.jsonl": Path("runs/toolctx/train.jsonl"),
         "halueval-qa.jsonl": X / "halueval-qa.jsonl",
         "halueval-dialogue.jsonl": X / "halueval-dialogue.jsonl",
         "vitaminc.jsonl": X / "vitaminc.jsonl",
         "knowledge-conflicts.jsonl": X / "knowledge-conflicts.jsonl"}
WHOLE = "halueval-qa,halueval-dialogue,vitaminc,knowledge-conflicts"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--cap", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    real = labelled_examples(load_span_data(
        ["ragtruth=runs/ragtruth"] + [str(p) for p in FILES.values()]), WHOLE)
    fit, calib, _ = split_for_training(real, 0.2, args.seed)
    keep = {e.id for e in capped(fit, args.cap, args.seed) + capped(calib, calib_cap(args.cap),
                                                                    args.seed)}
    for name, path in FILES.items():
        with open(path) as f, open(args.out / name, "w") as g:
            n = sum(g.write(line) > 0 for line in f if json.loads(line)["id"] in keep)
        print(name, n)
    for name, path in (("dev-vc.jsonl", X / "vitaminc.jsonl"),
                       ("dev-hqa.jsonl", X / "halueval-qa.jsonl")):
        with open(path) as f, open(args.out / name, "w") as g:
            dev = (line for line in f if in_dev(json.loads(line)["source_id"], 0.2, args.seed))
            for _, line in zip(range(700), dev):
                g.write(line)
    shutil.copytree("runs/ragtruth/", args.out / "ragtruth", dirs_exist_ok=True)
    shutil.copy(X / "passages.jsonl", args.out / "passages.jsonl")
    shutil.copy("runs/toolctx/dev.jsonl", args.out / "dev-tool.jsonl")  # --family dev --seed 1


if __name__ == "__main__":
    main()
