"""A count of more things than a tool result lists (guardrail.evidence.counted), read
through ContextEvidence and the judge: stopped as a value changed, with the list as its
evidence; every other use of a number before a list's noun is left alone."""

import json

import pytest

from guardrail.evidence.counted import Lists
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis, explain
from guardrail.evidence.render import render
from guardrail.evidence.values import numbers

# a show with three puppeteers (and 4 standing elsewhere: "4+", a family of four) and
# five performances
SHOW = json.dumps({
    "production": {"title": "The Crooked Lantern", "running_time_min": 50, "age_guide": "4+",
                   "puppeteers": ["Ada Brenn", "Tomas Quill", "Rhea Solberg"]},
    "performances": [{"perf_id": f"P-{i}", "date": d, "seats_sold": s, "cone": 6}
                     for i, (d, s) in enumerate([("2025-02-01", 80), ("2025-02-02", 64),
                                                 ("2025-02-08", 71), ("2025-02-09", 90),
                                                 ("2025-02-15", 52)])],
    "ticket_prices_cents": {"adult": 1200, "family_of_four": 3800}})
# a pipeline whose four stages count 32 deals, two of them listed as the top ones
PIPELINE = json.dumps({
    "stages": [{"stage": s, "deal_count": n} for s, n in
               [("Qualified", 14), ("Demo", 9), ("Proposal", 6), ("Negotiation", 3)]],
    "term_months": 60,
    "top_open_deals": [{"deal_id": "D-1", "amount": 96000}, {"deal_id": "D-2", "amount": 74000}],
    "rooms": [{"room": "A", "beds": [{"bed": 1}, {"bed": 2}]},
              {"room": "B", "beds": [{"bed": 3}, {"bed": 4}, {"bed": 5}]}]})


def evidence(context, sentence):
    return ContextEvidence.build([context]).features(sentence)


@pytest.mark.parametrize("sentence, line", [
    ("The show is performed by a company of four puppeteers.",
     "production > puppeteers: 3 listed"),
    ("The Crooked Lantern plays eight performances this month.", "performances: 5 listed"),
    ("There are 7 performances, all in February.", "performances: 5 listed"),
])
def test_a_count_of_more_than_a_list_holds_is_a_value_changed(sentence, line):
    ev = evidence(SHOW, sentence)
    assert ev.line_changed == line
    assert basis(ev) == "value_changed"
    assert explain(ev, 0.3, structured=True).kind == "contradicted"


@pytest.mark.parametrize("context, sentence", [
    (SHOW, "Three puppeteers perform The Crooked Lantern."),       # the list's own length
    (SHOW, "All five performances are in February."),
    (SHOW, "There are 6 performances of the cone 6 show."),        # a record's own value
    (SHOW, "Two of the performances sold more than 70 seats."),   # a part: fewer
    (SHOW, "Two performances are on a Sunday."),
    (SHOW, "A family ticket for four costs $38.00."),              # no list's noun
    (SHOW, "The cone 6 performance is the first."),                # a record's own value
    (SHOW, "Each performance runs for 50 minutes."),
    (SHOW, "The run spans nine days of performances."),            # a time, not things
    (SHOW, "It runs for two eight-hour performances."),            # a size
    (SHOW, "Four more performances may be added in March."),       # not all of them
    (SHOW, "Grades 2-8 performances are free on Sundays."),         # a range's end
    (PIPELINE, "Team West has 32 open deals in the pipeline."),    # a column added up
    (PIPELINE, "You have made 23 of the 60 payments."),            # a field's value
    (PIPELINE, "The two rooms hold five beds between them."),      # nested lists together
    (PIPELINE, "Room B has 3 beds."),
])
def test_other_numbers_before_a_lists_noun_are_left_alone(context, sentence):
    assert evidence(context, sentence).line_changed is None, sentence


def test_a_top_level_array_and_a_list_of_numbers_count_no_things():
    lists = Lists(ContextEvidence.build([json.dumps(
        [{"title": "Stew", "serves": 4}, {"title": "Soup", "serves": 2}])]).lines)
    text = "The search found four items."
    assert lists.miscounted(text, numbers(text)) is None
    sizes = Lists(ContextEvidence.build([json.dumps({"tiles": [600, 600]})]).lines)
    text = "Each box holds four tiles."
    assert sizes.miscounted(text, numbers(text)) is None
    names = Lists(ContextEvidence.build([json.dumps({"tiles": ["slate", "oak"]})]).lines)
    assert names.miscounted(text, numbers(text)) == "tiles: 2 listed"


# a championship whose three classes list six entrants; crews whose groomed runs add to 9
CHAMPIONSHIP = json.dumps({
    "event": "North Tyne Hedging Championship",
    "classes": [{"class": "Open", "entries": [{"name": "C. Reay"}, {"name": "B. Lloyd"},
                                              {"name": "F. Mossop"}]},
                {"class": "Intermediate", "entries": [{"name": "H. Dodd"}, {"name": "S. Ridley"}]},
                {"class": "Young", "entries": [{"name": "E. Charlton"}]}],
    "machines": [{"unit": "G-1", "runs_groomed": ["Lodgepole", "Rabbit Run", "Upper Cirque"]},
                 {"unit": "G-2", "runs_groomed": ["Meadowlark", "Easy Street", "Tenderfoot",
                                                  "Lift Line"]},
                 {"unit": "G-3", "runs_groomed": ["Cinder Bowl", "Ridge Traverse"]},
                 {"unit": "G-4", "runs_groomed": []}]})


def test_one_keys_lists_added_up_over_their_records_count_what_the_key_names():
    """"six entries" over three classes' ``entries`` (3, 2 and 1) and "nine runs" over
    four machines' ``runs_groomed`` (3, 4, 2 and none) were values the grounding lacked
    (value_missing; turns-cc/19); a count that is no such total, or that names no word
    of the key ("five events" where two events list 3 and 2 attendees), still is."""
    lists = Lists([x.text for x in render(CHAMPIONSHIP).lines])
    six, nine = numbers("six")[0], numbers("nine")[0]
    assert lists.total(six, {"entri"}) and lists.total(nine, {"runs"})
    assert not lists.total(six, {"runs"}) and not lists.total(nine, {"hedger"})
    for said in ("The three classes have six entries between them.",
                 "The crews groomed nine runs overnight."):
        assert evidence(CHAMPIONSHIP, said).missing_numbers == (), said
    assert [n.value for n in evidence(CHAMPIONSHIP, "The crews groomed eleven runs "
                                      "overnight.").missing_numbers] == [11]
    assert [n.value for n in evidence(CHAMPIONSHIP, "Six classes were judged.")
            .missing_numbers] == [6]
