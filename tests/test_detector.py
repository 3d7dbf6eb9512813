"""Detector core: input building, offsets, label masking, spans, windows, exits, loading."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from guardrail.errors import InputError, ModelLoadError
from guardrail.model import DEFAULT_MODEL, DetectInput, Detector
from guardrail.model.detector import PreparedInput, batches_by_tokens
from guardrail.model.sources import pick_attention
from guardrail.model.inputs import (IGNORE, PreparedContext, clean_text, cut_windows,
                                    readable, token_labels, tokenize)
from guardrail.model.spans import merge_spans
from guardrail.model.windows import FirstWindow
from guardrail.train.train import minilm_path

CONTEXT = "The Eiffel Tower was built from 1887 to 1889. It is 330 metres tall."
QUESTION = "When was the Eiffel Tower built?"
RESPONSE = "It was built in 1950. It stands in Paris."


@pytest.fixture(scope="module")
def det() -> Detector:
    torch.manual_seed(0)
    return Detector.from_pretrained(minilm_path(), exit_layers=(2, 4), device="cpu")


# -- text and tokens -------------------------------------------------------------------
def test_clean_text_keeps_every_offset():
    raw = "a\x00b\ud800c\u200bd\te\nf"
    clean = clean_text(raw)
    assert len(clean) == len(raw)
    assert clean[0] == "a" and clean[1] == " " and clean[3] == "\ufffd" and clean[5] == " " and clean[7] == "\t"
    clean.encode("utf-8")  # no lone surrogate left


def test_characters_the_tokenizer_cannot_read_are_spaces_to_it(det):
    """An emoji is ``[UNK]`` to a WordPiece vocabulary, and glued to a word it made the
    word one ``[UNK]`` too ("Paris🗼"): the tokenizer reads it as a space, and every
    token's offsets still index the text as sent."""
    text = "It stands in Paris🗼 and is 330 m tall ✨. Caf\u00e9 \u00b0C \u4e2d"
    assert readable(det.tokenizer, text) == \
        "It stands in Paris  and is 330 m tall  . Caf\u00e9 \u00b0C \u4e2d"
    tok = tokenize(det.tokenizer, text)
    assert det.tokenizer.unk_token_id not in tok.ids.tolist()
    words = [text[a:b] for a, b in tok.offsets.tolist()]
    assert "paris" in [w.lower() for w in words] and "🗼" not in "".join(words)
    plain = "It stands in Paris."
    assert readable(det.tokenizer, plain) is plain


def test_clean_text_rejects_non_text():
    with pytest.raises(InputError):
        clean_text(b"bytes")  # type: ignore[arg-type]


def test_token_offsets_point_into_the_response(det):
    toks = tokenize(det.tokenizer, RESPONSE)
    pieces = [RESPONSE[s:e].lower() for s, e in toks.offsets]
    assert "".join(pieces) == RESPONSE.lower().replace(" ", "")
    assert (toks.offsets[:, 1] > toks.offsets[:, 0]).all()


def test_token_labels_mark_tokens_overlapping_a_span(det):
    toks = tokenize(det.tokenizer, RESPONSE)
    start = RESPONSE.index("1950")
    labels = token_labels(toks.offsets, [(start, start + 4)])
    marked = {RESPONSE[s:e] for (s, e), lab in zip(toks.offsets, labels) if lab}
    assert marked == {"1950"}
    # a span covering half of a word marks the whole word-piece it touches
    labels = token_labels(toks.offsets, [(start + 1, start + 2)])
    assert labels.sum() == 1


# -- input building ---------------------------------------------------------------------
def test_sequence_layout_types_and_label_masking(det):
    toks = tokenize(det.tokenizer, RESPONSE)
    gold = token_labels(toks.offsets, [(RESPONSE.index("1950"), RESPONSE.index("1950") + 4)])
    prep = det.prepare(DetectInput(CONTEXT, QUESTION, RESPONSE), labels=gold)
    (seq,) = prep.sequences
    tok = det.tokenizer
    ids = seq.input_ids.tolist()
    sep = tok.sep_token_id
    assert ids[0] == tok.cls_token_id and ids[-1] == sep and ids.count(sep) == 3
    first, second = ids.index(sep), ids.index(sep, ids.index(sep) + 1)
    assert tok.decode(ids[1:first]).lower() == CONTEXT.lower()
    assert tok.decode(ids[first + 1:second]).lower() == QUESTION.lower()
    assert seq.response_slice == slice(second + 1, len(ids) - 1)
    assert tok.decode(ids[seq.response_slice]).lower() == RESPONSE.lower()
    # two token types (BERT): context + question = 0, response (+ its [SEP]) = 1
    assert set(seq.token_type_ids[:second + 1].tolist()) == {0}
    assert set(seq.token_type_ids[second + 1:].tolist()) == {1}
    # labels only on response tokens
    outside = np.ones(len(ids), bool)
    outside[seq.response_slice] = False
    assert (seq.labels[outside] == IGNORE).all()
    assert (seq.labels[seq.response_slice] == gold).all()


def test_models_without_token_types_get_none(det):
    det.use_token_types, det.builder.use_token_types = False, False
    try:
        (seq,) = det.prepare(DetectInput(CONTEXT, QUESTION, RESPONSE)).sequences
        assert seq.token_type_ids is None
        assert "token_type_ids" not in det.collate([seq])
    finally:
        det.use_token_types, det.builder.use_token_types = True, True


def test_bad_inputs_give_clear_errors(det):
    with pytest.raises(InputError, match="response is empty"):
        det.detect(CONTEXT, QUESTION, "   ")
    with pytest.raises(InputError, match="context is empty"):
        det.detect(["", "  "], QUESTION, RESPONSE)
    with pytest.raises(InputError, match="more than the configured maximum"):
        Detector(det.model, det.tokenizer, max_context_tokens=10).detect(CONTEXT, "", RESPONSE)
    # control characters and lone surrogates are read, with offsets kept
    weird = "It was built\x00 in 1950\ud800."
    d = det.detect(CONTEXT + "\x07", QUESTION, weird)
    assert d.response == clean_text(weird) and len(d.response) == len(weird)
    assert all(0 <= s < e <= len(weird) for s, e in d.token_offsets)


# -- windows ------------------------------------------------------------------------------
@pytest.mark.parametrize("n,size,overlap", [(10, 20, 4), (100, 30, 10), (1000, 384, 64),
                                            (31, 30, 29)])
def test_windows_cover_every_token_with_overlap(n, size, overlap):
    windows = cut_windows(n, size, overlap)
    covered = np.zeros(n, bool)
    for w in windows:
        assert 0 <= w.start < w.end <= n and w.end - w.start <= size
        covered[w.start:w.end] = True
    assert covered.all()
    assert windows[-1].end == n
    for a, b in zip(windows, windows[1:]):
        assert b.start < a.end  # consecutive windows overlap


def test_long_context_is_windowed_and_any_window_supports(det):
    filler = " ".join(f"Paragraph {i} talks about gardening and soil." for i in range(200))
    ctx = filler + " " + CONTEXT
    prep = det.prepare(DetectInput(ctx, QUESTION, RESPONSE))
    assert prep.windows_total > 3 and prep.windows_scored == prep.windows_total
    assert all(len(s) <= det.max_length for s in prep.sequences)
    # aggregation is the minimum over windows: feed chosen probabilities
    n = len(prep.response_tokens)
    probs = [np.full(n, 0.9, np.float32) for _ in prep.sequences]
    probs[-1][:] = 0.1           # the last window (holding the evidence) supports everything
    probs[0][0] = 0.0
    d = det.finish(prep, probs)
    assert d.token_probs[0] == pytest.approx(0.0)
    assert all(p == pytest.approx(0.1) for p in d.token_probs[1:])
    assert d.spans == ()
    probs[-1][2] = 0.95          # no window supports token 2 -> the lowest other window wins
    d = det.finish(prep, probs)
    assert d.token_probs[2] == pytest.approx(0.9)
    # truncation baseline scores only the first window
    trunc = det.prepare(DetectInput(ctx, QUESTION, RESPONSE), selector=FirstWindow())
    assert trunc.windows_scored == 1 and trunc.windows_total == prep.windows_total
    assert det.finish(trunc, det.forward(trunc.sequences)).context_truncated


def test_long_response_is_split_not_dropped(det):
    response = " ".join(f"Claim {i} is that the tower was built in {1800 + i}." for i in range(120))
    d = det.detect(CONTEXT, QUESTION, response, exit_layer=2)
    assert d.response_split
    assert len(d.token_offsets) == len(tokenize(det.tokenizer, response))
    assert d.token_offsets[-1] == (len(response) - 1, len(response))  # the final "." too


def test_prepared_context_round_trips_and_is_reused(det):
    ctx = det.prepare_context(["doc one.", "doc two."])
    again = PreparedContext.from_bytes(ctx.to_bytes())
    assert again.key == ctx.key and again.text == ctx.text == "doc one.\n\ndoc two."
    assert (again.tokens.ids == ctx.tokens.ids).all()
    a = det.detect(again, QUESTION, RESPONSE)
    b = det.detect(["doc one.", "doc two."], QUESTION, RESPONSE)
    assert np.allclose(a.token_probs, b.token_probs, atol=1e-6)


def test_batches_respect_the_token_budget(det):
    inputs = [DetectInput(CONTEXT * k, QUESTION, RESPONSE) for k in (1, 3, 6, 2)]
    seqs = sorted((s for i in inputs for s in det.prepare(i).sequences), key=len)
    for batch in batches_by_tokens(seqs, 256):
        assert len(batch) == 1 or len(batch) * max(map(len, batch)) <= 256
    one = [det.detect(i.context, i.question, i.response) for i in inputs]
    many = det.detect_batch(inputs, max_batch_tokens=256)
    for x, y in zip(one, many):  # padding in a batch does not change the answer
        assert np.allclose(x.token_probs, y.token_probs, atol=1e-4)


# -- spans --------------------------------------------------------------------------------
def test_span_merging():
    text = "It was built in 1950 by aliens."
    offsets = [(0, 2), (3, 6), (7, 12), (13, 15), (16, 20), (21, 23), (24, 30), (30, 31)]
    probs = [0.1, 0.2, 0.1, 0.6, 0.8, 0.1, 0.9, 0.7]
    spans = merge_spans(text, offsets, probs, 0.5)
    assert [(s.start, s.end, s.text) for s in spans] == [(13, 20, "in 1950"),
                                                         (24, 31, "aliens.")]
    assert spans[0].confidence == pytest.approx(0.7)
    assert merge_spans(text, offsets, probs, 0.95) == ()
    assert len(merge_spans(text, offsets, probs, 0.0)) == 1


def test_detection_scores_a_sentence_range(det):
    d = det.detect(CONTEXT, QUESTION, RESPONSE)
    cut = RESPONSE.index("It stands")
    first = d.score_in(0, cut)
    assert first == max(p for (s, e), p in zip(d.token_offsets, d.token_probs) if s < cut)
    for sp in d.spans_in(cut, len(RESPONSE)):
        assert RESPONSE[cut + sp.start:cut + sp.end] == sp.text


# -- exits ----------------------------------------------------------------------------------
def test_exit_hidden_states_match_the_full_forward(det):
    batch = det.collate(det.prepare(DetectInput(CONTEXT, QUESTION, RESPONSE)).sequences)
    with torch.inference_mode():
        full = det.model.backbone(**batch, output_hidden_states=True)
        for layer in (1, 2, 4):
            assert torch.allclose(det.model.hidden_at(layer, **batch),
                                  full.hidden_states[layer], atol=1e-5)
        assert torch.allclose(det.model(exit_layer=None, **batch), full.logits, atol=1e-5)
        assert torch.allclose(det.model(exit_layer=2, **batch),
                              det.model.exits["2"](full.hidden_states[2]), atol=1e-5)


def test_an_exit_does_not_run_the_layers_above(det):
    from guardrail.model.layers import encoder_layers

    calls = []
    layers = encoder_layers(det.model.backbone)
    handles = [layer.register_forward_hook(lambda m, a, o, i=i: calls.append(i))
               for i, layer in enumerate(layers, 1)]
    try:
        det.detect(CONTEXT, QUESTION, RESPONSE, exit_layer=2)
        assert calls == [1, 2]
        calls.clear()
        d = det.detect(CONTEXT, QUESTION, RESPONSE)
        assert calls == [1, 2, 3, 4, 5, 6] and d.exit_layer == 6 and d.full_depth
    finally:
        for h in handles:
            h.remove()


def test_unknown_exit_is_an_error(det):
    with pytest.raises(ValueError, match="no exit adapter at layer 3"):
        det.detect(CONTEXT, QUESTION, RESPONSE, exit_layer=3)
    with pytest.raises(ValueError):
        det.model.add_exit(6)


# -- loading and saving -------------------------------------------------------------------------
def test_save_and_load_round_trip_keeps_exits_and_thresholds(det, tmp_path):
    det.thresholds = {2: 0.3}
    det.save_pretrained(tmp_path, extra={"note": "test"})
    meta = json.loads((tmp_path / "guardrail.json").read_text())
    assert meta["exit_layers"] == [2, 4] and meta["thresholds"] == {"2": 0.3}
    from safetensors import safe_open
    with safe_open(str(tmp_path / "model.safetensors"), "pt") as f:
        assert all(f.get_tensor(k).dtype == torch.float16 for k in f.keys())
    again = Detector.from_pretrained(tmp_path, device="cpu")
    assert again.exit_layers == (2, 4) and again.threshold_for(2) == 0.3
    assert again.threshold_for(None) == det.threshold
    a = det.detect(CONTEXT, QUESTION, RESPONSE, exit_layer=2)
    b = again.detect(CONTEXT, QUESTION, RESPONSE, exit_layer=2)
    assert np.allclose(a.token_probs, b.token_probs, atol=2e-3)  # fp16 round trip
    assert Detector.from_pretrained(tmp_path, threshold=0.9).threshold_for(2) == 0.9
    det.thresholds = {}


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="cannot load detector model"):
        Detector.from_pretrained(tmp_path / "nowhere")


def test_the_shipped_default_model_loads_offline():
    assert (DEFAULT_MODEL / "model.safetensors").exists()
    d = Detector.from_pretrained()
    assert d.exit_layers and d.n_layers == 6 and d.max_length == 512
    assert 0.0 < d.threshold < 1.0
    r = d.detect(CONTEXT, QUESTION, RESPONSE, exit_layer=d.exit_layers[0])
    assert r.exit_layer == d.exit_layers[0] and len(r.token_probs) > 0


def test_flash_attention_only_with_cuda():
    assert pick_attention(torch.device("cpu")) == "sdpa"
    try:
        import flash_attn  # noqa: F401
        has_flash = True
    except ImportError:
        has_flash = False
    assert pick_attention(torch.device("cuda")) == ("flash_attention_2" if has_flash else "sdpa")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_gpu_bf16_matches_cpu():
    cpu = Detector.from_pretrained(device="cpu")
    gpu = Detector.from_pretrained(device="cuda")
    assert next(gpu.model.parameters()).dtype == torch.bfloat16
    a = cpu.detect(CONTEXT, QUESTION, RESPONSE)
    b = gpu.detect(CONTEXT, QUESTION, RESPONSE)
    assert np.allclose(a.token_probs, b.token_probs, atol=0.05)


def test_prepared_input_counts_tokens(det):
    prep = det.prepare(DetectInput(CONTEXT, QUESTION, RESPONSE))
    assert isinstance(prep, PreparedInput)
    assert prep.n_tokens == sum(len(s) for s in prep.sequences)
