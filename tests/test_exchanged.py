"""Amounts converted at the rates a tool result keys by currency
(guardrail.evidence.exchanged, currency.coded), read through ContextEvidence."""

import json

from guardrail.evidence.features import ContextEvidence

FX = json.dumps({"base": "GBP", "date": "2025-06-20",
                 "rates": {"EUR": 1.1712, "USD": 1.2695, "JPY": 183.42, "CHF": 1.1087}})


def evidence(sentence, before=""):
    return ContextEvidence.build([FX]).features(sentence, before)


def missing(sentence, before=""):
    return [n.value for n in evidence(sentence, before).missing_numbers]


def test_an_amount_at_the_rate_of_the_currency_it_is_said_in():
    assert missing("In Swiss francs, £500 is about CHF 554.") == []  # (500: the question's)
    assert missing("In yen, £500 is about ¥91,710.") == []
    # the amount of the sentence before: 500 x 1.2695
    first = "At the June 20 rate of 1.1712, £500 gets you about €585.60. "
    assert missing("For comparison, the same amount would be about $634.75 in US dollars.",
                   first) == []
    # back into the base: 585.60 / 1.1712
    assert missing("So €585.60 buys back £500.") == []


def test_a_wrong_conversion_stays_missing():
    first = "At the June 20 rate of 1.1712, £500 gets you about €585.60. "
    assert missing("For comparison, the same amount would be about $643.75 in US dollars.",
                   first) == [643.75]
    assert 574.0 in missing("In Swiss francs, £500 is about CHF 574.")


def test_a_rate_keyed_by_its_currency_codes_it():
    # "in US dollars" of a result whose base is GBP: the USD rate codes dollars, so the
    # currency is not said otherwise
    said = evidence("The same amount would be about $643.75 in US dollars.")
    assert said.field_changed is None
