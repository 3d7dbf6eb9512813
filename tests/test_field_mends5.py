"""Fields read as the sentence means them, fifth round (guardrail.evidence.field): a number
of money or in a unit after "at least", "more than", "under", "below" is a bound, and a
field whose value keeps it is no value said otherwise ("Three colours have at least 7
meters in stock" of ``in_stock_m: 42.5``); nor is such a bound, kept by a field of the
record, a value the grounding lacks ("under $50 an hour" of ``hourly_rate_usd: 45``).  A
bare count ("children under 12") is not read so, nor "up to" or "over" ("add up to
$1,250" is a total).  Written from a supported sentence of turns-et, stopped by both v5
and v6-H2 when that pair was first measured; the contexts here are new.  A bound the
field's value breaks is still a value said otherwise.  The right ones fail on 6f6d27f."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis

STOPPED = ("value_changed", "value_missing")


def evidence(context, sentence, before=""):
    return ContextEvidence.build([context], "").features(sentence, before)


ROPES = json.dumps({"shop": "Harbour Chandlery", "ropes": [
    {"sku": "R-10", "name": "Blue braided polyester", "on_reel_m": 86.5, "price_per_m_cents": 310},
    {"sku": "R-12", "name": "Red braided polyester", "on_reel_m": 9.0, "price_per_m_cents": 395},
    {"sku": "R-14", "name": "Three-strand nylon", "on_reel_m": 54.0, "price_per_m_cents": 420}]})


def test_at_least_a_length_the_stock_keeps_is_no_changed_value():
    right = evidence(ROPES, "The blue braided polyester has at least 20 meters on the reel.")
    assert right.field_changed is None and basis(right) not in STOPPED, right.field_changed
    wrong = evidence(ROPES, "The red braided polyester has at least 20 meters on the reel.")
    assert basis(wrong) in STOPPED, wrong.field_changed


def test_more_than_a_bound_in_another_unit_converts():
    """54 m is about 177 feet: "more than 150 feet" keeps it, "more than 200 feet" does
    not."""
    right = evidence(ROPES, "The three-strand nylon has more than 150 feet on the reel.")
    assert right.field_changed is None and basis(right) not in STOPPED, right.field_changed
    wrong = evidence(ROPES, "The three-strand nylon has more than 200 feet on the reel.")
    assert basis(wrong) in STOPPED, wrong.field_changed


ROOMS = json.dumps({"venue": "Quay Rooms", "rooms": [
    {"room": "Loft", "capacity": 40, "hourly_rate_usd": 85},
    {"room": "Studio", "capacity": 12, "hourly_rate_usd": 45}]})


def test_under_an_amount_the_rate_keeps_is_no_value_changed_or_missing():
    right = evidence(ROOMS, "The Studio rents for under $50 an hour.")
    assert right.field_changed is None and basis(right) not in STOPPED, right.field_changed
    wrong = evidence(ROOMS, "The Loft rents for under $50 an hour.")
    assert basis(wrong) in STOPPED, wrong.field_changed
