"""Which record a sentence speaks of (records.py): "It ..." after a record named before,
whose date is an attribute records share, not a day's log; "His bordetella shot ..."
named by the thing after the possessive."""

import json

from evidence_of import basis_of as b

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.values import numbers
from guardrail.evidence.words import content_words, stem

PLOTS = json.dumps({"garden": "Hill Lane", "plots": [
    {"plot": "P-1", "size_m2": 8.0, "fee_cents": 4000, "available_from": "2026-03-01"},
    {"plot": "P-2", "size_m2": 6.0, "fee_cents": 5000, "available_from": "2026-03-01"},
    {"plot": "P-3", "size_m2": 6.0, "fee_cents": 5000, "available_from": "2026-03-15"},
    {"plot": "P-4", "size_m2": 10.0, "fee_cents": 6500, "available_from": "2026-04-01"}]})
DAYS = json.dumps({"site": "Pier 4", "days": [
    {"date": "2026-03-01", "visitors": 410, "open": True},
    {"date": "2026-03-02", "visitors": 385, "open": True},
    {"date": "2026-03-15", "visitors": 0, "open": False}]})
SHOTS = json.dumps({"pet": "Biscuit", "required": ["Rabies", "Bordetella"], "shots": [
    {"vaccine": "Rabies", "given_on": "2024-04-02", "expires_on": "2027-04-02"},
    {"vaccine": "Bordetella", "given_on": "2025-01-20", "expires_on": "2026-01-20"},
    {"vaccine": "Leptospirosis", "given_on": "2024-04-02", "expires_on": "2025-04-02"}]})


def _about(context: str, sentence: str, before: str = "") -> set[int]:
    ev = ContextEvidence.build([context])
    return ev._where.about(sentence, [stem(w) for w in content_words(sentence)],
                           numbers(sentence), before).records


def test_it_after_a_named_record_keeps_it_where_the_date_is_an_attribute():
    before = "P-4 is 10 square meters for $65.00 a year. "
    assert _about(PLOTS, "It becomes available on March 15, 2026.", before) == {3}
    assert b(PLOTS, before + "It becomes available on March 15, 2026.") != "words"
    # a day's log: its date names the day, whatever came before
    before = "The pier had 410 visitors on March 1. "
    assert _about(DAYS, "It was closed on March 15.", before) == {2}


def test_a_possessive_names_the_record_of_the_thing_after_it():
    before = "His rabies shot, given on April 2, 2024, runs until April 2, 2027. "
    said = "His bordetella shot from January 20, 2025 runs until January 20, 2026."
    assert _about(SHOTS, said, before) == {1}
    ev = ContextEvidence.build([SHOTS]).features(said, before)
    assert ev.field_changed is None and ev.record_gap == 0
