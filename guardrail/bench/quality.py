"""``guardrail bench quality``: ``evaluate`` on every shared data set, at every exit.

Rows are data sets, columns exits: example F1, token F1 (span-labelled sets only),
AUROC and examples/s.  The span-labelled sets (RAGTruth subset, FaithBench) are
evaluated on the dev split recorded in the model's training metadata, so no training
document is scored; the binary sets (TRUE, SummEdits) are not training data and are
sampled whole.  Large sets are cut to a seeded random sample of ``limit`` examples
(file order is often sorted by label).  Extra sets (the long-context one) come in
as ``NAME=PATH``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional

from guardrail.bench import SCHEMA_VERSION, filler_documents, find_data_dir, machine_info

DEFAULT_SPLIT = {"dev_fraction": 0.2, "seed": 13}


@dataclass(frozen=True)
class DataSpec:
    name: str
    path: Optional[Path]     # None: built in memory (the synthetic quick set)
    split: str               # "dev" or "all"
    format: str = "auto"


@dataclass(frozen=True)
class QualityBenchConfig:
    model: Optional[str] = None
    device: Optional[str] = None
    data_dir: Optional[str] = None
    extra: tuple[str, ...] = ()      # NAME=PATH entries (evaluated whole, format auto)
    exits: tuple[int, ...] = ()      # empty: every exit and full depth
    limit: int = 200                 # examples per data set (0: all)
    seed: int = 0
    only: tuple[str, ...] = ()       # restrict to these data set names
    quick: bool = False

    @classmethod
    def quick_config(cls, **kw: Any) -> "QualityBenchConfig":
        return replace(cls(limit=6, quick=True), **kw)


def shared_sets(data_dir: Optional[Path]) -> list[DataSpec]:
    """Every labelled set with a grounding context under the shared data directory."""
    if data_dir is None:
        return []
    specs = []
    rt = data_dir / "ragtruth_qa_test_subset" / "derived_ragtruth_format"
    if rt.is_dir():
        specs.append(DataSpec("ragtruth", rt, "dev", "ragtruth"))
    fb = data_dir / "faithbench"
    if fb.is_dir():
        specs.append(DataSpec("faithbench", fb, "dev", "faithbench"))
    for f in sorted((data_dir / "true_benchmark_subsets").glob("*.csv")):
        specs.append(DataSpec(f"true/{f.stem}", f, "all", "binary"))
    for f in sorted((data_dir / "summedits").glob("*.json")):
        specs.append(DataSpec(f"summedits/{f.stem.removeprefix('summedits_')}", f, "all",
                              "binary"))
    return specs


def parse_extra(entries: tuple[str, ...]) -> list[DataSpec]:
    out = []
    for entry in entries:
        name, sep, path = entry.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--data takes NAME=PATH, got {entry!r}")
        out.append(DataSpec(name, Path(path), "all"))
    return out


def synthetic_set(n: int, seed: int):
    """A tiny span-labelled set built from filler documents (quick runs without data)."""
    from guardrail.train.synth import make_synthetic

    docs = [(f"filler/{i}", d, "What happened in the district?")
            for i, d in enumerate(filler_documents(8, seed))]
    return make_synthetic(docs, n, seed)


def load_set(spec: DataSpec, split: dict, limit: int, seed: int):
    from guardrail.train.data import load_any, split_by_source

    examples = load_any(spec.path, spec.format)
    if spec.split == "dev":
        _train, examples = split_by_source(examples, split["dev_fraction"], split["seed"])
    total = len(examples)
    if limit and total > limit:
        examples = random.Random(seed).sample(examples, limit)
    return examples, total


def _row(name: str, spec_split: str, total: int, results: dict[int, dict]) -> dict:
    cells = {}
    for layer, r in results.items():
        cells[str(layer)] = {
            "example_f1": r["example"]["f1"],
            "token_f1": (r.get("token") or {}).get("f1"),
            "span_f1": (r.get("span") or {}).get("f1"),
            "auroc": r.get("auroc"),
            "examples_per_s": r.get("examples_per_s"),
            "threshold": r.get("threshold"),
        }
    any_r = next(iter(results.values()))
    return {"dataset": name, "split": spec_split, "n_examples": any_r["n_examples"],
            "n_available": total, "n_hallucinated": any_r["n_hallucinated"], "exits": cells,
            "metrics": {str(k): v for k, v in results.items()}}


def run(cfg: QualityBenchConfig, *, log: Callable[[str], None] = lambda s: None) -> dict:
    from guardrail.model import Detector
    from guardrail.train.evaluate import evaluate

    det = Detector.from_pretrained(cfg.model, device=cfg.device)
    exits = sorted(set(min(e, det.n_layers) for e in
                       (cfg.exits or (*det.exit_layers, det.n_layers))))
    split = {**DEFAULT_SPLIT, **det.meta.get("training", {}).get("split", {})}
    data_dir = find_data_dir(cfg.data_dir)
    specs = shared_sets(data_dir) + parse_extra(cfg.extra)
    if cfg.only:
        specs = [s for s in specs if s.name in cfg.only]
    if cfg.quick:  # a few examples of one set (or of a synthetic one without data)
        specs = [s for s in specs if s.format == "binary"][:1] + parse_extra(cfg.extra)
    rows = []
    if not specs:
        specs = [DataSpec("synthetic", None, "all")]
    for spec in specs:
        if spec.path is None:
            examples, total = synthetic_set(cfg.limit or 8, cfg.seed), cfg.limit or 8
        else:
            examples, total = load_set(spec, split, cfg.limit, cfg.seed)
        if not examples:
            log(f"{spec.name}: no examples, skipped")
            continue
        log(f"{spec.name}: {len(examples)} of {total} examples x exits {exits}")
        results = {e: evaluate(det, examples, exit_layer=None if e >= det.n_layers else e,
                               progress=False) for e in exits}
        rows.append(_row(spec.name, spec.split, total, results))
    return {
        "kind": "quality", "schema": SCHEMA_VERSION, "machine": machine_info(str(det.device)),
        "settings": {"model": det.name, "device": str(det.device), "exits": exits,
                     "n_layers": det.n_layers, "limit": cfg.limit, "seed": cfg.seed,
                     "split": split, "data_dir": str(data_dir) if data_dir else None,
                     "extra": list(cfg.extra), "quick": cfg.quick,
                     "placeholder_model": bool(det.meta.get("placeholder", False))},
        "rows": rows,
        "targets": [],
    }


def summary(result: dict) -> str:
    exits = result["settings"]["exits"]
    head = f"{'dataset':<24}{'n':>5}" + "".join(f"{'ex F1@' + str(e):>10}{'AUROC':>7}{'ex/s':>7}"
                                                 for e in exits)
    lines = [head]
    for r in result["rows"]:
        cells = ""
        for e in exits:
            c = r["exits"][str(e)]
            cells += f"{_f(c['example_f1']):>10}{_f(c['auroc']):>7}{_f(c['examples_per_s'], 1):>7}"
        lines.append(f"{r['dataset']:<24}{r['n_examples']:>5}{cells}")
    return "\n".join(lines)


def _f(x: Optional[float], digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


__all__ = ["QualityBenchConfig", "run", "summary"]
