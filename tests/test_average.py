"""`guardrail train average` (``guardrail.train.average``): two saved detectors averaged
weight by weight, read with the starting model's files.

Real weights: the shipped detector is the start, and a copy of it with its weights moved
(seeded noise) plays the model a further training run made of it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.model import Detector
from guardrail.model.detector import GUARDRAIL_CONFIG

START = Path(__file__).resolve().parents[1] / "guardrail" / "models" / "default"
CONTEXT = "The Eiffel Tower in Paris was completed in 1889 and is 330 metres tall."
RESPONSE = "The Eiffel Tower was completed in 1889. It is 450 metres tall."


@pytest.fixture(scope="module")
def tuned(tmp_path_factory) -> Path:
    """The shipped detector with every float weight moved, as training would move it."""
    out = tmp_path_factory.mktemp("tuned")
    for f in START.iterdir():
        shutil.copyfile(f, out / f.name)
    gen = torch.Generator().manual_seed(0)
    for name in ("model.safetensors", "exits.safetensors"):
        w = load_file(START / name)
        save_file({k: (v.float() + 0.01 * torch.randn(v.shape, generator=gen)).to(v.dtype)
                   if v.is_floating_point() else v for k, v in w.items()},
                  out / name, metadata={"format": "pt"})
    meta = json.loads((out / GUARDRAIL_CONFIG).read_text())
    meta.update(version="tuned", thresholds={"2": 0.9, "4": 0.9})
    (out / GUARDRAIL_CONFIG).write_text(json.dumps(meta))
    return out


def run(*args: str):
    return CliRunner().invoke(app, ["train", "average", *map(str, args)])


def test_the_average_lies_between_the_two_models_weight_by_weight(tuned, tmp_path):
    for alpha in (0.0, 0.25, 1.0):
        res = run(START, tuned, "--out", tmp_path / str(alpha), "--alpha", alpha)
        assert res.exit_code == 0, res.output
    for name in ("model.safetensors", "exits.safetensors"):
        a, b = load_file(START / name), load_file(tuned / name)
        zero, quarter, one = (load_file(tmp_path / alpha / name)
                              for alpha in ("0.0", "0.25", "1.0"))
        assert all(torch.equal(zero[k], a[k]) and torch.equal(one[k], b[k]) for k in a)
        for k in a:
            assert quarter[k].dtype == a[k].dtype
            if a[k].is_floating_point():
                want = 0.75 * a[k].double() + 0.25 * b[k].double()
                assert torch.allclose(quarter[k].double(), want, atol=1e-3, rtol=1e-3), k
    moved, start = (load_file(d / "model.safetensors") for d in (tmp_path / "0.25", START))
    assert any(not torch.equal(moved[k], start[k]) for k in start)


def test_the_average_reads_with_the_starting_models_thresholds_and_judge(tuned, tmp_path):
    res = run(START, tuned, "--out", tmp_path / "avg")
    assert res.exit_code == 0, res.output
    start = json.loads((START / GUARDRAIL_CONFIG).read_text())
    meta = json.loads((tmp_path / "avg" / GUARDRAIL_CONFIG).read_text())
    assert meta["thresholds"] == start["thresholds"] and meta["judge"] == start["judge"]
    assert meta["version"] == f"{start['version']}+tuned@0.5"  # its own context-state cache
    assert meta["averaged"] == {"start": str(START), "tuned": str(tuned), "alpha": 0.5}
    assert {f.name for f in (tmp_path / "avg").iterdir()} == {f.name for f in START.iterdir()}

    def probs(path: Path) -> np.ndarray:
        det = Detector.from_pretrained(path, device="cpu")
        return np.array(det.detect(CONTEXT, "", RESPONSE, exit_layer=4).token_probs)

    p_start, p_tuned, p_avg = probs(START), probs(tuned), probs(tmp_path / "avg")
    assert p_avg.shape == p_start.shape
    assert not np.allclose(p_start, p_tuned, atol=1e-3)  # the copy does score differently
    assert not np.allclose(p_avg, p_start, atol=1e-4) and not np.allclose(p_avg, p_tuned, atol=1e-4)


@pytest.mark.parametrize("change, message", [
    ("exits", "differ in exits.json"),
    ("no-exits", "exits.safetensors is in only one"),
    ("no-weights", "no model.safetensors"),
    ("tensors", "hold different tensors"),
    ("alpha", "alpha must be within 0..1"),
])
def test_models_whose_weights_do_not_line_up_are_a_usage_error(tuned, tmp_path, change,
                                                               message):
    other = tmp_path / "other"
    shutil.copytree(tuned, other)
    alpha = "0.5"
    if change == "exits":
        exits = json.loads((other / "exits.json").read_text())
        (other / "exits.json").write_text(json.dumps({**exits, "bottleneck": 128}))
    elif change == "no-exits":
        (other / "exits.safetensors").unlink()
    elif change == "no-weights":
        (other / "model.safetensors").unlink()
    elif change == "tensors":  # a head of another size, its config alike
        w = load_file(other / "exits.safetensors")
        w["2.down.bias"] = torch.zeros(3, dtype=w["2.down.bias"].dtype)
        save_file(w, other / "exits.safetensors", metadata={"format": "pt"})
    else:
        alpha = "1.5"
    res = run(START, other, "--out", tmp_path / "avg", "--alpha", alpha)
    assert res.exit_code == 2
    assert message in " ".join(res.output.replace("│", " ").split())  # the box's lines
    assert not (tmp_path / "avg").exists()
