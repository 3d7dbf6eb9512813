"""How many prose documents of ../shared/data the renderer would read as CSV (it should
be none): RAGTruth passages, the TRUE and FaithBench groundings, SummEdits documents
(docs/model-card.md, "Totals over records without a cue word ...").

    .venv/bin/python scripts/prose_as_csv.py [DATA_DIR]
"""

import csv
import glob
import json
import sys

from guardrail.evidence.render import render

data = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
csv.field_size_limit(10 ** 9)
texts = []
for line in open(f"{data}/ragtruth_qa_test_subset/derived_ragtruth_format/source_info.jsonl"):
    info = json.loads(line).get("source_info")
    texts.append(info if isinstance(info, str) else "\n".join(map(str, info.values()))
                 if isinstance(info, dict) else json.dumps(info))
groundings = glob.glob(f"{data}/true_benchmark_subsets/*.csv")
for path in groundings + [f"{data}/faithbench/FaithBench.csv"]:
    for row in csv.DictReader(open(path, encoding="utf-8")):
        texts += [row[k] for k in ("grounding", "source", "premise", "document") if k in row]
for path in glob.glob(f"{data}/summedits/*.json"):
    texts += [d.get("doc", "") for d in json.load(open(path, encoding="utf-8"))]
read = [t for t in texts if render(t).format == "csv"]
print(f"{len(texts)} prose documents, {len(read)} read as CSV")
