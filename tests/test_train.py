"""Training and evaluation commands, end to end on CPU (smoke runs with --max-steps)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.model import Detector

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
RAGTRUTH = SHARED / "ragtruth_qa_test_subset" / "derived_ragtruth_format"


@pytest.fixture(scope="module")
def tiny_ragtruth(tmp_path_factory) -> Path:
    """A small RAGTruth-format directory cut from the shared subset (short sources)."""
    if not RAGTRUTH.exists():
        pytest.skip("shared RAGTruth data not present")
    out = tmp_path_factory.mktemp("ragtruth")
    sources = [json.loads(l) for l in (RAGTRUTH / "source_info.jsonl").open()]
    keep = {s["source_id"] for s in sorted(sources, key=lambda s: len(
        s["source_info"]["passages"]))[:40]}
    responses = [l for l in (RAGTRUTH / "response.jsonl").open()
                 if json.loads(l)["source_id"] in keep]
    (out / "source_info.jsonl").write_text("".join(
        json.dumps(s) + "\n" for s in sources if s["source_id"] in keep))
    (out / "response.jsonl").write_text("".join(responses))
    return out


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_train_detector_then_exits_then_eval(tiny_ragtruth, tmp_path):
    model = tmp_path / "model"
    run("train", "detector", "--data", f"ragtruth={tiny_ragtruth}", "--out", str(model),
        "--synthetic", "8", "--max-steps", "2", "--batch-tokens", "2048", "--no-progress",
        "--dev-fraction", "0.3")
    meta = json.loads((model / "guardrail.json").read_text())
    assert meta["training"]["report"]["steps"] == 2
    assert meta["training"]["dev"]["n"] > 0 and meta["training"]["train"]["n"] > 0
    assert (model / "checkpoint-detector.pt").exists()

    # resumable: a second run with --resume continues at step 2 instead of restarting
    run("train", "detector", "--data", f"ragtruth={tiny_ragtruth}", "--out", str(model),
        "--synthetic", "8", "--max-steps", "3", "--batch-tokens", "2048", "--no-progress",
        "--dev-fraction", "0.3", "--resume")
    assert torch.load(model / "checkpoint-detector.pt", weights_only=False)["step"] == 3

    before = Detector.from_pretrained(model).model.backbone.state_dict()
    run("train", "exits", "--model", str(model), "--data", f"ragtruth={tiny_ragtruth}",
        "--layers", "2,4", "--synthetic", "8", "--max-steps", "2", "--no-progress",
        "--dev-fraction", "0.3")
    det = Detector.from_pretrained(model)
    assert det.exit_layers == (2, 4) and set(det.thresholds) == {2, 4}
    after = det.model.backbone.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # backbone stayed frozen

    # recalibrate per sentence on the recorded calibration split: only guardrail.json changes
    weights = (model / "model.safetensors").read_bytes()
    run("calibrate", "--model", str(model), "--data", f"ragtruth={tiny_ragtruth}",
        "--unit", "sentence", "--no-progress")
    cal = json.loads((model / "guardrail.json").read_text())["calibration"]
    assert cal["unit"] == "sentence" and cal["split"] == "calib"
    assert cal["n_examples"] == meta["training"]["calib"]["n"]
    assert set(cal["layers"]) == {"2", "4", "6"}
    det = Detector.from_pretrained(model)
    assert det.thresholds[2] == pytest.approx(cal["layers"]["2"]["threshold"], abs=1e-6)
    assert det.threshold == pytest.approx(cal["layers"]["6"]["threshold"], abs=1e-6)
    assert (model / "model.safetensors").read_bytes() == weights
    bad = CliRunner().invoke(app, ["calibrate", "--model", str(model), "--data",
                                   str(tiny_ragtruth), "--unit", "token"])
    assert bad.exit_code != 0 and "--unit must be sentence or example" in bad.output
    one_kind = tmp_path / "supported.jsonl"  # a threshold cannot be chosen on one kind
    one_kind.write_text(json.dumps({
        "id": "r1", "context": "The tower is 330 metres tall.", "question": "How tall?",
        "response": "It is 330 metres tall.", "spans": [], "hallucinated": False,
        "has_spans": True, "source_id": "s1", "dataset": "mine"}) + "\n")
    kept = (model / "guardrail.json").read_text()
    for split in ("all", "calib"):
        bad = CliRunner().invoke(app, ["calibrate", "--model", str(model), "--data",
                                       str(one_kind), "--split", split, "--no-progress"])
        said = " ".join(bad.output.replace("│", " ").split())
        assert bad.exit_code == 2 and "needs supported and hallucinated ones" in said
    assert (model / "guardrail.json").read_text() == kept

    out = tmp_path / "eval.json"
    text = run("eval", "--data", str(tiny_ragtruth), "--model", str(model), "--exit-layer", "2",
               "--split", "dev", "--out", str(out), "--no-progress")
    result = json.loads(out.read_text())
    assert result["exit_layer"] == 2 and result["split"] == "dev"
    assert result["n_examples"] == meta["training"]["dev"]["n"]
    for key in ("example", "sentence", "token", "span"):
        assert set(result[key]) >= {"precision", "recall", "f1"}
    assert result["examples_per_s"] > 0
    assert "f1" in text.lower()


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_a_pcw_detector_trains_reading_each_blocks_top_windows(tiny_ragtruth, tmp_path, device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    model = tmp_path / "model"
    run("train", "detector", "--backbone", "guardrail/models/default", "--attention", "pcw",
        "--pcw-answer", "sentences", "--read-top", "--distractors", "1", "--max-distractors",
        "8", "--data", f"ragtruth={tiny_ragtruth}", "--out", str(model), "--synthetic", "0",
        "--max-steps", "2", "--batch-tokens", "4096", "--no-progress", "--dev-fraction", "0.3",
        "--device", device)
    training = json.loads((model / "guardrail.json").read_text())["training"]
    assert training["config"]["read_top"] and training["report"]["steps"] == 2
    assert training["report"]["encoded"]["with_distractors"] > 0
    det = Detector.from_pretrained(model, device="cpu")
    assert det.top_windows == 4 and not det.concat_reads_top  # serving reads as it always did
    bad = CliRunner().invoke(app, ["train", "detector", "--read-top", "--data",
                                   f"ragtruth={tiny_ragtruth}", "--out", str(tmp_path / "x"),
                                   "--synthetic", "0", "--max-steps", "1", "--no-progress"])
    assert bad.exit_code == 2 and "--read-top" in bad.output and "pcw" in bad.output


def test_eval_on_a_binary_set_reports_auroc(tmp_path):
    csv = SHARED / "true_benchmark_subsets" / "qags_xsum.csv"
    if not csv.exists():
        pytest.skip("shared TRUE data not present")
    out = tmp_path / "binary.json"
    run("eval", "--data", str(csv), "--format", "binary", "--limit", "12", "--exit-layer", "2",
        "--out", str(out), "--no-progress")
    result = json.loads(out.read_text())
    assert result["n_examples"] == 12
    assert result["auroc"] is None or 0.0 <= result["auroc"] <= 1.0
    assert result.get("token") is None and result.get("span") is None


def _examples(n: int):
    from guardrail.train.data import Example

    out = []
    for i in range(n):
        response = f"The tower number {i} is {100 + i} metres tall."
        out.append(Example(id=f"t{i}", source_id=f"s{i}", dataset="toy",
                           context=f"Tower number {i} is {100 + i} metres tall. " * (1 + i % 3),
                           question="How tall is it?", response=response,
                           spans=((response.index("is"), len(response) - 1),) if i % 2 else (),
                           hallucinated=bool(i % 2), has_spans=True))
    return out


def test_parallel_encoding_gives_the_single_process_sequences(detector):
    from guardrail.train.train import encode_examples

    examples = _examples(2100)  # the forked path starts at 2,000 examples
    one, counts_one = encode_examples(detector, examples, workers=1)
    two, counts_two = encode_examples(detector, examples, workers=2)
    assert counts_one == counts_two and counts_one["one_window"] == 2100
    assert len(one) == len(two) == 2100
    for a, b in zip(one, two):
        assert a.input_ids.tolist() == b.input_ids.tolist()
        assert a.labels.tolist() == b.labels.tolist()
    assert any(s.labels.max() == 1 for s in one) and any(s.labels.max() == 0 for s in one)


def test_a_response_the_detector_cleans_is_labelled_as_it_reads_it(detector):
    """A control character (U+200E) is a space to the detector and tokenizes otherwise
    than in the raw text: the labels follow the cleaned text (v6's run crashed on it)."""
    from dataclasses import replace

    from guardrail.train.train import encode_examples

    ex = _examples(2)[1]
    response = "The\u200etower " + ex.response[10:]
    dirty = replace(ex, id="dirty", response=response, spans=((4, 9),))
    (seq,), counts = encode_examples(detector, [dirty])
    labels = seq.labels[seq.response_slice]
    tokens = detector.tokenizer("The tower " + ex.response[10:], add_special_tokens=False,
                                return_offsets_mapping=True)["offset_mapping"]
    assert len(labels) == len(tokens)
    assert [int(x) for x in labels] == [int(a < 9 and b > 4) for a, b in tokens]


def test_train_on_a_missing_gpu_is_a_clear_error(tiny_ragtruth, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = CliRunner().invoke(app, ["train", "detector", "--data", str(tiny_ragtruth),
                                      "--out", str(tmp_path / "m"), "--device", "cuda",
                                      "--max-steps", "1", "--no-progress"])
    assert result.exit_code != 0 and "torch sees no CUDA device" in result.output


@pytest.mark.gpu
def test_train_detector_on_cuda_with_bf16_autocast(tiny_ragtruth, tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    model = tmp_path / "model"
    run("train", "detector", "--data", f"ragtruth={tiny_ragtruth}", "--out", str(model),
        "--synthetic", "8", "--max-steps", "2", "--no-progress", "--device", "cuda")
    det = Detector.from_pretrained(model, device="cpu")
    assert next(det.model.parameters()).dtype == torch.float32
    assert json.loads((model / "guardrail.json").read_text())["training"]["report"]["steps"] == 2


def test_eval_reports_what_the_sentence_judge_would_do(tiny_ragtruth, tmp_path):
    """`guardrail eval` with a model that has a judge: per answer and per sentence, the
    decisions the proxy takes; the same numbers as `guardrail judge eval` at full depth."""
    out, ref = tmp_path / "eval.json", tmp_path / "judge.json"
    text = run("eval", "--data", str(tiny_ragtruth), "--limit", "12", "--out", str(out),
               "--no-progress")
    run("judge", "eval", "--data", str(tiny_ragtruth), "--limit", "12", "--layers", "6",
        "--out", str(ref))
    judged = json.loads(out.read_text())["judge"]
    expected = json.loads(ref.read_text())["layers"]["6"]
    assert judged["all"]["answers"] == 12
    for key in ("example_f1", "example_precision", "example_recall", "supported_kept",
                "unsupported_stopped", "stop_f1"):
        assert judged["all"][key] == expected["all"][key], key
    assert "the sentence judge" in text


def test_eval_reads_the_weights_in_float32_unless_told(tiny_ragtruth, tmp_path):
    """The model card's numbers are float32; ``--dtype`` measures what a proxy with
    ``detector.dtype: bfloat16`` (or auto) serves, and the report says which."""
    out = tmp_path / "eval.json"
    run("eval", "--data", str(tiny_ragtruth), "--limit", "4", "--out", str(out), "--no-progress")
    assert json.loads(out.read_text())["dtype"] == "float32"
    run("eval", "--data", str(tiny_ragtruth), "--limit", "4", "--out", str(out), "--no-progress",
        "--dtype", "bfloat16")
    assert json.loads(out.read_text())["dtype"] == "bfloat16"


def test_eval_reads_a_pcw_answer_by_sentence_unless_told(tiny_ragtruth, tmp_path):
    """As the proxy reads it: a model that keeps the answer so far reads a block per
    sentence; ``--whole-answer`` reads it as one block (the older number)."""
    out = tmp_path / "eval.json"
    runs = {}
    for model, extra in (("default", ()), ("pcw", ()), ("pcw", ("--whole-answer",))):
        run("eval", "--data", str(tiny_ragtruth), "--limit", "4", "--out", str(out),
            "--no-progress", "--model", f"guardrail/models/{model}", *extra)
        runs[(model, extra)] = json.loads(out.read_text())
    assert not runs[("default", ())]["by_sentence"]
    assert runs[("pcw", ())]["by_sentence"]
    assert not runs[("pcw", ("--whole-answer",))]["by_sentence"]
