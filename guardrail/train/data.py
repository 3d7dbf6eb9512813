"""Labelled (context, question, response) examples for training and evaluating the detector.

Every loader turns one on-disk format into the same :class:`Example`:

    load_ragtruth(dir)    RAGTruth ``response.jsonl`` + ``source_info.jsonl``   span labels
    load_faithbench(dir)  FaithBench ``data_for_release/batch_*.json``          span labels
    load_binary(path)     TRUE CSVs and SummEdits JSON arrays                   example labels
    load_any(path)        picks one of the above from what is at ``path``

Loaders never crash on one bad row: they skip it (empty response, unusable
label), count it and log one warning per file.  Texts are kept exactly as stored,
so span offsets stay valid.  ``split_by_source`` then splits by source document,
so no document is seen in training and again in evaluation.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Optional, Sequence

# `guardrail data fetch` rows
from guardrail.train.external import FETCHED_SETS, is_fetched, read_fetched

log = logging.getLogger(__name__)

SUMMARY_QUESTION = "Summarize the document."
DATA2TXT_QUESTION = "Write an overview of the business from the structured data."


@dataclass(frozen=True)
class Example:
    """One labelled response and the documents it must be grounded in."""

    id: str
    context: str            # grounding documents as one string
    question: str           # "" when the task has none; summaries use SUMMARY_QUESTION
    response: str
    spans: tuple[tuple[int, int], ...]  # hallucinated char ranges in response: sorted, merged
    hallucinated: bool      # example-level label
    has_spans: bool         # True for span-labelled data; binary-only data has spans == ()
    source_id: str          # source document group; a split never puts one in two parts
    dataset: str            # "ragtruth", "faithbench", "summedits", "true/<name>", ...
    documents: tuple[str, ...] = ()  # the grounding as separate tool results, when it came
    # as several (``context`` joins them); what a check reads is :func:`grounding`


def example_row(ex: Example) -> dict:
    """``ex`` as a JSON row: spans as lists, ``documents`` only where it has several."""
    row = {**vars(ex), "spans": [list(s) for s in ex.spans]}
    if ex.documents:
        row["documents"] = list(ex.documents)
    else:
        del row["documents"]
    return row


def grounding(ex: Example) -> str | list[str]:
    """What a check of ``ex`` reads: its documents one by one (each tool result rendered
    on its own, as the proxy renders a request's tool messages), else its context."""
    return list(ex.documents) if ex.documents else ex.context


def text_id(text: str) -> str:
    """A stable id for a document: identical texts (up to whitespace) share it."""
    norm = " ".join(text.split())
    return "doc:" + hashlib.sha1(norm.encode("utf-8")).hexdigest()[:16]


def merge_spans(spans: Iterable[tuple[int, int]], length: int) -> tuple[tuple[int, int], ...]:
    """Clip to ``[0, length)``, drop empty ranges, sort, and merge overlapping or touching ones."""
    out: list[list[int]] = []
    for s, e in sorted((max(0, s), min(length, e)) for s, e in spans):
        if s >= e:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return tuple((s, e) for s, e in out)


def locate(response: str, text: str, start: int, end: int) -> Optional[tuple[int, int]]:
    """The offsets of a labelled ``text``: ``(start, end)`` when they slice to it, else
    the occurrence of ``text`` nearest ``start``, else the stored offsets when no text
    is given and they fit the response; ``None`` when the label cannot be placed."""
    if not text:
        return (start, end) if 0 <= start < end <= len(response) else None
    if response[start:end] == text:
        return start, end
    hits, i = [], response.find(text)
    while i >= 0:
        hits.append(i)
        i = response.find(text, i + 1)
    if not hits:
        return None
    best = min(hits, key=lambda h: abs(h - start))
    return best, best + len(text)


class _Tally:
    """Counts what a loader skipped or repaired, and logs it once."""

    def __init__(self, where: str):
        self.where = where
        self.counts: Counter[str] = Counter()

    def add(self, what: str) -> None:
        self.counts[what] += 1

    def report(self) -> None:
        if self.counts:
            items = ", ".join(f"{k}: {v}" for k, v in sorted(self.counts.items()))
            log.warning("%s: %s", self.where, items)


def _render(value: object, indent: str = "") -> str:
    """Structured source info (RAGTruth Data2txt dicts) as readable ``key: value`` lines."""
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{indent}{k}:\n{_render(v, indent + '  ')}")
            else:
                lines.append(f"{indent}{k}: {v}")
        return "\n".join(lines)
    if isinstance(value, list):
        return "\n".join(
            f"{indent}-\n{_render(v, indent + '  ')}" if isinstance(v, (dict, list))
            else f"{indent}- {v}" for v in value)
    return f"{indent}{value}"


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def _ragtruth_source(info: dict) -> tuple[str, str]:
    """``(context, question)`` of one ``source_info.jsonl`` record."""
    si = info.get("source_info")
    task = str(info.get("task_type", "")).lower()
    if isinstance(si, dict) and "passages" in si:
        return str(si["passages"]), str(si.get("question", ""))
    if isinstance(si, str):
        return si, SUMMARY_QUESTION if task == "summary" else ""
    question = DATA2TXT_QUESTION if task == "data2txt" else ""
    return _render(si), question


def load_ragtruth(directory: str | Path) -> list[Example]:
    """Load a RAGTruth-format directory (``response.jsonl`` + ``source_info.jsonl``).

    Context is ``source_info.passages`` for QA, the source text for summaries and the
    structured record rendered as ``key: value`` lines for Data2txt.  Every label is
    kept (``implicit_true`` ones too, as RAGTruth's own evaluation does).  A label
    whose offsets do not slice to its ``text`` is re-placed by searching the text.
    """
    directory = Path(directory)
    tally = _Tally(str(directory))
    sources = {str(r["source_id"]): _ragtruth_source(r)
               for r in _read_jsonl(directory / "source_info.jsonl")}
    out = []
    for row in _read_jsonl(directory / "response.jsonl"):
        response = row.get("response") or ""
        sid = str(row.get("source_id"))
        if not response.strip():
            tally.add("empty response skipped")
            continue
        if sid not in sources:
            tally.add("unknown source_id skipped")
            continue
        spans = []
        for lab in row.get("labels") or []:
            text = lab.get("text") or ""
            placed = locate(response, text, int(lab.get("start", 0)), int(lab.get("end", 0)))
            if placed is None:
                tally.add("label not found in response, dropped")
                continue
            if text and placed != (lab.get("start"), lab.get("end")):
                tally.add("label offsets repaired by search")
            spans.append(placed)
        spans_t = merge_spans(spans, len(response))
        context, question = sources[sid]
        out.append(Example(
            id=f"ragtruth/{row.get('id')}", context=context, question=question,
            response=response, spans=spans_t, hallucinated=bool(spans_t), has_spans=True,
            source_id=f"ragtruth/{sid}", dataset="ragtruth"))
    tally.report()
    return out


def is_unwanted(labels: Sequence[str]) -> bool:
    """FaithBench: does an annotation's label list mark an unwanted hallucination?"""
    return any(lab == "Unwanted" or lab.startswith("Unwanted.") for lab in labels)


def load_faithbench(directory: str | Path) -> list[Example]:
    """Load FaithBench (``data_for_release/batch_*.json`` under ``directory``, or ``directory`` itself).

    Hallucinated spans are the union over annotators of the annotations whose
    ``label`` list holds ``"Unwanted"`` or an ``"Unwanted.*"`` subtype (an annotation
    labelled both Unwanted and Benign/Questionable counts).  Annotations that are only
    ``"Benign"`` (true but not in the source) or ``"Questionable"`` are NOT counted:
    a summary carrying only those is a negative.  ``summary_start/end`` are checked
    against ``summary_span`` and re-placed by search when they disagree.
    ``source_id`` is :func:`text_id` of the source (each source has ~10 summaries).
    """
    directory = Path(directory)
    release = directory / "data_for_release"
    files = sorted((release if release.is_dir() else directory).glob("batch_*.json"),
                   key=lambda p: (len(p.stem), p.stem))
    if not files:
        raise FileNotFoundError(f"no batch_*.json under {directory}")
    tally = _Tally(str(directory))
    out = []
    for path in files:
        with path.open(encoding="utf-8") as f:
            samples = json.load(f)["samples"]
        for sample in samples:
            summary, source = sample.get("summary") or "", sample.get("source") or ""
            if not summary.strip() or not source.strip():
                tally.add("empty summary or source skipped")
                continue
            spans = []
            for ann in sample.get("annotations") or []:
                if not is_unwanted(ann.get("label") or []):
                    continue
                start, end = ann.get("summary_start"), ann.get("summary_end")
                placed = locate(summary, ann.get("summary_span") or "",
                                -1 if start is None else int(start), -1 if end is None else int(end))
                if placed is None:
                    tally.add("annotation not found in summary, dropped")
                    continue
                if placed != (start, end):
                    tally.add("annotation offsets repaired by search")
                spans.append(placed)
            spans_t = merge_spans(spans, len(summary))
            out.append(Example(
                id=f"faithbench/{path.stem}/{sample.get('sample_id')}", context=source,
                question=SUMMARY_QUESTION, response=summary, spans=spans_t,
                hallucinated=bool(spans_t), has_spans=True, source_id=text_id(source),
                dataset="faithbench"))
    tally.report()
    return out


_SUMMARIZATION = {"summeval", "frank", "qags_cnndm", "qags_xsum"}


def _binary_file(path: Path) -> list[Example]:
    tally = _Tally(str(path))
    rows: list[tuple[str, str, str, str, object]] = []  # (row id, grounding, question, text, label)
    if path.suffix == ".csv":
        name = path.stem
        dataset = f"true/{name}"
        question = SUMMARY_QUESTION if name in _SUMMARIZATION else ""
        csv.field_size_limit(sys.maxsize)
        with path.open(encoding="utf-8", newline="") as f:
            for i, r in enumerate(csv.DictReader(f)):
                q = r.get("previous turn") or question
                rows.append((str(i), r.get("grounding") or "", q, r.get("generated_text") or "",
                             r.get("label")))
    else:
        records, why = None, ""
        with path.open(encoding="utf-8") as f:
            try:
                records = json.load(f)
            except ValueError as exc:
                why = f" ({exc})"
        if not (isinstance(records, list) and all(isinstance(r, dict) for r in records)):
            raise ValueError(f"{path.name} is not a JSON array of {{doc, summary, label}} "
                             f"objects (SummEdits){why}; the formats read are listed by "
                             "`guardrail eval --help`")
        domain = path.stem.removeprefix("summedits_")
        dataset = "summedits"
        for i, r in enumerate(records):
            rows.append((f"{domain}/{r.get('id', i)}", r.get("doc") or "", SUMMARY_QUESTION,
                         r.get("summary") or "", r.get("label")))
    out = []
    for row_id, grounding, question, text, label in rows:
        if not text.strip() or not grounding.strip():
            tally.add("empty response or grounding skipped")
            continue
        try:
            consistent = int(float(str(label)))
        except ValueError:
            tally.add("unreadable label skipped")
            continue
        if consistent not in (0, 1):
            tally.add("label not 0/1 skipped")
            continue
        out.append(Example(
            id=f"{dataset}/{row_id}", context=grounding, question=question, response=text,
            spans=(), hallucinated=consistent == 0, has_spans=False,
            source_id=text_id(grounding), dataset=dataset))
    tally.report()
    return out


def load_binary(path: str | Path) -> list[Example]:
    """Load response-level labels: a TRUE CSV (``grounding, generated_text, label``),
    a SummEdits JSON array (``doc, summary, label``), or a directory of such files.

    ``label`` 1 means consistent, so ``hallucinated = label == 0``; ``has_spans`` is
    False.  For BEGIN the ``previous turn`` column becomes the question; the other
    summarization sets get :data:`SUMMARY_QUESTION`, the dialogue sets ``""``.
    ``source_id`` is :func:`text_id` of the grounding, so an article shared by two
    sets stays in one split.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".csv", ".json"))
        return [ex for p in files for ex in _binary_file(p)]
    return _binary_file(path)


Format = Literal["ragtruth", "faithbench", "binary", "auto"]


def detect_format(path: str | Path) -> tuple[Literal["ragtruth", "faithbench", "binary"], Path]:
    """Which loader reads ``path``, and the path to give it."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path} does not exist" + (
            " (`guardrail data fetch` writes it; it names on stderr the sets it could not)"
            if path.stem in FETCHED_SETS else ""))
    if path.is_file():
        if path.suffix in (".csv", ".json"):
            return "binary", path
    elif path.is_dir():
        for candidate in (path, path / "derived_ragtruth_format", path / "dataset"):
            if (candidate / "response.jsonl").is_file() and (candidate / "source_info.jsonl").is_file():
                return "ragtruth", candidate
        if (path / "data_for_release").is_dir() or any(path.glob("batch_*.json")):
            return "faithbench", path
        if any(p.suffix in (".csv", ".json") for p in path.iterdir()):
            return "binary", path
    raise ValueError(f"cannot tell the data format of {path}")


def load_any(path: str | Path, format: Format = "auto") -> list[Example]:
    """Load ``path`` with the named loader, or the one :func:`detect_format` picks."""
    if format == "auto" and is_fetched(path):
        return [Example(**fields) for fields, _kind in read_fetched(path)]
    if format == "auto":
        format, path = detect_format(path)
    loaders = {"ragtruth": load_ragtruth, "faithbench": load_faithbench, "binary": load_binary}
    if format not in loaders:
        raise ValueError(f"format must be one of {sorted(loaders)} or 'auto', got {format!r}")
    return loaders[format](path)


def source_ids(examples: Iterable[Example]) -> set[str]:
    return {ex.source_id for ex in examples}


def in_dev(source_id: str, dev_fraction: float, seed: int) -> bool:
    """Whether a source belongs to the dev split; depends on nothing but its arguments."""
    digest = hashlib.sha256(f"{seed}\x00{source_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < dev_fraction


CALIB_FRACTION = 0.1
"""Share of the non-dev sources that ``train`` keeps out of fitting to calibrate on."""


def in_calib(source_id: str, dev_fraction: float, seed: int) -> bool:
    """Whether a source belongs to the calibration split: not dev, then hashed with
    ``seed + 1`` (``commands.training_data.split_for_training``)."""
    return (not in_dev(source_id, dev_fraction, seed)
            and in_dev(source_id, CALIB_FRACTION, seed + 1))


def split_by_source(examples: Sequence[Example], dev_fraction: float = 0.2,
                    seed: int = 0) -> tuple[list[Example], list[Example]]:
    """``(train, dev)``: each source goes to dev with probability ``dev_fraction``.

    The decision hashes ``(seed, source_id)`` alone, so a source lands on the same
    side whatever else is loaded with it (adding synthetic data built from a dev
    document keeps it in dev), across runs and Python versions.  The realised
    fraction is approximate when there are few sources.  Order is kept.
    """
    if not 0.0 <= dev_fraction <= 1.0:
        raise ValueError(f"dev_fraction must be in [0, 1], got {dev_fraction}")
    train, dev = [], []
    for ex in examples:
        (dev if in_dev(ex.source_id, dev_fraction, seed) else train).append(ex)
    return train, dev
