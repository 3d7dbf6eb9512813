"""Sentences of the hand-written tool turns that give a value to the wrong one of the
records they name (docs/model-card.md, "Records named by their labels, ...").

    .venv/bin/python scripts/misplaced_values.py

Over docs/model-card/paraphrases/turns*.jsonl: every sentence with a misplaced value
(``Records.about(...).misplaced``), its label and count; two or more is the
``values_swapped`` rule of the sentence judge.  Runs no model (seconds).
"""

import collections
import glob
import json
from pathlib import Path

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.values import numbers
from guardrail.evidence.words import content_words, stem

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    tally: collections.Counter = collections.Counter()
    for path in sorted(glob.glob(str(ROOT / "docs/model-card/paraphrases/turns*.jsonl"))):
        for line in open(path, encoding="utf-8"):
            d = json.loads(line)
            evidence = ContextEvidence.build([d["context"]], d["question"])
            for s in d["sentences"]:
                text = d["response"][s["start"]:s["end"]].strip()
                about = evidence._where.about(text, [stem(w) for w in content_words(text)],
                                              numbers(text), d["response"][:s["start"]])
                if about.misplaced:
                    tally[min(about.misplaced, 2), s["label"]] += 1
                    print(f"{s['label']:12s} {about.misplaced}  {d['id']}: {text}")
    for (n, label), count in sorted(tally.items()):
        print(f"{'two or more' if n == 2 else 'one':11s} misplaced, {label}: {count}")


if __name__ == "__main__":
    main()
