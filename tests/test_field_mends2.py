"""Fields read as the sentence means them, second round (guardrail.evidence.fields,
.field, .keys, .records, .statuses, .totals): a list item said in part, a status of what
may be, records named by a plural and their numbers, a yes/no said of the record whose
time the clause names, a noun of a yes/no key, two records each named by its date, a
value said as an average, the other side of a comparison, another record's value said
negated, "off" after a key's own verb, a key's total in hours, a change said as
"gained", "open until" a closing time.  Each was written from a supported sentence of
the session's pairs turns-dx/-dy, turns-dz/-ea and turns-eb/-ec (or, "gained", of
turns-au) read as a changed value; each wrong sentence beside it is still read so.  All
fail on 48fedfa but "gained", which fails on 94b07ff."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis


def evidence(context, sentence, before=""):
    return ContextEvidence.build([context], "").features(sentence, before)


LANES = json.dumps({"alley": "Strike Zone", "lanes": [
    {"lane_id": "L1", "name": "Lane 1", "max_bowlers": 6, "rate_cents": 4500, "extras": []},
    {"lane_id": "L2", "name": "Lane 2", "max_bowlers": 6, "rate_cents": 4500, "extras": []},
    {"lane_id": "L3", "name": "Party Lane", "max_bowlers": 10, "rate_cents": 8000,
     "extras": ["private lounge", "bumpers", "table service"]},
    {"lane_id": "L4", "name": "VIP Lane", "max_bowlers": 12, "rate_cents": 12000,
     "extras": ["private room", "bar"]}]})


def test_a_list_item_of_two_words_is_said_with_both_in_a_row():
    """"room for up to ten" names no "private room" of another lane."""
    right = evidence(LANES, "The Party Lane has room for up to ten and comes with a private "
                            "lounge, bumpers and table service.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(LANES, "The Party Lane comes with a private room, bumpers and table "
                            "service.")
    assert wrong.field_changed == "lanes 3 > extras: private lounge"


REPAIR = json.dumps({"ticket": "TR-88", "status": "awaiting_parts", "quote_cents": 31000,
                     "optional": {"item": "strap", "price_cents": 4500}})


def test_a_status_in_a_clause_of_what_may_be_says_nothing():
    """"If you decide to have it done too" says no ``status`` of done."""
    right = evidence(REPAIR, "If you decide to have it done too, the bill would rise to $355.")
    assert right.field_changed is None
    assert evidence(REPAIR, "The repair has been completed.").field_changed \
        == "status: awaiting_parts"


COURTS = ("| Court | Location | Peak |\n|---|---|---|\n| Court 1 | Indoor | $52 |\n"
          "| Court 2 | Indoor | $52 |\n| Court 3 | Indoor | $52 |\n"
          "| Court 4 | Outdoor | $40 |\n| Centre Court | Indoor | $70 |")


def test_records_named_by_a_plural_and_their_numbers():
    """"Courts 1 to 3" are the records named "Court 1" to "Court 3": their peak price,
    not the Centre Court's."""
    right = evidence(COURTS, "At peak times Courts 1 to 3 are $52 an hour, and the Centre "
                             "Court is $70.")
    assert right.field_changed is None and basis(right) != "value_changed"
    assert evidence(COURTS, "At peak times Courts 1 and 2 are $52 an hour, and the Centre "
                            "Court is $70.").field_changed is None


SHOWS = json.dumps({"comic": "Dana Whitlock", "shows": [
    {"date": "2025-10-10", "start": "20:00", "sold_out": True, "seats_left": 0},
    {"date": "2025-10-10", "start": "22:15", "sold_out": False, "seats_left": 12}]})


def test_a_yes_no_said_in_a_clause_naming_another_records_time_is_that_records():
    right = evidence(SHOWS, "The 8:00 PM show is sold out, but the 10:15 PM show still has "
                            "12 seats.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(SHOWS, "The 10:15 PM show is sold out.")
    assert wrong.field_changed == "shows 2 > sold out: false"


MEMBER = json.dumps({"member": "M-40917", "plan": "10-Class Pack",
                     "freeze": {"allowed": True, "max_days": 14, "used_days": 0}})


def test_a_noun_of_a_yes_no_key_is_no_yes_no():
    """"that allowance" (of ``allowed``), negated, says nothing of ``allowed``."""
    right = evidence(MEMBER, "You can freeze it for up to 14 days, and you haven't used any "
                             "of that allowance yet.")
    assert right.field_changed is None
    wrong = evidence(MEMBER, "Freezing is not allowed on this plan.")
    assert wrong.field_changed == "freeze > allowed: true"


BOXES = json.dumps({"subscription": "sub_7Hq2", "deliveries": [
    {"week_of": "2025-05-05", "delivery_date": "2025-05-07", "status": "skipped"},
    {"week_of": "2025-05-12", "delivery_date": "2025-05-14", "status": "scheduled"},
    {"week_of": "2025-05-19", "delivery_date": "2025-05-21", "status": "scheduled"}]})


def test_two_records_each_named_by_its_date():
    """"You skipped the week of May 5, so your next box arrives on May 14": the skip is
    the May 5 week's, no state of the May 14 box."""
    right = evidence(BOXES, "You skipped the week of May 5, so your next box arrives on "
                            "Wednesday, May 14.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(BOXES, "You skipped the week of May 12, so your next box arrives on "
                            "Wednesday, May 21.")
    assert wrong.field_changed == "deliveries 2 > status: scheduled"


MENU = "\n".join([  # turns-dy/14
    "### Week of June 2, 2025 - Classic menu (2-person plan)",
    '',
    '| # | Recipe | Cook time | Calories | Protein (g) | Tags | Premium add-on |',
    '|---|--------|-----------|----------|-------------|------|----------------|',
    '| 1 | Lemon Herb Chicken with Orzo | 30 min | 640 | 42 | - | - |',
    '| 2 | Korean Beef Bulgogi Bowls | 25 min | 710 | 38 | spicy | - |',
    '| 3 | Black Bean & Sweet Potato Enchiladas | 40 min | 590 | 21 | vegetarian | - |',
    '| 4 | Seared Scallops with Brown Butter Corn | 20 min | 520 | 29 | pescatarian '
    '| +$7.99/serving |',
    '| 5 | Tofu Pad See Ew | 30 min | 680 | 24 | vegan, spicy | - |',
    '| 6 | Steak Frites with Chimichurri | 35 min | 820 | 46 | - | +$5.99/serving |',
    '| 7 | Mediterranean Chickpea Salad Wraps | 15 min | 480 | 17 | vegetarian, no-cook | - |',
    '| 8 | Turkey Meatball Marinara | 30 min | 660 | 39 | - | - |',
    '',
])
MENU_BEFORE = (
    "Three recipes on this week's Classic menu work for a vegetarian. Tofu Pad See Ew"
    ' has the most protein of the three, 24 grams, and cooks in 30 minutes, though '
    "it's marked spicy. The Black Bean and Sweet Potato Enchiladas give you 21 grams "
    'of protein but are the slowest, at 40 minutes. If speed matters most, the '
    'Mediterranean Chickpea Salad Wraps need no cooking and take just 15 minutes, '
    "although they're lowest in protein at 17 grams. "
)


def test_a_value_said_as_an_average_is_no_records_field():
    """"the three average about 21 grams" (24, 21 and 17 over the three named before) is no
    protein of the Seared Scallops (turns-dy/14, a markdown table)."""
    right = evidence(MENU, "Between them, the three average about 21 grams of protein per "
                           "serving.", MENU_BEFORE)
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(MENU, "The Seared Scallops offer 21 grams of protein.")
    assert "Seared Scallops" in wrong.field_changed


SUITINGS = json.dumps({"results": [
    {"code": "DR-3380", "name": "Lino Fresco", "weave": "hopsack", "price_cents": 189000},
    {"code": "LP-5512", "name": "Tasmanian Summer", "weave": "twill", "price_cents": 298000},
    {"code": "VB-2217", "name": "Perennial", "weave": "fresco", "price_cents": 168000}]})


def test_the_other_side_of_a_comparison_is_no_value_of_the_record():
    """"$1,300 more than the fresco" names the fresco to compare with: no weave of the
    Tasmanian Summer."""
    right = evidence(SUITINGS, "The Tasmanian Summer is the priciest at $2,980, $1,300 more "
                               "than the fresco.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(SUITINGS, "The Tasmanian Summer is a fresco at $2,980.")
    assert wrong.field_changed == "results 2 > weave: twill"


INSPECTIONS = json.dumps({"job": "EV charger install", "inspections": [
    {"kind": "rough-in", "date": "2025-10-14", "result": "pass"},
    {"kind": "final", "date": "2025-10-21", "result": "fail"},
    {"kind": "final", "date": "2025-10-28", "result": "pass"}]})


def test_another_records_value_said_negated_is_no_rival():
    """"didn't pass" says the October 21 inspection's ``fail``, not the others' ``pass``."""
    right = evidence(INSPECTIONS, "The first final inspection, on October 21, didn't pass.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(INSPECTIONS, "The first final inspection, on October 21, passed.")
    assert wrong.field_changed == "inspections 2 > result: fail"


LEAK = json.dumps({"call_out": "PL-3381", "issue": {"kind": "leak under sink",
                                                   "water_shut_off": True},
                   "arrival_window": "09:00-11:00"})


def test_off_after_the_keys_own_verb_is_the_keys():
    """"you shut off the main water" says ``water shut off: true``; "the water was not
    shut off" still says it otherwise."""
    right = evidence(LEAK, "You shut off the main water before the plumber came.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(LEAK, "The water was not shut off before the plumber came.")
    assert wrong.field_changed == "issue > water shut off: true"


CLOCK = json.dumps({"ticket": "RPR-417", "status": "awaiting_parts", "labor": [
    {"description": "Full movement cleaning", "hours": 4.5, "rate_cents_per_hour": 8500},
    {"description": "Rebush third wheel", "hours": 2.0, "rate_cents_per_hour": 8500}],
    "parts": [{"part": "suspension spring", "qty": 1, "unit_cost_cents": 1850}]})


def test_a_keys_total_in_hours_is_no_records_value():
    """"6.5 hours" of labor is the two lines' 4.5 and 2 hours added up (a span, read in
    minutes), no other value of the first line's."""
    right = evidence(CLOCK, "The labor estimate is 6.5 hours for a full cleaning plus "
                            "rebushing that wheel, which comes to $552.50 at $85 an hour.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(CLOCK, "The full movement cleaning is 5.5 hours of labor.")
    assert wrong.field_changed == "labor 1 > hours: 4.5"


TEMBO = json.dumps({"animal": {"id": "ZOO-EL-003", "name": "Tembo"}, "records": [
    {"date": "2025-01-06", "weight_kg": 5412, "recorded_by": "Rhoda Osei"},
    {"date": "2025-03-03", "weight_kg": 5475, "recorded_by": "Liam Porter"},
    {"date": "2025-03-31", "weight_kg": 5461, "recorded_by": "Rhoda Osei"},
    {"date": "2025-04-28", "weight_kg": 5503, "recorded_by": "Liam Porter"},
    {"date": "2025-05-26", "weight_kg": 5530, "recorded_by": "Rhoda Osei"}],
    "diet_changes": [{"date": "2025-04-07", "change": "Hay ration increased by 8 kg/day",
                      "ordered_by": "veterinary team"}]})


def test_a_change_said_as_gained_is_no_records_value():
    """"he has gained 69 kg from his March 31 reading" (5,530 - 5,461) gives no weight of
    the March 31 record, which the sentence's two dates name beside the diet change's
    (turns-au/1; 94b07ff read it as that record's weight)."""
    right = evidence(TEMBO, "The veterinary team increased his hay ration by 8 kg a day on "
                            "April 7, and over the two weigh-ins since then he has gained 69 "
                            "kg from his March 31 reading.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(TEMBO, "On March 31 he weighed 5,416 kg.")
    assert wrong.field_changed == "records 3 > weight kg: 5461"


DESKS = json.dumps({"airport": "BOS", "desks": [
    {"name": "Northway", "level": 1, "hours": {"open": "05:00", "close": "01:00"}},
    {"name": "ValuDrive", "level": 2, "hours": {"open": "06:00", "close": "21:00"}}]})


def test_open_until_is_the_closing_time():
    """"stays open until 1:00 AM" says ``close: 01:00``, not an opening time of 1:00 AM;
    a wrong one is read against the closing time (48fedfa read it against ``open``)."""
    right = evidence(DESKS, "Northway, down on Level 1, stays open until 1:00 AM.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(DESKS, "Northway, down on Level 1, stays open until 2:00 AM.")
    assert wrong.field_changed == "desks 1 > hours > close: 01:00"
    assert evidence(DESKS, "Northway opens at 7:00 AM.").field_changed \
        == "desks 1 > hours > open: 05:00"
