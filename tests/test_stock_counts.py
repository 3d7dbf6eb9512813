"""A count of stock said as a state (statuses.stock_of): "sold out" for ``stock: 0`` and
"in stock" for ``units_available: 14`` pass; either said of the other count is changed."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis

SHOE = json.dumps({"product": "Trail Runner 3", "stock": 0, "price_usd": 129.99})
FLIGHT = json.dumps({"flight": "BA117", "seats_available": 5, "days_left": 0})
SIZES = json.dumps([{"size": "M", "stock": 0}, {"size": "L", "stock": 4},
                    {"size": "XL", "stock": 2}])


def changed(context, sentence):
    return basis(ContextEvidence.build([context]).features(sentence)) == "value_changed"


@pytest.mark.parametrize("context,sentence", [
    (SHOE, "It is sold out."), (SHOE, "The Trail Runner 3 is out of stock right now."),
    (FLIGHT, "There are still seats available."), (FLIGHT, "Five seats are left."),
    (SIZES, "Size M is sold out."), (SIZES, "Size XL is in stock."),
    (SHOE, "Delivery is available."),  # no stock said
    (FLIGHT, "Only a few days are left to book."),  # ``days left`` counts no stock
])
def test_a_stock_count_said_as_its_state_passes(context, sentence):
    assert not changed(context, sentence)


@pytest.mark.parametrize("context,sentence", [
    (SHOE, "It is in stock now."), (SHOE, "It's available to order now."),
    (FLIGHT, "The flight is fully booked."), (FLIGHT, "There are no seats left."),
    (FLIGHT, "No seats are left on BA117."),
    (SIZES, "Size L is sold out."), (SIZES, "Size M is in stock."),
])
def test_the_other_state_is_a_changed_value(context, sentence):
    assert changed(context, sentence)
