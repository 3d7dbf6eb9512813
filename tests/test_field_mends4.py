"""Fields read as the sentence means them, fourth round (guardrail.evidence.fields, .keys,
.spans, .arithmetic): a quantity said in two units of the field that holds it, a date a
stated span from the field's own date or the day after one the sentence states ("shipped
the next day"), a share of a part it counts in the records ("Seven of them succeeded, a
70% success rate"), a yes/no of a longer key said rightly beside a shorter one whose path
it names, and "the start of the year" as no ``start``.  Each was written from supported
sentences of the hand-written sets read as a changed or missing value (turns-di, -cv, -cq,
-bt, -ei, -cg and, measured first, -ep and -eq), and a count of things over the quantities
of their records ("six bottles", turns-ep); the contexts here are new.  One more stops
a wrong sentence: "still outstanding" of a record whose status is paid (turns-ep).  The wrong
sentence beside each right one is still a value changed or missing, and a value said in
the unit of a longer key whose extra path words the sentence names is still that key's
(turns-y).  The right ones fail on 3673953."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis


STOPPED = ("value_changed", "value_missing")
"""What the default policy redacts of a tool result's values."""


def evidence(context, sentence, before=""):
    return ContextEvidence.build([context], "").features(sentence, before)


WELL = json.dumps({"well_id": "W-7", "site": "Mill Farm", "completed": "2025-06-10",
                   "total_depth_m": 80, "static_water_level_m": 15.2,
                   "casing": {"material": "PVC", "diameter_mm": 125, "depth_m": 20}})


def test_a_depth_said_in_two_units_is_the_total_not_the_casing():
    """"80 meters, which is about 262 feet" is ``total depth m``; the casing's
    ``depth m`` (20) holds neither number."""
    right = evidence(WELL, "The well at Mill Farm was finished on June 10, 2025, at a depth "
                           "of 80 meters, which is about 262 feet.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(WELL, "The well at Mill Farm was finished on June 10, 2025, at a depth "
                           "of 95 meters, which is about 312 feet.")
    assert basis(wrong) in STOPPED, wrong.field_changed


BORE = json.dumps({"bore": "B-12", "owner": "Ada Quill", "total_depth_ft": 300,
                   "casing": {"material": "steel", "diameter_in": 6, "depth_ft": 50},
                   "static_water_level_ft": 41})


def test_a_depth_in_feet_restated_in_meters_is_the_total():
    right = evidence(BORE, "The hole reached a total depth of 300 feet, or about 91 meters.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(BORE, "The hole reached a total depth of 340 feet, or about 104 meters.")
    assert basis(wrong) in STOPPED, wrong.field_changed


BATCH = json.dumps({"recipe": "Oat bar", "oils": [{"name": "Olive oil", "weight_g": 600},
                                                  {"name": "Coconut oil", "weight_g": 200}],
                    "results": {"total_oils_g": 800, "lye_g": 110.4, "water_g": 242.9,
                                "batch_weight_g": 1153.3}, "cure_weeks": 6})


def test_a_weight_in_grams_restated_in_pounds():
    right = evidence(BATCH, "The finished batch will weigh about 1,153 grams, or roughly "
                            "2.5 pounds.")
    assert right.field_changed is None and basis(right) != "value_changed"


GUSTS = ("station_name: Pine Hollow\nwind_speed_mph: 14\nwind_gust_mph: 26\n"
         "nearest_station: Cedar Point, 4.1 mi\nnearest_station_wind_gust_mph: 33\n")


def test_a_value_of_a_longer_key_is_not_the_named_fields():
    """"gusting to 33 mph" at Pine Hollow is ``wind gust mph`` (26), not the nearest
    station's, whose extra path words the sentence does not name."""
    wrong = evidence(GUSTS, "Winds at Pine Hollow are 14 mph, gusting to 33 mph.")
    assert basis(wrong) in STOPPED, wrong.field_changed
    right = evidence(GUSTS, "Cedar Point, the nearest station, saw gusts to 33 mph.")
    assert basis(right) != "value_changed", right.field_changed


LOANS = json.dumps({"patron": "P-44", "requests": [
    {"request_id": "ILL-1", "title": "Harbour Lights", "format": "book",
     "status": "in_transit", "requested_on": "2025-03-01", "arrived_on": None},
    {"request_id": "ILL-2", "title": "Coastal Survey, vol. 4", "format": "article_scan",
     "status": "delivered_electronically", "requested_on": "2025-03-04",
     "arrived_on": "2025-03-06", "pages": 18}]})


def test_a_date_a_stated_span_after_the_fields_date():
    """"on March 6, two days after you asked for it": March 6 is ``arrived on``, and the
    date two days before is ``requested on``; no value of that field is changed."""
    right = evidence(LOANS, "Your article request was filled electronically on March 6, two "
                            "days after you asked for it.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(LOANS, "Your article request was filled electronically on March 9, two "
                            "days after you asked for it.")
    assert basis(wrong) in STOPPED, wrong.field_changed


PAWN = json.dumps({"loan": {"ticket_no": "PT-9", "opened": "2025-06-01",
                            "maturity_date": "2025-07-01", "grace_period_days": 30,
                            "status": "active"},
                   "terms": {"principal_cents": 15000, "extension_allowed": True}})


def test_a_grace_period_that_takes_you_to_a_date():
    right = evidence(PAWN, "There's a 30-day grace period after maturity, which takes you to "
                           "July 31, 2025.", "The loan matures on July 1, 2025.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(PAWN, "The loan matures on July 8, 2025, six days after it opened.")
    assert basis(wrong) in STOPPED, wrong.field_changed


OYSTERS = json.dumps({"lot": "OY-31", "harvested_at": "2025-09-08T06:30:00",
                      "shipped_date": "2025-09-09", "received_by": "Harbour Grill",
                      "received_date": "2025-09-10", "count": 300})


def test_a_date_said_the_next_day_after_one_the_sentence_states():
    """"harvested on September 8, shipped the next day" says ``shipped date`` (9); a
    date said in its place a day off is still a value changed."""
    right = evidence(OYSTERS, "They were harvested on Monday, September 8, 2025, shipped the "
                              "next day, and reached Harbour Grill on September 10.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(OYSTERS, "They were harvested on Monday, September 8, 2025, and shipped "
                              "on September 11.")
    assert basis(wrong) in STOPPED, wrong.field_changed
    late = evidence(OYSTERS, "They were harvested on Monday, September 8, 2025, shipped the "
                             "next day, and reached Harbour Grill on September 10.".replace(
                                 "September 8", "September 6"))
    assert basis(late) in STOPPED, late.field_changed


RUNS = json.dumps({"project": "api", "runs": [
    {"run_id": 501 + i, "duration_s": 300 + 7 * i, "status": s}
    for i, s in enumerate(["success", "failed", "success", "success", "canceled", "success",
                           "success", "failed", "success", "success"])]})


def test_a_share_of_a_part_of_the_records_or_of_a_stated_whole():
    """"Seven of them succeeded, a 70% success rate" over ten runs: the share of the
    part it counts in the records; a share they do not give is still missing."""
    right = evidence(RUNS, "Seven of them succeeded, a 70% success rate.")
    assert not right.missing_numbers and basis(right) == "words"
    wrong = evidence(RUNS, "Seven of them succeeded, a 60% success rate.")
    assert [n.value for n in wrong.missing_numbers] == [60.0]


VISION = json.dumps({"plan": "ClearView Basic", "benefits": {
    "exam": {"copay_cents": 1500, "last_used": "2024-09-02"},
    "contact_lens_fitting": {"covered": True, "copay_cents": 4000},
    "lenses": {"single_vision_copay_cents": 2000, "progressive_covered": False}}})


def test_a_yes_no_of_a_longer_key_the_sentence_says_rightly():
    """"progressive lenses aren't covered" says ``progressive covered: false``; the
    contact lens fitting's ``covered`` (its path word "lens" named) is not said otherwise.
    "progressive lenses are covered" is still a value changed."""
    right = evidence(VISION, "Single-vision lenses have a $20 copay, but progressive lenses "
                             "aren't covered.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(VISION, "Single-vision lenses have a $20 copay, and progressive lenses "
                             "are covered.")
    assert wrong.field_changed == "benefits > lenses > progressive covered: false"


FUND = json.dumps({"account": "PX-1", "period": {"start": "2025-01-01", "end": "2025-06-30"},
                   "balances": {"beginning_cents": 5012000, "ending_cents": 5230050}})


def test_the_start_of_the_year_names_no_start_field():
    """"from $50,120 at the start of the year to $52,300.50 on June 30" gives June 30 to
    no ``start``; a start said as June 30 is still a value changed."""
    right = evidence(FUND, "Your account grew from $50,120 at the start of the year to "
                           "$52,300.50 on June 30, 2025.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(FUND, "The statement period started on June 30, 2025.")
    assert basis(wrong) == "value_changed", wrong.field_changed


PARCELS = json.dumps({"owner": "Alder LLC", "parcels": [
    {"address": "4 Ferry Ln", "amount_due_cents": 210000, "status": "delinquent",
     "penalty_cents": 21000},
    {"address": "9 Ferry Ln", "amount_due_cents": 185000, "status": "paid",
     "paid_date": "2025-03-02", "penalty_cents": 0}]})


def test_still_outstanding_of_a_paid_record_is_a_status_changed():
    """"9 Ferry Ln is still outstanding" says the opposite of ``status: paid``; said of
    the delinquent parcel, or after an amount, it changes nothing."""
    wrong = evidence(PARCELS, "9 Ferry Ln is also still outstanding, though no penalty has "
                              "been added yet.")
    assert wrong.field_changed == "parcels 2 > status: paid"
    right = evidence(PARCELS, "4 Ferry Ln is still outstanding, with a $210 penalty.")
    assert right.field_changed is None
    assert evidence(PARCELS, "Together that is $2,310 outstanding.").field_changed is None


WINES = json.dumps({"member": "WC-7", "shipment": {"ship_date": "2025-05-06", "bottles": [
    {"wine": "Ridge Pinot Noir", "qty": 3, "list_price_cents": 4200},
    {"wine": "Hill Syrah", "qty": 1, "list_price_cents": 5100},
    {"wine": "Creek Riesling", "qty": 2, "list_price_cents": 2300}]}})


def test_a_count_of_things_is_the_total_of_the_key_counting_them():
    """"six bottles" over three ``bottles`` records whose ``qty`` add up to six; a count
    the quantities do not give is still read against the list."""
    right = evidence(WINES, "Your next shipment has six bottles and ships on May 6, 2025.")
    assert not right.missing_numbers and basis(right) == "words"
    wrong = evidence(WINES, "Your next shipment has five bottles and ships on May 6, 2025.")
    assert [n.value for n in wrong.missing_numbers] == [5.0]
