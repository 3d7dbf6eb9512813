"""Write and check a hand-written set of tool turns (docs/model-card/paraphrases/).

    .venv/bin/python scripts/turn_sets.py check FILE.jsonl ...

``check`` validates each line's fields, that its sentence bounds are exactly where the
proxy's segmenter cuts the streamed response, its labels and spans, and at most two
unsupported sentences a turn.  A set's author builds rows with ``make_turn`` (import this
file) and labels sentences by their index in ``sentences_of(response)``; the brief the
helpers wrote the sets from is docs/model-card/paraphrases/BRIEF.md.  A set made with an
older segmenter may fail ``check`` where the segmenter changed since; `bench verdicts`
maps each reported sentence back by its text, so such a set still scores.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from guardrail.train.labelling import LABELS, cut

KEYS = {"id", "source_id", "dataset", "context", "question", "response", "sentences",
        "spans", "hallucinated", "has_spans"}


def sentences_of(response: str) -> list[str]:
    return [response[a:b] for a, b in cut(response)]


def make_turn(prefix: str, n: int, context, question: str, response: str,
              labels: dict[int, str] | None = None) -> dict:
    """One row; ``labels``: {sentence index: "contradicted" | "unverifiable"}, every
    other sentence supported."""
    labels = labels or {}
    bounds = cut(response)
    if any(not 0 <= i < len(bounds) for i in labels) or set(labels.values()) - set(LABELS):
        raise ValueError(f"labels {labels} for {len(bounds)} sentences")
    sents = [{"start": a, "end": b, "label": labels.get(i, "supported")}
             for i, (a, b) in enumerate(bounds)]
    spans = [[s["start"], s["end"]] for s in sents if s["label"] != "supported"]
    return {"id": f"{prefix}/{n}", "source_id": f"{prefix}/{n}",
            "dataset": f"{prefix}/{'changed' if spans else 'supported'}",
            "context": context if isinstance(context, str) else json.dumps(context),
            "question": question, "response": response, "sentences": sents,
            "spans": spans, "hallucinated": bool(spans), "has_spans": True}


def check(path: str) -> list[str]:
    """What is wrong with the set at ``path`` (nothing: an empty list)."""
    errors, kinds, prefix = [], Counter(), None
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        try:
            d = json.loads(line)
        except ValueError as e:
            errors.append(f"line {i}: not JSON: {e}")
            continue
        if set(d) != KEYS:
            errors.append(f"line {i}: keys {sorted(set(d) ^ KEYS)} differ")
            continue
        prefix = prefix or d["id"].split("/")[0]
        if d["id"].split("/")[0] != prefix or d["source_id"] != d["id"]:
            errors.append(f"line {i}: id and source_id must be equal, '{prefix}/N'")
        got = [(s["start"], s["end"]) for s in d["sentences"]]
        if got != (bounds := cut(d["response"])):
            errors.append(f"line {i} ({d['id']}): bounds {got}, the proxy cuts {bounds}")
        bad = [[s["start"], s["end"]] for s in d["sentences"] if s["label"] != "supported"]
        labels = [s["label"] for s in d["sentences"]]
        kinds.update(labels)
        if set(labels) - set(LABELS):
            errors.append(f"line {i}: unknown labels {set(labels) - set(LABELS)}")
        if bad != d["spans"] or d["hallucinated"] != bool(bad) or not d["has_spans"] \
                or d["dataset"] != f"{prefix}/{'changed' if bad else 'supported'}":
            errors.append(f"line {i}: spans, hallucinated or dataset disagree with the labels")
        if len(bad) > 2:
            errors.append(f"line {i}: more than two unsupported sentences")
    print(f"{path}: {dict(kinds)}")
    return errors


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "check":
        sys.exit(__doc__)
    problems = [e for p in sys.argv[2:] for e in check(p)]
    print("\n".join(problems) or "OK")
    sys.exit(1 if problems else 0)
