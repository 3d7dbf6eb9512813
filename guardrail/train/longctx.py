"""A long-context evaluation set (scored by ``train.longctx_eval``).

    guardrail data longctx --out DIR     load_sources -> build -> write_ragtruth(DIR)

An item is a real RAGTruth QA (passages, question, response) from the DEV split of
the model's training (``--split calib``: from its calibration split, to fit on).  Its
passages -- the evidence -- are buried at a relative ``depth`` (0 = first, 1 = last)
inside other real documents of the same side of the split (RAGTruth passages of other
sources, FaithBench sources, SummEdits documents and TRUE groundings) until the
context has ``length`` tokens of the detector's tokenizer.
Half of the answers are hallucinated: real RAGTruth hallucinated responses with
their annotated spans, and/or supported responses with ONE injected change
(synth's number / negation / swap perturbations) whose span is exact.  The same
items and the same distractors are used at every depth of a length, so a change
across depths comes from the depth alone.

The set is written in RAGTruth format (``response.jsonl`` + ``source_info.jsonl``)
with extra fields ``depth``, ``length`` and ``n_tokens``; the RAGTruth loader drops
them, so ``longctx_eval.read_fields`` reads them back by example id.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Optional, Sequence

from guardrail.model.inputs import tokenize
from guardrail.model.bm25 import terms
from guardrail.train.data import Example, in_calib, in_dev, load_any, merge_spans
from guardrail.train.perturb import perturb_negation, perturb_number, perturb_swap
from guardrail.train.synth import documents_from

Hallucinations = Literal["real", "injected", "mixed"]
DistractorOrder = Literal["random", "similar"]
Split = Literal["dev", "calib"]

# Perturbations that borrow nothing from other documents (they never touch the pool).
INJECT = {"number": perturb_number, "negation": perturb_negation, "swap": perturb_swap}

SOURCES = ("ragtruth_qa_test_subset", "faithbench", "summedits", "true_benchmark_subsets")
MIN_DISTRACTOR_CHARS = 300


@dataclass(frozen=True)
class LongExample:
    """One item buried at one depth in one context length."""

    example: Example            # context = the long context; spans index the response
    depth: float                # where the evidence starts, relative (0 first .. 1 last)
    length: int                 # the requested context length in tokens
    n_tokens: int               # the context's actual length in tokens
    evidence: tuple[int, int]   # the item's own passages: context[start:end]
    origin: str                 # the RAGTruth example the item came from
    kind: str                   # "supported" | "real" | "injected/<perturbation>"
    distractors: tuple[str, ...]  # source ids of the documents around the evidence


# -- sources ---------------------------------------------------------------------------------

def load_sources(root: str | Path, dev_fraction: float, seed: int, split: Split = "dev"
                 ) -> tuple[list[Example], list[tuple[str, str]]]:
    """``(items, distractors)`` under ``root`` (``shared/data``), one split of a model's
    training by source.

    ``dev`` (for evaluation): ``items`` are the dev RAGTruth QA examples, ``distractors``
    ``(source_id, text)`` of every distinct dev document of at least
    ``MIN_DISTRACTOR_CHARS`` characters from the four span or binary sets (RAGTruth
    passages included: an item never gets its own source as a distractor).  ``calib``
    (to fit on, never evaluated on): the RAGTruth QA examples of the calibration split
    that ``train`` carves out of the non-dev sources, among every non-dev document.
    """
    root = Path(root)
    items: list[Example] = []
    distractors: dict[str, str] = {}
    for name in SOURCES:
        path = root / name
        if not path.exists():
            continue
        examples = [ex for ex in load_any(path)
                    if in_dev(ex.source_id, dev_fraction, seed) == (split == "dev")]
        if name == "ragtruth_qa_test_subset":
            items = [ex for ex in examples
                     if split == "dev" or in_calib(ex.source_id, dev_fraction, seed)]
        for source_id, text, _question in documents_from(examples):
            if len(text.strip()) >= MIN_DISTRACTOR_CHARS:
                distractors.setdefault(source_id, text.strip())
    if not items:
        raise FileNotFoundError(f"no {split}-split RAGTruth QA items under {root}")
    return items, sorted(distractors.items())


def inject(ex: Example, rng: random.Random) -> Optional[tuple[Example, str]]:
    """``ex`` (a supported response) with one injected change, and the change's kind."""
    kinds = list(INJECT)
    rng.shuffle(kinds)
    for kind in kinds:
        result = INJECT[kind](ex.response, 0, ex.context, None, rng)
        if result is not None and result[0] != ex.response:
            response, spans = result
            return Example(
                id=ex.id, context=ex.context, question=ex.question, response=response,
                spans=merge_spans(spans, len(response)), hallucinated=True, has_spans=True,
                source_id=ex.source_id, dataset=ex.dataset), f"injected/{kind}"
    return None


def pick_items(items: Sequence[Example], n: int, rng: random.Random,
               hallucinations: Hallucinations = "mixed") -> list[tuple[Example, str]]:
    """``n`` items, ``n // 2`` of them hallucinated: ``(example, kind)``.

    ``mixed`` takes half of the hallucinated ones from real RAGTruth hallucinations
    and injects the rest; supported bases for injection are never also used as
    supported items.
    """
    if hallucinations not in ("real", "injected", "mixed"):
        raise ValueError(f"hallucinations must be real, injected or mixed, got {hallucinations!r}")
    supported = [ex for ex in items if not ex.hallucinated and ex.question]
    real = [ex for ex in items if ex.hallucinated and ex.question]
    rng.shuffle(supported)
    rng.shuffle(real)
    n_bad = n // 2
    n_real = {"real": n_bad, "injected": 0, "mixed": math.ceil(n_bad / 2)}[hallucinations]
    if n_real > len(real):
        raise ValueError(f"asked for {n_real} real hallucinated responses; "
                         f"the split has {len(real)}")
    picked = [(ex, "real") for ex in real[:n_real]]
    ok = [(ex, "supported") for ex in supported[:n - n_bad]]
    for ex in supported[n - n_bad:]:
        if len(picked) >= n_bad:
            break
        injected = inject(ex, rng)
        if injected is not None:
            picked.append(injected)
    if len(picked) < n_bad or len(ok) < n - n_bad:
        raise ValueError(f"the split has too few usable items for {n} per cell")
    out = picked + ok
    rng.shuffle(out)
    return out


# -- burying ---------------------------------------------------------------------------------

def _boundary(text: str, at: int) -> int:
    """A place near ``at`` to insert a document: a line break, else a sentence end,
    else a space (the closest within 1% of the text, 40 to 300 characters), else ``at``."""
    reach = min(300, max(40, len(text) // 100))
    lo, hi = max(0, at - reach), min(len(text), at + reach)
    for marks in (("\n",), (". ", "? ", "! "), (" ",)):
        best = None
        for mark in marks:
            i = text.find(mark, lo)
            while 0 <= i < hi:
                cut = i + len(mark)
                if best is None or abs(cut - at) < abs(best - at):
                    best = cut
                i = text.find(mark, i + 1)
        if best is not None:
            return best
    return at


def bury(evidence: str, distractors: Sequence[tuple[str, str]], tokenizer, length: int,
         depths: Sequence[float]) -> tuple[list[tuple[str, int]], tuple[str, ...]]:
    """The evidence inside ``length`` tokens of distractor text, once per depth.

    Distractors are taken in the given order until the filler has ``length`` minus
    the evidence's tokens (the last one is cut); the evidence goes at ``depth`` of
    the filler's tokens, moved to the nearest line or sentence break.  Returns
    ``([(context, evidence_start), ...], source ids used)``.
    """
    evidence = evidence.strip()
    budget = length - len(tokenize(tokenizer, evidence))
    if budget <= 0:
        return [(evidence, 0) for _ in depths], ()
    used: list[tuple[str, str]] = []
    chars = 0
    for sid, text in distractors:
        used.append((sid, text))
        chars += len(text) + 2
        if chars < 3 * budget:  # fewer than ~3 characters a token is rare in prose
            continue
        filler = "\n\n".join(t for _, t in used)
        filler_toks = tokenize(tokenizer, filler)
        if len(filler_toks) >= budget:
            break
    else:
        filler = "\n\n".join(t for _, t in used)
        filler_toks = tokenize(tokenizer, filler)
        if len(filler_toks) < budget:
            raise ValueError(f"not enough distractor text for {length} tokens")
    filler = filler[:int(filler_toks.offsets[budget - 1][1])]
    out = []
    for depth in depths:
        if not 0.0 <= depth <= 1.0:
            raise ValueError(f"depth must be in [0, 1], got {depth}")
        at_tok = round(depth * budget)
        at = len(filler) if at_tok >= budget else int(filler_toks.offsets[at_tok][0])
        at = _boundary(filler, at) if 0 < at < len(filler) else at
        before, after = filler[:at].rstrip(), filler[at:].lstrip()
        context = "\n\n".join(p for p in (before, evidence, after) if p)
        out.append((context, len(before) + 2 if before else 0))
    return out, tuple(sid for sid, _ in used)


def order_distractors(ex: Example, distractors: Sequence[tuple[str, str]], rng: random.Random,
                      how: DistractorOrder = "random") -> list[tuple[str, str]]:
    """The documents to surround ``ex`` with, first used first (never its own source).

    ``similar`` puts first the documents sharing the most terms with the question and
    passages (by idf over the pool): harder for retrieval than ``random`` ones.
    """
    others = [d for d in distractors if d[0] != ex.source_id]
    rng.shuffle(others)
    if how == "similar":
        bags = [set(terms(text)) for _, text in others]
        df = Counter(t for bag in bags for t in bag)
        query = set(terms(ex.question + "\n" + ex.context))
        score = [sum(math.log(len(bags) / df[t]) for t in bag & query) / math.sqrt(1 + len(bag))
                 for bag in bags]
        others = [d for _, d in sorted(zip(score, others), key=lambda p: -p[0])]
    elif how != "random":
        raise ValueError(f"distractor order must be random or similar, got {how!r}")
    return others


def build(items: Sequence[Example], distractors: Sequence[tuple[str, str]], tokenizer, *,
          lengths: Sequence[int], depths: Sequence[float], n_per_cell: int, seed: int,
          hallucinations: Hallucinations = "mixed",
          distractor_order: DistractorOrder = "random") -> list[LongExample]:
    """``n_per_cell`` items at every (length, depth): the same items in every cell."""
    if n_per_cell < 1:
        raise ValueError(f"n_per_cell must be at least 1, got {n_per_cell}")
    rng = random.Random(seed)
    picked = pick_items(items, n_per_cell, rng, hallucinations)
    out = []
    for length in lengths:
        for j, (ex, kind) in enumerate(picked):
            others = order_distractors(ex, distractors, random.Random(f"{seed}/{ex.id}/{length}"),
                                       distractor_order)
            placed, used = bury(ex.context, others, tokenizer, length, depths)
            for depth, (context, start) in zip(depths, placed):
                item_id = f"longctx/{length}/{depth:g}/{j}"
                out.append(LongExample(
                    example=Example(
                        id=item_id, context=context, question=ex.question,
                        response=ex.response, spans=ex.spans, hallucinated=ex.hallucinated,
                        has_spans=True, source_id=item_id, dataset=f"longctx/{kind}"),
                    depth=float(depth), length=int(length),
                    n_tokens=len(tokenize(tokenizer, context)),
                    evidence=(start, start + len(ex.context.strip())), origin=ex.id,
                    kind=kind, distractors=used))
    return out


# -- on disk ------------------------------------------------------------------------------------

def write_ragtruth(directory: str | Path, examples: Iterable[LongExample]) -> Path:
    """Write ``response.jsonl`` + ``source_info.jsonl`` (one source per example)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "source_info.jsonl").open("w", encoding="utf-8") as src, \
            (directory / "response.jsonl").open("w", encoding="utf-8") as resp:
        for le in examples:
            ex = le.example
            extra = {"depth": le.depth, "length": le.length, "n_tokens": le.n_tokens}
            src.write(json.dumps({
                "source_id": ex.id, "task_type": "QA", "source": "longctx",
                "source_info": {"question": ex.question, "passages": ex.context},
                **extra, "evidence_start": le.evidence[0], "evidence_end": le.evidence[1],
                "origin_id": le.origin, "distractors": list(le.distractors)}) + "\n")
            resp.write(json.dumps({
                "id": ex.id, "source_id": ex.id, "model": le.kind, "split": "test",
                "labels": [{"start": s, "end": e, "text": ex.response[s:e], "label_type": le.kind}
                           for s, e in ex.spans],
                "response": ex.response, **extra}) + "\n")
    return directory
