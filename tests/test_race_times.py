"""Elapsed times a tool result writes as a clock ("3:41:27") said in words, and a
duration never compared with a field that holds no time (guardrail.evidence.stored,
field.py), read through ContextEvidence."""

import json

from guardrail.evidence.features import ContextEvidence

RACE = json.dumps({"event": "Harbor City Marathon", "finishers": 6210, "runner": {
    "name": "Emma Lindgren", "finish_time": "3:41:27", "pace_per_km": "5:15",
    "splits": [{"half": 1, "time": "1:48:10"}, {"half": 2, "time": "1:53:17"}]}})


def evidence(sentence):
    return ContextEvidence.build([RACE]).features(sentence)


def missing(sentence):
    return [round(n.value, 2) for n in evidence(sentence).missing_numbers]


def test_a_finish_time_split_or_pace_said_in_words_is_found():
    said = evidence("Emma Lindgren finished the Harbor City Marathon in 3 hours, 41 minutes "
                    "and 27 seconds.")
    assert said.missing_numbers == () and said.field_changed is None
    assert missing("She finished in 3 hours 41 minutes.") == []
    assert missing("Her second half took 1 hour 53 minutes.") == []
    assert missing("Her pace was 5 minutes 15 seconds per km.") == []


def test_a_changed_time_stays_missing_and_no_count_field_says_it_otherwise():
    assert missing("She finished in 3 hours 14 minutes.") == [194.0]
    assert missing("Her second half took 1 hour 35 minutes.") == [95.0]
    assert missing("Her pace was 5 minutes 25 seconds per km.") == [5.42]
    # "finished" names ``finishers``, "half" ``half``: neither holds a time
    assert evidence("She finished in 3 hours 14 minutes.").field_changed is None
    assert evidence("Her second half took 1 hour 35 minutes.").field_changed is None
