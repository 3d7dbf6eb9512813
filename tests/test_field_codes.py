"""A name is no rival of a code (guardrail.evidence.fields): "two flights to London on
June 2" beside ``flight: TP1351`` and ``to: LHR`` says no field otherwise (it was a
contradiction, and the correct sentence was redacted, in an integrator's agent turn);
a code said for another code still is ("DHL" for ``carrier: UPS``), and so is a name
beside a code where the grounding holds names ("held by Harrowgate Legal" of an account,
test_fields.py).  Over the labelled sets (scripts/claim_bases.py compare) no claim's
basis moves."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis

FLIGHTS = json.dumps({"flights": [
    {"flight": "TP1351", "from": "LIS", "to": "LHR", "depart": "2025-06-02T09:15",
     "arrive": "2025-06-02T11:55", "price_eur": 142.5, "seats_left": 4},
    {"flight": "BA501", "from": "LIS", "to": "LHR", "depart": "2025-06-02T13:40",
     "arrive": "2025-06-02T16:20", "price_eur": 168.0, "seats_left": 9}]})
QUESTION = "What flights from Lisbon to London are there on June 2?"


def features(context, sentence, question=""):
    return ContextEvidence.build([context], question).features(sentence, "")


def test_a_city_is_no_other_value_of_an_airport_or_a_flight_code():
    for sentence in ("There are two flights to London on June 2.",
                     "Both flights from Lisbon leave on June 2."):
        f = features(FLIGHTS, sentence, QUESTION)
        assert f.field_changed is None and basis(f) != "value_changed", sentence


def test_a_code_said_for_another_code_is_still_another_value():
    order = json.dumps({"order": "ORD-352535", "carrier": "UPS", "status": "in transit"})
    f = features(order, "The carrier for your order ORD-352535 is DHL.")
    assert f.field_changed == "carrier: UPS" and basis(f) == "value_changed"
    assert features(order, "The carrier for your order is UPS.").field_changed is None
