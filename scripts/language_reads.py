"""How the language reading (``guardrail.evidence.language``) reads English data: every
sentence of every measured set, as the proxy cuts it and reads it (with the question
and the answer so far around it), and every grounding.  An English
sentence read as another language would pass unchecked, so this counts them; no model.

    .venv/bin/python scripts/language_reads.py [--show N]

Sets: RAGTruth QA (``runs/ragtruth``), the generated tool families (``runs/toolctx``),
the hand-written tool turns (docs/model-card/paraphrases), HaluEval (``data/external``)
and the shared FaithBench, SummEdits, TRUE and HaluEval general sets (``../shared/data``;
the last holds ChatGPT's answers to user queries, without grounding), where present.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
from types import SimpleNamespace

from guardrail.evidence.language import grounding_english, read, sentence_english
from guardrail.stream.segmenter import SentenceSegmenter
from guardrail.train.data import load_any

SETS = ["runs/ragtruth", *sorted(glob.glob("runs/toolctx/*.jsonl")),
        *sorted(glob.glob("docs/model-card/paraphrases/turns*.jsonl")),
        *sorted(glob.glob("data/external/halueval-*.jsonl")),
        "../shared/data/faithbench", "../shared/data/summedits",
        "../shared/data/true_benchmark_subsets"]
GENERAL = "../shared/data/halueval_general/general_data.json"  # answers, no grounding


def general() -> list:
    """HaluEval general: ChatGPT's answers to user queries (JSON lines), as examples."""
    if not os.path.exists(GENERAL):
        return []
    with open(GENERAL) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [SimpleNamespace(documents=(), context="", question=r["user_query"],
                            response=r["chatgpt_response"]) for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", type=int, default=40, help="print this many misreads")
    args = ap.parse_args()
    tally: collections.Counter = collections.Counter()
    shown = []
    for path in [*SETS, GENERAL]:
        if not os.path.exists(path):
            continue
        examples = general() if path == GENERAL else load_any(path)
        name = os.path.basename(path).split(".")[0]
        tally[f"sets read: {name}"] += 0
        for ex in examples:
            docs = list(ex.documents) or ([ex.context] if ex.context else [])
            tally["groundings"] += bool(docs)
            if docs and not grounding_english(docs):
                tally["groundings read as another language"] += 1
                shown.append((name, "grounding", docs[0][:160]))
            seg, around = SentenceSegmenter(), read(ex.question)
            for s in [*seg.feed(ex.response), *seg.flush()]:
                if not s.text.strip():
                    continue
                tally["sentences"] += 1
                own = read(s.text)
                tally[f"sentences telling {own.english}"] += 1
                if not sentence_english(own, around):
                    tally["sentences read as another language"] += 1
                    shown.append((name, "sentence", s.text))
                around += own
    for k, v in sorted(tally.items()):
        print(f"{k}: {v}")
    for row in shown[:args.show]:
        print(*row, sep=" | ")


if __name__ == "__main__":
    main()
