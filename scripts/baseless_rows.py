"""How a detector ranks RAGTruth's two kinds of unsupported sentences (docs/model-card.md,
"Baseless sentences as synthetic data").

    .venv/bin/python scripts/baseless_rows.py RT_DIR MODEL_DIR=ROWS_CACHE ...

Each ROWS_CACHE is a `guardrail judge eval --rows-cache` file written for MODEL_DIR with
RT_DIR@dev among its data (a RAGTruth-format directory).  For each, at layer 4 and 6: the AUROC of
a sentence's highest token probability, unsupported against supported, separately for
the sentences whose gold span RAGTruth calls baseless info and those it calls a
conflict, and how many of each reach the model's token threshold (read from
MODEL_DIR's guardrail.json, with its split).  Runs no model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from guardrail.commands.judge import load_split
from guardrail.train.scores import auroc


def kinds(rt: Path) -> dict[str, list[tuple[int, int, str]]]:
    out = {}
    for line in open(rt / "response.jsonl", encoding="utf-8"):
        r = json.loads(line)
        out[str(r["id"])] = [(lab["start"], lab["end"], "conflict" if "Conflict" in
                              lab["label_type"] else "baseless") for lab in r["labels"]]
    return out


def main(rt: Path, caches: list[str]) -> None:
    labels = kinds(rt)
    for spec in caches:
        name, _, path = spec.partition("=")
        meta = json.loads((Path(name) / "guardrail.json").read_text())
        dev = load_split(f"{rt}@dev", meta)
        entries = json.loads(Path(path).read_text())["entries"].values()
        rows = next(e for e in entries if max(r["example"] for r in e) == len(dev) - 1
                    and all(r["end"] <= len(dev[r["example"]].response) for r in e))
        for layer in (4, 6):
            thr = meta["thresholds"].get(str(layer), meta["threshold"])
            score = {"supported": [], "baseless": [], "conflict": []}
            for r in (r for r in rows if r["layer"] == layer):
                ex = dev[r["example"]]
                a, b = r["start"], r["end"]
                if not any(s < b and a < e for s, e in ex.spans):
                    score["supported"].append(max(r["probs"], default=0.0))
                    continue
                raw = labels.get(str(ex.id).rpartition("/")[2], ())  # "ragtruth/11904"
                hit = [k for s, e, k in raw if s < b and a < e]
                kind = "conflict" if "conflict" in hit else "baseless"
                score[kind].append(max(r["probs"], default=0.0))
            parts = []
            for kind in ("baseless", "conflict"):
                pos, neg = score[kind], score["supported"]
                au = auroc([1] * len(pos) + [0] * len(neg), pos + neg)
                parts.append(f"{kind} {len(pos)}: AUROC {au:.3f}, reach the threshold "
                             f"{sum(p >= thr for p in pos)}")
            fp = sum(p >= thr for p in score["supported"])
            print(f"{name} layer {layer}: " + "; ".join(parts)
                  + f"; supported {len(score['supported'])}, reach it {fp}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
