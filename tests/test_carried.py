"""Totals an answer keeps in steps across its sentences (guardrail.evidence.carried),
read through ContextEvidence as the proxy reads them: each sentence with the answer
before it."""

import json

from guardrail.evidence.carried import carried
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.values import numbers

ORDER = json.dumps({"order": "SCN-30571", "paid": False, "lines": [
    {"item": "standard page", "qty": 24, "each_cents": 75},
    {"item": "oversize map", "qty": 1, "each_cents": 1800}], "handling_cents": 450})
YARN = json.dumps({"po": "WS-118", "lines": [
    {"colour": "Foxglove", "skeins": 20, "price_cents": 1400},
    {"colour": "Low Tide", "skeins": 15, "price_cents": 1400},
    {"colour": "Ember", "skeins": 30, "price_cents": 1250},
    {"colour": "Lichen", "skeins": 12, "price_cents": 1250}],
    "shipping_cents": 2800, "deposit_cents": 15000})
SO_FAR = ("The 24 standard pages are charged at 75 cents each, which comes to $18.00. "
          "The oversize map is $18.00 on its own. ")
LINES = ("The Foxglove and Low Tide skeins at $14 each come to $490. "
         "The Ember and Lichen skeins at $12.50 each add $525. ")


def missing(context, sentence, before=""):
    ev = ContextEvidence.build([context]).features(sentence, before)
    return [n.value for n in ev.missing_numbers]


def test_a_total_kept_in_steps_from_amounts_said_before_and_one_the_sentence_states():
    assert missing(ORDER, "With the $4.50 handling fee, the order totals $40.50.", SO_FAR) == []
    assert missing(YARN, "That puts the yarn subtotal at $1,015.", LINES) == []
    assert missing(YARN, "With $28 for shipping, the order totals $1,043.", LINES) == []
    assert missing(YARN, "After the $150 deposit, $865 is left to pay.", LINES) == []


def test_a_changed_step_and_a_value_said_before_without_a_cue_are_still_missing():
    assert missing(ORDER, "With the $4.50 handling fee, the order totals $41.50.",
                   SO_FAR) == [41.5]
    assert missing(YARN, "That puts the yarn subtotal at $1,025.", LINES) == [1025.0]
    # no word saying it totals or leaves: "$1,015" is no running total; nothing said
    # before: the first sentence of an answer carries nothing
    for sentence, before in (("The yarn is worth $1,015 at list price.", LINES),
                             ("That puts the yarn subtotal at $1,015.", "")):
        said = numbers(sentence)
        assert not carried(sentence, said[0], said, before)
        # right all the same: the records' skeins times their prices add up to it
        assert missing(YARN, sentence, before) == []
        assert missing(YARN, sentence.replace("1,015", "1,025"), before) == [1025.0]


def test_rates_said_before_are_no_amounts_and_many_amounts_crowd_the_bound():
    sentence = "That comes to $26.50 altogether."
    n = numbers(sentence)[0]
    # $14 each and $12.50 each are rates: 14 + 12.50 is no total of anything
    assert not carried(sentence, n, numbers(sentence), LINES)
    assert carried(sentence, n, numbers(sentence), "You paid $14 and then $12.50. ")
    # a round amount among the sums of eight amounts said before: too many tried
    many = " ".join(f"Item {i} was ${v}." for i, v in enumerate(
        (120, 85, 240, 60, 310, 95, 150, 205), 1)) + " "
    sentence = "So the total is $1,265."
    assert not carried(sentence, numbers(sentence)[0], numbers(sentence), many)


def test_a_share_the_sentence_states_of_an_amount_said_before():
    golf = json.dumps({"course": "Cedar Hollow", "green_fee_cents": 6500, "cart_cents": 2500,
                       "resident_discount_pct": 15, "players": 4})
    before = "So the four of you with carts would pay $360 in all. "
    said = "If you qualify for the 15% resident discount, it would come to {}."
    assert missing(golf, said.format("$306"), before) == []
    assert missing(golf, said.format("$316"), before) == [316.0]


def test_a_word_that_describes_a_value_stands_between_it_and_what_it_counts():
    """"leaves 128.2 certified acres": acres, like the 154.5 acres said before it, less
    the 26.3 acres this sentence states."""
    before = "Five seed lots were entered this season, covering 154.5 acres in all. "
    said = "That takes 26.3 acres out of certification and leaves 128.2 certified acres."
    assert carried(said, numbers(said)[1], numbers(said), before)
    wrong = said.replace("128.2", "182.2")
    assert not carried(wrong, numbers(wrong)[1], numbers(wrong), before)
