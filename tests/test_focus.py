"""Several tool results: a sentence is read against the results it names, so a value
that only another tool's result holds no longer supports it."""

from __future__ import annotations

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.focus import FocusedEvidence, evidence_for, names

HOTEL = json.dumps({"hotel": "Sakura Garden Ryokan", "city": "Kyoto", "stars": 4,
                    "rooms": 38, "breakfast_included": True})
ORDERS = json.dumps([{"order": "A1001", "items": 1, "total_eur": 19.5, "city": "Osaka"},
                     {"order": "A1002", "items": 3, "total_eur": 62.0, "city": "Nagoya"}])
FLIGHT = "| Flight | From | To | Departs |\n|---|---|---|---|\n| BA117 | LHR | JFK | 09:15 |"
PASSAGE = ("The Eiffel Tower was completed in 1889. It is 330 metres tall and stands on the "
           "Champ de Mars in Paris.")


def test_a_value_only_another_tool_result_holds_is_missing_for_the_sentence():
    ev = evidence_for([ORDERS, HOTEL, FLIGHT], "Tell me about my stay.")
    assert isinstance(ev, FocusedEvidence)
    s = "Sakura Garden Ryokan is rated 1 star."
    assert ev.focus(s) == frozenset({1})
    assert ContextEvidence.build([ORDERS, HOTEL, FLIGHT]).features(s).missing_numbers == ()
    assert [n.value for n in ev.features(s).missing_numbers] == [1]
    assert ev.features("Sakura Garden Ryokan has 38 rooms.").missing_numbers == ()
    city = "Sakura Garden Ryokan is in Osaka."  # another result's city: a name it lacks
    assert ev.focus(city) == frozenset({1})
    assert ev.features(city).missing_names > 0 == \
        ContextEvidence.build([ORDERS, HOTEL, FLIGHT]).features(city).missing_names


def test_a_sentence_naming_two_results_reads_both_and_a_pronoun_reads_what_was_named():
    ev = evidence_for([ORDERS, HOTEL, FLIGHT])
    both = "Flight BA117 leaves at 09:15, and Sakura Garden Ryokan has 38 rooms."
    assert ev.focus(both) == frozenset({1, 2})
    f = ev.features(both)
    assert f.missing_numbers == () and f.missing_names == 0
    # an identifier names its result wherever it stands in the sentence
    assert ev.focus("Sakura Garden Ryokan has 38 rooms, and BA117 is on time.") == \
        frozenset({1, 2})
    assert ev.features("Sakura Garden Ryokan has 38 rooms, and BA117 is on time."
                       ).missing_names == 0
    before = "Your flight is BA117 to JFK. "
    assert ev.focus("It leaves at 10:40.", before) == frozenset({2})
    # a sentence naming another result reads that one
    assert ev.focus("Sakura Garden Ryokan has 38 rooms.", before) == frozenset({1})
    # pronouns refer back through pronouns; a sentence naming nothing otherwise reads all
    chain = before + "It leaves at 09:15. "
    assert ev.focus("Its gate opens at 8:40.", chain) == frozenset({2})
    assert ev.focus("Two hotels matched your request.", before) is None
    assert ev.focus("It has a pool.", before + "Two hotels matched. ") is None
    assert ev.features("It leaves at 10:40.", before).missing_numbers != ()
    assert ev.features("It leaves at 09:15.", before).missing_numbers == ()


def test_a_definite_description_reads_the_named_results_that_hold_its_noun():
    ev = evidence_for([ORDERS, HOTEL, FLIGHT])
    before = "Sakura Garden Ryokan is in Kyoto. "
    assert ev.focus("Breakfast at the hotel is included.", before) == frozenset({1})
    assert ev.focus("The hotel has 40 rooms.", before) == frozenset({1})
    assert ev.features("The hotel has 40 rooms.", before).missing_numbers != ()
    # a noun the named result does not hold refers to something else: all are read
    assert ev.focus("The lookup returned two orders.", before) is None
    assert ev.focus("The order shipped yesterday.", before) is None
    # referring back goes through sentences that refer back too
    chain = before + "The hotel has 38 rooms. It is full. "
    assert ev.focus("Guests at the hotel get breakfast.", chain) == frozenset({1})
    assert ev.focus("The hotel is full.", before + "Two orders shipped. ") is None
    assert ev.focus("It ships today.", before + "Here is the information I found. ") is None


def test_the_question_adds_its_results_and_a_sentence_naming_none_reads_all():
    ev = evidence_for([ORDERS, HOTEL, FLIGHT], "Where is order A1002 going?")
    assert ev.focus("Sakura Garden Ryokan is full.") == frozenset({0, 1})
    # never only the question's: it may name one of the results the answer uses
    assert ev.focus("The order ships today.") is None
    plain = evidence_for([ORDERS, HOTEL, FLIGHT])
    assert plain.focus("the total is 19.5 euros.") is None
    assert plain.evidence("the total is 19.5 euros.") is plain.whole


def test_a_name_most_results_hold_anchors_nothing_and_prose_is_always_read():
    docs = [HOTEL.replace("Kyoto", "Osaka"), ORDERS, ORDERS.replace("A10", "B20"), PASSAGE]
    ev = evidence_for(docs)
    assert ev.focus("In Osaka it rains.") is None  # held by 3 results: no anchor
    assert ev.focus("Order B2001 holds 1 item.") == frozenset({2, 3})  # and the passage


def test_one_tool_result_or_prose_alone_read_as_before():
    for docs in ([HOTEL], [HOTEL, PASSAGE], [PASSAGE, PASSAGE.replace("330", "324")]):
        ev = evidence_for(docs, "q")
        assert isinstance(ev, ContextEvidence)
        assert ev.features("It is 330 metres tall.") == \
            ContextEvidence.build(docs, "q").features("It is 330 metres tall.")


def test_names_are_capitalised_words_past_the_first_and_identifiers():
    assert names("Package LX905198278 is in Cape Town.") == [["lx905198278"], ["cape", "town"]]
    assert names("B42 leaves at 9.") == [["b42"]]
    assert names("The hotel is nice.") == []
    assert names("Book Sakura Garden Ryokan's suite.") == [["sakura", "garden", "ryokan"]]


def test_a_name_is_held_by_the_result_holding_all_its_words():
    ev = evidence_for([HOTEL, ORDERS.replace("Osaka", "Garden Grove"), FLIGHT])
    assert ev.focus("I booked Sakura Garden Ryokan for you.") == frozenset({0})
    assert ev.focus("I booked Garden Grove for you.") == frozenset({1})


def test_through_the_proxy_another_results_value_no_longer_passes_for_evidence():
    """A real proxy on loopback, three tool messages: the hotel's changed star rating is
    stopped although the orders hold a 1; the hotel's true room count passes."""
    from guardrail.bench import verdicts
    from guardrail.train.data import Example

    response = "Sakura Garden Ryokan is rated 1 star. It has 38 rooms."
    bad = response.find("rated 1 star")
    docs = (ORDERS, HOTEL, FLIGHT)
    ex = Example("f0", "\n\n".join(docs), "Tell me about my hotel.", response,
                 ((bad, bad + len("rated 1 star")),), True, True, "f0", "tools",
                 documents=docs)
    rows: list = []
    all_ = verdicts.run([ex], sentences=rows)["by_dataset"]["all"]
    assert [(r["gold"], r["stopped"]) for r in rows] == [(True, True), (False, False)]
    assert all_["supported_kept"] == 1.0 and all_["unsupported_stopped"] == 1.0
