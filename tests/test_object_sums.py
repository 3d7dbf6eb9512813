"""An object's numbers added up (objects.object_sums): its counts ("sold 866 plates"),
its counts times the prices of another object keyed alike ("$4,895 in entry fees"), its
amounts in one unit; and the chance that a value hits one of few results, counted near
the value only (totals.rarely)."""

import json

from evidence_of import basis_of as b

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.objects import object_sums
from guardrail.evidence.totals import rarely
from guardrail.evidence.values import numbers

SUSHI = json.dumps({
    "restaurant": "Kaiten Kita", "date": "2025-01-18",
    "plate_prices_cents": {"green": 250, "yellow": 350, "red": 450, "black": 600},
    "plates_sold": {"green": 412, "yellow": 268, "red": 139, "black": 47},
    "discarded_plates": {"green": 38, "yellow": 21, "red": 9, "black": 2},
    "covers": 187})
CROSSWORD = json.dumps({
    "event": "Harbor City Crossword Classic", "capacity": 120,
    "fees": {"early_bird_cents": 4500, "standard_cents": 6000, "student_cents": 2500,
             "early_bird_deadline": "2025-10-31"},
    "registrations": {"early_bird": 58, "standard": 31, "student": 17, "comped": 4},
    "online_solvers": 212})
TAGS = json.dumps({"shipment": "S-1", "tags": [3, 5, 9], "weights": {"a_kg": 2, "b_kg": 4}})


def test_an_objects_counts_added_up():
    assert b(SUSHI, "The branch sold 866 plates on Saturday.") == "words"
    assert b(SUSHI, "Another 70 plates were discarded, most of them green.") == "words"
    assert b(SUSHI, "Another 76 plates were discarded, most of them green.") == "value_missing"
    assert b(CROSSWORD, "There are 110 registrations so far.") == "words"


def test_counts_times_the_prices_keyed_alike():
    assert b(SUSHI, "Plate sales brought in $2,875.50.") == "words"
    assert b(CROSSWORD, "The paid registrations have brought in $4,895 in entry fees.") \
        == "words"
    assert b(CROSSWORD, "The paid registrations have brought in $4,985 in entry fees.") \
        == "value_missing"


def test_a_list_or_a_record_of_an_array_is_no_object_of_counts():
    # a list's items share one path; two amounts are too few to add; a record of an array
    # holds counts of different things
    assert object_sums(ContextEvidence.build([TAGS]).fields.fields) == ()
    assert 866 in object_sums(ContextEvidence.build([SUSHI]).fields.fields)
    lockers = json.dumps({"lockers": [{"bottles": 41, "capacity": 48, "shelves": 6},
                                      {"bottles": 22, "capacity": 48, "shelves": 6}]})
    assert object_sums(ContextEvidence.build([lockers]).fields.fields) == ()


def test_only_results_near_the_value_count_as_tries():
    n = numbers("about 24 minutes")[0]  # width 1: at most 1.2 tries near 24
    assert rarely(n, [24.3, 4.05, 0.5, 1.2], near_only=True)
    assert not rarely(n, [24.3, 4.05, 0.5, 1.2])  # every result a try
    assert not rarely(n, [24.3, 20.0], near_only=True)  # two near it
    assert not rarely(n, [26.0, 4.05], near_only=True)


MARKET = json.dumps({
    "stall": "Riverside Greens", "day": "2025-06-07",
    "sales": [{"crop": "kale", "bunches": 14, "weight_kg": 4.2},
              {"crop": "chard", "bunches": 9, "weight_kg": 3.1},
              {"crop": "kale", "bunches": 11, "weight_kg": 3.3},
              {"crop": "beets", "bunches": 20, "weight_kg": 9.0}],
    "price_per_kg_cents": {"kale": 950, "chard": 780, "beets": 420}})


def test_the_records_quantities_times_the_prices_of_the_things_they_name():
    # (4.2 + 3.3) * 9.50 + 3.1 * 7.80 + 9.0 * 4.20 = 133.23
    assert b(MARKET, "At those prices the day's sales are worth about $133.") == "words"
    assert b(MARKET, "At those prices the day's sales are worth about $152.") \
        == "value_missing"
    # a price table no record names, or a record naming no priced thing: no sum
    bare = json.loads(MARKET)
    bare["price_per_kg_cents"] = {"leeks": 950, "onions": 780}
    assert 133.23 not in [round(v, 2) for v in object_sums(
        ContextEvidence.build([json.dumps(bare)]).fields.fields)]
    assert 133.23 in [round(v, 2) for v in object_sums(
        ContextEvidence.build([MARKET]).fields.fields)]
