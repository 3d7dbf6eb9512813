"""The long-context path: a ModernBERT with 32K positions and YaRN RoPE scaling.

No checkpoint can be downloaded here, so the model is built from a config with
random weights: this tests the code path (loading, input building, one window for
a 16K-token context, forward with SDPA, early exit, spans), not the quality.
"""

from __future__ import annotations

import pytest
import torch
from transformers import AutoTokenizer, ModernBertConfig, ModernBertForTokenClassification

from guardrail.model import Detector
from guardrail.model.layers import encoder_layers
from guardrail.train.train import minilm_path


@pytest.fixture(scope="module")
def long_detector(tmp_path_factory) -> Detector:
    tok = AutoTokenizer.from_pretrained(minilm_path())
    cfg = ModernBertConfig(
        vocab_size=tok.vocab_size, hidden_size=64, intermediate_size=128,
        num_hidden_layers=3, num_attention_heads=4, max_position_embeddings=32768,
        global_attn_every_n_layers=3, local_attention=128, num_labels=2,
        pad_token_id=tok.pad_token_id, cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id, bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        rope_scaling={"rope_type": "yarn", "factor": 4.0,
                      "original_max_position_embeddings": 8192})
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("modernbert-32k")
    ModernBertForTokenClassification(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return Detector.from_pretrained(path, exit_layers=(1,), device="cpu")


def test_config_has_32k_positions_and_yarn(long_detector):
    cfg = long_detector.model.backbone.config
    assert cfg.model_type == "modernbert" and long_detector.max_length == 32768
    assert cfg.rope_parameters["full_attention"]["rope_type"] == "yarn"
    assert cfg._attn_implementation == "sdpa"  # no CUDA here: no flash-attn
    assert not long_detector.use_token_types  # ModernBERT has no token types
    assert len(encoder_layers(long_detector.model.backbone)) == 3


def test_16k_token_context_in_one_window_with_early_exit(long_detector):
    det = long_detector
    context = " ".join(f"Record {i} says the tower is {i % 300} metres tall." for i in range(1520))
    assert det.prepare_context(context).n_tokens > 16000
    response = "The tower is 42 metres tall. It was painted red."
    calls = []
    handles = [layer.register_forward_hook(lambda m, a, o, i=i: calls.append(i))
               for i, layer in enumerate(encoder_layers(det.model.backbone), 1)]
    try:
        shallow = det.detect(context, "How tall is the tower?", response, exit_layer=1)
        assert calls == [1]
        full = det.detect(context, "How tall is the tower?", response)
        assert calls == [1, 1, 2, 3]
    finally:
        for h in handles:
            h.remove()
    for d in (shallow, full):
        assert d.windows_total == 1 and not d.response_split and not d.context_truncated
        assert len(d.token_probs) == len(d.token_offsets) > 5
        assert all(0.0 <= p <= 1.0 for p in d.token_probs)
        for sp in d.spans:
            assert response[sp.start:sp.end] == sp.text
    assert shallow.exit_layer == 1 and full.exit_layer == 3
