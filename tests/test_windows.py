"""Window selection: BM25 top-k over a long context, its index cache, and the baselines."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from guardrail.model.inputs import PreparedContext, cut_windows, prepare_context
from guardrail.model.bm25 import (BlockIndex, IndexCache, sentence_spans, split_sentences,
                                  terms)
from guardrail.model.windows import (AllWindows, FirstWindow, OwnWindows, TopBlocks,
                                     TopKWindows, make_selector)
from guardrail.train.train import minilm_path

WORDS = ("market city river council school harvest festival railway museum library harbor "
         "orchestra election weather garden factory bakery stadium airport hospital farm "
         "tunnel village forest painter teacher doctor merchant sailor miner farmer").split()

BRIDGE = ("The Zorblat bridge over the Mira river was opened in 1931 by the engineer "
          "Hana Kovacs. It carries trams between Ostrava and Velkomir.")
COMET = ("The comet Tessaly-Vron was first observed from the Kuiper observatory in 1874. "
         "Its tail stretched across forty degrees of sky.")


def filler(n_sentences: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"The {rng.choice(WORDS)} near the {rng.choice(WORDS)} hired a {rng.choice(WORDS)} "
            f"for the {rng.choice(WORDS)} in year {rng.randint(1, 99)}." for _ in range(n_sentences)]


def with_evidence(*planted: tuple[float, str], n: int = 400, seed: int = 0) -> str:
    """Filler sentences with each ``(relative position, text)`` planted among them."""
    sents = filler(n, seed)
    for pos, text in sorted(planted, reverse=True):
        sents.insert(int(pos * len(sents)), text)
    return " ".join(sents)


def ctx_of(tok, text: str) -> PreparedContext:
    return prepare_context(tok, text, "minilm")


def covering(ctx: PreparedContext, windows, text: str) -> set[int]:
    """Indexes of the windows that hold all of ``text``."""
    s = ctx.text.index(text)
    e = s + len(text)
    off = ctx.tokens.offsets
    return {w.index for w in windows if off[w.start][0] <= s and off[w.end - 1][1] >= e}


def test_terms_drop_stopwords_and_case():
    assert terms("The Bridge was opened in 1931, by Hana.") == ["bridge", "opened", "1931", "hana"]
    assert split_sentences("It opened. Then it closed!\nNew line") == \
        ["It opened.", "Then it closed!", "New line"]


def test_topk_picks_the_window_holding_the_evidence(tok):
    ctx = ctx_of(tok, with_evidence((0.62, BRIDGE)))
    windows = cut_windows(ctx.n_tokens, 400, 64)
    assert len(windows) > 10
    want = covering(ctx, windows, BRIDGE)
    assert want and 0 not in want
    sel = TopKWindows(1)
    chosen = sel.select(ctx, windows, "When was the Zorblat bridge opened?",
                        "The Zorblat bridge was opened in 1931.")
    assert len(chosen) == 1 and chosen[0].index in want
    # the question alone finds it too (a sentence that says "it" for the subject)
    chosen = sel.select(ctx, windows, "Who opened the Zorblat bridge?", "It was opened by a Czech.")
    assert chosen[0].index in want


def test_the_checked_last_sentence_picks_first(tok):
    ctx = ctx_of(tok, with_evidence((0.15, COMET), (0.85, BRIDGE)))
    windows = cut_windows(ctx.n_tokens, 400, 64)
    comet, bridge = covering(ctx, windows, COMET), covering(ctx, windows, BRIDGE)
    response = "Tessaly-Vron was observed from Kuiper in 1874. The Zorblat bridge opened in 1931."
    one = TopKWindows(1).select(ctx, windows, "", response)
    assert one[0].index in bridge
    two = TopKWindows(2).select(ctx, windows, "", response)
    assert {w.index for w in two} & comet and {w.index for w in two} & bridge


def test_topk_returns_k_windows_in_order_even_without_a_match(tok):
    ctx = ctx_of(tok, with_evidence())
    windows = cut_windows(ctx.n_tokens, 300, 64)
    chosen = TopKWindows(3).select(ctx, windows, "", "Quantum chromodynamics, xylophones.")
    assert [w.index for w in chosen] == [0, 1, 2]  # nothing matches: fill in context order
    chosen = TopKWindows(3).select(ctx, windows, "", "The museum hired a sailor.")
    assert len(chosen) == 3 and chosen == sorted(chosen, key=lambda w: w.index)


def test_k_at_least_the_number_of_windows_returns_all(tok):
    ctx = ctx_of(tok, with_evidence(n=60))
    windows = cut_windows(ctx.n_tokens, 400, 64)
    assert 1 < len(windows) <= 5
    cache = IndexCache()
    for k in (len(windows), len(windows) + 3):
        assert TopKWindows(k, cache=cache).select(ctx, windows, "q", "r") == windows
    assert cache.builds == 0  # nothing to rank: no index built
    short = ctx_of(tok, "A short context.")
    assert TopKWindows(1).select(short, cut_windows(short.n_tokens, 400, 64), "", "x") \
        == [cut_windows(short.n_tokens, 400, 64)[0]]


def test_the_index_is_built_once_per_context_and_reused(tok):
    ctx = ctx_of(tok, with_evidence((0.5, BRIDGE)))
    other = ctx_of(tok, with_evidence((0.5, COMET), seed=1))
    cache = IndexCache(maxsize=2)
    sel = TopKWindows(2, cache=cache)
    # a stream: one check per sentence; the window size changes with the sentence length
    for size, sentence in ((420, "The bridge opened in 1931."), (400, "Hana Kovacs built it."),
                           (380, "It carries trams."), (420, "It crosses the Mira river.")):
        sel.select(ctx, cut_windows(ctx.n_tokens, size, 64), "Tell me about the bridge.", sentence)
    assert cache.builds == 1
    TopKWindows(4, cache=cache).select(ctx, cut_windows(ctx.n_tokens, 400, 64), "", "bridge")
    assert cache.builds == 1  # a second selector (the end-of-stream pass) shares it
    sel.select(other, cut_windows(other.n_tokens, 400, 64), "", "The comet.")
    assert cache.builds == 2 and len(cache) == 2
    third = ctx_of(tok, with_evidence(seed=2))
    sel.select(third, cut_windows(third.n_tokens, 400, 64), "", "A farmer.")  # evicts ctx
    sel.select(ctx, cut_windows(ctx.n_tokens, 400, 64), "", "The bridge.")
    assert cache.builds == 4 and len(cache) == 2


def test_window_scores_sum_block_scores_pro_rata(tok):
    ctx = ctx_of(tok, with_evidence((0.3, BRIDGE), (0.7, COMET)))
    index = BlockIndex.build(ctx, 64)
    blocks = index.block_scores("bridge comet 1931 trams")
    assert blocks.shape == (index.n_blocks,) and blocks.max() > 0
    windows = cut_windows(ctx.n_tokens, 400, 64)
    whole = index.window_scores(blocks, cut_windows(ctx.n_tokens, ctx.n_tokens, 0))
    assert whole[0] == pytest.approx(blocks.sum())
    w = index.window_scores(blocks, windows)
    assert (w >= 0).all() and w.max() <= blocks.sum() + 1e-9


def holds(ctx: PreparedContext, window, text: str) -> bool:
    """Whether one piece of a packed ``window`` holds all of ``text``."""
    s = ctx.text.index(text)
    off = ctx.tokens.offsets
    return any(off[a][0] <= s and off[z - 1][1] >= s + len(text) for a, z in window.pieces)


def test_packed_blocks_hold_each_sentences_evidence_in_one_window(tok):
    """Two facts far apart, one window's room: ``TopBlocks(1)`` reads both passages
    (each whole, grown by its neighbours), where the best plain window holds one; the
    window fills its room and never more."""
    ctx = ctx_of(tok, with_evidence((0.15, COMET), (0.85, BRIDGE)))
    windows = cut_windows(ctx.n_tokens, 400, 64)
    response = "Tessaly-Vron was observed from Kuiper in 1874. The Zorblat bridge opened in 1931."
    [packed] = TopBlocks(1).select(ctx, windows, "", response)
    assert holds(ctx, packed, COMET) and holds(ctx, packed, BRIDGE)
    assert packed.size == 400 - 400 % 32 and len(packed.take(ctx.tokens.ids)) == packed.size
    assert all(z0 < a1 for (_, z0), (a1, _) in zip(packed.pieces, packed.pieces[1:]))
    [plain] = TopKWindows(1).select(ctx, windows, "", response)
    assert len({plain.index} & (covering(ctx, windows, COMET) | covering(ctx, windows, BRIDGE))) \
        == 1


def test_packed_blocks_fill_k_windows_in_context_order(tok):
    ctx = ctx_of(tok, with_evidence((0.5, BRIDGE)))
    windows = cut_windows(ctx.n_tokens, 300, 64)
    three = TopBlocks(3).select(ctx, windows, "When was the Zorblat bridge opened?",
                                "It opened in 1931.")
    assert len(three) == 3 and [w.index for w in three] == [0, 1, 2]
    assert all(w.size <= 300 for w in three) and sum(w.size for w in three) == 3 * (300 - 300 % 32)
    ends = [p for w in three for p in w.pieces]
    assert ends == sorted(ends) and any(holds(ctx, w, BRIDGE) for w in three)
    # no term matches: the context's start, as truncating it would read
    [start] = TopBlocks(1).select(ctx, windows, "", "Quantum chromodynamics, xylophones.")
    assert start.pieces == ((0, 288),)
    small = ctx_of(tok, with_evidence((0.5, BRIDGE), n=40))
    few = cut_windows(small.n_tokens, 300, 64)
    assert len(few) == 3
    for sel in (TopBlocks(3), TopBlocks(1, whole=3)):  # they fit: read as they are
        assert sel.select(small, few, "", "The bridge opened in 1931.") == few
    [one] = TopBlocks(1, whole=2).select(small, few, "", "The bridge opened in 1931.")
    assert one.pieces and holds(small, one, BRIDGE)


def test_a_packed_window_holds_at_most_its_token_cap(tok):
    """``TopBlocks(tokens=...)`` (``scheduler.in_flight_context_tokens``): the packed
    window is that short, and still holds the checked sentence's passage."""
    ctx = ctx_of(tok, with_evidence((0.15, COMET), (0.85, BRIDGE)))
    windows = cut_windows(ctx.n_tokens, 400, 64)
    [short] = TopBlocks(1, tokens=128).select(ctx, windows, "", "The Zorblat bridge opened in 1931.")
    assert short.size == 128 and holds(ctx, short, "Zorblat bridge over the Mira river was "
                                                   "opened in 1931")
    [full] = TopBlocks(1).select(ctx, windows, "", "The Zorblat bridge opened in 1931.")
    assert full.size == 384
    with pytest.raises(ValueError):
        TopBlocks(1, tokens=16)


def test_each_sentence_is_judged_by_its_own_windows(tok):
    """``OwnWindows(m)``: each sentence's ``m`` best windows, shared where sentences
    agree, each carrying the character ranges of the sentences it judges."""
    ctx = ctx_of(tok, with_evidence((0.15, COMET), (0.85, BRIDGE)))
    windows = cut_windows(ctx.n_tokens, 400, 64)
    comet, bridge = covering(ctx, windows, COMET), covering(ctx, windows, BRIDGE)
    response = ("Tessaly-Vron was observed from Kuiper in 1874. The Zorblat bridge opened "
                "in 1931. Hana Kovacs opened the Zorblat bridge.")
    first, second, third = sentence_spans(response)
    assert response[slice(*first)].startswith("Tessaly") and response[slice(*third)].endswith(".")
    chosen = OwnWindows(1).select(ctx, windows, "", response)
    assert len(chosen) == 2 and chosen == sorted(chosen, key=lambda w: w.index)
    by_window = {w.index: w.serves for w in chosen}
    [c] = [i for i in by_window if i in comet]
    [b] = [i for i in by_window if i in bridge]
    assert by_window[c] == (first,) and by_window[b] == (second, third)
    # at most k windows: the last sentence picks first; a sentence whose own window
    # did not fit is judged by every window read
    assert OwnWindows(1, 2).select(ctx, windows, "", response) == chosen  # shared: 2 fit
    [only] = OwnWindows(1, 1).select(ctx, windows, "", response)
    assert only.index in bridge and only.serves == (first, second, third)
    two = OwnWindows(2).select(ctx, windows, "", response)
    assert {w.index for w in two} >= {c, b} and all(w.serves for w in two)
    assert OwnWindows(2).capped(5).k == 5 and OwnWindows(2, 3).capped(5).k == 3


def test_own_windows_without_a_match_or_with_few_windows_read_plainly(tok):
    ctx = ctx_of(tok, with_evidence())
    windows = cut_windows(ctx.n_tokens, 300, 64)
    chosen = OwnWindows(2).select(ctx, windows, "", "Quantum chromodynamics, xylophones.")
    assert chosen == windows[:2] and not any(w.serves for w in chosen)
    small = ctx_of(tok, with_evidence((0.5, BRIDGE), n=20))
    few = cut_windows(small.n_tokens, 300, 64)
    assert 1 < len(few) <= 2 and OwnWindows(2).select(small, few, "", "It opened.") == few


def test_a_sentence_takes_the_minimum_over_its_own_windows_only():
    """``Detector.finish``: a token is judged by the windows that serve its sentence
    (the comet sentence by the comet window alone, however low another window scores
    it); without ``serves`` every token takes the minimum over every window."""
    import dataclasses

    from guardrail.model import DetectInput, Detector

    det = Detector.from_pretrained(minilm_path(), device="cpu")
    ctx = det.prepare_context(with_evidence((0.15, COMET), (0.85, BRIDGE)))
    response = "Tessaly-Vron was observed from Kuiper in 1874. The Zorblat bridge opened in 1931."
    prep = det.prepare(DetectInput(ctx, "", response), OwnWindows(1))
    assert prep.windows_scored == 2 and len(prep.sequences) == 2
    comet_window = next(w.index for w in prep.windows if w.serves[0][0] == 0)
    probs = [np.full(s.response_slice.stop - s.response_slice.start,
                     0.9 if s.window == comet_window else 0.1, np.float32)
             for s in prep.sequences]
    d = det.finish(prep, probs)
    split = response.index("The Zorblat")
    by_token = [(a, p) for (a, _), p in zip(d.token_offsets, d.token_probs)]
    assert all(abs(p - (0.9 if a < split else 0.1)) < 1e-6 for a, p in by_token)
    plain = dataclasses.replace(prep, windows=())
    assert set(det.finish(plain, probs).token_probs) == {np.float32(0.1)}


def test_make_selector_names():
    assert isinstance(make_selector("all"), AllWindows)
    assert isinstance(make_selector("truncate"), FirstWindow)
    sel = make_selector("topk", 3)
    assert isinstance(sel, TopKWindows) and sel.k == 3
    sel = make_selector("blocks", 2)
    assert isinstance(sel, TopBlocks) and sel.k == 2
    sel = make_selector("own", 2)
    assert isinstance(sel, OwnWindows) and (sel.m, sel.k) == (2, None)
    with pytest.raises(ValueError):
        make_selector("random")
    with pytest.raises(ValueError):
        TopKWindows(0)


def test_selection_is_cheap_next_to_a_forward(tok):
    """Not an assertion on time: prints what a 32K-token context costs (pytest -s)."""
    ctx = ctx_of(tok, with_evidence((0.4, BRIDGE), n=2600))
    assert ctx.n_tokens > 30000
    t0 = time.perf_counter()
    sel = TopKWindows(2)
    windows = cut_windows(ctx.n_tokens, 400, 64)
    sel.select(ctx, windows, "When was the Zorblat bridge opened?", "It opened in 1931.")
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(20):
        chosen = sel.select(ctx, windows, "When was the Zorblat bridge opened?", "It opened in 1931.")
    per_select = (time.perf_counter() - t0) / 20
    assert {w.index for w in chosen} & covering(ctx, windows, BRIDGE)
    print(f"\n{ctx.n_tokens} tokens, {len(windows)} windows: first select (index build) "
          f"{build * 1e3:.1f} ms, cached select {per_select * 1e3:.2f} ms")


def test_topk_through_the_detector_scores_k_windows():
    from guardrail.model import DetectInput, Detector

    det = Detector.from_pretrained(minilm_path(), device="cpu")
    ctx = det.prepare_context(with_evidence((0.5, BRIDGE)))
    inp = DetectInput(ctx, "When was the Zorblat bridge opened?", "The bridge opened in 1931.")
    prep = det.prepare(inp, TopKWindows(2))
    assert prep.windows_total > 2 and prep.windows_scored == 2
    assert len({s.window for s in prep.sequences}) == 2
    text = det.tokenizer.decode(np.concatenate([s.input_ids for s in prep.sequences]))
    assert "zorblat bridge over the mira river" in text


def test_packed_blocks_through_the_detector_read_one_sequence():
    """``scheduler.in_flight_windows: blocks``: a check over a context of more than
    ``in_flight_top_k`` (3) windows is one sequence of the detector's length, holding
    both passages."""
    from guardrail.config import SchedulerConfig
    from guardrail.engine.checks import window_selectors
    from guardrail.model import DetectInput, Detector

    det = Detector.from_pretrained(minilm_path(), device="cpu")
    ctx = det.prepare_context(with_evidence((0.2, COMET), (0.7, BRIDGE)))
    sel = window_selectors(SchedulerConfig(in_flight_windows="blocks"), det).in_flight
    inp = DetectInput(ctx, "", "The comet Tessaly-Vron was seen in 1874. The bridge opened in 1931.")
    prep = det.prepare(inp, sel)
    assert prep.windows_total > 10 and prep.windows_scored == 1 and len(prep.sequences) == 1
    assert len(prep.sequences[0]) > det.max_length - 32
    text = det.tokenizer.decode(prep.sequences[0].input_ids)
    assert "zorblat bridge over the mira river" in text and "kuiper observatory in 1874" in text


def test_the_final_pass_budget_scores_all_windows_up_to_it_and_the_best_beyond(detector):
    """``scheduler.final_max_windows``: a context within the budget is scored whole
    (the same detection as every window); a larger one scores the budget's worth of the
    most relevant windows and says so (``context_truncated``)."""
    from guardrail.config import SchedulerConfig
    from guardrail.engine.checks import final_selector
    from guardrail.model import DetectInput
    from guardrail.model.bm25 import IndexCache
    from guardrail.model.windows import AllWindows

    filler = "The committee met on Tuesdays to review the library budget. " * 120
    context = filler + "The Eiffel Tower is 330 metres tall. " + filler
    inp = [DetectInput(context, "How tall?", "The tower is 330 metres tall.")]
    whole = detector.detect_batch(inp, selector=AllWindows())[0]
    assert whole.windows_total > 3
    roomy = final_selector(SchedulerConfig(final_windows="all",
                                           final_max_windows=whole.windows_total), IndexCache())
    same = detector.detect_batch(inp, selector=roomy)[0]
    assert same.token_probs == whole.token_probs and not same.context_truncated
    tight = final_selector(SchedulerConfig(final_windows="all", final_max_windows=2),
                           IndexCache())
    cut = detector.detect_batch(inp, selector=tight)[0]
    assert cut.windows_scored == 2 and cut.context_truncated
