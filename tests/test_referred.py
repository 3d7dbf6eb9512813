"""Readings of the forty-eighth session: totals over the records the sentence before names
or counts (guardrail.evidence.referred), a whole less all of its uses (left.py), a rate per
a key of another record (ratios.py), a sentence of rates, "completed" and "taken place" for
yes/no keys, the group's exception named first, unit words no grounding must hold.  Each
pair reads a right value as the grounding has it and the same sentence changed as not."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis
from guardrail.evidence.referred import last_sentence, said_before

SUBSCRIBERS = json.dumps({"puzzle": "Quayside Cryptic", "subscribers": [
    {"outlet": "Harrowgate Evening Post", "weekly_fee_cents": 4500, "active": True},
    {"outlet": "Severn Valley Gazette", "weekly_fee_cents": 2200, "active": True},
    {"outlet": "The Coastline Weekly", "weekly_fee_cents": 1800, "active": False},
    {"outlet": "Millbrook Courier", "weekly_fee_cents": 5100, "active": True},
    {"outlet": "Northfield Daily", "weekly_fee_cents": 9600, "active": True}]})
ACTIVE = "The Quayside Cryptic has four active syndication subscribers. "
CAKES = json.dumps({"bakery": "Hawthorn Lane Bakes", "orders": [
    {"customer": "Amelia Fairbanks", "tiers": 2, "servings": 50, "price_cents": 24000,
     "status": "confirmed", "deposit_paid": True},
    {"customer": "Tomasz Nowicki", "tiers": 1, "servings": 24, "price_cents": 11500,
     "status": "confirmed", "deposit_paid": True},
    {"customer": "Grace Adeyemi", "tiers": 3, "servings": 90, "price_cents": 36000,
     "status": "confirmed", "deposit_paid": True},
    {"customer": "Leah Sorensen", "tiers": 2, "servings": 60, "price_cents": 26500,
     "status": "awaiting deposit", "deposit_paid": False},
    {"customer": "Niamh Gallagher", "tiers": 1, "servings": 30, "price_cents": 13000,
     "status": "confirmed", "deposit_paid": True},
    {"customer": "Peter Okonkwo", "tiers": 2, "servings": 45, "price_cents": 22000,
     "status": "confirmed", "deposit_paid": True},
    {"customer": "Rosa Delgado", "tiers": 3, "servings": 110, "price_cents": 41500,
     "status": "cancelled", "deposit_paid": False}]})
SIX = ("Rosa Delgado's cake has been cancelled, which leaves six active orders. "
       "The six active cakes are worth $1,330 altogether, an average of about $222 each. ")
POLES = json.dumps({"yard": "Kowloon Bay depot", "stock": [
    {"sku": "BMB-POLE-6M", "length_m": 6, "on_hand": 1850, "reserved": 1320,
     "condition_hold": 45},
    {"sku": "BMB-POLE-8M", "length_m": 8, "on_hand": 300, "reserved": 300,
     "condition_hold": 0}]})
BUGGIES = json.dumps({"club": "Brackenridge Links", "energy": {
    "electric_kwh": 1840, "petrol_litres": 212}, "usage": [
    {"buggy_type": "lithium", "units": 12, "rounds": 1104},
    {"buggy_type": "petrol", "units": 4, "rounds": 296}]})
REPAIR = json.dumps({"ticket": "ACR-5520", "work_items": [
    {"task": "Replace bellows corners", "labour_hours": 2.5, "done": True},
    {"task": "Re-wax treble reed blocks", "labour_hours": 6.0, "done": True},
    {"task": "Tune to A=442 Hz, musette", "labour_hours": 4.0, "done": False}]})
MURALS = json.dumps({"program": "Northside Walls", "budget_cents": 12000000, "commissions": [
    {"site": "Laundromat", "fee_cents": 1850000, "status": "complete"},
    {"site": "Harmon Library", "fee_cents": 2400000, "status": "in progress"}],
    "community_vote_held": False})
DIVE = json.dumps({"site": "Ojo Azul", "max_depth_m": 18, "water_temp_c": 25,
                   "surface_interval_min": 90})


def evidence(context, sentence, before=""):
    return ContextEvidence.build([context], "").features(sentence, before)


def test_the_sentence_before_is_read_only_where_a_sentence_points_back_at_it():
    assert last_sentence("It has five. The six active cakes are worth $1,330. ") \
        == "The six active cakes are worth $1,330."
    lent = said_before("They add up to 299 servings.", SIX)
    assert lent.counts == (6,) and "activ" in lent.stems and not lent.negated
    assert said_before("Between them they pay $214 a week.", ACTIVE).counts == (4,)
    assert said_before("The servings add up to 299.", SIX) is None  # no pointing back
    assert said_before("They add up to 299 servings over five cakes.", SIX) is None  # counts
    assert said_before("They add up to 299 servings.", "") is None


@pytest.mark.parametrize("sentence, right", [
    ("Between them they pay $214 a week.", True),  # the four active ones
    ("Between them they pay $224 a week.", False),  # near the total of all five
])
def test_a_total_over_the_group_the_sentence_before_names(sentence, right):
    ev = evidence(SUBSCRIBERS, sentence, ACTIVE)
    assert (not ev.missing_numbers and ev.line_changed is None) is right
    assert (basis(ev) == "value_changed") is not right


@pytest.mark.parametrize("sentence, right", [
    ("They add up to 299 servings.", True),  # six of the seven
    ("They add up to 289 servings.", False),
])
def test_a_total_over_as_many_records_as_the_sentence_before_counts(sentence, right):
    ev = evidence(CAKES, sentence, SIX)
    assert (not ev.missing_numbers) is right


def test_a_name_after_they_says_which_record_its_clause_speaks_of():
    ev = evidence(CAKES, "They add up to 299 servings, and Grace Adeyemi's three-tier cake "
                  "for 90 is the largest.", SIX)
    assert ev.field_changed is None and ev.record_gap == 0


def test_the_groups_exception_named_first_keeps_its_own_state():
    said = ("Leah Sorensen's two-tier cake is still awaiting its deposit, and every other "
            "order is confirmed with its deposit paid.")
    assert evidence(CAKES, said).field_changed is None
    # the group opening the sentence is the claim: a record of it holds no
    assert evidence(CAKES, "Every other order has its deposit paid, including Leah "
                    "Sorensen's two-tier cake.").field_changed is not None


@pytest.mark.parametrize("sentence, right", [
    ("There are 485 six-metre poles free to hire once reserved and held stock is set aside.",
     True),
    ("There are 495 six-metre poles free to hire once reserved and held stock is set aside.",
     False),
])
def test_what_is_left_of_a_whole_once_every_use_is_set_aside(sentence, right):
    assert (not evidence(POLES, sentence).missing_numbers) is right


@pytest.mark.parametrize("sentence, right", [
    ("Per round, the petrol buggies used about 0.72 litres of fuel.", True),  # 212 / 296
    ("Per round, the petrol buggies used about 0.92 litres of fuel.", False),
])
def test_a_rate_per_a_key_of_a_record_over_a_value_outside_the_records(sentence, right):
    assert (not evidence(BUGGIES, sentence).missing_numbers) is right


def test_a_sentence_of_rates_is_no_fields_value():
    ev = evidence(BUGGIES, "Per round, the petrol buggies used about 0.72 litres of fuel, "
                  "while the electric ones used about 1.7 kilowatt-hours.")
    assert ev.field_changed is None and basis(ev) == "value_worked_out"
    # the field said plainly is still read
    plain = evidence(BUGGIES, "The electric buggies used 1,700 kilowatt-hours.")
    assert plain.field_changed == "energy > electric kwh: 1840"


@pytest.mark.parametrize("context, sentence, changed", [
    (REPAIR, "The tuning to A 442 in musette has already been completed.", True),
    (REPAIR, "The bellows corners have been completed.", False),
    (MURALS, "A community vote on the designs has already taken place.", True),
    (MURALS, "No community vote has taken place yet.", False),
])
def test_completed_and_taken_place_say_a_yes_no_keys_yes(context, sentence, changed):
    ev = evidence(context, sentence)
    assert (ev.field_changed is not None) is changed
    assert (basis(ev) == "value_changed") is changed


def test_the_unit_after_a_value_is_no_word_the_grounding_must_hold():
    said = "The water is 25 degrees Celsius, about 77 degrees Fahrenheit."
    assert evidence(DIVE, said).word_precision == 1.0
    # a word the grounding lacks that follows no value still counts against it
    assert evidence(DIVE, "The water is a warm Caribbean blue.").word_precision < 0.5
    # and a unit word the grounding holds still counts for it
    assert evidence(json.dumps({"visibility": "30 metres"}),
                    "Visibility is about 30 metres.").n_words == 2


RICKSHAWS = json.dumps({"depot": "Canal Road", "vehicles": [
    {"vehicle_id": "RK-01", "driver": "Samuel Ortiz", "in_service": True,
     "battery_pct": 92, "last_service": "2025-05-28"},
    {"vehicle_id": "RK-02", "driver": "Mina Kovac", "in_service": False,
     "battery_pct": 15, "last_service": "2025-04-02"}]})
SEEDS = json.dumps({"member": "SL-0457", "loans": [
    {"variety": "Red Russian kale", "return_seeds_by": "2026-08-31", "returned": False},
    {"variety": "Genovese basil", "return_seeds_by": "2024-10-31", "returned": True}]})
KITCHEN = """Harbour Lane Community Kitchen - volunteer hours, November 2025

| Volunteer | Shifts | Hours | Role |
|---|---|---|---|
| Aoife Byrne | 6 | 18.0 | Shift lead |
| Kwame Mensah | 5 | 15.0 | Cook |
| Lucy Tran | 4 | 12.0 | Shift lead |"""


@pytest.mark.parametrize("sentence, changed", [
    ("Mina Kovac's RK-02 was last serviced on April 2, 2025.", False),  # not ``in service``
    ("Mina Kovac's RK-02 is still marked as in service.", True),
    ("Samuel Ortiz's RK-01 is out of service.", True),
])
def test_a_key_of_a_preposition_and_a_noun_is_named_by_both(sentence, changed):
    assert (evidence(RICKSHAWS, sentence).field_changed is not None) is changed


@pytest.mark.parametrize("sentence, changed", [
    ("The kale is a biennial, so its return date is August 31, 2026.", False),
    ("The kale seed has already been returned.", True),
])
def test_a_participle_key_is_not_named_by_its_bare_word(sentence, changed):
    assert (evidence(SEEDS, sentence).field_changed is not None) is changed


def test_a_name_the_grounding_states_outside_its_records_is_no_rival():
    said = "Three volunteers worked at Harbour Lane in November."
    assert evidence(KITCHEN, said).field_changed is None
    assert evidence(KITCHEN, "Three volunteers worked at Quarry Road in November."
                    ).field_changed is not None


LOCK = json.dumps({"lock": "Hatherley Lock 14", "water_level_upper_m": 2.84,
                   "water_level_lower_m": 0.62, "passages": [
                       {"time": "08:05", "vessel": "Kingfisher", "length_m": 18.3},
                       {"time": "08:40", "vessel": "Morning Mist", "length_m": 9.1}]})
TICKETS = json.dumps({"shop": "Spoke & Chain", "tickets": [
    {"customer": "Hannah Weiss", "labour_cents": 2500, "parts_cents": 1800, "paid": False},
    {"customer": "Omar Haddad", "labour_cents": 4000, "parts_cents": 6200, "paid": False},
    {"customer": "Peter Novak", "labour_cents": 3000, "parts_cents": 900, "paid": True}]})
QUOTES = json.dumps({"quotes": [  # each total holds a $5 call-out fee besides
    {"customer": "Hannah Weiss", "labour_cents": 2500, "parts_cents": 1800,
     "total_cents": 4800},
    {"customer": "Omar Haddad", "labour_cents": 4000, "parts_cents": 6200,
     "total_cents": 10700}]})


@pytest.mark.parametrize("sentence, right", [
    ("The difference between the upper and lower water levels was 2.22 metres.", True),
    ("The difference between the upper and lower water levels was 2.42 metres.", False),
    ("The difference between the two vessels was 2.22 metres.", False),  # no keys named
])
def test_a_difference_between_two_values_named_by_their_keys(sentence, right):
    assert (not evidence(LOCK, sentence).missing_numbers) is right


@pytest.mark.parametrize("sentence, right", [
    ("Omar Haddad's repair is the largest job, at $102 for parts and labour.", True),
    ("Omar Haddad's repair is the largest job, at $112 for parts and labour.", False),
    ("Peter Novak has already paid his $39 bill.", True),
])
def test_a_records_few_amounts_added(sentence, right):
    assert (not evidence(TICKETS, sentence).missing_numbers) is right


def test_a_record_that_states_its_total_is_not_added_up_again():
    # labour and parts without the fee: no amount the quote states as its bill
    assert evidence(QUOTES, "Hannah Weiss's bill is $43.").missing_numbers
    assert not evidence(QUOTES, "Hannah Weiss's bill is $48.").missing_numbers
