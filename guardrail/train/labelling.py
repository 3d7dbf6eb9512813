"""Labelled turns of your own tools: a file to label sentence by sentence, read by every
command that reads labelled data (`judge fit`, `judge eval`, `eval`, `bench verdicts`).

    cut(response)              (start, end) of each sentence, as the proxy cuts the stream
    template(row, n, dataset)  one row to label: every sentence with its text and a label
    documents(context)         a row's grounding as the proxy's documents
    spans_of(sentences)        the unsupported character ranges its labels give
    problems(row)              what is wrong with a labelled row (nothing: [])

The judge keeps 95 % of the supported sentences of the tool results it was fitted on;
tool results unlike those keep less, and the remedy is a refit on a few hundred turns of
one's own tools (`guardrail judge fit --tool-heads-only`).  A row of such data needs the
unsupported character ranges of its answer, which nobody writes by hand.  So
`guardrail data label` cuts each answer into the sentences the proxy checks and writes
them with a label each (``supported``, optionally the proxy's own verdict); a person
corrects the labels, and the loader reads the ranges off them (``external.read_fetched``:
a row with labelled sentences and no ``spans``).
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from guardrail.stream.segmenter import SentenceSegmenter
from guardrail.testing.script import split_pieces

LABELS = ("supported", "contradicted", "unverifiable")
UNSUPPORTED = LABELS[1:]
KNOWN = (*LABELS, "no_claim")
"""What a labelled file may say: ``no_claim`` (a sentence that makes no claim, as
``guardrail data toolctx`` labels a turn's intro) is not unsupported."""


def cut(response: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence, as the proxy cuts the streamed ``response``."""
    seg = SentenceSegmenter()
    out = []
    for piece in split_pieces(response):
        out += seg.feed(piece)
    return [(s.start, s.end) for s in out + seg.flush() if s.text.strip()]


def template(row: dict[str, Any], n: int, dataset: str,
             labels: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """``row`` (``context``: text, a list of texts or a JSON value; ``response``; optional
    ``question``, ``id``) as a row to label: each sentence of the response with its text
    and a label, ``supported`` unless ``labels`` (one per sentence) says otherwise.  Its
    ``source_id`` (what a split by source keeps together) is the row's, else its id."""
    for key, kinds in (("context", (str, dict, list)), ("response", (str,))):
        if not isinstance(row.get(key), kinds) or not row[key] or not str(row[key]).strip():
            raise ValueError(f"row {n}: {key!r} is missing or empty")
    docs = documents(row["context"])
    response = row["response"]
    bounds = cut(response)
    labels = list(labels) if labels is not None else ["supported"] * len(bounds)
    if len(labels) != len(bounds) or set(labels) - set(LABELS):
        raise ValueError(f"row {n}: {len(labels)} labels for {len(bounds)} sentences")
    rid = str(row.get("id") or f"{dataset}/{n}")
    return {"id": rid, "source_id": str(row.get("source_id") or rid),
            "dataset": dataset, "context": "\n\n".join(docs),
            "question": row.get("question") or "", "response": response,
            "sentences": [{"start": a, "end": b, "text": response[a:b], "label": label}
                          for (a, b), label in zip(bounds, labels)],
            "spans": [], "hallucinated": False, "has_spans": True,
            **({"documents": docs} if len(docs) > 1 else {})}  # read one by one, as sent


def documents(context: Any) -> list[str]:
    """A row's grounding as the proxy's documents: a text; a list of texts (RAG passages,
    one document each); any other JSON value (a tool result) written as JSON."""
    if isinstance(context, list) and context and all(isinstance(d, str) for d in context):
        return list(context)
    return [context if isinstance(context, str) else json.dumps(context)]


def spans_of(sentences: Sequence[dict[str, Any]]) -> tuple[tuple[int, int], ...]:
    """The character ranges of the sentences labelled ``contradicted`` or
    ``unverifiable``, merged.  ``supported`` and ``no_claim`` (the intros and sign-offs
    of ``guardrail data toolctx`` files) are not unsupported; any other label is an
    error, not a span."""
    out: list[tuple[int, int]] = []
    for s in sorted(sentences, key=lambda s: s["start"]):
        if s["label"] not in KNOWN:
            raise ValueError(f"sentence at {s['start']}: label {s['label']!r} is not one of "
                             f"{', '.join(KNOWN)}")
        if s["label"] not in UNSUPPORTED:
            continue
        if out and s["start"] <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], int(s["end"])))
        else:
            out.append((int(s["start"]), int(s["end"])))
    return tuple(out)


def problems(row: dict[str, Any]) -> list[str]:
    """What is wrong with a labelled row: an unknown label, a sentence whose offsets do
    not hold its text (the answer was edited after it was cut), none at all."""
    sentences, response = row.get("sentences") or [], row.get("response", "")
    if not isinstance(response, str):
        return ["response: not a text"]
    if not isinstance(sentences, list):
        return ["sentences: not a list"]
    out = [] if sentences else ["no sentences"]
    for i, s in enumerate(sentences):
        if not isinstance(s, dict):
            out.append(f"sentence {i}: not an object of start, end, label")
            continue
        if s.get("label") not in KNOWN:
            out.append(f"sentence {i}: label {s.get('label')!r} is not one of {', '.join(KNOWN)}")
        a, b = s.get("start"), s.get("end")
        if not (isinstance(a, int) and isinstance(b, int) and 0 <= a < b <= len(response)):
            out.append(f"sentence {i}: start {a!r} and end {b!r} are not inside the response")
        elif "text" in s and response[a:b] != s["text"]:
            out.append(f"sentence {i}: the response at {a}:{b} is not its text")
    return out
