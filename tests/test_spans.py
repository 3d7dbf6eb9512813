"""Numbers an answer reads off a tool result without arithmetic on its values (days
between dates, labels, how many records hold a value), sums it spells out, and values
that the number reader must not make up; each read
through ContextEvidence, as the judge reads them, against a changed value that must
stay missing."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.values import numbers

REFUND = json.dumps({"return_id": "R-88", "received_on": "2024-02-26",
                     "refund": {"status": "DEPOSITED", "deposited_on": "2024-03-15",
                                "amount_usd": 412.0}})
ASSAY = json.dumps({"samples": [
    {"sample_id": "PT-118-D0", "mean_pg_ml": 4.8}, {"sample_id": "PT-118-D7", "mean_pg_ml": 27.5},
    {"sample_id": "PT-118-D14", "mean_pg_ml": 19.3}],
    "retention_pct": {"w1": 41.2, "w8": 17.1}})
SHIFTS = ("| volunteer_id | name | shift_start | role | checked_in | hours_logged |\n"
          "|---|---|---|---|---|---|\n"
          "| V-1042 | Maria Gonzalez | 08:00 | Sorting | yes | 4.0 |\n"
          "| V-1107 | Dev Patel | 08:00 | Sorting | yes | 4.0 |\n"
          "| V-0988 | Hannah Cho | 09:00 | Distribution | yes | 3.5 |\n"
          "| V-1215 | Samuel Okoro | 09:00 | Distribution | no | 0.0 |\n"
          "| V-1030 | Greta Lind | 12:00 | Driver | yes | 4.0 |\n")
SCAN = json.dumps({"repo": "web", "issues": {"critical": 2, "high": 5, "medium": 11,
                                             "low": 19}})


def missing(context, sentence, before=""):
    ev = ContextEvidence.build([context]).features(sentence, before)
    return [n.value for n in ev.missing_numbers]


def test_days_between_a_date_it_states_and_one_of_the_grounding():
    assert missing(REFUND, "Your return was received on February 26, so that's 18 days "
                           "from receipt to deposit.") == []
    assert missing(REFUND, "The refund took 18 days to arrive.") == []  # two of its dates
    assert missing(REFUND, "Your return was received on February 26, so that's 19 days "
                           "from receipt to deposit.") == [19.0]
    # the days of a range it states, both ends counted; one more is another count
    week = json.dumps({"student": "Leo", "present": [{"date": f"2024-10-{d:02d}"} for d in
                                                      (7, 8, 10, 11)]})
    assert missing(week, "He was at school on four of the five days from October 7 to "
                         "October 11, 2024.") == []
    assert missing(week, "He was at school on all six days from October 7 to October 11, "
                         "2024.") == [6.0]


def test_a_number_the_grounding_writes_as_a_label():
    assert missing(ASSAY, "Patient 118's IL-6 reached 27.5 pg/mL at day 7 and 19.3 pg/mL "
                          "by day 14.") == []
    assert missing(ASSAY, "Only week-8 retention is in, at 17.1%.") == []
    assert missing(ASSAY, "It reached 27.5 pg/mL at day 9.") == [9.0]   # no D9
    assert missing(ASSAY, "Only week-6 retention is in, at 17.1%.") == [6.0]
    # a word that the label's letters do not start ("costs" is no ``w``)
    assert missing(ASSAY, "It costs 8 dollars.") == [8.0]


def test_how_many_records_hold_a_value_of_a_key_the_sentence_names():
    assert missing(SHIFTS, "Four volunteers checked in.") == []
    assert missing(SHIFTS, "Two volunteers were on Sorting.") == []
    assert missing(SHIFTS, "Three volunteers checked in.") == [3.0]
    # one record holding a value is no count, and a number with its unit is none
    assert missing(SHIFTS, "Her limit is 1Gi of memory.") == [1.0]


def test_a_total_of_the_parts_it_lists_after_it():
    assert missing(SCAN, "It found 37 issues in total: 2 critical, 5 high, 11 medium and "
                         "19 low.") == []
    assert missing(SCAN, "It found 39 issues in total: 2 critical, 5 high, 11 medium and "
                         "19 low.") == [39.0]
    # no word says it is their sum, and the grounding holds them in a line of text ...
    summary = json.dumps({"repo": "web", "summary": "critical: 2, high: 5, medium: 11, low: 19"})
    assert missing(summary, "It found 37 issues: 2 critical, 5 high, 11 medium and 19 "
                            "low.") == [37.0]
    # ... not as an object of counts, which adds up to 37 (objects.object_sums)
    assert missing(SCAN, "It found 37 issues: 2 critical, 5 high, 11 medium and 19 "
                         "low.") == []


@pytest.mark.parametrize("text,said", [
    # a day range does not run into a number with thousands
    ("It went out on October 8 to 24,800 recipients.", [("October 8", "date"),
                                                          ("24,800", "number")]),
    # a day before "until 9 AM" is no time
    ("A swap from 6 PM on Friday, December 6 until 9 AM Saturday.",
     [("6 PM", "time"), ("December 6", "date"), ("9 AM", "time")]),
    ("It runs November 8-9.", [("November 8", "date"), ("9", "date")]),
])
def test_what_the_number_reader_reads(text, said):
    assert [(text[n.start:n.end], n.kind) for n in numbers(text)] == said


def test_a_total_over_records_is_not_the_value_of_the_field_it_names():
    ev = ContextEvidence.build([SHIFTS])
    # the value lookups judge a total (missing here: no rule sums durations yet)
    assert ev.features("Together they logged 15.5 hours.").field_changed is None
    assert ev.features("Hannah Cho logged 4.5 hours.").field_changed is not None


def test_a_count_of_records_beyond_a_value_and_a_count_word_is_exact():
    table = ("Nitrate limit: 10 mg/L\n\n| Sample | Result | Unit |\n|---|---|---|\n| S-0871 | 12.4 | mg/L |\n"
             "| S-0872 | 8.9 | mg/L |\n| S-0875 | 10.6 | mg/L |\n| S-0876 | 11.2 | mg/L |\n")
    assert missing(table, "Three samples are above the 10 mg/L limit.") == []
    assert missing(table, "Two samples are above the 10 mg/L limit.") == [2.0]
    # "three" is 3, not the 3.5 hours a row holds
    assert missing(SHIFTS, "Three volunteers checked in.") == [3.0]


def test_a_number_of_a_numeric_key_is_its_value_not_a_count():
    parcels = json.dumps({"packages": [
        {"code": "RR445498147", "stage": "out for delivery", "delivery_attempts": 2},
        {"code": "JD086120470", "stage": "out for delivery", "delivery_attempts": 2},
        {"code": "LX905198278", "stage": "in transit", "delivery_attempts": 0}]})
    ev = ContextEvidence.build([parcels]).features(
        "Package LX905198278 has had 2 delivery attempts so far.")
    assert ev.missing_numbers or ev.field_changed or ev.record_gap > 0
    assert missing(parcels, "Two packages are out for delivery.") == []


def test_a_total_over_records_of_a_key_no_sentence_names():
    statement = json.dumps({"transactions": [
        {"date": "2024-05-01", "description": "ACH CREDIT STRIPE PAYOUT", "amount": 3210.44},
        {"date": "2024-05-02", "description": "AMZN MKTP US", "amount": -189.97},
        {"date": "2024-05-03", "description": "ACH CREDIT STRIPE PAYOUT", "amount": 2987.10}]})
    assert missing(statement, "Two Stripe payouts came in, totaling $6,197.54.") == []
    assert missing(statement, "Two Stripe payouts came in, totaling $6,297.54.") == [6297.54]


SEPTIC = json.dumps({"site": "12 Orchard Rd", "inspected_on": "2025-08-14",
                     "appointment": "2025-06-19T13:00:00", "valid_years": 2,
                     "notice_hours": 48, "removal_days": 30})


def test_a_date_a_span_the_sentence_states_away_from_one_of_the_grounding():
    assert missing(SEPTIC, "The report stays valid for two years, until August 14, 2027.") == []
    assert missing(SEPTIC, "Remove it within 30 days, which means by September 13.") == []
    assert missing(SEPTIC, "They want 48 hours' notice, so tell them by June 17.") == []
    assert missing(SEPTIC, "Book the next visit a week after, on June 26.") == []
    # a day or a year off, or no span stated, stays a date the grounding lacks
    assert missing(SEPTIC, "The report stays valid for two years, until August 15, 2027.") \
        == [20270815.0]
    assert missing(SEPTIC, "The report stays valid for two years, until August 14, 2028.") \
        == [20270814.0 + 10000]
    assert missing(SEPTIC, "Tell them by June 17.") == [617.0]


def test_weeks_between_two_dates():
    context = json.dumps({"long_run": "2025-02-16", "race_day": "2025-04-27"})
    assert missing(context, "Race day is April 27, ten weeks after that long run.") == []
    assert missing(context, "Race day is April 27, nine weeks after that long run.") == [9.0]


def test_an_age_is_the_whole_years_between_two_dates_of_its_record():
    people = json.dumps({"results": [
        {"name": "Anders Lindqvist", "born": "1871-03-02", "died": "1938-12-27"},
        {"name": "Greta Lindqvist", "born": "1905-01-11", "died": "1989-10-22"}]})
    assert missing(people, "Anders Lindqvist died in 1938 at the age of 67.") == []
    assert missing(people, "Greta Lindqvist died in 1989 at 84.") == []
    # a year off (her birthday had not come), or no word of age, stays a value it lacks
    assert missing(people, "Greta Lindqvist died in 1989 at 85.") == [85.0]
    assert missing(people, "Greta Lindqvist left 84 letters.") == [84.0]


def test_nights_between_the_few_dates_of_a_booking_even_in_a_sentence_naming_none():
    booking = json.dumps({"ref": "FRY-48213", "created_at": "2025-05-02T19:41:00Z", "legs": [
        {"leg": "outbound", "date": "2025-07-19", "depart": "10:30"},
        {"leg": "return", "date": "2025-07-26", "depart": "16:30"}]})
    before = "You go out on Saturday, July 19 and come back on Saturday, July 26. "
    for sentence, lacking in (("That gives you seven nights on the island.", []),
                              ("That gives you six nights on the island.", [6.0]),
                              ("The return leg leaves seven nights later.", [])):
        ev = ContextEvidence.build([booking]).features(sentence, before)
        assert [n.value for n in ev.missing_numbers] == lacking, sentence


def test_the_ranges_a_sentence_states_added_up():
    course = json.dumps({"course": "Forge basics", "days": [
        {"date": "2025-04-26", "start": "09:00", "end": "16:30"},
        {"date": "2025-04-27", "start": "09:00", "end": "15:00"}]})
    said = ("The course runs Saturday, April 26, from 9:00 AM to 4:30 PM and Sunday, "
            "April 27, from 9:00 AM to 3:00 PM, which is {} hours of class time.")
    for hours, lacking in (("13.5", []), ("14.5", [870.0])):
        ev = ContextEvidence.build([course]).features(said.format(hours))
        assert [n.value for n in ev.missing_numbers] == lacking, hours


def test_an_event_ends_its_length_after_its_start():
    lesson = json.dumps({"lesson": "Beginner group", "date": "2025-07-26", "start": "09:00",
                         "duration_min": 120, "price_cents": 8900})
    assert missing(lesson, "Your lesson is on July 26 from 9:00 to 11:00 AM.") == []
    assert missing(lesson, "Your lesson is on July 26 from 9:00 to 11:30 AM.") == [690]
    classes = json.dumps({"classes": [
        {"name": "Kumite", "start": "18:30", "duration_min": 60, "spots_left": 4},
        {"name": "Kata", "start": "19:00", "length_hours": 1.5, "spots_left": 0}]})
    assert missing(classes, "Kumite runs from 6:30 to 7:30 PM, with 4 spots left.") == []
    assert missing(classes, "Kata runs from 7:00 to 8:30 PM and it is full.") == []
    assert missing(classes, "Kata runs from 7:00 to 8:00 PM and it is full.") == [1200]
    # a record of many times says nothing of which one an event starts at
    day = json.dumps({"opens": "08:00", "lunch": "12:00", "closes": "17:00", "tour": "14:00",
                      "duration_min": 45})
    assert missing(day, "The tour ends at 2:45 PM.") == [885]


def test_a_time_of_day_in_four_digits_under_a_key_that_names_a_time():
    log = ("qso_no,utc_time,band_m,mode,callsign,points\n1,1402,20,SSB,DL4XK,2\n"
           "2,1405,20,SSB,EA7GTR,2\n3,1521,80,CW,GM3POI,1\n")
    assert missing(log, "Your log runs from 2:02 PM to 3:21 PM UTC.") == []
    assert missing(log, "Your log runs from 2:12 PM to 3:21 PM UTC.") == [852]
    # four digits under a key that names no time are no time of day
    parts = "part_no,qty\n1402,3\n1521,5\n"
    assert missing(parts, "The first order went out at 2:02 PM.") == [842]


def test_a_rate_over_a_span_the_sentence_states():
    """"screened 84 people between 9:00 AM and 3:00 PM, about 14 an hour" (turns-ba/17):
    a value over the span it states, per hour as written, to its rounding."""
    clinic = json.dumps({"clinics": [{"site": "County Fairgrounds", "date": "2025-09-27",
                                      "open": "09:00", "close": "15:00", "screened": 84}]})
    said = "The clinic screened 84 people between 9:00 AM and 3:00 PM, about {} an hour."
    assert missing(clinic, said.format("14")) == []
    assert missing(clinic, said.format("17")) == [17.0]
    # no rate written after it: a count the result lacks
    assert missing(clinic, "The clinic screened 84 people between 9:00 AM and 3:00 PM, "
                           "14 of them walk-ins.") == [14.0]
    # a duration the sentence states: 1,390 over 14 hours
    flow = json.dumps({"gauge": "Kettle Falls", "from_cfs": 6950, "to_cfs": 5560,
                       "drop_cfs": 1390, "span_hours": 14})
    assert missing(flow, "The flow fell 1,390 cfs in 14 hours, roughly 100 cfs an hour."
                   ) == []


def test_an_elapsed_time_written_as_a_clock_or_in_iso_8601_is_a_span():
    race = json.dumps({"event": "Lakeshore 10K", "results": [
        {"pos": 1, "runner": "Maya Ortiz", "time": "00:41:07"},
        {"pos": 2, "runner": "Dev Rao", "time": "00:42:15"}],
        "start": "2025-06-01T08:00:00"})
    ev = ContextEvidence.build([race])
    for ok in ("Maya Ortiz won in 41 minutes 7 seconds.", "Dev Rao was second in 42:15.",
               "The race started at 8:00 AM."):
        assert not ev.features(ok).missing_numbers, ok
    for bad in ("Maya Ortiz won in 41 minutes 17 seconds.", "Dev Rao was second in 42:51."):
        assert ev.features(bad).missing_numbers, bad
    video = json.dumps({"items": [{"title": "Knife skills", "duration": "PT4M13S"},
                                  {"title": "Stock basics", "duration": "PT1H2M5S"}]})
    ev = ContextEvidence.build([video])
    for ok in ("Knife skills runs 4 minutes 13 seconds.", "Knife skills is 4:13 long.",
               "Stock basics runs 1 hour 2 minutes and 5 seconds.",
               "Stock basics runs about 62 minutes."):
        assert not ev.features(ok).missing_numbers, ok
    for bad in ("Knife skills runs 4 minutes 31 seconds.", "Stock basics runs 1 hour 20 minutes."):
        assert ev.features(bad).missing_numbers, bad


def test_about_so_many_weeks_between_two_dates_it_states():
    """Fifty-one days are "about seven weeks"; not seven weeks said flatly, nor "about
    nine weeks"."""
    permit = json.dumps({"permit": "TP-88", "window_start": "2025-10-15",
                         "window_end": "2025-12-05"})
    said = "Planting runs from Wednesday, October 15 through Friday, December 5, "
    assert missing(permit, said + "a window of about seven weeks.") == []
    assert missing(permit, said + "a window of seven weeks.") == [7.0]
    assert missing(permit, said + "a window of about nine weeks.") == [9.0]


def test_a_value_per_a_key_of_its_record():
    """"about 145 tonnes per hectare" is a record's tonnes over its hectares; another
    number per hectare is not, nor is the quotient without "per"."""
    fields = ("plot,hectares,tonnes,crew\nNorth Flat,12.5,1820,4\n"
              "Ridge,6.4,1350,3\nCreek Bend,15.2,2210,5\n")
    said = "Per hectare, Ridge led with roughly 211 tonnes, compared with about "
    assert missing(fields, said + "145 at Creek Bend.") == []
    assert missing(fields, said + "160 at Creek Bend.") == [160.0]
    assert missing(fields, "Ridge brought in roughly 211 tonnes.") == [211.0]
    dated = fields.replace("crew", "sown").replace(",4\n", ",2024-03-01\n")  # no year / ha
    assert missing(dated, "Per hectare, North Flat's sowing comes to about 162.") == [162.0]
