"""guardrail.evidence.values and the record features: values read the way answers write
them (times, dates, durations, counts, scales) and a value checked against the record
the sentence is about."""

from __future__ import annotations

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.listing import counts, record_blocks
from guardrail.evidence.values import dates, durations, numbers, times

EVENTS = [{"summary": "Budget Check-in", "starts_at": "2025-03-23T13:00:00+12:00",
           "room": "Kauri Room", "organizer": "Mei Chen",
           "attendees": ["Yuki Nguyen", "Kofi Watanabe", "Ibrahim Lim"]},
          {"summary": "Hiring Committee", "starts_at": "2025-06-06T19:45:00+12:00",
           "room": "Level 12 Boardroom", "organizer": "Ananya Okafor",
           "attendees": ["Aiko Tanaka", "Tane Iyer"]}]


def _missing(ev: ContextEvidence, sentence: str) -> list[tuple[str, float]]:
    return [(n.kind, n.value) for n in ev.features(sentence).missing_numbers]


def test_times_are_one_value_each_whatever_the_clock():
    assert [v for _, _, v in times("from 5:15 PM to 7:30 p.m., at 1 PM, 16:45 or noon")] \
        == [17 * 60 + 15, 19 * 60 + 30, 13 * 60, 16 * 60 + 45, 12 * 60]
    assert times("rated 8.9 out of 10, version 2.4, +12:00") == []


def test_dates_in_words_and_iso_are_the_same_date():
    got = [v for _, _, v in dates("launched on October 18, 2023, on 4 March 2024, "
                                  "on May 10, in March 2021, on 2024-03-01")]
    assert got == [(2023, 10, 18), (2024, 3, 4), (0, 5, 10), (2021, 3, 0), (2024, 3, 1)]
    assert dates("it may 3 times") == []


def test_durations_scales_and_counts():
    assert [v for _, _, v in durations("runs for 1 hour 33 minutes, or 2 hours")] == [93, 120]
    kinds = [(n.kind, n.value) for n in numbers("Guests give it 8.0 out of 10, rated 4.2/5.")]
    assert kinds == [("number", 8.0), ("number", 4.2)]  # the scale is no claim
    table = "| a | b |\n|---|---|\n| 1 | x, y, z |\n| 2 | w |"
    assert counts(table) == {2, 3}
    nested = "- **A**\n  - Room: X\n- **B**\n  - Room: Y\n- **C**\n  - Room: Z"
    assert 3 in counts(nested) and len(record_blocks(nested)) == 3
    assert counts("- **Id:** F1\n- **Title:** Dune") == set()  # one record's fields


def test_capital_scales_compound_number_words_and_per_cent():
    def read(text):
        return [(n.kind, n.value, n.percent) for n in numbers(text)]
    assert read("Revenue was $1.2B on 3.4M users.") == [("number", 1.2e9, False),
                                                       ("number", 3.4e6, False)]
    assert read("It is 400m away.") == [("number", 400.0, False)]  # metres, not millions
    assert read("thirty-five guests, twenty one stops") == [("count", 35.0, False),
                                                           ("count", 21.0, False)]
    assert read("sixty seats, thirty-something") == [("count", 60.0, False)]
    assert read("up 12 per cent") == [("number", 12.0, True)]
    assert read("zero fees") == [("count", 0.0, False)]
    # an ISO time's zone offset is no value: "2 hours" is not excused by "+02:00"
    assert read("starts 2025-09-18T14:00:00+02:00") == [("date", 20250918.0, False),
                                                        ("time", 840.0, False)]
    assert read("at 14:00 +02:00 (UTC+2)") == [("time", 840.0, False)]
    assert read("pages 10-12, 3 -5") == [("number", v, False) for v in (10.0, 12.0, 3.0, -5.0)]
    assert read("two thirds of the votes") == [("number", 2 / 3, False)]  # not the count 2
    assert read("at 5,320 hours") == [("duration", 5320 * 60.0, False)]  # not 5 and 320 h
    # a vague quantity is no value to check; a hedged one still is
    assert read("within a couple hundred messages of the head") == []
    assert read("a few dozen rows") == []
    assert read("some twenty minutes") == [("count", 20.0, False)]
    ev = ContextEvidence.build([json.dumps({"market_cap": 1200000000, "guests": 35})])
    assert _missing(ev, "Its market cap is $1.2B and thirty-five guests came.") == []
    assert _missing(ev, "Thirty-six guests came.") == [("count", 36.0)]


def test_a_time_or_date_is_checked_as_written_in_the_tool_result():
    ev = ContextEvidence.build([json.dumps(EVENTS)], "")
    assert _missing(ev, "The Budget Check-in starts at 1 PM on March 23.") == []
    assert _missing(ev, "The Budget Check-in starts at 13:00.") == []
    assert _missing(ev, "The Budget Check-in starts at 3 PM.") == [("time", 15 * 60.0)]
    assert _missing(ev, "The Budget Check-in is on March 25.") == [("date", 325.0)]
    assert _missing(ev, "The lookup returned two events.") == []
    assert _missing(ev, "Three people are invited to the Budget Check-in.") == []
    assert _missing(ev, "The lookup returned five events.") == [("count", 5.0)]


def test_a_value_of_another_record_is_a_record_gap():
    ev = ContextEvidence.build([json.dumps(EVENTS)], "")
    assert ev.features("Mei Chen is organizing the Budget Check-in.").record_gap == 0.0
    assert ev.features("Ananya Okafor is organizing the Budget Check-in.").record_gap > 0.0
    answer = "The Hiring Committee starts at 7:45 PM. "
    assert ev.features("It takes place in Level 12 Boardroom.", answer).record_gap == 0.0
    assert ev.features("It takes place in Kauri Room.", answer).record_gap > 0.0
    # without a sentence before it, "It" is about whatever record it names
    assert ev.features("It takes place in Kauri Room.").record_gap == 0.0


@pytest.mark.parametrize("context", [
    "summary: Budget Check-in\nroom: Kauri Room\n\nsummary: Hiring Committee\nroom: Level 12",
    "| Summary | Room | Organizer |\n|---|---|---|\n| Budget Check-in | Kauri Room | Mei Chen |\n"
    "| Hiring Committee | Level 12 | Ananya Okafor |",
])
def test_records_of_text_and_tables(context):
    ev = ContextEvidence.build([context], "")
    assert ev.features("The Budget Check-in is in Kauri Room.").record_gap == 0.0
    assert ev.features("The Hiring Committee is in Kauri Room.").record_gap > 0.0


def test_one_record_or_prose_has_no_record_gap():
    field_value = "| Field | Value |\n|---|---|\n| Courier | Aramex |\n| Origin | Vietnam |"
    ev = ContextEvidence.build([field_value], "")
    assert ev.features("It is being delivered by Aramex from Vietnam.").record_gap == 0.0
    prose = ContextEvidence.build(["Paris is in France.\n\nRome is in Italy."], "")
    assert prose.features("Paris is in Italy.").record_gap == 0.0


def test_a_sentence_copied_from_the_grounding_is_never_flagged():
    from guardrail.evidence.judge import FEATURES, Head, SentenceJudge

    n = len(FEATURES)
    w = [0.0] * n
    w[FEATURES.index("p_max")] = 10.0
    judge = SentenceJudge({4: Head((0.0,) * n, (1.0,) * n, tuple(w), -1.0, 0.5)})
    ev = ContextEvidence.build(["The Mona Lisa is a half-length portrait painting by "
                                "Leonardo da Vinci. It hangs in the Louvre."], "")
    copied = judge.judge(ev, "The Mona Lisa is a half-length portrait painting by Leonardo "
                         "da Vinci.", [0.9], 4)
    assert copied.claim and not copied.flagged
    changed = judge.judge(ev, "The Mona Lisa is a half-length portrait painting by "
                          "Raphael.", [0.9], 4)
    assert changed.flagged
    assert not ev.copied("It hangs.")  # too short to say


def test_a_weekday_that_the_date_does_not_fall_on_is_a_changed_value():
    from guardrail.evidence.judge import explain
    from guardrail.evidence.weekdays import weekday_changed
    stored = {(2025, 3, 7)}  # a Friday
    assert not weekday_changed("It departs on Friday, March 7 at 8:25 AM.", stored)
    assert not weekday_changed("It departs on Fri 7 March 2025.", stored)
    assert weekday_changed("It departs on Thursday, March 7.", stored)   # year from the context
    assert weekday_changed("On Sunday the 7th of March, 2025.", set())    # year written
    assert not weekday_changed("It was sunny, March 7.", stored)
    assert not weekday_changed("Monday, March 7.", {(2025, 3, 7), (2024, 3, 7)})  # which year?
    ev = ContextEvidence.build([json.dumps({"flight": "BA117",
                                            "departure": "2025-03-07T08:25:00Z"})])
    bad = ev.features("It departs on Thursday, March 7 at 8:25 AM.")
    assert bad.line_changed and "2025-03-07" in bad.line_changed
    assert explain(bad, 0.5).kind == "contradicted"
    assert ev.features("It departs on Friday, March 7 at 8:25 AM.").line_changed is None


def test_a_range_shares_its_meridiem_and_cents_are_hundredths():
    assert [m for _, _, m in times("from 2:30 to 4:25 PM")] == [870, 985]
    assert [m for _, _, m in times("from 1 to 3 pm")] == [780, 900]
    assert [m for _, _, m in times("open 11 to 1 pm")] == [660, 780]   # not 11 PM
    assert [m for _, _, m in times("a 2.5 to 3 pm slot")] == [900]     # a decimal
    assert [n.value for n in numbers("48 cents per kWh, or 40¢ a minute")] == [0.48, 0.4]


def test_a_number_word_and_a_half_or_a_quarter():
    assert [(n.value, n.kind) for n in numbers("about four and a quarter hours")] == [
        (4.25, "number")]
    assert [n.value for n in numbers("two and a half years old, six and a half minutes")] == [
        2.5, 6.5]


def test_an_hour_and_its_minutes_or_a_half_is_a_duration_and_an_hour_alone_is_not():
    assert [(n.value, n.kind) for n in numbers(
        "an hour and 15 minutes, half an hour, an hour and a half, $3 an hour")] == [
        (75.0, "duration"), (30.0, "duration"), (90.0, "duration"), (3.0, "number")]


def test_hours_and_minutes_in_words_are_one_duration_as_in_digits():
    """Observed on a hand-written turn: "about an hour and ten minutes" for
    ``expected_duration_min: 70`` read as the count ten, a value the result lacks."""
    assert [(n.value, n.kind) for n in numbers(
        "about an hour and ten minutes, two hours and forty-five minutes, "
        "one hour 5 minutes, three hours and 35 minutes")] == [
        (70.0, "duration"), (165.0, "duration"), (65.0, "duration"), (215.0, "duration")]
    # hours in words alone stay a count, which the arithmetic reads ("the same eight hours")
    assert [(n.value, n.kind) for n in numbers("for the same eight hours")] == [(8.0, "count")]
    ev = ContextEvidence.build([json.dumps({"flight": {"expected_duration_min": 70}})], "")
    assert not ev.features("The flight lasts about an hour and ten minutes.").missing_numbers
    assert ev.features("The flight lasts about an hour and twenty minutes.").missing_numbers


def test_a_list_of_times_takes_its_meridiem_and_seconds_stay_with_their_time():
    """Observed: "open slots at 2:45, 3:00 and 3:30 PM" read 2:45 as a morning time, and
    "clocked in at 10:19:05 AM" as 10:19:05 and a time "05 AM"."""
    assert [(n.value, n.kind) for n in numbers("slots at 2:45, 3:00 and 3:30 PM")] == [
        (885.0, "time"), (900.0, "time"), (930.0, "time")]
    assert [n.value for n in numbers("at 11:30, 12:15 or 1:00 PM")] == [690.0, 735.0, 780.0]
    assert [(round(n.value, 2), n.kind) for n in numbers("in at 2:19:05 PM, after")] == [
        (859.08, "time")]
    assert [n.value for n in numbers("at 10.30 am")] == [630.0]
    # a range within one hour holds its end too: ``"window": "05:15-05:45"``
    assert [n.value for n in numbers("window: 05:15-05:45")] == [315.0, 345.0]
    assert [n.value for n in numbers("09:30-09:00")] == [570.0]  # no earlier end


def test_the_days_of_a_month_in_a_list_are_dates():
    """Observed: "five pickups: May 1, 8, 15, 22, and 30" read as May 1 and four numbers
    the tool result (ISO dates) lacks.  A list ends with "and" or "or" a day, each day
    after the one before; "On May 1, 8 people came" is a date and a count."""
    assert [(n.kind, n.value) for n in numbers("pickups on May 1, 8, 15, 22, and 30.")] == [
        ("date", 501.0), ("date", 508.0), ("date", 515.0), ("date", 522.0), ("date", 530.0)]
    assert [n.kind for n in numbers("Open March 5th, 12th and 19th at 9 AM.")] == [
        "date", "date", "date", "time"]
    assert [n.kind for n in numbers("On May 1, 8 people came and 3 left.")] == [
        "date", "number", "number"]
    assert [n.kind for n in numbers("July 18, 12, and 30")] == ["date", "number", "number"]
    pickups = json.dumps({"upcoming": [{"date": f"2024-05-{d:02d}"} for d in (1, 8, 15, 22, 30)]})
    ev = ContextEvidence.build([pickups], "")
    assert not ev.features("You have pickups on May 1, 8, 15, 22, and 30.").missing_numbers
    assert ev.features("You have pickups on May 1, 8, 15, 22, and 29.").missing_numbers
    # the days a list in the grounding writes bare stay numbers too: "the 13th"
    ev = ContextEvidence.build(["Public nights run on Saturdays, December 6, 13 and 20."], "")
    assert not ev.features("The later ones are on the 13th and 20th.").missing_numbers
    assert ev.features("The later ones are on the 13th and 27th.").missing_numbers


def test_both_sides_of_a_size_are_numbers():
    """Observed: ``"evaporator": "4x14 ft"`` held 4 but not 14, so "a 4 by 14 foot
    evaporator" lacked a value; a hex id is no size."""
    assert [n.value for n in numbers("wood-fired, 4x14 ft; 1920X1080")] == [4, 14, 1920, 1080]
    assert [n.value for n in numbers("id 0x7ff3")] == [0]
    assert [n.value for n in numbers("clear bags, max 12x6x12 in")] == [12, 6, 12]
    ev = ContextEvidence.build([json.dumps({"evaporator": "wood-fired, 4x14 ft"})], "")
    assert not ev.features("It uses a wood-fired 4 by 14 foot evaporator.").missing_numbers
    assert ev.features("It uses a wood-fired 4 by 16 foot evaporator.").missing_numbers


def test_numbers_inside_codes_and_keys_are_matched_as_said():
    """Observed on hand-written turns: "the women's 30–34 division" for ``"division":
    "F30-34"``, "32% nitrox" for ``"gas": "EANx32"``, "60 cents per pound" for
    ``"basic_60_cents_per_lb"``, "the past 72 hours" for ``rainfall_last_72h_mm``.  Such
    numbers match a value as written; they are no operands, nor small counts ("three"
    is no "V3"), nor the digits of a hex id."""
    ev = ContextEvidence.build([json.dumps({
        "division": "F30-34", "gas": "EANx32", "valuation": "basic_60_cents_per_lb",
        "rainfall_last_72h_mm": 0.0, "grade": "V3", "tx": "a91f4400c2e7d8",
        "starts": "2023-11-01T10:35:00+03:00"})], "")
    for said in ("She ran in the women's 30–34 division.", "The dive was on 32% nitrox.",
                 "Cover is 60 cents per pound.", "No rain fell in the past 72 hours."):
        assert not ev.features(said).missing_numbers, said
    for wrong in ("She ran in the women's 35–39 division.", "The dive was on 36% nitrox.",
                  "The problem was graded at three.", "It cost 4400 credits.",
                  "It has 10 bookings so far."):  # observed: the hour of "...T10:35"
        assert ev.features(wrong).missing_numbers, wrong


def test_a_day_said_by_its_ordinal_alone_is_a_day_of_any_month():
    """Observed: "Those 5 orcas on the 23rd" and "On Wednesday the 17th" for ISO dates of
    that day read as numbers the tool result lacks.  After "on the", "by the", ... or a
    weekday only; a rank stays a number; a stored day number matches it too."""
    assert [(n.kind, n.value) for n in numbers("They meet on the 6th, 13th and 20th.")] == [
        ("date", 6.0), ("date", 13.0), ("date", 20.0)]
    assert [n.kind for n in numbers("On Wednesday the 17th, she finished 3rd of 40.")] == [
        "date", "number", "number"]
    assert [n.kind for n in numbers("It is on the 3rd floor, from the 2nd day on.")] == [
        "number", "number"]  # an ordinal before its noun is no day of a month
    ev = ContextEvidence.build([json.dumps({"office": {"floor": 3, "opens": "2025-03-04"}})], "")
    assert not ev.features("The office is on the 3rd floor.").missing_numbers
    assert ev.features("The office is on the 4th floor.").missing_numbers
    ev = ContextEvidence.build([json.dumps({"trips": [{"date": "2025-08-23", "orca": 5}]})], "")
    assert not ev.features("Those 5 orcas on the 23rd were the only ones.").missing_numbers
    assert ev.features("Those 5 orcas on the 24th were the only ones.").missing_numbers
    ev = ContextEvidence.build([json.dumps({"renewal_day": 20})], "")
    assert not ev.features("Renewals open on the 20th of each month.").missing_numbers


def test_a_date_before_a_colon_a_day_range_and_a_duration_in_seconds():
    assert [n.kind for n in numbers("Here's what's on at Frostline on Saturday, February 21:")] \
        == ["date"]
    # the end of a range of days is a date of its month, not the number -9 nor 9
    assert [(n.kind, n.value) for n in numbers("closed over the weekend of November 8-9")] \
        == [("date", 1108.0), ("date", 1109.0)]
    assert [(n.kind, n.value) for n in numbers("paid for April 1 through 15")] \
        == [("date", 401.0), ("date", 415.0)]
    assert [n.kind for n in numbers("on May 4, 2025 to 12 guests")] == ["date", "number"]
    ev = ContextEvidence.build([json.dumps({"job": "print-42", "elapsed_s": 9840})])
    assert ev.features("It has been running for 2 hours 44 minutes.").missing_numbers == ()


def test_minutes_with_their_seconds_are_one_duration_and_midday_is_approximate():
    assert [(n.kind, round(n.value, 3), n.hedged) for n in numbers(
        "It took 17 minutes and 36 seconds, then 4 min 8 s, and ran over midday, not at noon.")
        ] == [("duration", 17.6, False), ("duration", 4.133, False), ("time", 720.0, True),
              ("time", 720.0, False)]
    ev = ContextEvidence.build([json.dumps({"pipeline": {"duration_s": 1056}, "trips": [
        {"start": "2024-08-05T07:42:10", "braking_events": 0},
        {"start": "2024-08-05T12:05:33", "braking_events": 2}]})])
    assert ev.features("The whole run took 17 minutes and 36 seconds.").missing_numbers == ()
    # to the second: 17 minutes and 46 seconds is another duration
    assert len(ev.features("The whole run took 17 minutes and 46 seconds.").missing_numbers) == 1
    assert ev.features("Two of them were on the midday trip.").missing_numbers == ()
    assert len(ev.features("Two of them were on the trip at noon.").missing_numbers) == 1
    assert len(ev.features("Two of them were on the midday trip at 2:30 PM.").missing_numbers) == 1


def test_an_hour_of_the_day_written_as_a_number_is_that_time():
    ev = ContextEvidence.build([json.dumps({"date": "2024-07-16", "intervals": [
        {"hour_ending": 14, "lmp": 68.42}, {"hour_ending": 18, "lmp": 163.55}],
        "price_per_hour": 12})])
    assert ev.features("Prices peak in the hour ending 6 PM at $163.55/MWh.").missing_numbers \
        == ()
    assert len(ev.features("Prices peak in the hour ending 7 PM at $163.55/MWh.")
               .missing_numbers) == 1
    # a rate per hour is no hour of the day
    assert len(ev.features("It opens at noon.").missing_numbers) == 1


def test_a_24_hour_range_an_approximate_time_and_cents_per_person():
    assert [m for _, _, m in times("tue_sun: 10:00-18:00")] == [600, 1080]
    assert [m for _, _, m in times("2025-03-07T11:05-05:00")] == [665]    # a zone
    ev = ContextEvidence.build([json.dumps({"start": "2025-06-14T17:02:11+02:00",
                                            "cover_charge_cents_per_person": 800})])
    assert ev.features("It started just after 5 PM.").missing_numbers == ()
    assert [n.value for n in ev.features("It started at 5 PM.").missing_numbers] == [1020.0]
    assert ev.features("The cover charge is $8 per person.").missing_numbers == ()


def test_a_plan_name_a_rate_base_and_a_number_and_a_half_are_read_as_said():
    def read(text):
        return [(text[n.start:n.end], n.value) for n in numbers(text)]
    assert read("$173.55 to your 401(k)") == [("$173.55", 173.55)]
    assert read("roughly 11 L per 100 km") == [("11", 11.0)]
    assert read("it lasted 26 and a half minutes") == [("26 and a half", 26.5)]
    assert read("$5 per person and 2.5 and 3") == [("$5", 5.0), ("2.5", 2.5), ("3", 3.0)]


def test_hours_with_decimals_are_as_precise_as_written_and_match_milliseconds():
    ev = ContextEvidence.build([json.dumps({"total_exec_time_ms": 4410388.1})])
    assert ev.features("It adds up to about 1.2 hours.").missing_numbers == ()
    assert [n.value for n in ev.features("It adds up to 1.4 hours.").missing_numbers] == [84.0]
    (n,) = numbers("about 2.5 hours")
    assert (n.kind, n.value, n.precision, n.hedged) == ("duration", 150.0, 3.0, True)
    # said one way round, a span is not 10 % either way: 612 minutes is no "just over 11"
    ev = ContextEvidence.build([json.dumps({"longest_session_min": 612})])
    assert ev.features("It ran just over 11 hours.").missing_numbers != ()
    assert ev.features("It ran about 10 hours.").missing_numbers == ()


def test_a_version_after_its_name_as_the_grounding_writes_them_together():
    ev = ContextEvidence.build([json.dumps({"runtime": "python3.12",
                                            "image": "postgres:16.3-alpine"})])
    assert ev.features("It runs Python 3.12 and Postgres 16.3.").missing_numbers == ()
    assert [n.value for n in ev.features("It runs Postgres 16.4.").missing_numbers] == [16.4]
    # the digits alone, after another word, are not the version
    assert [n.value for n in ev.features("It costs 3.12.").missing_numbers] == [3.12]


def test_a_dates_year_is_no_quantity_said_roughly():
    order = json.dumps({"courier": {"first_name": "Malik", "rating": 4.9},
                        "placed_at": "2025-11-21T19:02:00-06:00"})
    ev = ContextEvidence.build([order])
    assert _missing(ev, "Malik has completed more than 2,000 deliveries.") == [("number", 2000.0)]
    assert _missing(ev, "The order was placed in 2025.") == []  # the year as written


def test_a_sentence_restating_one_line_in_order_is_a_restatement():
    from guardrail.evidence.restated import Restatements
    from guardrail.evidence.words import NEGATIONS, WORD

    def negated(text: str) -> bool:
        return any(w.lower() in NEGATIONS for w in WORD.findall(text))

    lines = ["The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
             "Paris, France.", "It was completed in 1889 and is 330 metres tall.",
             "The tower is not open at night."]
    r = Restatements(lines, [negated(x) for x in lines])

    def line_of(sentence: str):
        return r.line_of(sentence, negated(sentence))

    assert line_of("The Eiffel Tower is in Paris.") == 0
    assert line_of("The lattice tower is in Paris, France.") == 0  # words dropped
    assert line_of("Completed in 1889, it is 330 metres tall.") == 1  # numbers in order
    assert line_of("It is 1,330 metres tall.") is None  # 1330 is no number of the line
    assert line_of("Paris is on the Eiffel Tower.") is None  # turned around
    assert line_of("The Eiffel Tower is in Lyon.") is None  # a word the line lacks
    assert line_of("The tower is open at night.") is None  # the line is negated
    assert line_of("The tower is not open at night.") == 2
    assert line_of("It is in Paris.") is None  # too little to say
    assert line_of("Tower in Paris, built 1889.") is None  # two lines, not one


def test_a_restated_line_is_never_flagged_unless_a_value_speaks_against_it():
    """A short grounding and a short true answer: the model may score "in" high
    (observed: "The Eiffel Tower is in Paris." redacted against two sentences of prose);
    a sentence that says one line again is not asked about.  A changed value, a
    negation or a word the line lacks still goes to the judge's head."""
    from guardrail.evidence.judge import FEATURES, Head, SentenceJudge

    n = len(FEATURES)
    w = [0.0] * n
    w[FEATURES.index("p_max")] = 10.0
    judge = SentenceJudge({4: Head((0.0,) * n, (1.0,) * n, tuple(w), -1.0, 0.5)})
    ev = ContextEvidence.build(["The Eiffel Tower is a wrought-iron lattice tower on the "
                                "Champ de Mars in Paris, France. It was completed in 1889 "
                                "and is 330 metres tall."], "")
    said = judge.judge(ev, "The Eiffel Tower is in Paris.", [0.9], 4)
    assert said.claim and not said.flagged and said.evidence.restated
    for wrong in ("The Eiffel Tower is not in Paris.", "The Eiffel Tower is in Lyon.",
                  "Paris is on the Eiffel Tower.", "It was completed in 1890 and is 330 "
                  "metres tall."):
        assert judge.judge(ev, wrong, [0.9], 4).flagged, wrong


def test_a_time_with_its_seconds_is_read_to_the_second():
    """"3:17:14" is 3:17 and 14 seconds: a finishing time said with other seconds is a
    value the result lacks (it passed before, the seconds dropped); said to the minute,
    a time with seconds still matches; a span with seconds is read between two of them."""
    race = json.dumps({"runner": "D. Whitcomb", "chip_time": "3:17:14", "gun_time": "3:19:32",
                       "start": "2025-03-07T15:17:42"})
    ev = ContextEvidence.build([race])

    def missing(sentence):
        return [sentence[n.start:n.end] for n in ev.features(sentence).missing_numbers]

    assert [v for _, _, v in times("3:17:14")] == [pytest.approx(197 + 14 / 60)]
    assert missing("He finished in a chip time of 3:17:14.") == []
    assert missing("He finished in a chip time of 3:17:44.") == ["3:17:44"]
    assert missing("The race started at 3:17 PM.") == []
    assert missing("It took him 2 minutes 18 seconds to reach the start line.") == []
    assert missing("It took him 2 minutes 48 seconds to reach the start line.") \
        == ["2 minutes 48 seconds"]


def test_a_number_word_joined_to_a_span_is_a_count_and_other_compounds_are_not():
    said = [(n.value, n.kind) for n in numbers("A four-hour block, a two-night stay.")]
    assert said == [(4.0, "count"), (2.0, "count")]
    assert numbers("Two-factor login and a three-way call.") == []


def test_a_clock_value_under_a_key_naming_a_span_is_that_span_too():
    kiln = "program: Bisque Cone 04\nstarted_at: 2025-04-14 06:30\nelapsed: 06:52\n" \
           "estimated_remaining: 03:10\ncurrent_temp_f: 1384"
    race = json.dumps({"race_no": 7, "start_time": "2025-07-16T18:30:00", "results": [
        {"boat": "Halcyon", "elapsed": "00:48:10"}, {"boat": "Tern", "elapsed": "00:50:02"}]})
    for context, sentence, lacking in (
            (kiln, "It has been firing for 6 hours and 52 minutes.", []),
            (kiln, "It has been firing for 6 hours and 42 minutes.", [402.0]),
            (race, "Tern sailed the course in 50 minutes and 2 seconds.", []),
            (race, "Tern sailed the course in 50 minutes and 12 seconds.", [50.2]),
            # a time of day is no span: the race's start is no 18 hours 30 minutes
            (race, "The race took 18 hours and 30 minutes.", [1110.0])):
        ev = ContextEvidence.build([context]).features(sentence)
        assert [round(n.value, 2) for n in ev.missing_numbers] == lacking, sentence


def test_minutes_and_seconds_read_against_a_span_stored_in_seconds():
    run = json.dumps({"result": {"time_s": 3126, "place": 6, "winner_time_s": 2744},
                      "splits": [{"leg": 1, "leg_s": 312}, {"leg": 2, "leg_s": 190}]})
    for sentence, lacking in (("You finished in 52:06, placing 6th.", []),
                              ("The winner ran 45:44.", []),
                              ("Your strongest leg was the 3:10 run to the second control.", []),
                              ("You finished in 52:16, placing 6th.", [3136.0]),
                              ("Your strongest leg was the 3:20 run to the second control.",
                               [200.0])):
        ev = ContextEvidence.build([run]).features(sentence)
        assert [n.value for n in ev.missing_numbers] == lacking, sentence
    # seconds of another kind are no span: a timeout of 190 s is no "3:10"
    ev = ContextEvidence.build([json.dumps({"timeout_s": 190})]).features("It ran 3:10.")
    assert [n.value for n in ev.missing_numbers] == [190.0]


def test_a_start_before_and_shares_the_meridiem_of_the_end():
    said = "Conditions drop to fair at 9 and 10 AM, and between 3 and 9 PM it clears."
    assert [n.value for n in numbers(said) if n.kind == "time"] == [540.0, 600.0, 900.0, 1260.0]


def test_that_weekday_is_said_of_the_last_date_before_it():
    from guardrail.evidence.weekdays import weekday_changed
    before = "It lands in San Francisco at 10:38 AM on Sunday, August 10. "
    stored = {(2025, 8, 10)}
    assert weekday_changed("A courier brings it between 3 and 9 PM that Saturday.", stored,
                           before)
    assert not weekday_changed("A courier brings it between 3 and 9 PM that Sunday.", stored,
                               before)
    # a sentence with a date of its own, or no date before: nothing to compare
    assert not weekday_changed("That Saturday, August 16, works too.", {(2025, 8, 16)}, before)
    assert not weekday_changed("A courier brings it that Saturday.", stored, "")


def test_a_records_next_date_one_interval_on_where_its_key_says_how_often():
    """``last_groom`` and ``rebook_interval_weeks: 8`` state the date it is due next
    ("due on June 23"); months are calendar months; another date is still lacking, and
    without the interval the date one is no date the record states."""
    clients = {"as_of": "2025-06-30", "clients": [
        {"pet": "Rufus", "last_groom": "2025-04-28", "rebook_interval_weeks": 8,
         "next_booked": "2025-07-03"},
        {"pet": "Kiwi", "last_groom": "2025-01-31", "service_interval_months": 1,
         "next_booked": None}]}

    def lacking(context, sentence):
        ev = ContextEvidence.build([json.dumps(context)]).features(sentence)
        return [sentence[n.start:n.end] for n in ev.missing_numbers]

    assert lacking(clients, "Rufus was due on June 23.") == []
    assert lacking(clients, "Kiwi was due on February 28.") == []
    assert lacking(clients, "Rufus was due on June 24.") == ["June 24"]
    assert lacking(clients, "Rufus was due on June 16.") == ["June 16"]
    for client in clients["clients"]:
        client.pop("rebook_interval_weeks", None)
    assert lacking(clients, "Rufus was due on June 23.") == ["June 23"]


def test_a_date_no_calendar_has_gives_no_next_date_and_no_error():
    from guardrail.evidence.stored import StoredValues
    values = StoredValues((), frozenset(), frozenset({(0, 3, 4), (2025, 1, 31)}), frozenset(),
                          intervals=frozenset({("month", 1)}))
    assert values.due().dues == {(2025, 2, 28)}


@pytest.mark.parametrize("text, second", [
    ("Two beds on the nights of July 18 and 19, at $68 each.", (0, 7, 19)),
    ("Sales on April 26 and 27, about $74 a sale.", (0, 4, 27)),
    ("The gravity fell fastest between October 5 and 6, when it dropped 14 points.", (0, 10, 6)),
    ("A weekend intensive on May 17 and 18 that costs $420.", (0, 5, 18)),  # observed
    ("June 3 and 4 are booked.", (0, 6, 4)),
    # a count after "and" is no day: a noun follows, or it is no day a few days on
    ("On July 18 and 19 guests came.", None), ("On July 18 and 12, at noon.", None),
])
def test_a_second_day_after_and_shares_the_first_ones_month(text, second):
    got = [d for _, _, d in dates(text)]
    assert got[1:] == ([second] if second else [])
    ev = ContextEvidence.build([json.dumps({"nights": ["2025-07-18", "2025-07-19"]})])
    if second == (0, 7, 19):
        assert not ev.features("Your stay covers the nights of July 18 and 19.").missing_numbers
        assert ev.features("Your stay covers the nights of July 18 and 20.").missing_numbers


def test_a_wrong_weekday_is_changed_where_no_line_shares_the_sentence_words():
    """The weekday is checked against its date whatever the sentence's other words: "It's
    due to leave the print shop on Tuesday, May 12" shares no word with
    ``estimated_dispatch``, and May 12, 2025 is a Monday."""
    from guardrail.evidence.weekdays import weekday_changed
    assert weekday_changed("It leaves on Tuesday, May 12.", {(2025, 5, 12)}) \
        == "2025-05-12 is a Monday"
    ev = ContextEvidence.build([json.dumps({"order_id": "PP-104562", "shipping": {
        "method": "standard", "estimated_dispatch": "2025-05-12"}})])
    bad = ev.features("It's due to leave the print shop on Tuesday, May 12, 2025.")
    assert bad.best_line is None and bad.line_changed == "2025-05-12 is a Monday"
    assert ev.features("It's due to leave the print shop on Monday, May 12, 2025."
                       ).line_changed is None
