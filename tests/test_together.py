"""The amounts of the few records a sentence names, added up and said otherwise
(guardrail.evidence.together), and a fee, a tax or a discount one step on from an amount
said before, worked out wrongly (resummed.stepped)."""

import json

import pytest

from evidence_of import basis_of as b

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis
from guardrail.evidence.resummed import stepped
from guardrail.evidence.values import numbers

RENTAL = json.dumps({"confirmation": "RZ7K4Q2M", "rate": {"daily_rate_cents": 6450,
                                                          "rental_days": 4},
                     "extras": [
    {"code": "CSS", "name": "Child safety seat", "daily_cents": 1399, "days": 4,
     "total_cents": 5596},
    {"code": "TOLL", "name": "Toll pass", "daily_cents": 599, "days": 4, "total_cents": 2396},
    {"code": "GPS", "name": "Satellite navigation unit", "daily_cents": 1099, "days": 4,
     "total_cents": 4396}]})
ORDER = json.dumps({"order_id": "HT-0871", "line_items": [
    {"sku": "LN-300", "description": "Braided line spool", "qty": 1, "unit_price_cents": 3495},
    {"sku": "HK-25", "description": "Circle hooks", "qty": 2, "unit_price_cents": 899},
    {"sku": "SP-10", "description": "Soft plastic grubs", "qty": 3, "unit_price_cents": 1150}]})


def test_a_total_of_the_records_named_said_otherwise_is_changed():
    ev = ContextEvidence.build([RENTAL])
    bad = ev.features("The child seat and the toll pass add another $83.92 between them.")
    assert bad.line_changed == "55.96 + 23.96 = 79.92" and basis(bad) == "value_changed"
    assert b(RENTAL, "The child seat and the toll pass add another $79.92 between them.") \
        == "words"


def test_a_quantity_times_its_price_is_each_record_s_amount():
    ev = ContextEvidence.build([ORDER])
    bad = ev.features("The circle hooks and the soft plastic grubs together came to $54.48.")
    assert bad.line_changed == "17.98 + 34.50 = 52.48"
    assert ev.features("The circle hooks and the soft plastic grubs together came to $52.48."
                       ).line_changed is None


@pytest.mark.parametrize("sentence", [
    # something else takes part
    "With tax, the child seat and the toll pass add $86.92 between them.",
    # far off: some other total
    "The child seat and the toll pass add $140.00 between them.",
    # no word that it adds them up: each, or one of them
    "The child seat and the toll pass are $83.92.",
])
def test_what_may_be_another_total_gets_no_verdict(sentence):
    assert ContextEvidence.build([RENTAL]).features(sentence).line_changed is None


QUOTE = ("Per day, it's $68.00 in all. "
         "Over the three days that adds up to $204.00 in rental charges. ")


def step(before, sentence):
    nums = numbers(sentence)
    return stepped(sentence, before, nums, nums)


def test_a_fee_or_tax_on_the_amount_said_before_worked_out_wrongly():
    assert step(QUOTE, "Once the $45.00 delivery fee is included, the total comes to $259.00.") \
        == "204 + 45 = 249"
    assert step(QUOTE, "Once the $45.00 delivery fee is included, the total comes to $249.00.") \
        is None
    assert step(QUOTE, "With 12.5% tax added, your total comes to $233.50.") \
        == "204 + 12.5% = 229.50"
    assert step(QUOTE, "With 12.5% tax added, your total comes to $229.50.") is None
    assert step(QUOTE, "With the 5% discount taken off, it comes to $196.80.") \
        == "204 - 5% = 193.80"


@pytest.mark.parametrize("sentence", [
    # a step on a part, or one that leaves something out
    "The 10% discount on tuition brings that down to $190.00.",
    "Booking online gets you 10% off, though not the parking, which lowers the total to $190.",
    # more than one step: the sentence states two amounts besides the total
    "With the $45.00 fee and $10.00 for fuel, the total comes to $270.00.",
    # far off: more than the one step is in it
    "Once the $45.00 delivery fee is included, the total comes to $310.00.",
    # no step in words: what the amount does is not said
    "With the $45.00, the total comes to $259.00.",
])
def test_what_is_no_single_step_gets_no_verdict(sentence):
    assert step(QUOTE, sentence) is None
