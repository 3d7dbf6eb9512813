"""Scoring the long-context set: results by depth and length, and the window-selection
comparison (which windows a check reads, what it costs, whether the evidence is kept).

    guardrail eval --data DIR --by depth            evaluate_by -> format_by
    guardrail eval --data DIR --compare-windows     compare -> format_compare

``read_fields`` reads back the ``depth``/``length``/``n_tokens`` fields that
``train.longctx`` writes beside each RAGTruth-format example.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Optional, Sequence

from guardrail.model.bm25 import IndexCache
from guardrail.model.windows import make_selector
from guardrail.train import scores as metrics
from guardrail.train.data import Example, detect_format, merge_spans


def _rows(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def read_fields(path: str | Path) -> dict[str, dict]:
    """``{example id: {"depth", "length", "n_tokens", "evidence"}}`` of a RAGTruth-format
    directory, keyed as :func:`guardrail.train.data.load_ragtruth` names examples
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
                exit_layer: Optional[int] = None, selector=None, progress: bool = True,
                by_sentence: bool = False) -> dict:
    """:func:`guardrail.train.evaluate.evaluate` plus ``by_<fields>``: metrics per group."""
    from guardrail.train.evaluate import detect_all

    cells = groups(examples, fields, by)
    detections, seconds = detect_all(det, examples, exit_layer=exit_layer, selector=selector,
                                     progress=progress, by_sentence=by_sentence)
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
    short = evidence_only(examples, fields)
    if short:  # the same items with their own passages alone: the short-context reference
        dets, secs = detect_all(det, short, exit_layer=exit_layer, selector=selector,
                                progress=False, by_sentence=by_sentence)
        result["evidence_only"] = metrics.evaluate(short, dets, secs)
        result["evidence_only"].pop("by_dataset", None)
    return result


def evidence_only(examples: Sequence[Example], fields: dict[str, dict]) -> list[Example]:
    """Each distinct item once, its context cut to its own passages (``evidence``);
    empty when an example does not say where its evidence is."""
    import dataclasses

    seen: dict[tuple[str, str], Example] = {}
    for ex in examples:
        ev = fields.get(ex.id, {}).get("evidence")
        if ev is None:
            return []
        short = ex.context[ev[0]:ev[1]]
        seen.setdefault((short, ex.response), dataclasses.replace(ex, context=short))
    return list(seen.values())


def format_by(result: dict, by: Sequence[str]) -> str:
    """:func:`metrics.format_report` with one row per group of an :func:`evaluate_by` result."""
    name = "/".join(by)
    rows = dict(result["by_" + "_".join(by)])
    if "evidence_only" in result:
        rows["evidence only"] = result["evidence_only"]
    text = metrics.format_report({**result, "by_dataset": rows})
    return text.replace(f"{'dataset':<24}", f"{name:<24}", 1)


STRATEGIES = ("truncate", "all", "topk")


class _Recorder:
    """Wraps a selector and remembers, call by call, the character ranges it chose."""

    def __init__(self, inner):
        self.inner = inner
        self.chosen: list[list[tuple[int, int]]] = []

    def select(self, context, windows, question, response, target_start=0):
        out = self.inner.select(context, windows, question, response, target_start)
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
