"""Which record a sentence speaks of when the records' names share words ("Plan A",
"Plan B", "Plan C"; "Room 101", "Room 102"): the one it names by its whole label."""

from __future__ import annotations

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis


def _records(names: list[str]) -> str:
    return json.dumps([{"name": n, "price_usd": 20 + 10 * i} for i, n in enumerate(names)])


@pytest.mark.parametrize("names", [["Plan A", "Plan B", "Plan C"],
                                   ["Room 101", "Room 102", "Room 103"],
                                   ["Widget E", "Widget F", "Widget G"],
                                   ["Basic Plan", "Pro Plan", "Team Plan"]])
def test_another_records_price_is_its_own_said_otherwise(names):
    """The second record's price said as the third's is that price said otherwise; its
    own price is nothing of the kind; a price no record holds is still one the result
    lacks."""
    ev = ContextEvidence.build([_records(names)], f"How much is {names[1]}?")
    wrong = ev.features(f"{names[1]} costs $40 a month.")
    assert wrong.field_changed == "item 2 > price usd: 30" and basis(wrong) == "value_changed"
    right = ev.features(f"{names[1]} costs $30 a month.")
    assert right.field_changed is None and right.record_gap == 0 and not right.missing_numbers
    assert ev.features(f"{names[1]} costs $57 a month.").missing_numbers


def test_a_value_worked_out_of_the_named_record_keeps_the_tie():
    """A sentence that works a value out ("with 12 hours to go", of a 50-hour interval
    and 38 hours run) is not read as the named record's field said otherwise."""
    units = {"service_interval_h": 50, "units": [
        {"unit_id": "SM-01", "hours_since_service": 38},
        {"unit_id": "SM-02", "hours_since_service": 12},
        {"unit_id": "SM-03", "hours_since_service": 21}]}
    ev = ContextEvidence.build([json.dumps(units)], "Which sled is due for service?")
    got = ev.features("SM-01 is next in line for a service, with 12 hours to go.")
    assert got.field_changed is None
