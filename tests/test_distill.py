"""Distillation from a stronger teacher (``guardrail.train.distill``) and the teacher's own
backbone family (MPNet, which has no SDPA attention in transformers).

Real tokenizers and real weights: the shipped detector plays the teacher (the real
teacher, all-mpnet-base-v2 fine-tuned by scripts/train-teacher, needs a GPU to build).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from test_train import run, tiny_ragtruth  # noqa: F401  (fixture)
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.model import DetectInput, Detector
from guardrail.model.inputs import IGNORE, tokenize
from guardrail.train.data import Example
from guardrail.train.distill import soft_labels, teacher_outputs
from guardrail.train.train import encode_examples, token_loss

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed in "
           "1889 and is 330 metres tall.")


def _example(response: str, i: int = 0) -> Example:
    return Example(id=f"t/{i}", context=CONTEXT, question="", response=response, spans=[],
                   hallucinated=False, has_spans=True, source_id=f"t/{i}", dataset="t")


@pytest.fixture(scope="module")
def det() -> Detector:
    return Detector.from_pretrained(None, device="cpu")


def test_student_tokens_take_the_largest_overlapping_teacher_probability():
    teacher = (np.array([[0, 5], [6, 11], [11, 12]]), np.array([0.9, 0.1, 0.6], np.float32))
    got = soft_labels(np.array([[0, 3], [3, 5], [6, 12], [13, 14]]), teacher)
    np.testing.assert_allclose(got[:3], [0.9, 0.9, 0.6])
    assert np.isnan(got[3])  # overlaps no teacher token: no soft label


def test_with_the_same_tokenizer_soft_labels_are_the_teachers_probabilities(det):
    response = "It was completed in 1950, by Italian architects (reportedly)."
    (out,) = teacher_outputs(det, [_example(response)])
    toks = tokenize(det.tokenizer, response)
    np.testing.assert_allclose(soft_labels(toks.offsets, out), out[1], atol=1e-6)


def test_teacher_outputs_are_cached_and_each_text_is_scored_once(det, tmp_path: Path):
    calls = []
    real = det.detect_batch

    def counting(inputs, **kw):
        calls.append(len(inputs))
        return real(inputs, **kw)

    examples = [_example("It is 330 metres tall.", 0), _example("It is 500 metres tall.", 1),
                _example("It is 330 metres tall.", 2), _example("", 3)]
    cache = tmp_path / "teacher.jsonl"
    det.detect_batch = counting
    try:
        first = teacher_outputs(det, examples, cache)
        assert sum(calls) == 2  # the repeated text once; the empty response never
        assert first[3] is None and first[0] is not None
        np.testing.assert_allclose(first[0][1], first[2][1])
        again = teacher_outputs(det, examples, cache)
        assert sum(calls) == 2  # all read back from the file
    finally:
        del det.detect_batch
    for a, b in zip(first[:3], again[:3]):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_allclose(a[1], b[1], atol=1e-4)
    assert max(first[1][1]) > max(first[0][1])  # the teacher tells 500 from 330


def test_a_teacher_limited_to_some_data_sets_scores_only_those(det, tmp_path: Path):
    """``only``: the starting weights replay what they do on one data set (learning
    without forgetting); the other sets' examples get no soft labels and are not scored."""
    kept = _example("It was completed in 1889.")
    other = replace(_example("It is 500 metres tall.", 1), dataset="hand/x")
    cache = tmp_path / "teacher.jsonl"
    got = teacher_outputs(det, [kept, other], cache, only=["t"])
    assert got[0] is not None and got[1] is None
    assert len(cache.read_text().splitlines()) == 1
    assert teacher_outputs(det, [kept, other], cache)[1] is not None  # unlimited: both
    seqs, _ = encode_examples(det, [kept, other], teacher=got)
    assert seqs[0].soft is not None and seqs[1].soft is None


def test_sequences_carry_soft_labels_on_response_tokens_only(det):
    examples = [_example("It was completed in 1889."), _example("It is 330 metres tall.", 1)]
    taught = teacher_outputs(det, examples)
    taught[1] = None  # an example the teacher did not score trains on its labels alone
    seqs, _ = encode_examples(det, examples, teacher=taught)
    s, plain = seqs
    assert plain.soft is None
    r = s.response_slice
    assert not np.isnan(s.soft[r]).any() and np.isnan(np.delete(s.soft, np.arange(
        r.start, r.stop))).all()
    assert (s.labels[r] != IGNORE).all()


def test_the_loss_mixes_labels_and_the_teachers_probabilities_token_by_token(det):
    """Taught tokens: (1 - d) x cross-entropy against the label + d x against the teacher's
    probability; an example the teacher did not score keeps its labels at full weight
    (not scaled down because another example in its batch was taught)."""
    examples = [_example("It was completed in 1889."), _example("It is 330 metres tall.", 1)]
    taught = teacher_outputs(det, examples)
    seqs, _ = encode_examples(det, examples, teacher=[taught[0], None])
    n = max(len(s) for s in seqs)
    logits = torch.randn(2, n, 2)
    logp = torch.log_softmax(logits, -1)
    h = det.hallucinated_label
    terms = []
    for i, s in enumerate(seqs):
        for t in range(len(s)):
            if s.labels[t] == IGNORE:
                continue
            ce = -logp[i, t, s.labels[t]]
            if s.soft is not None:
                q = float(s.soft[t])
                ce = 0.3 * ce + 0.7 * -(q * logp[i, t, h] + (1 - q) * logp[i, t, 1 - h])
            terms.append(ce)
    torch.testing.assert_close(token_loss(det, seqs, logits, 0.7), torch.stack(terms).mean())
    labels = torch.full((2, n), IGNORE)
    for i, s in enumerate(seqs):
        labels[i, :len(s)] = torch.from_numpy(s.labels)
    plain = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)
    torch.testing.assert_close(token_loss(det, seqs, logits), plain)  # no distillation
    assert not torch.isclose(token_loss(det, seqs, logits, 0.7), plain)


def test_train_detector_with_a_teacher(tiny_ragtruth, tmp_path):  # noqa: F811
    """The shipped detector as the teacher of a fresh MiniLM: soft labels scored once,
    cached next to the model, and recorded in its training metadata."""
    model = tmp_path / "student"
    args = ("train", "detector", "--data", f"ragtruth={tiny_ragtruth}", "--out", str(model),
            "--synthetic", "4", "--max-steps", "2", "--batch-tokens", "2048", "--no-progress",
            "--dev-fraction", "0.3", "--teacher", "default", "--distill", "0.7",
            "--distill-only", "ragtruth")  # the synthetic examples: labels alone
    run(*args)
    meta = json.loads((model / "guardrail.json").read_text())
    assert meta["training"]["teacher"] == "default"
    assert meta["training"]["distill_only"] == "ragtruth"
    assert meta["training"]["config"]["distill"] == 0.7
    cached = (model / "teacher_probs.jsonl").read_text().splitlines()
    assert meta["training"]["train"]["n"] // 2 <= len(cached) <= meta["training"]["train"]["n"]
    run(*args)  # again: every teacher output read back, none added
    assert (model / "teacher_probs.jsonl").read_text().splitlines() == cached


@pytest.mark.parametrize("flags, said", [
    (("--teacher", "default", "--distill-only", "ragtruht"), "ragtruht"),  # a typo: no set
    (("--distill-only", "ragtruth"), "--teacher"),
])
def test_distill_only_names_data_sets_a_teacher_scores(tiny_ragtruth, tmp_path, flags,  # noqa: F811
                                                       said):
    """A prefix that names no training data set would silently distil nothing."""
    bad = CliRunner().invoke(app, ["train", "detector", "--data", f"ragtruth={tiny_ragtruth}",
                                   "--out", str(tmp_path / "x"), "--synthetic", "0",
                                   "--max-steps", "1", "--no-progress", *flags])
    assert bad.exit_code == 2 and "--distill-only" in bad.output and said in bad.output
    assert not (tmp_path / "x").exists()


def test_an_mpnet_detector_loads_with_plain_attention_and_offset_positions(tmp_path):
    """MPNet (the teacher's family) has no SDPA attention: loading falls back to the
    plain one; its positions start after the padding index, like RoBERTa's."""
    from transformers import AutoTokenizer, MPNetConfig, MPNetForTokenClassification

    from guardrail.train.train import minilm_path

    tok = AutoTokenizer.from_pretrained(minilm_path())
    cfg = MPNetConfig(vocab_size=tok.vocab_size, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=2, num_labels=2,
                      max_position_embeddings=130, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    MPNetForTokenClassification(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    d = Detector.from_pretrained(tmp_path, device="cpu")
    assert d.model.backbone.config._attn_implementation == "eager"
    assert d.max_length == 128
    long_context = " ".join([CONTEXT] * 20)  # several windows of 128 tokens
    r = d.detect_batch([DetectInput(long_context, "When?", "It was completed in 1889.")])[0]
    assert r.windows_total > 1 and len(r.token_probs) == len(r.token_offsets) > 0
