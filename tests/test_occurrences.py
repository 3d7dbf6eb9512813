"""Counts of something other than records (occurrences.py): "N different things" against
the distinct values of the key naming them, "X did it N times" against the records
holding X; a unit said of a weighed value (units.py); a date another record holds in a
sentence naming one record by its id (records.py); a hedged value written to many
digits (stored.hedge)."""

import json

from evidence_of import basis_of as b

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.stored import hedge
from guardrail.evidence.values import numbers

PUMPS = json.dumps({"station": "Eastfield", "week": "2025-03-10", "fills": [
    {"fill_id": "F-1", "truck": "TR-11", "litres": 410, "paid": True},
    {"fill_id": "F-2", "truck": "TR-18", "litres": 380, "paid": True},
    {"fill_id": "F-3", "truck": "TR-11", "litres": 402, "paid": False},
    {"fill_id": "F-4", "truck": "TR-25", "litres": 395, "paid": True},
    {"fill_id": "F-5", "truck": "TR-11", "litres": 418, "paid": True},
    {"fill_id": "F-6", "truck": "TR-18", "litres": 377, "paid": True}]})
ALARMS = "\n".join([
    "alarm_id,sensor,started,level",
    "AL-1,GH-3,2025-02-01T08:00,high", "AL-2,GH-3,2025-02-02T09:10,high",
    "AL-3,GH-7,2025-02-02T11:30,low", "AL-4,GH-9,2025-02-04T16:45,high"])
CRATES = json.dumps({"order": "C-7", "crate_count": 4, "gross_weight_kg": 12.6,
                     "insured_value_gbp": 900})
REPAIRS = json.dumps({"site": "North Pier", "faults": [
    {"fault": "PF-2", "kind": "cracked plank", "found": "2025-04-02", "fixed": "2025-04-20"},
    {"fault": "PF-5", "kind": "loose rail", "found": "2025-04-09", "fixed": "2025-04-30"},
    {"fault": "PF-8", "kind": "rusted bolt", "found": "2025-04-15", "fixed": None}]})
OUTPUT = json.dumps({"plant": "Hillcrest Solar", "capacity_kw": 2400,
                     "output_mwh": {"2023": 3120.4, "2024": 2987.9},
                     "forecast_2025_mwh": 3050})


def test_a_count_of_different_things_is_read_against_the_values_of_their_key():
    assert b(PUMPS, "Five different trucks filled up at Eastfield that week.") \
        == "value_changed"
    assert b(PUMPS, "Three different trucks filled up at Eastfield that week.") == "words"
    # fewer may be a part of them: no verdict from the count
    assert b(PUMPS, "Two different trucks paid for their fuel on the first day.") \
        != "value_changed"
    ev = ContextEvidence.build([PUMPS]).features("Five different trucks filled up.")
    assert ev.line_changed == "fills > truck: 3 different values"


def test_a_name_said_to_occur_more_often_than_records_hold_it_is_changed():
    assert b(ALARMS, "GH-7 and GH-9 each alarmed twice.") == "value_changed"
    assert b(ALARMS, "GH-3 alarmed twice, both times at a high level.") != "value_changed"
    assert b(ALARMS, "GH-7 and GH-9 alarmed twice between them.") != "value_changed"
    # a comparison, not a count of records
    ev = ContextEvidence.build([ALARMS])
    assert ev._counts.changed("GH-9 ran twice as hot as GH-7.", []) is None
    assert ev._counts.changed("GH-9 ran three times hotter than GH-7.", []) is None
    assert ev._counts.changed("GH-9 alarmed twice.", []) == "sensor: GH-9 (1 record)"
    assert b(ALARMS, "GH-9 alarmed three times.") == "value_changed"


def test_a_weighed_value_in_pounds_is_a_mass_and_a_changed_unit():
    assert b(CRATES, "The order weighs 12.6 pounds in total.") == "value_changed"
    assert b(CRATES, "The order weighs 12.6 kg in total.") == "words"
    assert b(CRATES, "The order weighs about 27.8 pounds in total.") == "words"
    # "pounds" of money stays money: converted or not, never a changed unit
    assert b(CRATES, "It is insured for 900 pounds.") != "value_changed"


def test_another_records_date_in_a_sentence_naming_one_record_by_its_id():
    assert b(REPAIRS, "PF-5 was found on April 2 and fixed on April 30.") != "words"
    assert b(REPAIRS, "PF-5 was found on April 9 and fixed on April 30.") == "words"
    # two records related by the sentence: it speaks of both
    assert b(REPAIRS, "PF-5 was found on April 9, a week after PF-2 on April 2.") == "words"
    assert b(REPAIRS, "PF-5 was found on April 9, a week after the plank on April 2.") \
        == "words"


def test_a_hedged_value_written_to_many_digits_lies_close_to_what_it_rounds():
    assert [hedge(n) for n in numbers("about 1,100 and about 4.5 and about 1,240 and "
                                      "about 1,208 and about 1,200")] \
        == [0.1, 0.1, 0.05, 0.02, 0.1]
    # 2987.9 / 2400 = 1.245 MWh a kW; "about 1,245 MWh" is near no stored value
    assert b(OUTPUT, "Last year's output came to about 3,000 MWh.") == "words"
    assert b(OUTPUT, "That is about 1,245 MWh of output for each kilowatt.") \
        in ("value_missing", "value_worked_out")
    assert b(OUTPUT, "The plant produced about 2,990 MWh in 2024.") == "words"


PODS = json.dumps({"namespace": "batch", "pods": [
    {"name": "etl-runner-1", "memory_mib": 6100, "memory_limit_mib": 8192},
    {"name": "etl-runner-2", "memory_mib": 7700, "memory_limit_mib": 8192},
    {"name": "scheduler-9c8d", "memory_mib": 1843, "memory_limit_mib": 2048}]})


def test_a_converted_value_given_a_unit_a_thousand_times_off_is_changed():
    assert b(PODS, "The scheduler uses about 1.8 MiB against its 2 GiB limit.") \
        == "value_changed"
    assert b(PODS, "The scheduler uses about 1.8 GiB against its 2 GiB limit.") == "words"
    # without the unit it mixed up written beside it, a value a thousand times off is
    # read as any missing value, not as a changed unit
    ev = ContextEvidence.build([PODS]).features("The scheduler uses about 1.8 MiB.")
    assert ev.line_changed is None


def test_a_sentence_naming_one_record_by_its_id_speaks_of_that_record():
    from guardrail.evidence.words import content_words, stem
    ev = ContextEvidence.build([PODS])
    said = "The etl-runner-2 pod uses the most memory, about 7.5 GiB, of its 8 GiB limit."
    about = ev._where.about(said, [stem(w) for w in content_words(said)], numbers(said), "")
    assert about.records == {1}
    assert b(PODS, said) == "words"


CREW = json.dumps({"boat": "Eight A", "rowers": [
    {"name": "Ana", "seat": 1, "weight_kg": 70.0}, {"name": "Ben", "seat": 2, "weight_kg": 88.1},
    {"name": "Cyril", "seat": 3, "weight_kg": 89.0},
    {"name": "Marcus", "seat": 4, "weight_kg": 104.5}]})


def test_a_value_worked_out_is_no_value_of_the_other_records_it_lies_near():
    # the mean, 87.9, lies within the hedge of Ben's and Cyril's weights, not Marcus's
    said = "The four rowers average about 87.9 kg, and Marcus is the heaviest at 104.5 kg."
    assert ContextEvidence.build([CREW]).features(said).record_gap == 0.0
    assert b(CREW, said) == "words"
    # a value no rule works out, found only in another record, still lies there
    assert ContextEvidence.build([CREW]).features("Marcus weighs 88.1 kg.").record_gap > 0


BOOKINGS = json.dumps({"card": "4471", "bookings": [
    {"id": "LB-1", "room": "Study Room 4", "status": "completed"},
    {"id": "LB-2", "room": "Study Room 4", "status": "completed"},
    {"id": "LB-3", "room": "Group Room B", "status": "no-show"},
    {"id": "LB-4", "room": "Study Room 2", "status": "completed"},
    {"id": "LB-5", "room": "Study Room 1", "status": "upcoming"}]})


def test_a_count_of_them_reads_its_whole_in_the_sentence_before():
    ev = ContextEvidence.build([BOOKINGS])
    before = "You've made five study room bookings this month. "
    assert "status" in (ev.features("Four of them were completed.", before).field_changed
                        or "")
    assert ev.features("Three of them were completed.", before).field_changed is None
    # the part of a count before is what "those" counts: no key holds that many
    before = "Four of your five bookings are past. "
    assert ev.features("Two of those four were completed.", before).field_changed is None


def test_times_that_compare_or_name_slots_are_no_count_of_records():
    ev = ContextEvidence.build([ALARMS])
    for said in ("GH-9 ran four times GH-7's rate.", "GH-9 alarmed more than twice what "
                 "GH-7 did.", "GH-9 has two times on Tuesday for a check."):
        assert ev._counts.changed(said, []) is None, said
    assert ev._counts.changed("GH-9 alarmed twice this week.", []) == "sensor: GH-9 (1 record)"
