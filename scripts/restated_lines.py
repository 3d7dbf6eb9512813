"""How many labelled sentences say one line of their grounding again (docs/model-card.md,
"A line said again, spans of function words, the assistant's next step").

    .venv/bin/python scripts/restated_lines.py

Over all of RAGTruth QA (../shared/data/ragtruth_qa_test_subset, train part included)
and the hand-written sets docs/model-card/paraphrases/turns*.jsonl, claims only: the
supported and unsupported sentences, in prose and tool contexts, that the sentence
judge passes without the model because they restate one line
(``guardrail.evidence.judge.restates``); the unsupported ones are printed.  Runs no
model (seconds).
"""

import collections
import glob
import json
from pathlib import Path

from guardrail.commands.judge import load_split
from guardrail.commands.training_data import labelled_examples
from guardrail.evidence.claims import is_claim
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import restates
from guardrail.train.scores import sentence_bounds

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    meta = json.loads((ROOT / "guardrail/models/default/guardrail.json").read_text())
    specs = [str(ROOT / "../shared/data/ragtruth_qa_test_subset")] + sorted(
        glob.glob(str(ROOT / "docs/model-card/paraphrases/turns*.jsonl")))
    counts: collections.Counter = collections.Counter()
    for spec in specs:
        for ex in labelled_examples(load_split(spec, meta), ""):
            if not ex.has_spans:
                continue
            ev = ContextEvidence.build([ex.context], ex.question)
            kind = "tool" if ev.structured else "prose"
            for s, e in sentence_bounds(ex.response):
                text = ex.response[s:e]
                if not is_claim(text):
                    continue
                label = "unsupported" if any(a < e and b > s for a, b in ex.spans) \
                    else "supported"
                said = restates(ev.features(text, ex.response[:s]))
                counts[(kind, label)] += 1
                counts[(kind, label, "restated")] += said
                if said and label == "unsupported":
                    print(f"unsupported, restates a line: {Path(spec).name}: {text.strip()}")
    for kind in ("prose", "tool"):
        for label in ("supported", "unsupported"):
            print(f"{kind:5} {label:11} {counts[(kind, label, 'restated')]:4} of "
                  f"{counts[(kind, label)]:5} restate a line")


if __name__ == "__main__":
    main()
