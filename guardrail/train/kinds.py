"""The data's own kind of each unsupported sentence: ``contradicted`` or ``unverifiable``.

The judge explains every flag with a kind (``evidence.judge.explain``); these are the
labels it is measured against (``explanation_accuracy``, "kind ok"):

- a `guardrail data toolctx` file and the hand-written sets label each sentence;
- a `guardrail data fetch` file labels each example (VitaminC's refuted / not enough
  info, a knowledge conflict);
- RAGTruth labels each span with a type: a conflict ("Evident Conflict", "Subtle
  Conflict") is contradicted, baseless info ("Evident Baseless Info", "Subtle Baseless
  Info") unverifiable.  A sentence with spans of both kinds is contradicted.

Elsewhere (FaithBench, TRUE, SummEdits) the data says nothing of the kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

from guardrail.train.data import Example, detect_format, locate

KindOf = Callable[[Example, int, int], Optional[str]]
Spans = dict[str, list[tuple[int, int, str]]]


def ragtruth_kind(label_type: str) -> Optional[str]:
    """RAGTruth's label type as a kind; None for a type it does not name."""
    t = label_type.lower()
    return "contradicted" if "conflict" in t else "unverifiable" if "baseless" in t else None


def _ragtruth(directory: Path) -> Spans:
    """Each response's labelled spans with their kinds, placed as ``load_ragtruth``
    places them (ids as it writes them)."""
    out: Spans = {}
    with (directory / "response.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            response = row.get("response") or ""
            for lab in row.get("labels") or ():
                kind = ragtruth_kind(str(lab.get("label_type") or ""))
                placed = locate(response, lab.get("text") or "", int(lab.get("start", 0)),
                                int(lab.get("end", 0)))
                if kind and placed:
                    out.setdefault(f"ragtruth/{row.get('id')}", []).append((*placed, kind))
    return out


def _labelled_file(path: Path) -> tuple[Spans, dict[str, str]]:
    per_sentence: Spans = {}
    per_example: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            for s in row.get("sentences", ()):
                if s["label"] in ("contradicted", "unverifiable"):
                    per_sentence.setdefault(row["id"], []).append((s["start"], s["end"],
                                                                   s["label"]))
            if row.get("kind"):
                per_example[row["id"]] = row["kind"]
    return per_sentence, per_example


def kinds_of(spec: str) -> Optional[KindOf]:
    """The kind of the unsupported sentence ``[start, end)`` of an example of ``spec``
    (``PATH`` or ``PATH@SPLIT``) where the data says it; None when it says none."""
    path = Path(spec.rpartition("@")[0] if "@" in spec else spec)
    per_example: dict[str, str] = {}
    if path.is_file() and path.suffix == ".jsonl":
        per_sentence, per_example = _labelled_file(path)
    elif path.is_dir():
        try:
            form, where = detect_format(path)
        except ValueError:
            return None
        per_sentence = _ragtruth(where) if form == "ragtruth" else {}
    else:
        return None

    def kind_of(ex: Example, start: int, end: int) -> Optional[str]:
        hit = {k for a, b, k in per_sentence.get(ex.id, ()) if a < end and b > start}
        if hit:
            return "contradicted" if "contradicted" in hit else "unverifiable"
        return per_example.get(ex.id)
    return kind_of if per_sentence or per_example else None
