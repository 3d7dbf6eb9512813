"""Totals and shares of the amounts the sentence before states, said otherwise
(guardrail.evidence.resummed): each reading wrong and right, what it declines, and the
verdict read through ContextEvidence and the judge."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis, explain
from guardrail.evidence.resummed import misshared, resummed
from guardrail.evidence.values import numbers

GUIDES = ("Audio guides for the 28 students cost $2.50 each, which is $70, and the four "
          "adults pay $4.50 each, which is $18. ")
BOAT = "At $14 per half hour, the three half-hour blocks came to $42. "


def total(before, sentence):
    nums = numbers(sentence)
    return resummed(sentence, before, nums, nums)


def share(before, sentence):
    nums = numbers(sentence)
    return misshared(sentence, before, nums, nums)


def test_a_total_of_the_amounts_the_sentence_before_states_said_otherwise():
    assert total(GUIDES, "That brings the total bill to $98.") == "70 + 18 = 88"
    assert total(GUIDES, "That brings the total bill to $98, or about $3.06 per person.") \
        == "70 + 18 = 88"
    assert total(GUIDES, "Together, those come to $98.") == "70 + 18 = 88"
    assert total(GUIDES, "That brings the total bill to $88.") is None


@pytest.mark.parametrize("before, sentence", [
    # another amount takes part, or something is taken off
    (GUIDES, "With the $10 booking fee, that brings the total to $98."),
    (GUIDES, "That brings the total to $98 once tax is added."),
    ("The stays are $225, less a $25 discount. ", "That brings the total to $200."),
    # it reaches further back: the amount of a sentence before the last one
    ("The visits are $250. The stays are $225 and the cleans $16. ",
     "That brings the total to $491."),
    # one amount before it: no sum of the sentence before is pointed at
    ("The stays are $225. ", "That brings the total to $250."),
    # no pointing back, or far from the sum: some other total
    (GUIDES, "The museum's total for the term comes to $98."),
    (GUIDES, "That brings the total for the year to $1,840."),
])
def test_what_may_be_some_other_total_gets_no_verdict(before, sentence):
    assert total(before, sentence) is None


def test_an_amount_shared_out_over_a_count_none_of_the_amounts_before_gives():
    assert share(BOAT, "Split across your party of four, that works out to $12 per person.") \
        == "42 / 4 = 10.50"
    assert share(BOAT, "Split across your party of four, that works out to $10.50 per person.") \
        is None
    # hedged: within its rounding
    assert share(BOAT, "Split four ways, that's about $11 each.") is None
    # what is shared out said further back, or the sum of some amounts said before
    invoice = ("The team owes $1,040.00, and it's unpaid. The stone rental is included at "
               "no charge. ")
    assert share(invoice, "Split evenly across the four players, it works out to $265.00 "
                          "each.") == "1,040 / 4 = 260"
    assert share(invoice, "Split evenly across the four players, it works out to $260.00 "
                          "each.") is None
    assert share("The boats are $925 for your five. Fills are $12 a tank, which is $120. ",
                 "Split across the five of you, that works out to $209 each.") is None
    # the whole in the sentence itself
    assert share("", "The $90 hire split between 3 riders is $35 each.") == "90 / 3 = 30"
    assert share("", "The $90 hire split between 3 riders is $30 each.") is None


@pytest.mark.parametrize("before, sentence", [
    (BOAT, "That works out to $12 per person."),  # nothing shared out: no count
    (BOAT, "Split across your party of four, the $20 deposit is $5 each."),  # a deposit
    (BOAT, "Split across four, with the $6 tip that's $12 per person."),
    ("At $14 per half hour, you're charged $42 plus a $6 fee. ",
     "Split across your party of four, that works out to $12 per person."),
])
def test_a_share_of_something_else_gets_no_verdict(before, sentence):
    assert share(before, sentence) is None


MUSEUM = json.dumps({"booking_ref": "AG-19044", "group": {"students": 28, "adults": 4},
                     "devices": {"student_rate_cents": 250, "adult_rate_cents": 450}})


def test_the_reading_is_a_value_changed_through_the_evidence_and_the_judge():
    ev = ContextEvidence.build([MUSEUM])
    wrong = ev.features("That brings the total bill to $98.", GUIDES)
    assert wrong.line_changed == "70 + 18 = 88" and basis(wrong) == "value_changed"
    assert explain(wrong, 0.5, structured=True).kind == "contradicted"
    right = ev.features("That brings the total bill to $88.", GUIDES)
    assert right.line_changed is None and basis(right) != "value_changed"
