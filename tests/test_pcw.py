"""Parallel Context Windows: the cached serving path against the reference.

The reference is the Hugging Face layers run over windows + query concatenated, with
the PCW mask and restarting positions (what training runs).  The serving path
encodes the windows once, keeps their keys and values, and runs only the query
tokens.  Real weights (the shipped model) and the real tokenizer throughout.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

from guardrail.errors import ModelLoadError
from guardrail.model import DetectInput, Detector, PcwDetector
from guardrail.model.attention import (TopWindows, _lse_attention, cached_attention, merge,
                                       top_window_attention)
from guardrail.model.inputs import tokenize
from guardrail.model.queries import QUERY, QuerySequence, pcw_mask
from guardrail.model.states import ContextStates, StateCache

PARIS = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed in 1889 "
         "for the World's Fair and is 330 metres tall. Gustave Eiffel's company built it. ")
FILLER = ("The harbour district was rebuilt after the flood, with new warehouses along the "
          "quay and a market that opens on Saturdays. ")
QUESTION = "When was the Eiffel Tower completed?"
ANSWER = "The Eiffel Tower was completed in 1889. It is 500 metres tall."


@pytest.fixture(scope="module")
def pcw() -> PcwDetector:
    det = PcwDetector.from_pretrained(None, device="cpu")
    det.top_windows = 0  # every window, as the reference over the concatenation reads
    return det


def _reference(det: PcwDetector, context, question, response, exit_layer):
    r = tokenize(det.tokenizer, response)
    prep = det.prepare(DetectInput(context, question, response), labels=np.zeros(len(r), int))
    return det.forward(list(prep.sequences), exit_layer)


def test_mask_windows_see_themselves_query_sees_all():
    seg = np.array([0, 0, 1, 1, 1, QUERY, QUERY])
    m = pcw_mask(seg)
    assert m[0, :2].all() and not m[0, 2:].any()          # window 0: only itself
    assert m[3, 2:5].all() and not m[3, [0, 1, 5, 6]].any()  # window 1: only itself
    assert m[5].all() and m[6].all()                        # the query: everything


def test_merge_by_logsumexp_equals_attention_over_the_union():
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 4, 5, 8), torch.randn(1, 4, 37, 8), torch.randn(1, 4, 37, 8)
    whole = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    qmask = torch.ones(1, 5, dtype=torch.bool)
    # the last 5 keys play the query's own keys, the first 32 a cached context
    got = cached_attention(q, k[:, :, 32:], v[:, :, 32:], qmask, [[(k[0, :, :32], v[0, :, :32])]])
    torch.testing.assert_close(got, whole, atol=1e-5, rtol=1e-5)
    o1 = torch.nn.functional.scaled_dot_product_attention(q, k[:, :, :10], v[:, :, :10])
    o2 = torch.nn.functional.scaled_dot_product_attention(q, k[:, :, 10:], v[:, :, 10:])
    s = (q @ k.transpose(-1, -2)) / 8 ** 0.5
    lse1, lse2 = s[..., :10].logsumexp(-1), s[..., 10:].logsumexp(-1)
    merged, lse = merge(o1, lse1, o2, lse2)
    torch.testing.assert_close(merged, whole, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse, s.logsumexp(-1), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("shape", ["keys", "rows"])
def test_masked_attention_returns_what_the_written_out_softmax_gives(shape):
    # the query-to-query part of every check: padded keys ([B,1,1,L]) or block-causal
    # rows ([B,1,L,L]); a row that may read nothing must weigh nothing in a merge
    torch.manual_seed(1)
    q, k, v = torch.randn(3, 4, 6, 8), torch.randn(3, 4, 6, 8), torch.randn(3, 4, 6, 8)
    if shape == "keys":
        mask = torch.ones(3, 1, 1, 6, dtype=torch.bool)
        mask[1, ..., 4:] = False
    else:
        mask = torch.ones(6, 6, dtype=torch.bool).tril().expand(3, 1, 6, 6).clone()
        mask[2, 0, 3] = False  # a padding row
    out, lse = _lse_attention(q, k, v, mask)
    scores = ((q @ k.transpose(-1, -2)) / 8 ** 0.5).masked_fill(~mask, float("-inf"))
    want_lse = scores.logsumexp(-1)
    want = (scores - want_lse.unsqueeze(-1)).exp().nan_to_num(0.0) @ v
    torch.testing.assert_close(lse, want_lse, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out, want, atol=1e-5, rtol=1e-5)
    if shape == "rows":
        assert lse[2, :, 3].isneginf().all()
        # merged with a part it may read, the empty row contributes nothing
        o_c, lse_c = torch.randn(4, 8), torch.randn(4)
        merged, _ = merge(o_c, lse_c, out[2, :, 3], lse[2, :, 3])
        torch.testing.assert_close(merged, o_c)


def _top_window_keep(q, ck, n_windows, top, blocks):
    """Written out: which context keys each query token may read ``[H, n, N]``: every
    token's scores over every window, the softmax over windows of their log-sum-exp,
    summed over heads and the block's tokens; the block's ``top`` windows kept."""
    H, N, d = ck.shape
    scores = (q[0] @ ck.transpose(-1, -2)) / d ** 0.5
    mass = scores.view(H, q.shape[2], n_windows, -1).logsumexp(-1).softmax(-1).sum(0)
    keep = torch.zeros(q.shape[2], n_windows, dtype=torch.bool)
    for a, b in blocks:
        keep[a:b] = torch.zeros(n_windows, dtype=torch.bool).index_fill_(
            0, mass[a:b].sum(0).topk(top).indices, True)
    return keep.repeat_interleave(N // n_windows, -1).expand(H, -1, -1)


@pytest.mark.parametrize("top", [1, 3])
def test_each_block_of_a_query_reads_the_windows_it_attends_to_most(top):
    torch.manual_seed(2)
    n_windows, size, n = 6, 8, 5
    q = torch.randn(1, 4, n, 16)
    ck, cv = torch.randn(4, n_windows * size, 16), torch.randn(4, n_windows * size, 16)
    ck[:, 3 * size:4 * size] += 2 * q[0, :, 3:].mean(1, keepdim=True)  # block 1's window
    blocks = ((0, 3), (3, 5))
    pick = TopWindows(n_windows, top, blocks)
    # merged with the query's own keys, as a check runs it, against the written-out mask
    k_q, v_q = torch.randn(1, 4, n, 16), torch.randn(1, 4, n, 16)
    real = torch.ones(1, n, dtype=torch.bool)
    got = cached_attention(q, k_q, v_q, real, [[(ck, cv)]], windows=[pick])
    keep = torch.cat([_top_window_keep(q, ck, n_windows, top, blocks),
                      torch.ones(4, n, n, dtype=torch.bool)], -1)
    scores = torch.cat([q[0] @ ck.transpose(-1, -2), q[0] @ k_q[0].transpose(-1, -2)], -1) / 4
    want = scores.masked_fill(~keep, float("-inf")).softmax(-1) @ torch.cat([cv, v_q[0]], 1)
    torch.testing.assert_close(got, want.unsqueeze(0), atol=1e-5, rtol=1e-5)
    assert keep[:, 3:, 3 * size].all()  # block 1 reads the window made for it
    # no more windows than it may read: the plain attention over all of them
    every = cached_attention(q, k_q, v_q, real, [[(ck, cv)]],
                             windows=[TopWindows(n_windows, n_windows, blocks)])
    plain = cached_attention(q, k_q, v_q, real, [[(ck, cv)]])
    torch.testing.assert_close(every, plain, atol=1e-5, rtol=1e-5)


def test_a_sharpened_read_weighs_the_chosen_windows_by_their_mass_to_a_power():
    """``TopWindows(sharpen=g)``: the masked softmax over the concatenation with each
    chosen window's keys raised by g - 1 times the token's log-sum-exp over that window,
    less what keeps the context's total mass against the query's own keys; the windows
    chosen are those of the plain read."""
    torch.manual_seed(4)
    H, n_windows, size, n, top, g = 4, 6, 8, 5, 3, 2.5
    q = torch.randn(1, H, n, 16)
    ck, cv = torch.randn(H, n_windows * size, 16), torch.randn(H, n_windows * size, 16)
    k_q, v_q = torch.randn(1, H, n, 16), torch.randn(1, H, n, 16)
    real = torch.ones(1, n, dtype=torch.bool)
    blocks = ((0, 3), (3, 5))
    plain = cached_attention(q, k_q, v_q, real, [[(ck, cv)]],
                             windows=[TopWindows(n_windows, top, blocks)])
    got = cached_attention(q, k_q, v_q, real, [[(ck, cv)]],
                           windows=[TopWindows(n_windows, top, blocks, sharpen=g)])
    keep = _top_window_keep(q, ck, n_windows, top, blocks)          # [H, n, N]
    ctx = q[0] @ ck.transpose(-1, -2) / 4
    lse = ctx.view(H, n, n_windows, size).logsumexp(-1)             # [H, n, W]
    read = lse.masked_fill(~keep.view(H, n, n_windows, size)[..., 0], float("-inf"))
    kept_total = (g * read).logsumexp(-1) - read.logsumexp(-1)      # [H, n]
    bias = ((g - 1) * lse - kept_total[..., None]).repeat_interleave(size, -1)
    scores = torch.cat([ctx + bias, q[0] @ k_q[0].transpose(-1, -2) / 4], -1)
    mask = torch.cat([keep, torch.ones(H, n, n, dtype=torch.bool)], -1)
    want = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ torch.cat([cv, v_q[0]], 1)
    torch.testing.assert_close(got, want.unsqueeze(0), atol=1e-5, rtol=1e-5)
    assert (got - plain).abs().max() > 1e-2  # not the plain read


def _shortlist_keep(q, ck, n_windows, top, short):
    """Written out: block ``j`` (``short[j] = (start, end, windows)``) reads the ``top``
    of its shortlisted windows that its tokens give the most mass, the softmax over
    windows taken over the union of every block's shortlist."""
    H, N, d = ck.shape
    union = sorted({w for *_, ws in short for w in ws})
    scores = (q[0] @ ck.transpose(-1, -2)) / d ** 0.5
    lse = scores.view(H, q.shape[2], n_windows, -1).logsumexp(-1)[..., union]
    mass = lse.softmax(-1).sum(0)
    keep = torch.zeros(q.shape[2], n_windows, dtype=torch.bool)
    for a, b, ws in short:
        own = torch.tensor([union.index(w) for w in ws])
        best = own[mass[a:b][:, own].sum(0).topk(top).indices]
        keep[a:b, torch.tensor(union)[best]] = True
    return keep.repeat_interleave(N // n_windows, -1).expand(H, -1, -1)


def test_a_shortlist_keeps_the_first_layers_windows_for_the_later_layers():
    """``shortlist``: the layers before ``shortlist_from`` read as without one, the
    last of them keeping each block's ``shortlist`` windows of most mass; later layers
    (the same ``TopWindows``, one call per layer) score only those, each block choosing
    its ``top`` among its own, against the written-out masked softmax.  A window
    outside a block's shortlist is never read, however much a later query resembles it."""
    torch.manual_seed(3)
    n_windows, size, n, top = 8, 8, 6, 2
    blocks = ((0, 3), (3, 6))
    ck, cv = torch.randn(4, n_windows * size, 16), torch.randn(4, n_windows * size, 16)
    k_q, v_q = torch.randn(1, 4, n, 16), torch.randn(1, 4, n, 16)
    real = torch.ones(1, n, dtype=torch.bool)
    pick = TopWindows(n_windows, top, blocks, shortlist=4, shortlist_from=2)
    for _ in range(2):  # layers 0 and 1: every window scored
        first = torch.randn(1, 4, n, 16)
        got = cached_attention(first, k_q, v_q, real, [[(ck, cv)]], windows=[pick])
        plain = cached_attention(first, k_q, v_q, real, [[(ck, cv)]],
                                 windows=[TopWindows(n_windows, top, blocks)])
        torch.testing.assert_close(got, plain, atol=1e-6, rtol=1e-6)
    short = [(a, b, pick.short[j].tolist()) for j, (a, b) in enumerate(blocks)]
    assert all(len(ws) == 4 for *_, ws in short)
    outside = next(w for w in range(n_windows) if w not in short[1][2])
    later = torch.randn(1, 4, n, 16)
    ck2 = ck.clone()
    ck2[:, outside * size:(outside + 1) * size] += 3 * later[0, :, 3:].mean(1, keepdim=True)
    got = cached_attention(later, k_q, v_q, real, [[(ck2, cv)]], windows=[pick])
    keep = torch.cat([_shortlist_keep(later, ck2, n_windows, top, short),
                      torch.ones(4, n, n, dtype=torch.bool)], -1)
    scores = torch.cat([later[0] @ ck2.transpose(-1, -2), later[0] @ k_q[0].transpose(-1, -2)],
                       -1) / 4
    want = scores.masked_fill(~keep, float("-inf")).softmax(-1) @ torch.cat([cv, v_q[0]], 1)
    torch.testing.assert_close(got, want.unsqueeze(0), atol=1e-5, rtol=1e-5)
    assert not keep[:, 3:, outside * size].any()
    assert not TopWindows(n_windows, top, blocks, shortlist=n_windows).narrows


def test_windows_of_unequal_length_are_refused():
    with pytest.raises(ValueError, match="not 3 windows"):
        top_window_attention(torch.randn(1, 2, 3, 8), torch.randn(2, 31, 8),
                             torch.randn(2, 31, 8), TopWindows(3, 1))


@pytest.mark.parametrize("exit_layer", [2, 4, None])
def test_cached_check_equals_the_reference_over_the_concatenation(pcw, exit_layer):
    context = FILLER * 20 + PARIS + FILLER * 20  # several windows, evidence in the middle
    prep = pcw.prepare(DetectInput(context, QUESTION, ANSWER))
    assert prep.windows_total == prep.windows_scored >= 4
    assert all(isinstance(s, QuerySequence) for s in prep.sequences)
    got = pcw.forward(list(prep.sequences), exit_layer)
    ref = _reference(pcw, context, QUESTION, ANSWER, exit_layer)
    np.testing.assert_allclose(got[0], ref[0], atol=2e-5)


def test_a_batch_of_checks_on_different_contexts_each_reads_its_own(pcw):
    """Different context lengths and query lengths in one batch (padding on both sides)."""
    items = [(PARIS, QUESTION, ANSWER),
             (FILLER * 9 + PARIS, "", "It was completed in 1889."),
             (FILLER * 3, "What opens on Saturdays?", "A market opens on Saturdays by the quay, "
                                                      "next to the new warehouses.")]
    seqs = [pcw.prepare(DetectInput(*it)).sequences[0] for it in items]
    assert len({s.states.n_tokens for s in seqs}) == 3
    batched = pcw.forward(seqs, 4)
    for it, got in zip(items, batched):
        np.testing.assert_allclose(got, _reference(pcw, *it, 4)[0], atol=2e-5)


def test_window_order_does_not_matter(pcw):
    """Every window sits at the same positions and sees only itself."""
    r = tokenize(pcw.tokenizer, ANSWER)
    ctx = pcw.prepare_context(FILLER * 4 + PARIS)
    q = pcw.builder.question_tokens(QUESTION)
    windows = pcw.windows(ctx)
    a = pcw.training_sequence(ctx.tokens, windows, q, r, (0, len(r)), 0)
    b = pcw.training_sequence(ctx.tokens, windows[::-1], q, r, (0, len(r)), 0)
    pa, pb = pcw.forward([a], None)[0], pcw.forward([b], None)[0]
    np.testing.assert_allclose(pa, pb, atol=2e-5)


def test_the_context_is_encoded_once_and_shared(pcw):
    context = FILLER * 5 + "A unique sentence about the lighthouse keeper's cat. "
    before = pcw.states.builds
    d1 = pcw.detect(context, "", "The keeper has a cat.", exit_layer=2)
    d2 = pcw.detect(context, "", "The cat is black.", exit_layer=4)
    assert pcw.states.builds == before + 1
    assert d1.windows_scored == d1.windows_total and not d2.context_truncated


def test_a_long_response_is_checked_in_pieces(pcw):
    answer = " ".join(f"Item {i} of the list is a tower completed in {1800 + i}." for i in range(40))
    det = pcw.detect(PARIS, QUESTION, answer, exit_layer=2)
    assert det.response_split and len(det.token_probs) == len(tokenize(pcw.tokenizer, answer))


def test_state_cache_builds_once_under_concurrency_and_stays_in_bytes():
    def states(key: str, n: int) -> ContextStates:
        t = torch.zeros(2, n, 4)
        return ContextStates(key, n, 1, (t,), (t,))

    cache = StateCache(max_bytes=3 * 2 * 2 * 10 * 4 * 4)  # three states of n=10
    calls = []

    def build():
        calls.append(1)
        time.sleep(0.05)
        return states("a", 10)

    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("a", build)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(g) for g in got}) == 1 and cache.shared >= 1
    for key in "bcd":
        cache.get(key, lambda k=key: states(k, 10))
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes and cache.evictions == 1
    big = cache.get("huge", lambda: states("huge", 1000))  # larger than the bound: not kept
    assert big.n_tokens == 1000 and "huge" not in cache._items


def test_a_failed_build_is_not_cached_and_the_next_caller_retries():
    cache = StateCache()

    def boom():
        raise RuntimeError("encode failed")

    with pytest.raises(RuntimeError):
        cache.get("k", boom)
    t = torch.zeros(1, 1, 1)
    assert cache.get("k", lambda: ContextStates("k", 1, 1, (t,), (t,))).n_tokens == 1


def test_saved_pcw_model_loads_as_pcw(pcw, tmp_path):
    pcw.save_pretrained(tmp_path)
    loaded = Detector.from_pretrained(tmp_path, device="cpu")
    assert isinstance(loaded, PcwDetector) and loaded.window == pcw.window
    assert loaded.top_windows == pcw.top_windows == 0  # how many windows a check reads
    meta = (tmp_path / "guardrail.json").read_text().replace('"top_windows": 0',
                                                             '"top_windows": -1')
    (tmp_path / "guardrail.json").write_text(meta)
    with pytest.raises(ModelLoadError, match="top_windows -1"):
        Detector.from_pretrained(tmp_path, device="cpu")
    pcw.save_pretrained(tmp_path)
    meta = (tmp_path / "guardrail.json").read_text().replace('"pcw"', '"ring"', 1)
    (tmp_path / "guardrail.json").write_text(meta)
    with pytest.raises(ModelLoadError, match="ring"):
        Detector.from_pretrained(tmp_path, device="cpu")


def test_a_check_that_chooses_its_windows_reads_them_sharpened_and_offset(tmp_path):
    """``pcw.sharpen`` and ``pcw.long_offset`` in ``guardrail.json``: a check over more
    windows than it reads weighs the chosen ones by their mass to that power, and its
    hallucination logit at a layer with an offset is moved by it; a check that reads its
    whole context, or at a layer without an offset, is not.  Both are saved and loaded."""
    base = PcwDetector.from_pretrained(None, device="cpu")
    base.top_windows = 2
    long_ctx, short_ctx = FILLER * 20 + PARIS + FILLER * 20, PARIS
    base.sharpen, base.long_offset = 2.0, {"4": 1.5}
    base.save_pretrained(tmp_path)
    det = Detector.from_pretrained(tmp_path, device="cpu")
    assert (det.sharpen, det.long_offset, det.top_windows) == (2.0, {"4": 1.5}, 2)
    plain = PcwDetector.from_pretrained(None, device="cpu")
    plain.top_windows = 2

    def probs(d, context, layer):
        return d.forward(list(d.prepare(DetectInput(context, QUESTION, ANSWER)).sequences),
                         layer)[0]

    def logit(p):
        return np.log(p) - np.log1p(-p)

    np.testing.assert_allclose(probs(det, short_ctx, 4), probs(plain, short_ctx, 4), atol=2e-5)
    plain.sharpen = 2.0  # the same read, without the offset
    sharp = probs(plain, long_ctx, 4)
    np.testing.assert_allclose(logit(probs(det, long_ctx, 4)), logit(sharp) + 1.5, atol=1e-3)
    np.testing.assert_allclose(probs(det, long_ctx, 2), probs(plain, long_ctx, 2), atol=2e-5)
    plain.sharpen = 1.0
    assert np.abs(probs(plain, long_ctx, 4) - sharp).max() > 1e-3  # sharpened is not plain
    with pytest.raises(ModelLoadError, match="sharpen 0.5"):
        det.sharpen = 0.5


def test_modernbert_is_refused_with_a_clear_error(tmp_path):
    from transformers import AutoTokenizer, ModernBertConfig, ModernBertForTokenClassification

    from guardrail.train.train import minilm_path

    tok = AutoTokenizer.from_pretrained(minilm_path())
    cfg = ModernBertConfig(vocab_size=tok.vocab_size, hidden_size=32, intermediate_size=64,
                           num_hidden_layers=2, num_attention_heads=2, num_labels=2,
                           pad_token_id=tok.pad_token_id)
    ModernBertForTokenClassification(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    with pytest.raises(ModelLoadError, match="BERT-family"):
        PcwDetector.from_pretrained(tmp_path, device="cpu")


# -- behind the engine seam -------------------------------------------------------------------------
async def test_the_scheduler_encodes_each_context_once_for_every_stream(pcw):
    """Eight streams on two contexts, in-flight and end-of-stream checks batched across
    them: two encodings in all, and each result equals a direct check."""
    import asyncio

    from guardrail.config import SchedulerConfig
    from guardrail.engine.scheduler import Scheduler
    from guardrail.types import CheckRequest, Grounding, Priority

    pcw.states = type(pcw.states)()  # a fresh cache: count this test's encodings only
    contexts = [(FILLER * 10 + PARIS,), (PARIS + FILLER * 15,)]
    answers = ["The Eiffel Tower was completed in 1889.", "It is 500 metres tall.",
               "Gustave Eiffel's company built it.", "It stands in Rome."]
    reqs = [CheckRequest(Grounding(contexts[i % 2], QUESTION), answers[i % 4], stream_id=f"s{i}",
                         priority=Priority.IN_FLIGHT if i < 4 else Priority.END_OF_STREAM,
                         exit_layer=4 if i < 4 else None) for i in range(8)]
    async with Scheduler(pcw, SchedulerConfig(max_wait_ms=50)) as s:
        await asyncio.gather(*(s.warm(c) for c in contexts))  # as each stream's start does
        got = await asyncio.gather(*(s.verify(r) for r in reqs))
        stats, info = s.stats(), s.info()
    assert pcw.states.builds == 2 and stats.context_states.builds == 2
    assert stats.context_states.hits >= 6 and stats.batches < len(reqs)
    assert info.attention == "pcw" and info.to_json()["attention"] == "pcw"
    for r, d in zip(reqs, got):
        ref = pcw.detect(r.grounding.documents, QUESTION, r.response, exit_layer=r.exit_layer)
        np.testing.assert_allclose(d.token_probs, ref.token_probs, atol=1e-4)
        assert not d.context_truncated and d.windows_scored == d.windows_total > 1


async def test_warm_encodes_the_context_before_the_first_check(pcw):
    """What ``PUT /v1/contexts`` and the start of every guarded stream call."""
    from guardrail.config import SchedulerConfig
    from guardrail.engine.scheduler import Scheduler
    from guardrail.types import CheckRequest, Grounding

    pcw.states = type(pcw.states)()
    docs = (FILLER * 12 + "The lighthouse was painted white in 1931.",)
    async with Scheduler(pcw, SchedulerConfig()) as s:
        n = await s.warm(docs)
        assert n > pcw.window and pcw.states.builds == 1
        await s.verify(CheckRequest(Grounding(docs), "It was painted white.", stream_id="w"))
    assert pcw.states.builds == 1 and pcw.states.hits >= 1


def test_bfloat16_states_stay_close_to_float32(pcw):
    """``cache.states_dtype: bfloat16``: half the bytes, the same verdicts."""
    context, answer = FILLER * 10 + PARIS, ANSWER
    exact = pcw.detect(context, QUESTION, answer, exit_layer=4)
    half = PcwDetector(pcw.model, pcw.tokenizer, meta=pcw.meta, threshold=pcw.threshold)
    half.state_dtype = torch.bfloat16
    got = half.detect(context, QUESTION, answer, exit_layer=4)
    states = half.states.get(half.prepare_context(context).key, lambda: None)
    assert states.keys[0].dtype == torch.bfloat16
    np.testing.assert_allclose(got.token_probs, exact.token_probs, atol=0.05)
    assert [(s.start, s.end) for s in got.spans] == [(s.start, s.end) for s in exact.spans]


def test_a_context_whose_states_cannot_be_kept_is_refused(pcw):
    """Encoding it again for every sentence would cost more than the cache saves."""
    from guardrail.errors import ContextError

    small = PcwDetector(pcw.model, pcw.tokenizer, meta=pcw.meta, state_bytes=200 * 18432)
    assert small.state_bytes_per_token() == 18432
    small.prepare_context(PARIS)  # about 50 positions: kept
    with pytest.raises(ContextError, match="cache.states_max_bytes") as err:
        small.prepare_context(FILLER * 20)
    assert err.value.code == "context_too_large"


def test_a_pcw_model_behind_the_real_server(fake_upstream, pcw):
    """The proxy on a loopback port with a PCW model: two streams on one context encode
    it once (at the first stream's start), every sentence is checked, and /healthz and
    /metrics say so.  (The shipped weights read as PCW: this tests the plumbing, so the
    policy releases everything.)"""
    import httpx
    import openai
    from conftest import EIFFEL_ANSWER, EIFFEL_TOOL, proxy_config, scrape, serve

    from guardrail.proxy.app import create_app

    pcw.states = StateCache()
    # every sentence checked by the model: a sentence the grounding restates is settled
    # without one once the judge's evidence is built, which depends on timing
    cfg = proxy_config(fake_upstream.url, verification={"settle_restated": False})
    with serve(create_app(cfg, detector=pcw)) as p:
        assert httpx.get(p.url + "/healthz").json()["verifier"]["attention"] == "pcw"
        for _ in range(2):
            with openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0) as c:
                chunks = list(c.chat.completions.create(
                    model="fake-llm", stream=True,
                    messages=[{"role": "user", "content": "When was the Eiffel Tower built?"}],
                    extra_body={"guardrail": {"context": EIFFEL_TOOL,
                                              "policy": {"threshold": 1.0}}}))
            g = chunks[-1].model_extra["guardrail"]
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) \
                == EIFFEL_ANSWER
            assert all(s["checked"] for s in g["sentences"]) and g["final"]["exit_layer"] == 6
        m = scrape(p.url)
    assert m[("guardrail_context_states_lookups_total", (("result", "encoded"),))] == 1
    # one hit per check that read the states: the second stream's 3 in-flight checks and
    # both end-of-stream passes at least (the first stream's may have run cold)
    assert m[("guardrail_context_states_lookups_total", (("result", "hit"),))] >= 5
    assert m[("guardrail_context_states_entries", ())] == 1
    assert m[("guardrail_context_states_bytes", ())] > 0


def test_the_shipped_pcw_model_loads_by_name_and_knows_a_changed_number():
    """``detector.model: pcw``: the trained weights, exits 2 and 4, a sentence judge;
    against prose and against the same facts as a JSON tool result, the changed height
    scores far above the supported one, and the proxy's decision (its judge, at the
    in-flight exit) releases the supported sentence and flags the changed one
    (deterministic: fixed weights, float32)."""
    import json

    from guardrail.evidence.features import ContextEvidence
    from guardrail.evidence.judge import SentenceJudge

    det = Detector.from_pretrained("pcw", device="cpu")
    assert isinstance(det, PcwDetector) and det.exit_layers == (2, 4)
    assert det.meta["judge"] and det.render_structured
    judge = SentenceJudge.from_json(det.meta["judge"])
    prose = "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall."
    tool = json.dumps({"name": "Eiffel Tower", "city": "Paris", "completed": 1889,
                       "height_m": 330})
    question = "Tell me about the Eiffel Tower."
    for context in (prose, tool):
        evidence = ContextEvidence.build([context], question)
        verdicts = []
        for answer in ("It is 330 metres tall.", "It is 500 metres tall."):
            d = det.detect(context, question, answer, exit_layer=4)
            verdicts.append((max(d.token_probs),
                             judge.judge(evidence, answer, d.token_probs, 4).flagged))
        (ok, ok_flagged), (bad, bad_flagged) = verdicts
        assert 2 * ok < bad and not ok_flagged and bad_flagged


async def test_in_flight_checks_do_not_wait_for_an_encoding(pcw):
    """While a context is being encoded, an in-flight check reads the windows its
    selector picks (top 3), encoded with it, and says so (``context_truncated``); an
    end-of-stream check waits for the states and reads every window."""
    import asyncio

    from guardrail.config import SchedulerConfig
    from guardrail.engine.scheduler import Scheduler
    from guardrail.model.windows import TopKWindows
    from guardrail.types import CheckRequest, Grounding, Priority

    pcw.states = type(pcw.states)()
    docs = (FILLER * 30 + PARIS + FILLER * 30,)
    answer = "The Eiffel Tower was completed in 1889."
    async with Scheduler(pcw, SchedulerConfig(in_flight_top_k=3, final_state_wait_s=None)) as s:
        cold, final = await asyncio.gather(
            s.verify(CheckRequest(Grounding(docs, QUESTION), answer, stream_id="a",
                                  priority=Priority.IN_FLIGHT, exit_layer=4)),
            s.verify(CheckRequest(Grounding(docs, QUESTION), answer, stream_id="b",
                                  priority=Priority.END_OF_STREAM)))
        warm = await s.verify(CheckRequest(Grounding(docs, QUESTION), answer, stream_id="c",
                                           priority=Priority.IN_FLIGHT, exit_layer=4))
    assert cold.context_truncated and cold.windows_scored == 3 < cold.windows_total
    ref = pcw.prepare_cold(DetectInput(pcw.prepare_context(docs), QUESTION, answer),
                           TopKWindows(3))
    np.testing.assert_allclose(cold.token_probs, pcw.forward(list(ref.sequences), 4)[0],
                               atol=1e-4)
    assert not final.context_truncated and final.windows_scored == final.windows_total
    assert not warm.context_truncated and pcw.states.builds == 1
    direct = pcw.detect(docs, QUESTION, answer, exit_layer=4)
    np.testing.assert_allclose(warm.token_probs, direct.token_probs, atol=1e-4)


class _HeldEncoding(PcwDetector):
    """The shipped PCW weights whose context encodings wait for ``release`` (a slow
    encoding, on cue)."""

    release: threading.Event

    def context_states(self, context):
        self.release.wait(30)
        return super().context_states(context)


def _held_encoding(pcw: PcwDetector, release) -> PcwDetector:
    det = _HeldEncoding(pcw.model, pcw.tokenizer, meta=pcw.meta)
    det.release = release
    return det


async def test_an_end_of_stream_check_waits_for_an_encoding_only_so_long(pcw):
    """``final_state_wait_s``: past it, the end-of-stream check of a context still being
    encoded reads the picked windows (``context_truncated``) and the encoding goes on;
    the next check reads every window.  The encoding is held back by an event."""
    import asyncio

    from guardrail.config import SchedulerConfig
    from guardrail.engine.scheduler import Scheduler
    from guardrail.types import CheckRequest, Grounding, Priority

    release = threading.Event()
    det = _held_encoding(pcw, release)
    docs = (FILLER * 30 + PARIS + FILLER * 30,)
    answer = "The Eiffel Tower was completed in 1889."

    def end(stream: str) -> CheckRequest:
        return CheckRequest(Grounding(docs, QUESTION), answer, stream_id=stream,
                            priority=Priority.END_OF_STREAM)

    async with Scheduler(det, SchedulerConfig(final_state_wait_s=0.2)) as s:
        first = await asyncio.wait_for(s.verify(end("a")), 20)
        assert det.states.builds == 0  # answered while the encoding was held
        release.set()
        await asyncio.sleep(0)
        later = await s.verify(end("b"))  # waits (within its 0.2 s or not) ...
        for _ in range(100):  # ... until the states are in, then reads them all
            if not later.context_truncated:
                break
            await asyncio.sleep(0.1)
            later = await s.verify(end("c"))
    assert first.context_truncated and first.windows_scored < first.windows_total
    assert not later.context_truncated and later.windows_scored == later.windows_total
    assert det.states.builds == 1


async def test_an_encoding_expected_to_take_longer_than_the_wait_is_not_waited_for(pcw):
    """At the measured encode rate, an end-of-stream check does not wait for an encoding
    that cannot be done within ``wait_s`` (it reads a few windows at once), and waits for
    one that can."""
    import asyncio

    from guardrail.engine.encoding import Encodings

    release = threading.Event()
    det = _held_encoding(pcw, release)
    ctx = det.prepare_context((FILLER * 30 + PARIS,))
    enc = Encodings(det, wait_s=5.0)
    enc.rate = ctx.n_tokens / 60  # as measured: this context takes a minute
    t0 = time.monotonic()
    assert not await enc.ready(ctx)
    assert time.monotonic() - t0 < 2 and enc.expected_s(ctx.key) > 5
    enc.rate = ctx.n_tokens / 0.01  # ... or a hundredth of a second: wait for it
    threading.Timer(0.2, release.set).start()
    assert await enc.ready(ctx) and det.states.peek(ctx.key) is not None
    await asyncio.sleep(0)  # the job's done-callback
    assert enc.rate is not None and enc.expected_s(ctx.key) == 0.0
    enc.shutdown()


async def test_warm_waits_for_the_whole_encoding_past_the_end_of_stream_bound(pcw):
    """``PUT /v1/contexts`` stores a context so that checks find it encoded: ``warm``
    returns when the states are in, however long the encoding takes, where an
    end-of-stream check would give up after ``final_state_wait_s`` (on a slow CPU a 4K
    encoding takes longer than that bound, and 16 stored contexts were not encoded when
    their streams began)."""
    import asyncio

    from guardrail.config import SchedulerConfig
    from guardrail.engine.scheduler import Scheduler

    release = threading.Event()
    det = _held_encoding(pcw, release)
    docs = (FILLER * 30 + PARIS,)
    async with Scheduler(det, SchedulerConfig(final_state_wait_s=0.1)) as s:
        threading.Timer(0.6, release.set).start()
        t0 = time.monotonic()
        n = await asyncio.wait_for(s.warm(docs), 30)
        assert time.monotonic() - t0 >= 0.5  # it waited past the 0.1 s bound
        ctx = det.prepare_context(docs)
        assert n == ctx.n_tokens and det.states.peek(ctx.key) is not None


def test_a_batch_may_mix_cached_and_cold_sequences(pcw):
    from guardrail.model.windows import TopKWindows

    ctx = pcw.prepare_context(FILLER * 12 + PARIS)
    inp = DetectInput(ctx, QUESTION, ANSWER)
    cached, cold = pcw.prepare(inp).sequences[0], pcw.prepare_cold(inp, TopKWindows(2)).sequences[0]
    mixed = pcw.forward([cold, cached, cold], 2)
    np.testing.assert_allclose(mixed[1], pcw.forward([cached], 2)[0], atol=1e-5)
    np.testing.assert_allclose(mixed[0], pcw.forward([cold], 2)[0], atol=1e-5)
    np.testing.assert_allclose(mixed[2], mixed[0], atol=1e-6)
    from guardrail.model.windows import AllWindows

    long = DetectInput(pcw.prepare_context(FILLER * 60 + PARIS), QUESTION, ANSWER)
    capped = pcw.prepare_cold(long, AllWindows())  # never the whole context in one sequence
    assert capped.windows_scored == 4 < capped.windows_total


@pytest.mark.redis
def test_the_trained_pcw_model_through_the_server_with_redis(fake_upstream, redis_prefix):
    """``detector.model: pcw`` as ``guardrail serve`` loads it, Redis as the shared tier,
    the default policy and its sentence judge: the 1950 sentence is redacted and
    explained, the supported ones reach the client verbatim, with the facts as prose and
    as a JSON tool result; the prepared context went to Redis, its states did not."""
    import json

    import openai
    import redis as redis_client
    from conftest import EIFFEL_TOOL, REDIS_URL, proxy_config, scrape, serve

    from guardrail.engine.build import load_detector
    from guardrail.proxy.app import create_app

    eiffel_json = json.dumps({"name": "Eiffel Tower", "type": "wrought-iron lattice tower",
                              "city": "Paris", "construction": {"start": 1887, "end": 1889},
                              "builder": "company of Gustave Eiffel", "height_m": 330})
    cfg = proxy_config(fake_upstream.url, detector={"model": "pcw"},
                       cache={"redis_url": REDIS_URL, "key_prefix": redis_prefix})
    det = load_detector(cfg)
    assert isinstance(det, PcwDetector) and det.state_dtype in (torch.float32, torch.bfloat16)
    with serve(create_app(cfg, detector=det)) as p:
        for tool in (EIFFEL_TOOL, eiffel_json):
            messages = [{"role": "user", "content": "When was the Eiffel Tower built?"},
                        {"role": "assistant", "content": None, "tool_calls": [
                            {"id": "c1", "type": "function",
                             "function": {"name": "search", "arguments": "{}"}}]},
                        {"role": "tool", "tool_call_id": "c1", "content": tool}]
            with openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0) as c:
                chunks = list(c.chat.completions.create(model="fake-llm", stream=True,
                                                        messages=messages))
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            g = chunks[-1].model_extra["guardrail"]
            first, built, tall = g["sentences"]
            assert [s["action"] for s in g["sentences"]] == ["release", "redact", "release"], tool
            assert first["original"] in text and tall["original"] in text
            assert "1950" not in text and built["explanation"]["kind"] in ("contradicted",
                                                                           "unverifiable")
        m = scrape(p.url)
    assert m[("guardrail_context_states_lookups_total", (("result", "encoded"),))] == 2
    keys = redis_client.Redis.from_url(REDIS_URL).keys(f"{redis_prefix}:*")
    assert any(b":prep:" in k for k in keys) and not any(b"state" in k for k in keys)


def test_a_long_stored_context_is_read_by_its_top_windows_behind_the_real_server(
        fake_upstream, redis_prefix, monkeypatch):
    """The shipped pcw model as ``guardrail serve`` loads it, Redis as the shared tier:
    the Eiffel facts buried mid-way in about 2K tokens of other documents, stored first
    (``PUT /v1/contexts``, so the context is encoded before the stream).  Every check
    reads the 4 windows each of its sentences attends to most; the 1950 sentence is
    redacted, the supported ones reach the client verbatim."""
    import httpx
    import openai
    from conftest import EIFFEL_TOOL, REDIS_URL, proxy_config, scrape, serve

    from guardrail.engine.build import load_detector
    from guardrail.model import attention
    from guardrail.proxy.app import create_app

    topics = ["harbour", "orchard", "library", "railway", "glacier", "vineyard", "bakery",
              "observatory", "canal", "monastery", "lighthouse", "quarry", "meadow", "foundry",
              "brewery", "garden", "cathedral", "market", "ferry", "mill", "theatre", "bridge"]
    others = [f"The {t} district keeps its own records. Its {t} council meets in the old "
              f"hall, and visitors to the {t} walk along the river past the market. Local "
              f"guides describe the {t} as quiet in winter and busy in summer. Families "
              f"who live near the {t} grow vegetables, keep bees and sell honey on the "
              f"square, and the school there teaches the history of the {t} to every "
              f"child." for t in topics]
    documents = others[:11] + [EIFFEL_TOOL] + others[11:]
    cfg = proxy_config(fake_upstream.url, detector={"model": "pcw"},
                       cache={"redis_url": REDIS_URL, "key_prefix": redis_prefix})
    det = load_detector(cfg)
    assert det.top_windows == 4 and len(det.windows(det.prepare_context(documents))) > 4
    calls = []
    read_top = attention.top_window_attention
    monkeypatch.setattr(attention, "top_window_attention",
                        lambda *a: calls.append(a[-1]) or read_top(*a))
    with serve(create_app(cfg, detector=det)) as p:
        cid = httpx.put(p.url + "/v1/contexts", json={"documents": documents}).json()["context_id"]
        with openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0) as c:
            chunks = list(c.chat.completions.create(
                model="fake-llm", stream=True,
                messages=[{"role": "user", "content": "When was the Eiffel Tower built?"}],
                extra_body={"guardrail": {"context_id": cid}}))
        m = scrape(p.url)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    first, built, tall = chunks[-1].model_extra["guardrail"]["sentences"]
    assert [first["action"], built["action"], tall["action"]] == ["release", "redact", "release"]
    assert first["original"] in text and tall["original"] in text and "1950" not in text
    assert calls and all(pick.top == 4 and pick.count > 4 for pick in calls)
    assert m[("guardrail_context_states_lookups_total", (("result", "hit"),))] >= 1


def test_training_sequences_with_distractors(pcw):
    from guardrail.train.data import Example
    from guardrail.train.pcw import encode_pcw

    def ex(i, context, response, spans=()):
        return Example(f"x{i}", context, QUESTION, response, tuple(spans), bool(spans), True,
                       f"s{i}", "test")

    long_answer = " ".join(["The tower is tall."] * 120)  # more than one query piece
    examples = [ex(0, PARIS, ANSWER, [(ANSWER.index("500"), ANSWER.index("500") + 3)]),
                ex(1, FILLER * 3, "A market opens on Saturdays."),
                ex(2, PARIS, long_answer), ex(3, " ", "Empty context.")]
    seqs, counts = encode_pcw(pcw, examples, distractors=1.0, max_distractors=2, seed=0)
    assert counts == {"sequences": 2, "with_distractors": 2, "similar_distractors": 0,
                      "cut_windows": 0, "skipped_long_response": 1, "empty": 1,
                      "answer_blocks": 0}
    own = [len(pcw.windows(pcw.prepare_context(e.context))) for e in examples[:2]]
    for s, n in zip(seqs, own):
        windows = set(s.segments.tolist()) - {QUERY}
        assert n < len(windows) <= n + 2  # its own windows and 1-2 distractors
        labelled = np.flatnonzero(s.labels != -100)
        assert labelled.min() == s.response_slice.start and labelled.max() == s.response_slice.stop - 1
    tokens = pcw.tokenizer.convert_ids_to_tokens(seqs[0].input_ids[seqs[0].labels == 1].tolist())
    assert tokens == ["500"]


def test_training_takes_its_distractor_cap_from_the_config(pcw):
    """`train detector/exits --max-distractors N` reaches the PCW sequences: with the
    share at 1.0, every example gets between 1 and N windows of other contexts."""
    from guardrail.train.data import Example
    from guardrail.train.train import TrainConfig, encode_examples

    examples = [Example(f"x{i}", FILLER * (i + 1), QUESTION, "A market opens on Saturdays.",
                        (), False, True, f"s{i}", "test") for i in range(6)]
    own = [len(pcw.windows(pcw.prepare_context(e.context))) for e in examples]
    for cap in (1, 12):
        cfg = TrainConfig(distractors=1.0, max_distractors=cap)
        seqs, counts = encode_examples(pcw, examples, cfg.distractors, seed=3,
                                       max_distractors=cfg.max_distractors)
        extra = [len(set(s.segments.tolist()) - {QUERY}) - n for s, n in zip(seqs, own)]
        assert counts["with_distractors"] == 6 and all(1 <= e <= cap for e in extra), extra
        if cap > 1:
            assert max(extra) > 1


def test_similar_windows_share_the_rarest_tokens_and_never_the_own_source():
    from guardrail.train.pcw import similar_windows

    common = [1, 2, 3]  # in every window: no weight
    windows = [np.array(common + [10, 11]), np.array(common + [10, 11, 12]),
               np.array(common + [10, 20]), np.array(common + [30, 31]),
               np.array(common + [30])]
    owners = ["a", "a", "b", "c", "d"]
    near = similar_windows(windows, owners, [np.array(common + [10, 11, 12]),
                                             np.array(common + [31, 30])], ["a", "c"])
    assert near[0] == [2]  # shares 10 with b; a's own windows are never offered
    assert near[1] == [4]  # 30 is held by c (its own) and d; 31 by c alone


def test_similar_distractors_come_from_the_context_that_resembles_the_example(pcw):
    """`train detector --similar-distractors 1.0` gives an example about the tower the
    other source about the tower as its distractor, not harbour filler."""
    from guardrail.train.data import Example
    from guardrail.train.train import TrainConfig, encode_examples

    tower = ("Gustave Eiffel's engineers riveted the wrought-iron lattice of the tower "
             "in Paris over two years. ")
    contexts = [PARIS, tower] + [FILLER.replace("harbour", place) for place in
                                 ("river", "canal", "dock", "pier", "bay", "port")]
    examples = [Example(f"x{i}", c, QUESTION, "A market opens on Saturdays.", (), False, True,
                        f"s{i}", "test") for i, c in enumerate(contexts)]
    cfg = TrainConfig(distractors=1.0, max_distractors=1, similar_distractors=1.0)
    seqs, counts = encode_examples(pcw, examples, cfg.distractors, seed=3,
                                   max_distractors=cfg.max_distractors,
                                   similar=cfg.similar_distractors)
    assert counts["similar_distractors"] == len(examples)
    read = pcw.tokenizer.decode(seqs[0].input_ids.tolist())
    assert "riveted" in read and "harbour" not in read and "quay" not in read
    random_seqs, counts = encode_examples(pcw, examples, cfg.distractors, seed=3,
                                          max_distractors=1)
    assert counts["similar_distractors"] == 0
