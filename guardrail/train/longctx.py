"""A long-context evaluation set, and the window-selection comparison run on it.

    guardrail data longctx --out DIR     load_sources -> build -> write_ragtruth(DIR)
    guardrail eval --data DIR --by depth            evaluate_by
    guardrail eval --data DIR --compare-windows     compare -> format_compare

An item is a real RAGTruth QA (passages, question, response) from the DEV split of
the model's training.  Its passages -- the evidence -- are buried at a relative
``depth`` (0 = first, 1 = last) inside other real documents (dev-split RAGTruth
passages of other sources, FaithBench sources, SummEdits documents and TRUE
groundings) until the context has ``length`` tokens of the detector's tokenizer.
Half of the answers are hallucinated: real RAGTruth hallucinated responses with
their annotated spans, and/or supported responses with ONE injected change
(synth's number / negation / swap perturbations) whose span is exact.  The same
items and the same distractors are used at every depth of a length, so a change
across depths comes from the depth alone.

The set is written in RAGTruth format (``response.jsonl`` + ``source_info.jsonl``)
with extra fields ``depth``, ``length`` and ``n_tokens``; the RAGTruth loader drops
them, so :func:`read_fields` reads them back by example id.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Optional, Sequence

from guardrail.model.inputs import tokenize
from guardrail.model.windows import IndexCache, make_selector, terms
from guardrail.train import scores as metrics
from guardrail.train.data import Example, detect_format, in_dev, load_any, merge_spans
from guardrail.train.synth import (documents_from, perturb_negation, perturb_number,
                                   perturb_swap)

Hallucinations = Literal["real", "injected", "mixed"]
DistractorOrder = Literal["random", "similar"]

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

def load_sources(root: str | Path, dev_fraction: float, seed: int
                 ) -> tuple[list[Example], list[tuple[str, str]]]:
    """``(items, distractors)`` under ``root`` (``shared/data``), dev split only.

    ``items`` are the dev RAGTruth QA examples; ``distractors`` are ``(source_id,
    text)`` of every distinct dev document of at least ``MIN_DISTRACTOR_CHARS``
    characters from the four span or binary sets (RAGTruth passages included: an
    item never gets its own source as a distractor).
    """
    root = Path(root)
    items: list[Example] = []
    distractors: dict[str, str] = {}
    for name in SOURCES:
        path = root / name
        if not path.exists():
            continue
        examples = [ex for ex in load_any(path) if in_dev(ex.source_id, dev_fraction, seed)]
        if name == "ragtruth_qa_test_subset":
            items = examples
        for source_id, text, _question in documents_from(examples):
            if len(text.strip()) >= MIN_DISTRACTOR_CHARS:
                distractors.setdefault(source_id, text.strip())
    if not items:
        raise FileNotFoundError(f"no dev-split RAGTruth QA items under {root}")
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
        raise ValueError(f"asked for {n_real} real hallucinated responses; the dev split has {len(real)}")
    picked = [(ex, "real") for ex in real[:n_real]]
    ok = [(ex, "supported") for ex in supported[:n - n_bad]]
    for ex in supported[n - n_bad:]:
        if len(picked) >= n_bad:
            break
        injected = inject(ex, rng)
        if injected is not None:
            picked.append(injected)
    if len(picked) < n_bad or len(ok) < n - n_bad:
        raise ValueError(f"the dev split has too few usable items for {n} per cell")
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


def _rows(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def read_fields(path: str | Path) -> dict[str, dict]:
    """``{example id: {"depth", "length", "n_tokens", "evidence"}}`` of a RAGTruth-format
    directory, keyed as :func:`guardrail.detector.data.load_ragtruth` names examples
    (``evidence`` is the ``(start, end)`` of the item's passages in the context); empty
    when the rows carry none of these fields."""
    fmt, directory = detect_format(path)
    if fmt != "ragtruth":
        return {}
    evidence = {str(r["source_id"]): (r["evidence_start"], r["evidence_end"])
                for r in _rows(directory / "source_info.jsonl") if "evidence_start" in r}
    out = {}
    for row in _rows(directory / "response.jsonl"):
        fields = {k: row[k] for k in ("depth", "length", "n_tokens") if k in row}
        if str(row.get("source_id")) in evidence:
            fields["evidence"] = evidence[str(row.get("source_id"))]
        if fields:
            out[f"ragtruth/{row.get('id')}"] = fields
    return out


# -- evaluation ---------------------------------------------------------------------------------

def groups(examples: Sequence[Example], fields: dict[str, dict], by: Sequence[str]
           ) -> dict[tuple, list[int]]:
    """Example indexes by their ``by`` field values, sorted; ``ValueError`` when an
    example lacks one of the fields."""
    out: dict[tuple, list[int]] = defaultdict(list)
    for i, ex in enumerate(examples):
        f = fields.get(ex.id)
        if f is None or any(k not in f for k in by):
            raise ValueError(f"example {ex.id!r} has no {'/'.join(by)} field: is this a "
                             f"`guardrail data longctx` directory?")
        out[tuple(f[k] for k in by)].append(i)
    return dict(sorted(out.items()))


def evaluate_by(det, examples: Sequence[Example], fields: dict[str, dict], by: Sequence[str], *,
                exit_layer: Optional[int] = None, selector=None, progress: bool = True) -> dict:
    """:func:`guardrail.detector.evaluate.evaluate` plus ``by_<fields>``: metrics per group."""
    from guardrail.train.evaluate import detect_all

    cells = groups(examples, fields, by)
    detections, seconds = detect_all(det, examples, exit_layer=exit_layer, selector=selector,
                                     progress=progress)
    result = metrics.evaluate(list(examples), detections, seconds)
    result["exit_layer"] = det.model.resolve(exit_layer)
    result["threshold"] = det.threshold_for(exit_layer)
    result["windows_scored_mean"] = round(
        sum(d.windows_scored for d in detections) / len(detections), 2)
    result["by_" + "_".join(by)] = {
        "/".join(f"{v:g}" for v in key): metrics.evaluate(
            [examples[i] for i in idx], [detections[i] for i in idx], 0.0)
        for key, idx in cells.items()}
    result.pop("by_dataset", None)
    return result


def format_by(result: dict, by: Sequence[str]) -> str:
    """:func:`metrics.format_report` with one row per group of an :func:`evaluate_by` result."""
    name = "/".join(by)
    text = metrics.format_report({**result, "by_dataset": result["by_" + "_".join(by)]})
    return text.replace(f"{'dataset':<24}", f"{name:<24}", 1)


STRATEGIES = ("truncate", "all", "topk")


class _Recorder:
    """Wraps a selector and remembers, call by call, the character ranges it chose."""

    def __init__(self, inner):
        self.inner = inner
        self.chosen: list[list[tuple[int, int]]] = []

    def select(self, context, windows, question, response):
        out = self.inner.select(context, windows, question, response)
        off = context.tokens.offsets
        self.chosen.append([(int(off[w.start][0]), int(off[w.end - 1][1])) for w in out])
        return out


def coverage(evidence: tuple[int, int], ranges: Sequence[tuple[int, int]]) -> float:
    """The fraction of the evidence's characters inside the union of ``ranges``."""
    s, e = evidence
    inside = sum(max(0, min(e, b) - max(s, a)) for a, b in merge_spans(ranges, e))
    return inside / (e - s) if e > s else 1.0


def _row(strategy: str, length, depth, examples, detections, seconds: float,
         covered: Sequence[float]) -> dict:
    m = metrics.evaluate(list(examples), detections, seconds)
    return {
        "strategy": strategy, "length": length, "depth": depth, "n": len(examples),
        "n_hallucinated": m["n_hallucinated"],
        "example_precision": m["example"]["precision"], "example_recall": m["example"]["recall"],
        "example_f1": m["example"]["f1"], "token_f1": m.get("token", {}).get("f1"),
        "checks_per_s": round(len(examples) / seconds, 3) if seconds > 0 else None,
        "windows_scored": round(sum(d.windows_scored for d in detections) / len(detections), 2),
        "windows_total": round(sum(d.windows_total for d in detections) / len(detections), 2),
        "evidence_scored": round(sum(covered) / len(covered), 3) if covered else None,
    }


def compare(det, examples: Sequence[Example], fields: dict[str, dict], *,
            strategies: Sequence[str] = STRATEGIES, ks: Sequence[int] = (2,),
            exit_layer: Optional[int] = None, progress: bool = True) -> dict:
    """Each strategy (``topk`` once per ``k`` in ``ks``) on every (length, depth) cell,
    timed per cell, plus an all-depths row per (strategy, length).  ``checks_per_s``
    counts checked responses; the top-k time includes building each context's BM25
    index (here every context is checked once, in a stream it is built once for all
    sentences)."""
    from guardrail.train.evaluate import detect_all

    cells = groups(examples, fields, ("length", "depth"))
    detect_all(det, examples[:1], exit_layer=exit_layer, progress=False)  # warm-up, untimed
    runs = [(f"top{k}" if s == "topk" else s, s, k) for s in strategies
            for k in (ks if s == "topk" else ks[:1])]
    rows = []
    for strategy, kind, k in runs:
        selector = _Recorder(make_selector(kind, k, IndexCache()))
        per_length: dict = defaultdict(lambda: ([], [], 0.0, []))
        for (length, depth), idx in cells.items():
            sub = [examples[i] for i in idx]
            selector.chosen.clear()
            start = time.perf_counter()
            detections, _ = detect_all(det, sub, exit_layer=exit_layer, selector=selector,
                                       progress=False)
            seconds = time.perf_counter() - start
            covered = [coverage(fields[ex.id]["evidence"], chosen)
                       for ex, chosen in zip(sub, selector.chosen) if "evidence" in fields[ex.id]]
            rows.append(_row(strategy, length, depth, sub, detections, seconds, covered))
            exs, dets, secs, cov = per_length[length]
            per_length[length] = (exs + sub, dets + detections, secs + seconds, cov + covered)
            if progress:
                r = rows[-1]
                print(f"{strategy:<9}{length:>7}{depth:>6g}  ex F1 {r['example_f1']:.3f}  "
                      f"{r['checks_per_s']} checks/s", file=sys.stderr, flush=True)
        for length, (exs, dets, secs, cov) in per_length.items():
            rows.append(_row(strategy, length, "all", exs, dets, secs, cov))
    return {"exit_layer": det.model.resolve(exit_layer), "threshold": det.threshold_for(exit_layer),
            "ks": list(ks), "model": det.name, "rows": rows}


def _f(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_compare(result: dict) -> str:
    """One table: strategy x length x depth.  ``windows``: scored / total per check;
    ``evidence``: the mean fraction of the item's passages inside the scored windows."""
    header = (f"{'strategy':<10}{'length':>7}{'depth':>7}{'n':>5}{'ex P':>7}{'ex R':>7}"
              f"{'ex F1':>7}{'tok F1':>8}{'checks/s':>10}{'windows':>13}{'evidence':>10}")
    lines = [f"exit layer {result['exit_layer']}, threshold {result['threshold']:.3f}, "
             f"top-k k in {result['ks']}", header, "-" * len(header)]
    for r in result["rows"]:
        depth = r["depth"] if isinstance(r["depth"], str) else f"{r['depth']:g}"
        windows = f"{r['windows_scored']:.3g}/{r['windows_total']:.3g}"
        lines.append(f"{r['strategy']:<10}{r['length']:>7}{depth:>7}{r['n']:>5}"
                     f"{_f(r['example_precision']):>7}{_f(r['example_recall']):>7}"
                     f"{_f(r['example_f1']):>7}{_f(r['token_f1']):>8}"
                     f"{_f(r['checks_per_s']):>10}{windows:>13}{_f(r['evidence_scored']):>10}")
    return "\n".join(lines)
