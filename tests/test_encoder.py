"""The encoder's own layer loop (guardrail.model.layers) against Hugging Face's forward.

Bit for bit (``torch.equal``: max |delta| = 0) for the shipped MiniLM (BERT family), a
ModernBERT with global and sliding-window layers, and the hidden-states fallback of
an unknown family; forwards from several threads at once; the loop compiles without
a graph break.
"""

from __future__ import annotations

import threading

import pytest
import torch
from transformers import (AutoTokenizer, DistilBertConfig, DistilBertForTokenClassification,
                          ModernBertConfig, ModernBertForTokenClassification)

from guardrail.model import DetectInput, Detector, EarlyExitModel
from guardrail.model.layers import BertLoop, HiddenStatesLoop, ModernBertLoop
from guardrail.train.train import minilm_path

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. "
           "It was built from 1887 to 1889 and is 330 metres tall.")
RESPONSES = ["It was completed in 1950 by a team of Italian architects.",
             "The tower is 330 metres tall.",
             "The Eiffel Tower stands in Paris and was built for the World's Fair of 1889."]


def batch_of(det, padded: bool = True) -> dict:
    seqs = [s for r in RESPONSES for s in det.prepare(DetectInput(CONTEXT, "", r)).sequences]
    batch = det.collate(seqs if padded else seqs[:1])
    assert ("attention_mask" in batch) == padded
    return batch


def assert_loop_matches_hf(model: EarlyExitModel, batch: dict) -> None:
    with torch.inference_mode():
        ref = model.backbone(**batch, output_hidden_states=True)
        for layer in range(1, model.n_layers):  # (the last: before the final norm, if any)
            got = model.hidden_at(layer, **batch)
            assert torch.equal(got, ref.hidden_states[layer]), f"layer {layer}"
        assert torch.equal(model(exit_layer=None, **batch), ref.logits)
        for layer in model.exit_layers:
            assert torch.equal(model(exit_layer=layer, **batch),
                               model.exits[str(layer)](ref.hidden_states[layer]))


@pytest.mark.parametrize("padded", [True, False], ids=["padded", "one-sequence"])
def test_bert_loop_is_bit_exact(detector, padded):
    assert isinstance(detector.model.loop, BertLoop)
    assert_loop_matches_hf(detector.model, batch_of(detector, padded))


def _tokenizer():
    return AutoTokenizer.from_pretrained(minilm_path())


def test_modernbert_loop_is_bit_exact_with_sliding_windows():
    tok = _tokenizer()
    cfg = ModernBertConfig(vocab_size=tok.vocab_size, hidden_size=64, intermediate_size=96,
                           num_hidden_layers=4, num_attention_heads=4,
                           global_attn_every_n_layers=2, local_attention=16,
                           max_position_embeddings=1024, num_labels=2,
                           pad_token_id=tok.pad_token_id, attn_implementation="sdpa")
    torch.manual_seed(0)
    model = EarlyExitModel(ModernBertForTokenClassification(cfg).eval(), exit_layers=(1, 2))
    assert isinstance(model.loop, ModernBertLoop)
    ids = torch.randint(5, tok.vocab_size, (3, 80))
    mask = torch.ones_like(ids)
    mask[1, 50:] = 0
    mask[2, 20:] = 0  # sequences far longer than the 16-token window, with padding
    assert_loop_matches_hf(model, {"input_ids": ids, "attention_mask": mask})


def test_an_unknown_family_is_exact_through_its_hidden_states():
    cfg = DistilBertConfig(vocab_size=500, dim=32, hidden_dim=64, n_layers=3, n_heads=2,
                           num_labels=2)
    torch.manual_seed(0)
    model = EarlyExitModel(DistilBertForTokenClassification(cfg).eval(), exit_layers=(1,))
    assert isinstance(model.loop, HiddenStatesLoop)
    ids = torch.randint(5, 500, (2, 12))
    assert_loop_matches_hf(model, {"input_ids": ids, "attention_mask": torch.ones_like(ids)})


def test_forwards_from_many_threads_at_once(detector):
    """Full-depth and shallow forwards interleaved across threads give exactly what
    they give alone (the old hook-and-lock design could not run them at once)."""
    batch = batch_of(detector)
    depths = [None, 2, 4, None, 4, 2, None, 4]
    with torch.inference_mode():
        alone = {d: detector.model(exit_layer=d, **batch) for d in set(depths)}
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(len(depths))

    def work(i: int, depth) -> None:
        try:
            start.wait()
            with torch.inference_mode():
                results[i] = [detector.model(exit_layer=depth, **batch) for _ in range(3)]
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, d)) for i, d in enumerate(depths)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    for i, depth in enumerate(depths):
        assert all(torch.equal(r, alone[depth]) for r in results[i]), (i, depth)


def test_the_loop_compiles_without_a_graph_break():
    """``fullgraph=True`` fails on any graph break: no exception for control flow,
    no hook.  The eager backend keeps the test fast; the graph is what is checked.
    A model of its own: once ``output_hidden_states`` has been asked of a Hugging Face
    model (as the tests above do), its layers carry recording hooks that break graphs;
    our loop never asks for it."""
    torch._dynamo.reset()
    detector = Detector.from_pretrained(None, device="cpu")
    model = detector.model
    batch = batch_of(detector)

    def shallow(input_ids, attention_mask, token_type_ids):
        return model(exit_layer=2, input_ids=input_ids, attention_mask=attention_mask,
                     token_type_ids=token_type_ids)

    def full(input_ids, attention_mask, token_type_ids):
        return model(exit_layer=None, input_ids=input_ids, attention_mask=attention_mask,
                     token_type_ids=token_type_ids)

    with torch.inference_mode():
        for fn in (shallow, full):
            compiled = torch.compile(fn, fullgraph=True, backend="eager")
            assert torch.equal(compiled(**batch), fn(**batch))
    torch._dynamo.reset()
