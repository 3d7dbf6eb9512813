"""A place and its region's or country's code is one value, not a list of two
(guardrail.evidence.field.items_of), read through ContextEvidence."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.field import items_of

PARCEL = json.dumps({"tracking_number": "1Z84F20391", "status": "out_for_delivery", "events": [
    {"time": "2025-04-07T18:42:00", "location": "Leeds, GB", "description": "Departed sorting hub"},
    {"time": "2025-04-08T06:15:00", "location": "Manchester, GB",
     "description": "Arrived at local depot"},
    {"time": "2025-04-09T07:58:00", "location": "Manchester, GB",
     "description": "Out for delivery"}]})


def test_a_place_with_its_code_is_one_item():
    assert items_of("Leeds, GB") == ["Leeds, GB"]
    assert items_of("Denver, CO") == ["Denver, CO"]
    assert items_of("bug, good first issue") == ["bug", "good first issue"]
    assert items_of("red, green, and blue") == ["red", "green", "blue"]


def test_a_sentence_naming_two_records_places_gives_neither_another_value():
    ev = ContextEvidence.build([PARCEL]).features(
        "It left the Leeds sorting hub on the evening of April 7 and reached the "
        "Manchester depot the next morning.")
    assert ev.field_changed is None
