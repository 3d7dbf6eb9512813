"""What `guardrail train detector|exits` and `guardrail calibrate` share: reading and
splitting the labelled data, the device and the worker count (kept apart so the commands'
module stays readable)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

DATA_HELP = ("Span-labelled training data as NAME=PATH or PATH (repeatable): a RAGTruth-format "
             "directory (response.jsonl + source_info.jsonl) or FaithBench's directory.")
DEFAULT_KINDS = "number,entity,negation,insertion,swap"  # guardrail.train.synth.KINDS
KINDS_HELP = ("Perturbations for synthetic examples, comma-separated, out of: number, entity, "
              "negation, insertion, swap, absent (opt-in: the evidence is taken out of the "
              "context), baseless (opt-in: one sentence's evidence is taken out). A kind "
              "named twice is drawn twice as often.")
CROP_HELP = ("Probability that a synthetic example's context is cut to the sentences its "
             "response came from plus a few neighbours (shorter, faster sequences).")
DEVICE_HELP = ("auto (CUDA when there is a GPU, with bf16 autocast; else CPU) | cpu | cuda | "
               "cuda:N. Weights train in float32 either way and are saved as fp16.")
WORKERS_HELP = "Processes that tokenize and window the examples before training."


LAYERS_HELP = "Comma-separated exit layers (default: every exit and full depth)."


def layers_of(det, layers) -> list[int]:
    """The exit layers a ``--layers`` option names (default: every exit and full depth),
    resolved and sorted; a clear error for a layer the model has no head at."""
    try:
        asked = ([int(x) for x in layers.split(",") if x.strip()] if layers
                 else [*det.model.exit_layers, det.n_layers])
        return sorted({det.model.resolve(layer) for layer in asked})
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--layers") from exc


def default_workers() -> int:
    import os

    return max(1, min(16, os.cpu_count() or 1))


def training_device(spec: str) -> str:
    import torch

    from guardrail.model.sources import pick_device

    if spec == "auto":
        return pick_device(None).type  # the serving rule: CUDA when there is one
    if spec.startswith("cuda") and not torch.cuda.is_available():
        raise typer.BadParameter(f"{spec}: torch sees no CUDA device", param_hint="--device")
    return spec


def parse_kinds(spec: str) -> tuple[str, ...]:
    from guardrail.train.synth import ALL_KINDS

    kinds = tuple(k.strip() for k in spec.split(",") if k.strip())
    unknown = sorted(set(kinds) - set(ALL_KINDS))
    if unknown or not kinds:
        raise typer.BadParameter(f"unknown synthetic kinds {unknown}; choose from "
                                 f"{', '.join(ALL_KINDS)}", param_hint="--synthetic-kinds")
    return kinds


def load_span_data(specs: list[str]):
    from guardrail.train.data import load_any

    examples = []
    for spec in specs:
        path = spec.split("=", 1)[1] if "=" in spec else spec
        if not path.strip():
            raise typer.BadParameter(f"{spec!r} names no path", param_hint="--data")
        try:
            examples.extend(load_any(path))
        except (ValueError, OSError) as exc:
            raise typer.BadParameter(f"{spec}: {exc}", param_hint="--data") from exc
    if not examples:
        raise typer.BadParameter("no examples in the given --data paths")
    return examples


def split_for_training(examples, dev_fraction: float, seed: int):
    from guardrail.train.data import CALIB_FRACTION, split_by_source

    train, dev = split_by_source(examples, dev_fraction, seed)
    # a calibration split for thresholds, carved out of train by source (never dev);
    # train.data.in_calib says the same of one source
    fit, calib = split_by_source(train, CALIB_FRACTION, seed + 1)
    return fit, calib, dev


def calib_cap(max_per_dataset: int) -> int:
    """Calibration examples per data set when training is capped: in proportion, between
    100 and 500 (thresholds need hundreds, not thousands; each is a forward per exit)."""
    return min(500, max(100, max_per_dataset // 8))


def capped(examples, n: int, seed: int) -> list:
    """At most ``n`` examples per data set, a seeded sample, in their original order."""
    import random

    by: dict[str, list[int]] = {}
    for i, ex in enumerate(examples):
        by.setdefault(ex.dataset, []).append(i)
    keep: set[int] = set()
    for name, idx in sorted(by.items()):
        keep.update(random.Random(f"{seed}/{name}").sample(idx, min(n, len(idx))))
    return [ex for i, ex in enumerate(examples) if i in keep]


def labelled_examples(examples, whole_response: str) -> list:
    """Examples with token labels: a hallucinated example without spans gets the whole
    response as its span where ``whole_response`` names its data set, else it is left
    out (its spans are unknown; training it as supported would teach the opposite)."""
    from dataclasses import replace

    prefixes = tuple(p.strip() for p in whole_response.split(",") if p.strip())
    out = []
    for ex in examples:
        if ex.hallucinated and not ex.spans:
            if not (prefixes and ex.dataset.startswith(prefixes)):
                continue
            ex = replace(ex, spans=((0, len(ex.response)),), has_spans=True)
        elif not ex.hallucinated and not ex.has_spans:
            ex = replace(ex, has_spans=True)  # nothing unsupported: no spans is complete
        out.append(ex)
    return out


def training_passages(path: Path, dev_fraction: float, seed: int) -> list[tuple[str, str, str]]:
    """``(source_id, text, "")`` of each passage whose source falls in the training split."""
    from guardrail.train.data import in_dev

    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            sid = f"passage/{row['id']}"
            if row.get("text", "").strip() and not in_dev(sid, dev_fraction, seed):
                out.append((sid, row["text"], ""))
    return out


def summary(examples) -> dict:
    from collections import Counter

    return {"n": len(examples), "hallucinated": sum(e.hallucinated for e in examples),
            "sources": len({e.source_id for e in examples}),
            "by_dataset": dict(Counter(e.dataset for e in examples))}
