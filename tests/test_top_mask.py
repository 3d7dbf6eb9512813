"""The top-window read over the concatenation (training) against a check's (serving).

A check over more than ``top_windows`` windows reads, at every layer, the windows each
block of its query attends to most.  With ``concat_reads_top`` the concatenated forward
that training runs makes the same choice as a mask; these tests hold the two equal,
with real weights and the real tokenizer (the computation, not the quality), and show
that gradients reach the weights.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from guardrail.model import PcwDetector
from guardrail.model.inputs import tokenize

PARIS = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed in 1889 "
         "for the World's Fair and is 330 metres tall. Gustave Eiffel's company built it. ")
FILLER = ("The harbour district was rebuilt after the flood, with new warehouses along the "
          "quay and a market that opens on Saturdays. ")
LONDON = ("Big Ben is the nickname for the Great Bell of the striking clock at the north end "
          "of the Palace of Westminster in London. The tower was completed in 1859. ")
QUESTION = "When was the Eiffel Tower completed?"
ANSWER = "The Eiffel Tower was completed in 1889. It is 500 metres tall. Eiffel built it."
CONTEXT = FILLER * 10 + PARIS + FILLER * 6 + LONDON + FILLER * 6


@pytest.fixture()
def det() -> PcwDetector:
    d = PcwDetector.from_pretrained(None, device="cpu")  # real weights read as PCW
    d.answer, d.top_windows, d.concat_reads_top = "sentences", 2, True
    return d


def _cuts(det, response: str):
    """The response's tokens and a block at each of its sentences."""
    r = tokenize(det.tokenizer, response)
    return r, [int(np.searchsorted(r.offsets[:, 0], c))
               for c in (response.index(" It"), response.index(" Eiffel b"))]


def _both(det, context, question, response, exit_layer):
    """The concatenation (every window, blocks at the sentences) and the cached check
    reading the same answer blocks, each at ``exit_layer``."""
    r, cuts = _cuts(det, response)
    ctx = det.prepare_context(context)
    q = det.builder.question_tokens(question)
    concat = det.training_sequence(ctx.tokens, det.windows(ctx), q, r, (0, len(r)), 0, cuts=cuts)
    cached = det._query_sequence(ctx, det.context_states(ctx), q, r, (0, len(r)), 0, cuts, 1)
    return concat, cached


@pytest.mark.parametrize("exit_layer", [2, 4, None])
def test_the_concatenation_reads_each_blocks_top_windows_as_a_check_does(det, exit_layer):
    concat, cached = _both(det, CONTEXT, QUESTION, ANSWER, exit_layer)
    assert int(concat.segments.max()) + 1 > det.top_windows
    assert len(set(concat.segments[concat.segments < 0].tolist())) == 4  # question, 3 sentences
    got = det.forward([concat], exit_layer)[0]
    want = det.forward([cached], exit_layer)[0]
    np.testing.assert_allclose(got, want, atol=2e-5)
    det.concat_reads_top = False  # every window: what training read before
    every = det.forward([concat], exit_layer)[0]
    assert np.abs(every - want).max() > 1e-3


def test_a_batch_mixes_items_with_few_and_many_windows(det):
    """Padding, an item with no more windows than it may read, and one with many."""
    items = [(CONTEXT, QUESTION, ANSWER),
             (PARIS, "How tall is it?", "It is 500 metres tall. It was completed in 1889."),
             (FILLER * 20 + LONDON, "", "Big Ben was completed in 1859. It is in Paris.")]
    pairs = []
    for context, question, response in items:
        r = tokenize(det.tokenizer, response)
        ctx = det.prepare_context(context)
        q = det.builder.question_tokens(question)
        cuts = [int(np.searchsorted(r.offsets[:, 0], response.index(". ") + 1))]
        pairs.append((det.training_sequence(ctx.tokens, det.windows(ctx), q, r, (0, len(r)), 0,
                                            cuts=cuts),
                      det._query_sequence(ctx, det.context_states(ctx), q, r, (0, len(r)), 0,
                                          cuts, 1)))
    assert [int(c.segments.max()) + 1 <= det.top_windows for c, _ in pairs] == [False, True, False]
    got = det.forward([c for c, _ in pairs], 4)
    for (_, cached), g in zip(pairs, got):
        np.testing.assert_allclose(g, det.forward([cached], 4)[0], atol=2e-5)


def test_training_through_the_top_window_read_reaches_the_weights(det):
    concat, _ = _both(det, CONTEXT, QUESTION, ANSWER, None)
    model = det.model
    model.train()
    try:
        inputs = det.collate([concat])
        assert inputs["top_windows"] == 2 and inputs["window_segments"].shape == (1, len(concat))
        logits = model(exit_layer=None, **inputs)
        labels = torch.zeros(logits.shape[:2], dtype=torch.long)
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()).backward()
        layers = model.loop.layers
        for layer in (layers[0], layers[-1]):
            grad = layer.attention.self.key.weight.grad
            assert grad is not None and torch.isfinite(grad).all() and grad.abs().sum() > 0
    finally:
        model.zero_grad(set_to_none=True)
        model.eval()


def test_reading_every_window_the_concatenation_gets_no_segments(det):
    concat, _ = _both(det, CONTEXT, QUESTION, ANSWER, 4)
    det.top_windows = 0
    assert "window_segments" not in det.collate([concat])
    det.top_windows, det.concat_reads_top = 2, False
    assert "window_segments" not in det.collate([concat])
