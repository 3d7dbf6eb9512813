"""Synthetic hallucinations: the span is exactly what changed, and nothing else did."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from guardrail.train.data import (Example, load_faithbench, load_ragtruth, source_ids,
                                  split_by_source)
from guardrail.train.perturb import (find_names, find_numbers, perturb_negation,
                                     perturb_number, rephrase, split_sentences)
from guardrail.train.synth import KINDS, _content, documents_from, make_synthetic

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

DOCS = [
    ("louvre", "The Louvre Museum in Paris opened in 1793. It is the most visited museum in the world. "
               "The museum was not closed during the war. Visitors can buy tickets online for 17 euros.",
     "When did the Louvre open?"),
    ("fuji", "Mount Fuji is the highest mountain in Japan. Its summit is 3776 meters above sea level. "
             "Climbers can reach the top in about 6 hours.", ""),
    ("bridge", "The Golden Gate Bridge connects San Francisco and Marin County. It was completed in 1937 "
               "after 4 years of construction. The bridge is painted International Orange.", ""),
    ("walker", "Alice Walker wrote many novels. She is known for The Color Purple. "
               "Her work is studied in schools across Georgia and Mississippi.", ""),
]


def check_exact(ex: Example) -> None:
    """Undoing the recorded change gives back a verbatim stretch of the context."""
    kind = ex.dataset.removeprefix("synthetic/")
    r, ctx = ex.response, ex.context
    if kind == "none":
        assert ex.spans == () and not ex.hallucinated and r in ctx
        return
    assert ex.hallucinated and ex.spans and r not in ctx
    if kind == "insertion":
        (s, e), = ex.spans
        assert r[s - 1] == " " and r[s:e] not in ctx
        assert r[:s - 1] + r[e:] in ctx
    elif kind == "swap":
        (s1, e1), (s2, e2) = ex.spans
        assert r[:s1] + r[s2:e2] + r[e1:s2] + r[s1:e1] + r[e2:] in ctx
    else:
        (s, e), = ex.spans
        assert r[:s] in ctx and r[e:] in ctx


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_changes_exactly_its_span(kind):
    examples = make_synthetic(DOCS, 60, seed=1, kinds=(kind,), p_hallucinated=1.0)
    made = [ex for ex in examples if ex.dataset == f"synthetic/{kind}"]
    assert len(made) >= 20
    assert {ex.dataset for ex in examples} <= {f"synthetic/{kind}", "synthetic/none"}
    for ex in examples:
        check_exact(ex)


def test_number_entity_and_negation_edits_look_right():
    by_kind = {}
    for ex in make_synthetic(DOCS, 200, seed=5, p_hallucinated=1.0):
        by_kind.setdefault(ex.dataset, []).append(ex)
    for ex in by_kind["synthetic/number"]:
        (s, e), = ex.spans
        assert re.fullmatch(r"\$?[\d,.]+%?|[A-Za-z]+", ex.response[s:e])
    for ex in by_kind["synthetic/entity"]:
        (s, e), = ex.spans
        name = ex.response[s:e]
        assert name[0].isupper() and name.lower() not in ex.context.lower()
        assert any(name in other for sid, other, _ in DOCS if sid != ex.source_id)
    for ex in by_kind["synthetic/negation"]:
        (s, e), = ex.spans
        assert re.search(r"\bnot\b|cannot", ex.response[s:e]) or "not" in ex.context


def test_negation_adds_and_removes_not():
    rng = random.Random(0)
    out, ((s, e),) = perturb_negation("The museum is open on Mondays.", 0, "", None, rng)
    assert out == "The museum is not open on Mondays." and out[s:e] == "is not open"
    out, ((s, e),) = perturb_negation("It was not closed.", 0, "", None, rng)
    assert out == "It was closed." and out[s:e] == "was closed"
    out, ((s, e),) = perturb_negation("You can swim here.", 0, "", None, rng)
    assert out[s:e] == "cannot swim"
    assert perturb_negation("Nothing to negate here.", 0, "", None, rng) is None


def test_number_keeps_the_shape_of_the_value():
    rng = random.Random(0)
    for text, pattern in [("It opened in 1793.", r"1[78]\d\d"), ("It costs $38,900 a year.", r"\$\d{2,3},\d{3}"),
                          ("Rates rose 12.5% last year.", r"\d+\.\d%"), ("It took three weeks.", r"[a-z]+")]:
        for _ in range(20):
            out, ((s, e),) = perturb_number(text, 0, "", None, rng)
            assert re.fullmatch(pattern, out[s:e]) and out != text
            assert text.startswith(out[:s]) and text.endswith(out[e:])
    assert perturb_number("No digits at all.", 0, "", None, rng) is None


def test_finders_and_sentences():
    assert [f.text for f in find_names("In 2010 the Bank of America hired John Smith in Paris.")] == \
        ["Bank of America", "John Smith", "Paris"]
    assert find_names("Automotive technicians earn more.") == []
    assert [f.text for f in find_numbers("In 1990s, 3 of 12 rose 4.5% to $1,200 (COVID-19).")] == \
        ["3", "12", "4.5%", "$1,200"]
    assert split_sentences("passage 1:Dr. Smith left. He came back in 2001.\n\nNew para.") == \
        ["Dr. Smith left.", "He came back in 2001.", "New para."]
    assert rephrase("However, the bridge is red.") == "The bridge is red."


def test_fallback_to_another_kind_when_one_cannot_apply():
    no_numbers = [("x", "The sky is blue today. The grass is green here. The sea is calm now.", "")]
    examples = make_synthetic(no_numbers, 20, seed=0, kinds=("number", "negation"), p_hallucinated=1.0)
    assert {ex.dataset for ex in examples} == {"synthetic/negation"}


def test_deterministic_for_a_seed_and_keeps_source_ids():
    a = make_synthetic(DOCS, 50, seed=3)
    assert a == make_synthetic(DOCS, 50, seed=3)
    assert a != make_synthetic(DOCS, 50, seed=4)
    contexts = {sid: ctx for sid, ctx, _ in DOCS}
    for ex in a:
        assert ex.context == contexts[ex.source_id] and ex.has_spans
    assert {ex.source_id for ex in a} == set(contexts)  # round-robin covers every document
    assert 10 < sum(ex.hallucinated for ex in a) < 40


def test_real_documents_split_without_leaks():
    rag_dir = DATA / "ragtruth_qa_test_subset" / "derived_ragtruth_format"
    if not rag_dir.exists() or not (DATA / "faithbench").exists():
        pytest.skip("shared data not present")
    real = load_ragtruth(rag_dir) + load_faithbench(DATA / "faithbench")
    docs = documents_from(real)
    assert len(docs) == len(source_ids(real)) == 148 + 74
    synthetic = make_synthetic(docs, 400, seed=11)
    for ex in synthetic:
        for s, e in ex.spans:
            assert 0 <= s < e <= len(ex.response)
        if ex.hallucinated:
            assert ex.response not in ex.context
    kinds = {ex.dataset for ex in synthetic}
    assert kinds == {f"synthetic/{k}" for k in KINDS} | {"synthetic/none"}
    train, dev = split_by_source(real + synthetic, dev_fraction=0.2, seed=0)
    assert not source_ids(train) & source_ids(dev)
    real_dev = source_ids(split_by_source(real, dev_fraction=0.2, seed=0)[1])
    assert {ex.source_id for ex in dev if ex.dataset.startswith("synthetic/")} <= real_dev


LONG_DOCS = [
    ("rivers", "The Nile flows north through eleven countries. Its delta lies in Egypt. "
               "The Amazon carries more water than any other river. It rises in the Andes of Peru. "
               "The Danube passes through four capital cities. Vienna and Budapest are two of them. "
               "The Mississippi drains most of the United States. Barges carry grain down to "
               "New Orleans. The Thames runs through London to the North Sea.",
     "Which rivers are the largest?"),
    ("planets", "Mercury is the closest planet to the Sun. Venus has a thick carbon dioxide "
                "atmosphere. Earth is the only planet known to host life. Mars has two small "
                "moons called Phobos and Deimos. Jupiter is the largest planet of the solar "
                "system. Saturn is famous for its bright rings. Uranus rotates on its side. "
                "Neptune has the strongest winds measured on any planet.", ""),
]


def test_absent_keeps_the_response_and_takes_its_evidence_out():
    examples = make_synthetic(LONG_DOCS, 60, seed=2, kinds=("absent",), p_hallucinated=1.0,
                              absent_max_overlap=0.34)
    absent = [ex for ex in examples if ex.dataset == "synthetic/absent"]
    assert len(absent) >= 20
    originals = {sid: ctx for sid, ctx, _ in LONG_DOCS}
    for ex in absent:
        assert ex.spans == ((0, len(ex.response)),) and ex.hallucinated
        assert ex.response in originals[ex.source_id]  # verbatim from the document ...
        assert ex.context and all(s in originals[ex.source_id] for s in split_sentences(ex.context))
        for sentence in split_sentences(ex.response):  # ... but none of it left in the context
            assert sentence not in ex.context
        words = _content(ex.response)
        assert len(words & _content(ex.context)) <= 0.34 * len(words)


def test_absent_falls_back_when_the_rest_of_the_document_repeats_the_response():
    repeating = [("echo", "The bridge opened in 1937. The bridge opened in 1937. "
                          "The bridge opened in 1937.", "")]
    examples = make_synthetic(repeating, 10, seed=0, kinds=("absent", "number"), p_hallucinated=1.0)
    assert {ex.dataset for ex in examples} == {"synthetic/number"}


@pytest.mark.parametrize("crop", [0.0, 1.0])
def test_baseless_takes_one_sentence_of_the_response_out_of_the_context(crop):
    examples = make_synthetic(LONG_DOCS, 60, seed=3, kinds=("baseless",), p_hallucinated=1.0,
                              crop=crop, crop_around=1, absent_max_overlap=0.34)
    baseless = [ex for ex in examples if ex.dataset == "synthetic/baseless"]
    assert len(baseless) >= 20
    originals = {sid: ctx for sid, ctx, _ in LONG_DOCS}
    for ex in baseless:
        assert ex.hallucinated and len(ex.spans) == 1
        a, b = ex.spans[0]
        cut = ex.response[a:b]
        sentences = split_sentences(ex.response)
        assert cut in sentences and len(sentences) >= 2  # one whole sentence of several
        assert cut in originals[ex.source_id] and cut not in ex.context
        assert all(s in ex.context for s in sentences if s != cut)  # the others still stand
        words = _content(cut)
        assert len(words & _content(ex.context)) <= 0.34 * len(words)


def test_baseless_falls_back_when_the_rest_of_the_document_repeats_the_sentence():
    repeating = [("echo", "The bridge opened in 1937. The bridge opened in 1937. "
                          "The bridge opened in 1937.", "")]
    examples = make_synthetic(repeating, 10, seed=0, kinds=("baseless", "number"),
                              p_hallucinated=1.0)
    assert {ex.dataset for ex in examples} == {"synthetic/number"}


def test_a_kind_named_twice_is_drawn_twice_as_often():
    def share(kinds):
        examples = make_synthetic(LONG_DOCS, 300, seed=1, kinds=kinds, p_hallucinated=1.0)
        return sum(ex.dataset == "synthetic/baseless" for ex in examples) / len(examples)

    once, twice = share(("baseless", "number")), share(("baseless", "baseless", "number"))
    assert 0.35 < once < 0.65 and twice > once + 0.1


def test_crop_cuts_the_context_around_the_response():
    full = make_synthetic(LONG_DOCS, 80, seed=4)
    cropped = make_synthetic(LONG_DOCS, 80, seed=4, crop=1.0, crop_around=1)
    originals = {sid: ctx for sid, ctx, _ in LONG_DOCS}
    assert all(ex.context == originals[ex.source_id] for ex in full)
    assert sum(len(ex.context) for ex in cropped) < 0.8 * sum(len(ex.context) for ex in full)
    for ex in cropped:
        sents = split_sentences(ex.context)
        assert " ".join(sents) in originals[ex.source_id]  # one contiguous stretch
        if not ex.hallucinated:
            assert ex.response in ex.context
    # crop off keeps the default stream of examples exactly as before
    assert make_synthetic(LONG_DOCS, 80, seed=4, crop=0.0) == full


def test_bad_kinds_and_crop_are_rejected():
    with pytest.raises(ValueError, match="kinds"):
        make_synthetic(DOCS, 5, seed=0, kinds=("typo",))
    with pytest.raises(ValueError, match="crop"):
        make_synthetic(DOCS, 5, seed=0, crop=1.5)
