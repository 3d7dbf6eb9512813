"""Metrics against hand-computed answers."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from guardrail.train.data import Example
from guardrail.train.scores import (auroc, best_threshold, evaluate, example_prf,
                                    format_report, sentence_bounds, sentence_prf,
                                    sentence_scores, span_prf, token_prf)
from guardrail.types import Detection, Span

RESPONSE = "The cat sat on the mat."  # tokens: The|cat|sat|on|the|mat|.
TOKENS = ((0, 3), (4, 7), (8, 11), (12, 14), (15, 18), (19, 22), (22, 23))


def example(spans=(), response=RESPONSE, has_spans=True, hallucinated=None, dataset="ragtruth", i=0):
    return Example(id=f"e{i}", context="ctx", question="", response=response, spans=tuple(spans),
                   hallucinated=bool(spans) if hallucinated is None else hallucinated,
                   has_spans=has_spans, source_id=f"s{i}", dataset=dataset)


def detection(probs=None, spans=(), response=RESPONSE, offsets=TOKENS, threshold=0.5):
    probs = tuple(probs) if probs is not None else (0.0,) * len(offsets)
    return Detection(response=response, spans=tuple(Span(s, e, response[s:e], c) for s, e, c in spans),
                     token_offsets=offsets, token_probs=probs, threshold=threshold,
                     exit_layer=12, n_layers=12)


def test_perfect_predictions_score_one():
    exs = [example([(4, 11)], i=0), example(i=1)]
    dets = [detection([0, .9, .8, 0, 0, 0, 0], [(4, 11, .9)]), detection()]
    assert example_prf(exs, dets).f1 == 1.0
    tok = token_prf(exs, dets)
    assert (tok.precision, tok.recall, tok.f1, tok.tp) == (1.0, 1.0, 1.0, 2)
    sp = span_prf(exs, dets)
    assert (sp.precision, sp.recall, sp.f1, sp.tp) == (1.0, 1.0, 1.0, 7)


def test_no_predictions_and_no_gold_are_zero_not_nan():
    exs, dets = [example()], [detection()]
    for prf in (example_prf(exs, dets), token_prf(exs, dets), span_prf(exs, dets)):
        assert (prf.precision, prf.recall, prf.f1) == (0.0, 0.0, 0.0)
        assert (prf.tp, prf.fp, prf.fn) == (0, 0, 0)


def test_missed_hallucination_has_zero_recall():
    exs, dets = [example([(0, 3)])], [detection()]
    assert example_prf(exs, dets).fn == 1
    assert token_prf(exs, dets).fn == 1
    sp = span_prf(exs, dets)
    assert (sp.fn, sp.recall) == (3, 0.0)


def test_partial_span_overlap_counts_characters():
    # gold "cat sat" = [4, 11) 7 chars; predicted "sat on the" = [8, 18) 10 chars; overlap "sat" 3
    exs = [example([(4, 11)])]
    dets = [detection([0, 0, .9, .9, .9, 0, 0], [(8, 18, .9)])]
    sp = span_prf(exs, dets)
    assert sp.precision == pytest.approx(3 / 10)
    assert sp.recall == pytest.approx(3 / 7)
    assert sp.f1 == pytest.approx(2 * .3 * (3 / 7) / (.3 + 3 / 7))
    tok = token_prf(exs, dets)  # gold tokens cat, sat; predicted sat, on, the
    assert (tok.tp, tok.fp, tok.fn) == (1, 2, 1)


def test_span_metric_sums_over_examples_and_ignores_low_confidence_spans():
    exs = [example([(0, 3)], i=0), example([(19, 23)], i=1)]
    dets = [detection(spans=[(0, 3, .9), (4, 7, .2)]),        # the .2 span is below threshold
            detection(spans=[(15, 23, .8), (15, 18, .8)])]    # overlapping predictions merge
    sp = span_prf(exs, dets)
    assert (sp.tp, sp.fp, sp.fn) == (3 + 4, 0 + 4, 0)


def test_token_metric_skips_binary_examples_and_zero_width_tokens():
    exs = [example([(0, 3)], i=0), example(has_spans=False, hallucinated=True, i=1)]
    offsets = ((0, 0),) + TOKENS
    dets = [detection([.9] + [.9] + [0] * 6, offsets=offsets), detection([.9] * 8, offsets=offsets)]
    tok = token_prf(exs, dets)
    assert (tok.tp, tok.fp, tok.fn) == (1, 0, 0)
    assert token_prf(exs[1:], dets[1:]) is None and span_prf(exs[1:], dets[1:]) is None


def brute_auroc(labels, scores):
    pos = [s for y, s in zip(labels, scores) if y]
    neg = [s for y, s in zip(labels, scores) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_auroc_known_values_and_ties():
    assert auroc([0, 0, 1, 1], [.1, .2, .3, .4]) == 1.0
    assert auroc([1, 1, 0, 0], [.1, .2, .3, .4]) == 0.0
    assert auroc([0, 1, 0, 1], [.5, .5, .5, .5]) == 0.5
    assert auroc([1, 1], [.1, .2]) is None
    rng = random.Random(3)
    for _ in range(50):
        n = rng.randint(2, 30)
        labels = [rng.random() < .4 for _ in range(n)]
        scores = [rng.choice([0.0, .25, .5, .75, 1.0]) for _ in range(n)]  # many ties
        if len(set(labels)) == 2:
            assert auroc(labels, scores) == pytest.approx(brute_auroc(labels, scores))


def test_best_threshold_recomputes_predictions_from_token_probs():
    exs = [example([(0, 3)], i=0), example([(0, 3)], i=1), example(i=2), example(i=3)]
    dets = [detection([.7, 0, 0, 0, 0, 0, 0]), detection([.4, 0, 0, 0, 0, 0, 0]),
            detection([0, .3, 0, 0, 0, 0, 0]), detection([0, 0, 0, 0, 0, .6, 0])]
    # t=.7: P1 R.5 -> .667 ; t=.6: tp1 fp1 -> .5 ; t=.4: tp2 fp1 -> .8 ; t=.3: tp2 fp2 -> .667
    t, f1 = best_threshold(exs, dets)
    assert t == pytest.approx(.4) and f1 == pytest.approx(.8)


def test_best_threshold_prefers_the_highest_of_equal_thresholds():
    exs = [example([(0, 3)], i=0), example(i=1), example(i=2)]
    dets = [detection([.9] + [0] * 6), detection([.2] + [0] * 6), detection([.1] + [0] * 6)]
    assert best_threshold(exs, dets) == (pytest.approx(.9), pytest.approx(1.0))


def _scored(scores_by_set):
    """Examples and detections whose example score is the given one: {dataset: [(score,
    hallucinated), ...]}."""
    exs, dets = [], []
    for name, items in scores_by_set.items():
        for score, bad in items:
            exs.append(example([(0, 3)] if bad else [], dataset=name, i=len(exs)))
            dets.append(detection([score] + [0] * 6))
    return exs, dets


def test_best_threshold_per_source_lets_a_small_set_count_as_much_as_a_large_one():
    exs, dets = _scored({"big": [(.8, True)] * 3 + [(.5, False)] * 3,
                         "small": [(.5, True), (.1, False)]})
    # all: t=.8 -> tp3 fp0 fn1 = .857, t=.5 -> tp4 fp3 = .727
    assert best_threshold(exs, dets) == (pytest.approx(.8), pytest.approx(6 / 7))
    # per source: t=.8 -> (1 + 0) / 2, t=.5 -> (2/3 + 1) / 2
    assert best_threshold(exs, dets, pool="source") == (pytest.approx(.5), pytest.approx(5 / 6))
    with pytest.raises(ValueError, match="pool"):
        best_threshold(exs, dets, pool="dataset")


def test_best_threshold_per_source_counts_a_toolctx_family_once():
    # the family's formats pooled: t=.9 -> tp1 fn1 = .667, t=.5 -> tp2 fp1 = .8; with
    # "big" (t=.9 -> 1, t=.5 -> .667) the means are .833 and .733.  Were each format a
    # source, t=.5 would win: (.667 + 1 + .667) / 3 = .778 against (1 + 0 + 1) / 3.
    exs, dets = _scored({"big": [(.9, True), (.5, False)],
                         "toolctx/fam/json-array": [(.5, True), (.1, False)],
                         "toolctx/fam/markdown-table": [(.9, True), (.5, False)]})
    assert best_threshold(exs, dets, pool="source") == (pytest.approx(.9), pytest.approx(5 / 6))


def test_evaluate_is_json_ready_and_reports_per_dataset():
    exs = [example([(4, 11)], i=0), example(i=1),
           example(has_spans=False, hallucinated=True, dataset="summedits", i=2)]
    dets = [detection([0, .9, .8, 0, 0, 0, 0], [(4, 11, .9)]), detection(), detection()]
    result = evaluate(exs, dets, seconds=2.0)
    json.dumps(result)
    assert result["n_examples"] == 3 and result["n_hallucinated"] == 2
    assert result["example"]["precision"] == 1.0 and result["example"]["recall"] == 0.5
    assert result["span"]["f1"] == 1.0 and result["token"]["f1"] == 1.0
    assert result["auroc"] == pytest.approx(0.75)
    assert result["examples_per_s"] == 1.5
    assert set(result["by_dataset"]) == {"ragtruth", "summedits"}
    assert "span" not in result["by_dataset"]["summedits"]
    table = format_report(result)
    assert "summedits" in table and "0.750" in table


def test_evaluate_without_spans_omits_span_sections():
    exs = [example(has_spans=False, hallucinated=True, i=0), example(has_spans=False, i=1)]
    result = evaluate(exs, [detection([.9] * 7, [(0, 3, .9)]), detection()], seconds=0.0)
    assert "token" not in result and "span" not in result and "by_dataset" not in result
    assert result["example"]["f1"] == 1.0 and result["examples_per_s"] is None
    format_report(result)


def test_misaligned_inputs_are_rejected():
    with pytest.raises(ValueError):
        evaluate([example()], [], seconds=1.0)
    with pytest.raises(ValueError):
        example_prf([example()], [detection(response="other", offsets=())])


def test_span_overlap_with_several_spans_on_each_side():
    # gold [0, 11) and [15, 23); predicted [0, 3), [4, 7), [8, 18): overlaps 3 + 3 + 3 + 3
    exs = [example([(0, 11), (15, 23)])]
    dets = [detection(spans=[(0, 3, .9), (4, 7, .9), (8, 18, .9)])]
    sp = span_prf(exs, dets)
    assert (sp.tp, sp.fp, sp.fn) == (12, 4, 7)


def test_best_threshold_never_splits_tied_scores():
    exs = [example([(0, 3)], i=0), example(i=1), example(i=2)]
    dets = [detection([.9] + [0] * 6), detection([0, .9] + [0] * 5), detection([.1] + [0] * 6)]
    t, f1 = best_threshold(exs, dets)  # at .9 both tied examples are flagged: P .5, R 1
    assert t == pytest.approx(.9) and f1 == pytest.approx(2 / 3)


def test_a_token_at_the_threshold_is_positive():
    exs = [example([(0, 3)])]
    tok = token_prf(exs, [detection([.5, .49, 0, 0, 0, 0, 0], threshold=.5)])
    assert (tok.tp, tok.fp, tok.fn) == (1, 0, 0)


TWO = "The cat sat. It was 1950 then."  # sentences [0, 13) and [13, 30)
TWO_TOKENS = ((0, 3), (4, 7), (8, 11), (11, 12), (13, 15), (16, 19), (20, 24), (25, 29), (29, 30))


def test_sentence_bounds_follow_the_proxy_segmenter():
    assert sentence_bounds(TWO) == [(0, 13), (13, 30)]  # a sentence keeps its trailing space
    assert sentence_bounds("") == []
    assert sentence_bounds("Dr. Smith came at 3.5 p.m. today. He left.") == [(0, 34), (34, 42)]


def test_sentence_level_scores_one_unit_per_sentence():
    exs = [example([(20, 24)], response=TWO, i=0), example(response=TWO, i=1),
           example(has_spans=False, hallucinated=True, response=TWO, i=2)]  # not counted
    dets = [detection([0, 0, .2, 0, 0, 0, .9, 0, 0], response=TWO, offsets=TWO_TOKENS),
            detection([.6, 0, 0, 0, 0, 0, 0, 0, .1], response=TWO, offsets=TWO_TOKENS),
            detection([.9] * 9, response=TWO, offsets=TWO_TOKENS)]
    gold, score, _ = sentence_scores(exs, dets)
    assert gold.tolist() == [False, True, False, False]
    assert score.tolist() == pytest.approx([.2, .9, .6, .1])
    s = sentence_prf(exs, dets)  # threshold .5: the .9 sentence (tp) and the .6 one (fp)
    assert (s.tp, s.fp, s.fn) == (1, 1, 0)
    assert best_threshold(exs, dets, unit="sentence") == (pytest.approx(.9), pytest.approx(1.0))
    # per example, both responses reach .6, so the best threshold must flag the negative too
    t, f1 = best_threshold(exs[:2], dets[:2])
    assert t == pytest.approx(.9) and f1 == pytest.approx(1.0)
    assert evaluate(exs, dets, 1.0)["sentence"]["tp"] == 1
    with pytest.raises(ValueError, match="unit"):
        best_threshold(exs, dets, unit="token")


def test_a_response_with_a_format_character_is_scored_against_its_cleaned_copy():
    """The detector reads U+200E as a space (offsets unchanged); scoring must accept
    that detection as the example's, not raise."""
    from guardrail.train.data import Example
    from guardrail.train.scores import example_prf
    from guardrail.types import Detection

    ex = Example("a", "ctx", "q", "flights\u200ecancelled", (), False, True, "s", "d")
    det = Detection("flights cancelled", (), ((0, 7),), (0.1,), 0.5, 6, 6)
    assert example_prf([ex], [det]).fp == 0
    other = Detection("something else entirely", (), (), (), 0.5, 6, 6)
    with pytest.raises(ValueError, match="another response"):
        example_prf([ex], [other])
