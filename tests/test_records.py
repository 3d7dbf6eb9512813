"""guardrail.evidence.records: which records of a tool result a sentence speaks of."""

import json
from pathlib import Path

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.numbering import numbered
from guardrail.evidence.render import render

ROOMS = {"building": "HQ-2", "rooms": [
    {"room": "Cedar", "capacity": 8, "people_count": 6, "co2_ppm": 1120},
    {"room": "Birch", "capacity": 4, "people_count": 0, "co2_ppm": 480},
    {"room": "Aspen", "capacity": 12, "people_count": 0, "co2_ppm": 510}],
    "co2_alert_threshold_ppm": 1000, "approver": "Kevin Brooks"}


def _records(value) -> list[tuple[int, str]]:
    lines = [x.text for x in render(json.dumps(value)).lines]
    return list(zip(numbered(lines, 0)[0], lines))


def test_a_line_past_the_last_record_stands_outside_every_record():
    got = _records(ROOMS)
    assert got[0] == (-1, "building: HQ-2")
    assert (2, "rooms 3 > co2 ppm: 510") in got
    assert got[-2:] == [(-1, "co2 alert threshold ppm: 1000"), (-1, "approver: Kevin Brooks")]


def test_nested_records_render_their_path_once_and_close_where_their_lines_end():
    got = _records({"a": {"items": [{"x": 1, "y": [{"z": 2}, {"z": 3}], "w": 7}, {"x": 4}]},
                    "total": 5})
    assert got == [(0, "a > items 1 of 2:"), (0, "a > items 1 > x: 1"),
                   (1, "a > items 1 > y 1 of 2:"), (1, "a > items 1 > y 1 > z: 2"),
                   (2, "a > items 1 > y 2 of 2:"), (2, "a > items 1 > y 2 > z: 3"),
                   (0, "a > items 1 > w: 7"),  # back in its own record after the nested ones
                   (3, "a > items 2 of 2:"), (3, "a > items 2 > x: 4"), (-1, "total: 5")]
    assert _records([[1, 2], [3, 4]]) == [(0, "item 1 of 2:"), (0, "item 1: 1"), (0, "item 1: 2"),
                                          (1, "item 2 of 2:"), (1, "item 2: 3"), (1, "item 2: 4")]


def test_a_value_outside_the_records_is_no_other_records_value():
    ev = ContextEvidence.build([json.dumps(ROOMS)], "")
    f = ev.features("Cedar has six people in it and its CO2 is at 1,120 ppm, above the 1,000 "
                    "ppm alert threshold.")
    assert f.record_gap == 0.0 and f.field_changed is None
    assert ev.features("Cedar has 0 people in it.").field_changed is not None  # Birch's


MENU = {"items": [
    {"name": "Miso-glazed salmon", "station": "grill", "price_cents": 1150, "sold_out": False},
    {"name": "Chickpea curry", "station": "global", "price_cents": 875, "sold_out": False},
    {"name": "Turkey club", "station": "deli", "price_cents": 925, "sold_out": True}]}


def test_a_generic_subject_that_singles_out_a_record_is_about_that_record():
    ev = ContextEvidence.build([json.dumps(MENU)], "")
    before = "- Chickpea curry at the global station is $8.75.\n"
    assert ev.features("- The turkey club at the deli is sold out.", before).field_changed is None
    # a subject that every record shares still speaks of the one named before it
    assert ev.features("- The dish is sold out.", before).field_changed is not None


ASSETS = {"assigned_to": "rachel@example.com", "assets": [
    {"asset_tag": "IT-LT-00931", "type": "laptop", "model": "ThinkPad X1 Carbon",
     "warranty_end": "2026-04-10"},
    {"asset_tag": "IT-MN-01477", "type": "monitor", "model": "Dell U2723QE",
     "warranty_end": "2025-09-29"}]}


def test_a_possessive_naming_a_record_is_about_it_and_it_names_a_value():
    ev = ContextEvidence.build([json.dumps(ASSETS)], "")
    before = "- Her ThinkPad X1 Carbon laptop is covered until April 10, 2026.\n"
    f = ev.features("- Her Dell U2723QE monitor (IT-MN-01477) has warranty coverage "
                    "through September 29, 2025.", before)
    assert f.field_changed is None and f.record_gap == 0.0 and not f.missing_numbers
    # "It ... Dell U2723QE": the laptop named before, given the monitor's model
    assert ev.features("It is a Dell U2723QE.", before).record_gap > 0.0


FOLDERS = {"drive": "Marketing Shared", "top_folders": [
    {"path": "/Campaigns/2025", "used_gb": 612.8, "owner": "campaigns-team"},
    {"path": "/Video/Raw", "used_gb": 488.1, "owner": "video-team"},
    {"path": "/Brand/Assets", "used_gb": 96.3, "owner": "brand-team"}]}


def test_records_named_one_by_one_are_spoken_of_together():
    ev = ContextEvidence.build([json.dumps(FOLDERS)], "")
    f = ev.features("The /Campaigns/2025 folder takes up 612.8 GB, and /Video/Raw accounts "
                    "for another 488.1 GB.")
    assert f.record_gap == 0.0 and f.field_changed is None
    # a value of neither: /Brand/Assets's
    assert ev.features("The /Campaigns/2025 folder takes up 612.8 GB, and /Video/Raw "
                       "accounts for another 96.3 GB.").record_gap > 0.0


BADGES = {"employee": {"name": "Jordan Ellis", "badge_id": "B-20417"},
          "events": [{"door": "Main Lobby", "result": "granted"},
                     {"door": "Server Room B", "result": "denied"},
                     {"door": "Lab 4", "result": "granted"}]}


def test_a_name_outside_every_record_is_no_rival_value():
    ev = ContextEvidence.build([json.dumps(BADGES)], "")
    assert ev.features("Jordan Ellis (badge B-20417) has three badge events.").field_changed \
        is None



CARPOOL = {"group": "Maple Ridge Carpool", "days": [
    {"date": "2025-09-15", "driver": "Priya", "depart": "07:25"},
    {"date": "2025-09-17", "driver": "Priya", "depart": "07:40"},
    {"date": "2025-09-18", "driver": "Lena", "depart": "07:25"}],
    "vehicle": {"Priya": "Silver Honda Odyssey", "Lena": "White Toyota RAV4"}}


def test_a_weekday_names_the_record_dated_on_it():
    ev = ContextEvidence.build([json.dumps(CARPOOL)], "")
    assert ev.features("- Wednesday, Priya drives with a later 7:40 AM departure.") \
        .field_changed is None
    # Wednesday's driver is Priya: Lena drives on Thursday
    assert ev.features("- Wednesday, Lena drives with a later 7:40 AM departure.") \
        .field_changed == "days 2 > driver: Priya"


LOYALTY = {"member": {"name": "Jordan Avery", "tier": "gold"},
           "points": {"balance": 18450, "pending": 1200, "expiring": [
               {"amount": 3000, "expires_on": "2025-12-31"},
               {"amount": 2500, "expires_on": "2026-03-31"}]},
           "next_tier": {"name": "platinum", "points_needed": 6550},
           "rewards": [{"name": "$25 store credit", "cost": 2500},
                       {"name": "Compact blender", "cost": 20000},
                       {"name": "Canvas tote", "cost": 1500}]}


def test_a_demonstrative_whose_words_single_out_a_record_is_about_it():
    ev = ContextEvidence.build([json.dumps(LOYALTY)], "")
    before = "You've got 18,450 points, with another 1,200 still pending. "
    f = ev.features("That's enough for the canvas tote, but the compact blender needs 20,000, "
                    "so you're 1,550 points short.", before)
    assert f.missing_numbers == ()
    wrong = ev.features("That's enough for the canvas tote, but the compact blender needs "
                        "20,000, so you're 1,450 points short.", before)
    assert [n.value for n in wrong.missing_numbers] == [1450.0]


LAG = {"group": "billing-invoicer", "coordinator": {"id": 2}, "partitions": [
    {"partition": 0, "lag": 106, "consumer_id": "invoicer-7f9c-1"},
    {"partition": 1, "lag": 76, "consumer_id": "invoicer-7f9c-2"},
    {"partition": 2, "lag": 1701664, "consumer_id": "invoicer-7f9c-3"},
    {"partition": 3, "lag": 0, "consumer_id": "invoicer-7f9c-1"}]}


def test_a_key_and_its_value_name_a_record_and_that_and_a_noun_refer_to_it():
    ev = ContextEvidence.build([json.dumps(LAG)], "")
    before = "Partition 2 is the problem: it is far behind. "
    ok = ev.features("That partition is assigned to invoicer-7f9c-3.", before)
    assert ok.field_changed is None and ok.record_gap == 0.0
    # "Partition 2" names the record whose ``partition`` is 2, not every partition
    wrong = ev.features("That partition is assigned to invoicer-7f9c-1, which also handles "
                        "partition 0.", before)
    assert wrong.field_changed is not None or wrong.record_gap > 0.0


GRADES = {"student": "Maya", "courses": [
    {"course": "Chemistry", "grade": "B+", "missing_assignments": 0},
    {"course": "World History", "grade": "A", "missing_assignments": 1}], "absences": 2}


def test_she_is_a_person_and_the_record_is_the_one_her_sentence_names():
    ev = ContextEvidence.build([json.dumps(GRADES)], "")
    before = "Maya has a B+ in Chemistry. "
    f = ev.features("She also has one missing assignment in World History.", before)
    assert f.field_changed is None and f.record_gap == 0.0


LABS = {"panel": "CMP", "results": [
    {"analyte": "Glucose", "value": 112, "unit": "mg/dL", "flag": "H"},
    {"analyte": "BUN", "value": 14, "unit": "mg/dL", "flag": None},
    {"analyte": "Creatinine", "value": 0.91, "unit": "mg/dL", "flag": None},
    {"analyte": "eGFR", "value": 81, "unit": "mL/min", "flag": None},
    {"analyte": "Potassium", "value": 5.4, "unit": "mmol/L", "flag": "H"}]}


def test_lowercase_labels_of_two_records_make_a_sentence_about_both():
    """"creatinine" and "eGFR" are the labels (``analyte``) of two records: each value
    is its own record's, no other record's."""
    ev = ContextEvidence.build([json.dumps(LABS)], "")
    before = "Your potassium was 5.4 mmol/L, above the limit. "
    f = ev.features("Your kidney markers look normal, with creatinine at 0.91 mg/dL and an "
                    "eGFR of 81.", before)
    assert f.record_gap == 0.0 and not f.missing_numbers
    # the values swapped between the two records still lie outside them
    swapped = ev.features("Your kidney markers look normal, with creatinine at 14 mg/dL and "
                          "an eGFR of 81.", before)
    assert swapped.record_gap > 0.0
    # a word of a value that is no label (``unit``: several records share "mg/dL") names none
    assert ev._where._labels == frozenset({"analyte"})


LOCKS = {"devices": [
    {"name": "front door", "kind": "lock", "battery_pct": 18},
    {"name": "back door", "kind": "lock", "battery_pct": 64},
    {"name": "porch light", "kind": "light", "brightness_pct": 70},
    {"name": "hall sensor", "kind": "motion", "battery_pct": 91}]}


def test_a_value_said_of_the_other_record_named_in_the_sentence_lies_outside_its_record():
    ev = ContextEvidence.build([json.dumps(LOCKS)], "")
    right = ev.features("The back door lock's battery is at 64%, while the front door's is "
                        "down to 18%.")
    swapped = ev.features("The back door lock's battery is at 18%, while the front door's is "
                          "down to 64%.")
    assert right.record_gap == 0.0 and swapped.record_gap > 0.0
    # a value before the name it belongs to, and the second value of a comparison
    assert ev.features("Battery ranges from 18% on the front door up to 64% on the back "
                       "door.").record_gap == 0.0
    assert ev.features("The front door is lower, at 18% against 64% on the back door."
                       ).record_gap == 0.0


def test_what_a_sentence_says_a_thing_is_not_names_no_record():
    """"going to Threads of Faith, not Eastern Trade Routes" (the tool result of
    turns-az/17): the other show's name, said to be what the tankard is not, lies in no
    record of its own."""
    lab = ContextEvidence.build([(Path(__file__).parent / "data" / "conservation.json")
                                 .read_text()])
    said = "The pewter tankard is already finished, but it is going to {}."
    assert lab.features(said.format("Threads of Faith, not Eastern Trade Routes")
                        ).record_gap == 0.0
    assert lab.features(said.format("Eastern Trade Routes")).record_gap > 0.0


RIDE = {"ride": {"name": "Sky Viper"}, "checks": [
    {"date": "2025-06-02", "max_wind_mph": 14, "weather_closure": False},
    {"date": "2025-06-05", "max_wind_mph": 41, "weather_closure": True},
    {"date": "2025-06-06", "max_wind_mph": 22, "weather_closure": False}]}


def test_a_pronoun_whose_sentence_dates_one_record_is_about_that_record():
    ev = ContextEvidence.build([json.dumps(RIDE)], "")
    before = "Sky Viper opened on two of the three days from Monday, June 2 to Friday, June 6. "
    ok = ev.features("It stayed closed for weather on Thursday, June 5, when wind reached "
                     "41 mph.", before)
    assert ok.field_changed is None and ok.record_gap == 0.0
    # the day after's wind, said of June 5, is still another record's value
    wrong = ev.features("It stayed closed for weather on Thursday, June 5, when wind reached "
                        "22 mph.", before)
    assert wrong.field_changed is not None or wrong.record_gap > 0.0


def test_a_nested_record_stands_in_the_record_it_is_nested_in():
    lines = [x.text for x in render(json.dumps(
        {"a": {"items": [{"x": 1, "y": [{"z": 2}, {"z": 3}], "w": 7}, {"x": 4}]}})).lines]
    assert numbered(lines, 0)[2] == {1: 0, 2: 0}  # the y records stand in items 1


MACHINES = {"network": "Metrolink South", "machines": [
    {"tvm_id": "TVM-0412", "stop": "St Peter's Square", "in_service": True, "open_faults": []},
    {"tvm_id": "TVM-0618", "stop": "Cornbrook", "in_service": True, "open_faults": [
        {"code": "E502", "desc": "card reader offline",
         "reported": "2025-11-18T22:40:00+00:00"}]},
    {"tvm_id": "TVM-0619", "stop": "Cornbrook", "in_service": False, "open_faults": []}]}


def test_a_sentence_about_a_nested_record_reads_the_fields_of_the_record_it_stands_in():
    ev = ContextEvidence.build([json.dumps(MACHINES)], "")
    # about the fault (its words and time), and so about the machine, which is in service
    said = ev.features("TVM-0618 at Cornbrook is out of service because its card reader went "
                       "offline at 10:40 PM on November 18.")
    assert said.field_changed == "machines 2 > in service: true"
    kept = ev.features("TVM-0618 at Cornbrook is still in service, although its card reader "
                       "went offline at 10:40 PM on November 18.")
    assert kept.field_changed is None


GRID = """| Slot | Day | Start | End | Program | Presenter |
|---|---|---|---|---|---|
| 1 | Monday | 19:00 | 21:00 | Folk Roots | Declan Fry |
| 2 | Wednesday | 20:00 | 22:00 | Basement Jazz | Otis Kamara |
| 3 | Thursday | 13:00 | 14:00 | Council Matters | Ruth Ellery |
"""


def test_a_row_given_another_rows_weekday_is_changed():
    ev = ContextEvidence.build([GRID], "")
    moved = ev.features("Basement Jazz, hosted by Otis Kamara, goes to air on Thursday from "
                        "8:00 PM to 10:00 PM.")
    assert moved.field_changed is not None and "Wednesday" in moved.field_changed
    for kept in ("Basement Jazz, hosted by Otis Kamara, goes to air on Wednesday from 8:00 PM "
                 "to 10:00 PM.",
                 "Basement Jazz does not go to air on Thursday.",  # negated
                 "Basement Jazz airs on Wednesday, and Council Matters on Thursday."):  # both
        assert ev.features(kept).field_changed is None, kept
