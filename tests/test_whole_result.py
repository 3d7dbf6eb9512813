"""Readings of a tool result as a whole, beside its records: a share of two of its own
numbers outside every record (arithmetic.derived), a key's total where its mean is far
below the value (totals.totalled), a yes/no key of one word said of a thing another key
of its record names (flags._of_another), a record's date moved by the result's own days
(spans.shifted_dates), and a yes/no said of a counted part of the records, read against
all of them (flags.flag_said, group_states._counted_apart)."""

import json

from evidence_of import basis_of as b, missing_values

from guardrail.evidence.features import ContextEvidence

POD = {"phase": "Running", "ready": True, "restarts": 0, "memory_mb": 400, "cpu_millicores": 230}
DEPLOYMENT = json.dumps({
    "metadata": {"name": "checkout-api", "generation": 14},
    "spec": {"replicas": 6, "max_surge": 1, "limits": {"memory_mb": 512, "cpu_millicores": 500}},
    "status": {"ready_replicas": 5, "updated_replicas": 6},
    "pods": [dict(POD, name=f"checkout-api-{i}", restarts=i, memory_mb=398 + 7 * i,
                  cpu_millicores=212 + 9 * i, port=8080, uptime_s=3600 * i + 120,
                  disk_mb=1000 + i)
             for i in range(6)]})
PLAYLIST = json.dumps({
    "playlist": {"name": "Sunday Slow Burn", "followers": 1284},
    "tracks": [{"position": i + 1, "title": t, "duration_s": s} for i, (t, s) in enumerate(
        [("Low Tide", 247), ("Paper Lanterns", 212), ("Cinder Road", 305),
         ("Velvet Hours", 198), ("North of Quiet", 263), ("Glasshouse", 231)])]})
SLOTS = json.dumps({"suggested_slots": [
    {"start": "2025-11-13T11:30:00", "all_available": True, "rooms_free": ["Spree"]},
    {"start": "2025-11-13T17:00:00", "all_available": True, "rooms_free": []}]})
PRIZES = json.dumps({"payouts": [
    {"pattern": "single line", "winner": "Pat Reilly", "prize_cents": 2500, "paid": True},
    {"pattern": "four corners", "winner": "Jim Okafor", "prize_cents": 3000, "paid": False,
     "method": "check"}]})
FLAG = json.dumps({"flag": {"key": "new-checkout", "stale": False, "enabled": True}})
HOTEL = json.dumps({"rooms": [{"name": "Garden Suite", "wifi": True, "available": False},
                              {"name": "Sea View", "wifi": True, "available": True}]})


def test_a_share_of_two_numbers_outside_the_records():
    assert b(DEPLOYMENT, "The deployment is running at about 83% of its intended capacity.") \
        not in ("value_missing", "value_changed")
    assert b(DEPLOYMENT, "The deployment is running at about 71% of its intended capacity.") \
        == "value_missing"


def test_a_total_said_roughly_where_the_mean_is_far_below_it():
    # 1,456 seconds over six tracks: 24.3 minutes (their mean is 4 minutes)
    assert b(PLAYLIST, "Played straight through, it runs about 24 minutes.") \
        not in ("value_missing", "value_changed")
    assert b(PLAYLIST, "Played straight through, it runs about 27 minutes.") == "value_missing"


def test_a_one_word_flag_said_of_a_thing_another_key_names():
    assert b(SLOTS, "The 5:00 PM slot works for everyone, but no meeting room is available.") \
        != "value_changed"
    assert b(HOTEL, "Wi-Fi is available in the Garden Suite.") != "value_changed"
    # said of the record itself, the flag is still read
    assert b(HOTEL, "The Garden Suite is available.") == "value_changed"
    assert b(SLOTS, "At 5:00 PM not everyone is available.") == "value_changed"
    assert b(PRIZES, "Jim Okafor's $30.00 four corners prize has been paid by check.") \
        == "value_changed"
    assert b(FLAG, "The flag is marked as stale.") == "value_changed"


HATCHERY = json.dumps({"hatchery": "Willow Creek", "standard_incubation_days": 21, "batches": [
    {"batch_id": "WC-B301", "breed": "Rhode Island Red", "set_date": "2025-01-24"},
    {"batch_id": "WC-B303", "breed": "Plymouth Rock", "set_date": "2025-02-03"}]})
HUTS = json.dumps({"site": "Northbay Sands", "results": [
    {"name": "Driftwood", "available": True, "max_occupants": 8, "wheelchair_accessible": True},
    {"name": "Marram", "available": False, "max_occupants": 6, "wheelchair_accessible": False},
    {"name": "Cowrie", "available": True, "max_occupants": 6, "wheelchair_accessible": True},
    {"name": "Limpet", "available": True, "max_occupants": 4, "wheelchair_accessible": False}]})


def test_a_records_date_moved_by_the_results_own_days():
    assert b(HATCHERY, "The Plymouth Rock batch should hatch around February 24.") \
        not in ("value_missing", "value_changed")
    assert b(HATCHERY, "The Plymouth Rock batch should hatch around February 26.") \
        == "value_missing"


def test_a_flag_said_of_a_counted_part_of_the_records_is_no_ones():
    assert b(HUTS, "Three of the four huts are free, and two of them fit a group of six with "
                   "wheelchair access.") != "value_changed"
    # said of one record, it is still read
    assert b(HUTS, "Marram fits a group of six with wheelchair access.") == "value_changed"


GCPS = json.dumps({"mission": "DS-2291", "ground_control_points": [
    {"gcp_id": f"GCP-{i}", "surveyed": i != 4} for i in range(1, 7)]})


def test_a_counted_part_is_checked_against_the_records_not_one_of_them():
    assert b(GCPS, "Four of the six ground control points have been surveyed, and GCP-4 is "
                   "due to be surveyed on October 2.") == "value_changed"
    assert b(GCPS, "Five of the six ground control points have been surveyed, and GCP-4 is "
                   "due to be surveyed on October 2.") != "value_changed"


TUGS = json.dumps({"port": "Halvern", "requested_job": {"tugs_required": 2, "min_pull_t": 90},
                   "tugs": [{"name": n, "bollard_pull_t": t, "free_all_window": f}
                            for n, t, f in [("Svea Bollard", 65, False),
                                            ("Harbour Wren", 55, True), ("Kittiwake", 42, True),
                                            ("Ormond", 70, False), ("Tern", 38, True)]]})
DEFERRED = json.dumps({"tail": "N418QX", "deferred_items": [
    {"item": "Logo light inoperative", "category": "C", "deferred_on": "2025-05-06",
     "expires": "2025-05-16"},
    {"item": "Seat 7C recline inoperative", "category": "D", "deferred_on": "2025-04-22",
     "expires": "2025-08-20"}]})


def test_some_of_the_records_a_sentence_names_added_up():
    sentence = ("Harbour Wren and Kittiwake together give {} tonnes, which is enough, while "
                "Kittiwake and Tern reach only {} tonnes.")
    assert b(TUGS, sentence.format(97, 80)) not in ("value_missing", "value_changed")
    assert b(TUGS, sentence.format(97, 84)) in ("value_missing", "value_worked_out")


def test_a_date_a_state_lasts_until_is_no_date_it_began():
    assert b(DEFERRED, "The seat 7C recline fault is category D and can stay deferred until "
                       "August 20.") != "value_changed"
    assert b(DEFERRED, "The seat 7C recline fault was deferred on April 25.") == "value_changed"


LAUNDRY = json.dumps({"store": "SpinCity", "as_of": "2025-07-19T10:20:00-04:00", "faulted": [
    {"id": "W-04", "error": "drain timeout", "since": "2025-07-18T16:05:00-04:00"},
    {"id": "W-09", "error": "door lock failure", "since": "2025-07-19T08:47:00-04:00"},
    {"id": "D-02", "error": "heater limit tripped", "since": "2025-07-17T19:30:00-04:00"}]})


def test_the_time_from_a_records_moment_to_the_results_as_of():
    # 38 hours 50 minutes
    for said in ("almost 39 hours", "over 38 hours", "39 hours"):
        assert b(LAUNDRY, f"Dryer D-02 has now been down for {said}.") == "words", said
    for said in ("almost 38 hours", "almost 45 hours"):
        assert b(LAUNDRY, f"Dryer D-02 has now been down for {said}.") == "value_missing", said


SCOOTERS = json.dumps({"fleet": "ZipGo Midtown", "scooters": [
    {"id": f"ZG-{i}", "battery_pct": p, "range_km": round(p * 0.4, 1)}
    for i, p in enumerate([88, 14, 9, 47, 19, 72, 63, 22])]})


def test_a_share_averaged_over_a_key_of_shares():
    # 334 / 8 = 41.75
    assert b(SCOOTERS, "Across the fleet, the average charge is 41.8%.") == "words"
    assert b(SCOOTERS, "Across the fleet, the average charge is 43.5%.") != "words"


def test_a_records_operands_are_its_values_not_its_heading_or_index():
    from guardrail.evidence.operands import record_operands
    ev = ContextEvidence.build([TUGS])
    ops = record_operands(ev.lines, ev._records)
    assert ops[2] == (42.0,)  # not "tugs 3 of 5:", nor the 3 of "tugs 3 > ..."
    assert ops[-1] == (2.0, 90.0)


def test_a_share_of_two_stated_values_added():
    prizes = json.dumps({"event": "Spring Major", "prize_pool_usd": 250000,
                         "payouts": [{"place": "champion", "usd": 100000},
                                     {"place": "second", "usd": 50000}]})
    sentence = ("The champion takes $100,000 of the $250,000 prize pool and second place gets "
                "$50,000, so the top two together account for {}% of it.")
    ev = ContextEvidence.build([prizes])
    assert ev.features(sentence.format(60)).missing_numbers == ()
    assert [n.value for n in ev.features(sentence.format(65)).missing_numbers] == [65.0]


SOLAR = json.dumps({"project": "Millbrook", "production_kwh": 612, "utility_usage_kwh": 845,
                    "performance_vs_forecast_pct": 103, "battery_pct": 97})


def test_a_share_against_a_whole_said_as_how_far_from_it():
    assert b(SOLAR, "Output came in 3% above the project's forecast.") == "words"
    assert b(SOLAR, "Output came in 4% above the project's forecast.") == "value_missing"


BUGGIES = json.dumps({"club": "Brackenridge", "usage": [
    {"buggy_type": "lithium", "units": 12, "rounds": 1104, "distance_km": 7286},
    {"buggy_type": "petrol", "units": 4, "rounds": 296, "distance_km": 1954}]})
SHIFT = json.dumps({"depot": "Northside", "couriers": [
    {"id": "K-11", "deliveries": 23, "distance_km": 61.4, "earnings_cents": 18400},
    {"id": "K-12", "deliveries": 19, "distance_km": 54.0, "earnings_cents": 15200}]})


def test_a_value_per_a_unit_or_a_thing_each_record_counts():
    missing = missing_values
    # "each" as "per"; a unit named names the keys in it; a result of no records
    share = json.dumps({"share_kw": 4.5, "production_kwh": 612})
    assert missing(share, "Each kilowatt of your share produced about 136 kWh.") == []
    assert missing(share, "Each kilowatt of your share produced about 163 kWh.") == [163.0]
    # the unit written after the value: kilometres are no miles
    assert missing(BUGGIES, "Each round of the lithium buggies covered about 6.6 km.") == []
    assert missing(BUGGIES, "Each round of the lithium buggies covered about 6.6 miles.") \
        == [6.6]
    # a word every key of the record holds names the record, not a key to divide by
    assert missing(SHIFT, "Ada Okafor earned $8 per delivery.") == []


def test_the_days_of_a_period_both_ends_counted():
    bill = json.dumps({"subscriber": "CS-20931", "production_kwh": 612, "billing_period": {
        "start": "2025-06-01", "end": "2025-06-30"}})
    assert b(bill, "Your share produced 612 kWh over the 30 days.") == "words"
    assert b(bill, "Your share produced 612 kWh over the 31 days.") in ("value_missing",
                                                                       "value_worked_out")
