"""The shipped detector's outputs are pinned (tests/data/detector_pins.json).

A change to the encoder's layer loop, the inputs, the windows or the spans that moves
any output of the shipped model fails here.  The file is rewritten only when the
output is meant to change (a new model version): ``python scripts/pin_detector.py``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from guardrail.model import DEFAULT_MODEL

ROOT = Path(__file__).resolve().parent.parent
PINS = json.loads((ROOT / "tests" / "data" / "detector_pins.json").read_text())


def _script():
    spec = importlib.util.spec_from_file_location("pin_detector",
                                                  ROOT / "scripts" / "pin_detector.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def now(detector) -> dict:
    script = _script()
    if script.weights_sha256(DEFAULT_MODEL) != PINS["weights_sha256"]:
        pytest.fail("the shipped weights changed: re-pin with scripts/pin_detector.py")
    return script.outputs(detector)


def test_every_case_is_pinned(now):
    assert set(now) == set(PINS["outputs"])
    assert len(now) >= 12  # 4 cases x (2 exits + full depth)


@pytest.mark.parametrize("key", sorted(PINS["outputs"]))
def test_outputs_match_the_pins(now, key):
    got, pinned = now[key], PINS["outputs"][key]
    assert got["token_offsets"] == pinned["token_offsets"]
    assert [s["start"] for s in got["spans"]] == [s["start"] for s in pinned["spans"]]
    assert [s["end"] for s in got["spans"]] == [s["end"] for s in pinned["spans"]]
    for field in ("exit_layer", "threshold", "windows_total", "windows_scored",
                  "response_split"):
        assert got[field] == pinned[field], field
    # fp32 on the CPU: the same code gives the same bits on one machine, but another
    # CPU's kernels (AVX2 vs AVX-512 reductions) move probabilities by a few 1e-6;
    # 1e-4 leaves room for that and is far below anything a real change moves
    worst = max(abs(a - b) for a, b in zip(got["token_probs"], pinned["token_probs"]))
    assert worst <= 1e-4, f"{key}: max |delta| {worst:.3g}"


def test_bfloat16_weights_stay_close_to_the_pins():
    """``detector.dtype: bfloat16`` (what ``auto`` picks on a CPU that multiplies
    bfloat16 natively): the same tokens and windows as the float32 pins, every
    probability within 0.03 of them, and a token on the other side of the threshold
    only where its pinned probability was within that of it."""
    import torch

    from guardrail.config import GuardrailConfig
    from guardrail.engine.build import load_detector

    det = load_detector(GuardrailConfig.model_validate({"detector": {"dtype": "bfloat16"}}))
    assert next(det.model.parameters()).dtype == torch.bfloat16
    got = _script().outputs(det)
    for key, pinned in PINS["outputs"].items():
        assert got[key]["token_offsets"] == pinned["token_offsets"]
        assert got[key]["windows_scored"] == pinned["windows_scored"]
        t = pinned["threshold"]
        for a, b in zip(got[key]["token_probs"], pinned["token_probs"]):
            assert abs(a - b) <= 0.03, f"{key}: {a:.4f} against {b:.4f}"
            assert (a >= t) == (b >= t) or abs(b - t) <= 0.03, key


def test_auto_picks_bfloat16_only_where_the_processor_multiplies_it(monkeypatch):
    import torch

    from guardrail.engine.build import model_dtype

    assert model_dtype("float32", "cpu") == torch.float32
    assert model_dtype("bfloat16", "cpu") == torch.bfloat16
    for avx512_bf16, amx, want in ((False, False, torch.float32), (True, False, torch.bfloat16),
                                   (False, True, torch.bfloat16)):
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda v=avx512_bf16: v)
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda v=amx: v)
        assert model_dtype("auto", "cpu") == want
