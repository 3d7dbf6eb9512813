"""Two saved detectors averaged weight by weight: the model a run started from and the one
it produced (WiSE-FT: Wortsman et al., 2022, "Robust fine-tuning of zero-shot models").

Training further on new data (hand-written tool turns) moves what the model does on the
data it was trained on before (prose); the average keeps more of that while keeping part
of the gain (docs/model-card.md, "v6-H7"). The result reads with the starting model's
files: its architecture, tokenizer, thresholds and sentence judge, which were fitted on
the starting model's probabilities.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from guardrail.model.detector import GUARDRAIL_CONFIG

WEIGHTS = ("model.safetensors", "exits.safetensors")
SAME = ("config.json", "exits.json")  # must agree, or the weights do not line up
NOT_THE_MODEL = {"transformers_version", "_name_or_path", "torch_dtype", "dtype"}
LEFT_OUT = ("train_report.json", "teacher_probs.jsonl")  # a run's records, not the model's


def average(start: Path, tuned: Path, out: Path, alpha: float = 0.5) -> dict:
    """Write ``(1 - alpha) * start + alpha * tuned`` to ``out``, in ``start``'s dtypes, with
    ``start``'s other files; return what ``guardrail.json`` records of it."""
    import torch
    from safetensors.torch import load_file, save_file

    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be within 0..1, not {alpha:g}")
    if out.resolve() in (start.resolve(), tuned.resolve()):
        raise ValueError(f"{out} is one of the two models: write the average elsewhere")
    for name in SAME + WEIGHTS:
        here = [(d / name).is_file() for d in (start, tuned)]
        if name == WEIGHTS[0] and not all(here):
            missing = [str(d) for d, ok in zip((start, tuned), here) if not ok]
            raise ValueError(f"no {name} in {', '.join(missing)}: not a saved detector")
        if here[0] != here[1]:
            raise ValueError(f"{name} is in only one of {start} and {tuned}")
        if name in SAME and all(here) and _model(start / name) != _model(tuned / name):
            raise ValueError(f"{start} and {tuned} differ in {name}: their weights do "
                             "not line up")
    mixed = {}
    for name in (n for n in WEIGHTS if (start / n).is_file()):
        a, b = load_file(start / name), load_file(tuned / name)
        if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in a):
            raise ValueError(f"{start / name} and {tuned / name} hold different tensors")
        mixed[name] = {k: torch.lerp(a[k].double(), b[k].double(), alpha).to(a[k].dtype)
                       if a[k].is_floating_point() else a[k] for k in a}
    out.mkdir(parents=True, exist_ok=True)
    for name, weights in mixed.items():
        save_file(weights, out / name, metadata={"format": "pt"})
    for f in start.iterdir():
        skip = f.name in WEIGHTS + LEFT_OUT + (GUARDRAIL_CONFIG,) or f.name.startswith("checkpoint")
        if f.is_file() and not skip:
            shutil.copyfile(f, out / f.name)
    meta = _json(start / GUARDRAIL_CONFIG) if (start / GUARDRAIL_CONFIG).is_file() else {}
    versions = [_json(d / GUARDRAIL_CONFIG).get("version", d.name)
                if (d / GUARDRAIL_CONFIG).is_file() else d.name for d in (start, tuned)]
    record = {"start": str(start), "tuned": str(tuned), "alpha": alpha}
    # Context states are cached per model version: the average is a model of its own.
    meta.update(version=f"{versions[0]}+{versions[1]}@{alpha:g}", averaged=record)
    (out / GUARDRAIL_CONFIG).write_text(json.dumps(meta, indent=2) + "\n")
    return record


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _model(path: Path) -> dict:
    """A config without what only says which library or dtype wrote it."""
    return {k: v for k, v in _json(path).items() if k not in NOT_THE_MODEL}
