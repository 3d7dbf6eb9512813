"""A count of stock said as a state (statuses.stock_of): "sold out" for ``stock: 0`` and
"in stock" for ``units_available: 14`` pass; either said of the other count is changed.
"No band B seats left" says none are, the words between "no" and "seats" notwithstanding."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis

SHOE = json.dumps({"product": "Trail Runner 3", "stock": 0, "price_usd": 129.99})
FLIGHT = json.dumps({"flight": "BA117", "seats_available": 5, "days_left": 0})
SIZES = json.dumps([{"size": "M", "stock": 0}, {"size": "L", "stock": 4},
                    {"size": "XL", "stock": 2}])
SHOWS = json.dumps({"shows": [{"date": "2025-10-31", "band_b_seats_left": 14},
                              {"date": "2025-11-01", "band_b_seats_left": 0}]})


def changed(context, sentence):
    return basis(ContextEvidence.build([context]).features(sentence)) == "value_changed"


@pytest.mark.parametrize("context,sentence", [
    (SHOE, "It is sold out."), (SHOE, "The Trail Runner 3 is out of stock right now."),
    (FLIGHT, "There are still seats available."), (FLIGHT, "Five seats are left."),
    (SIZES, "Size M is sold out."), (SIZES, "Size XL is in stock."),
    (SHOE, "Delivery is available."),  # no stock said
    (FLIGHT, "Only a few days are left to book."),  # ``days left`` counts no stock
    (SHOWS, "The November 1 performance has no band B seats left."),  # words between
    (SHOWS, "The October 31 show still has band B seats left."),
])
def test_a_stock_count_said_as_its_state_passes(context, sentence):
    assert not changed(context, sentence)


@pytest.mark.parametrize("context,sentence", [
    (SHOE, "It is in stock now."), (SHOE, "It's available to order now."),
    (FLIGHT, "The flight is fully booked."), (FLIGHT, "There are no seats left."),
    (FLIGHT, "No seats are left on BA117."),
    (SIZES, "Size L is sold out."), (SIZES, "Size M is in stock."),
    (SHOWS, "The October 31 show has no band B seats left."),
    (SHOWS, "The November 1 show still has band B seats left."),
])
def test_the_other_state_is_a_changed_value(context, sentence):
    assert changed(context, sentence)
