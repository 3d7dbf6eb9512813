"""A count of more things than a tool result lists (guardrail.evidence.counted), read
through ContextEvidence and the judge: stopped as a value changed, with the list as its
evidence; every other use of a number before a list's noun is left alone."""

import json

import pytest

from guardrail.evidence.counted import Lists
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis, explain
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
