"""A sentence's times of day say which records it is about, as its dates do
(guardrail.evidence.records), read through ContextEvidence."""

import json

from guardrail.evidence.features import ContextEvidence

READINGS = ("time,sensor,co2_ppm,temp_c,occupancy\n09:00,meeting-room-A,620,21.4,2\n"
            "10:00,meeting-room-A,1180,23.0,9\n11:00,meeting-room-A,1450,23.9,11\n"
            "12:00,meeting-room-A,780,22.1,3\n")
FREIGHT = json.dumps({"shipment_id": "FRT-88213407", "delivered": False, "events": [
    {"ts": "2025-07-22T13:20:00-04:00", "location": "Cincinnati, OH", "event": "departed_hub"},
    {"ts": "2025-07-23T07:05:00-05:00", "location": "Louisville, KY", "event": "arrived_hub"},
    {"ts": "2025-07-23T08:30:00-05:00", "location": "Louisville, KY", "event": "delayed",
     "reason": "trailer capacity"}]})


def evidence(context, sentence, before=""):
    return ContextEvidence.build([context]).features(sentence, before)


def test_it_with_a_time_of_its_own_is_the_record_of_that_time():
    peak = "CO2 climbed from 620 ppm at 9:00 to a peak of 1,450 ppm at 11:00. "
    # "It" would be the 11:00 row of the sentence before; "by noon" names the 12:00 row
    said = evidence(READINGS, "It fell back to 780 ppm by noon as occupancy dropped to three.",
                    peak)
    assert said.field_changed is None and said.missing_numbers == ()
    wrong = evidence(READINGS, "It fell back to 790 ppm by noon.", peak)
    assert [n.value for n in wrong.missing_numbers] == [790]


def test_two_times_of_two_records_speak_of_each():
    said = evidence(FREIGHT, "It arrived at the Louisville hub at 7:05 AM on July 23 but was "
                    "held there at 8:30 AM because of trailer capacity.",
                    "Shipment FRT-88213407 is in Louisville and hasn't been delivered yet. ")
    assert said.field_changed is None
