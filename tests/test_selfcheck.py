"""A sentence's own arithmetic checked against itself (guardrail.evidence.selfcheck):
each reading on the arithmetic it states wrongly and rightly, the sentences it declines,
and the verdict read through ContextEvidence, the judge and `guardrail check`."""

import json

import pytest
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis, explain
from guardrail.evidence.selfcheck import miscalculated
from guardrail.evidence.values import numbers


def checked(sentence):
    """The verdict with every value the sentence states taken as one the grounding lacks
    (the reading asks for one at least; ContextEvidence gives the real ones)."""
    nums = numbers(sentence)
    return miscalculated(sentence, nums, nums)


@pytest.mark.parametrize("wrong, said, fixed, equation", [
    ("Altogether the ring will weigh 2,240 kg, or about 22.4 tonnes.", "22.4", "2.2",
     "2,240 kg = 2.24 t"),
    ("Eastgate took in 56,530 kg in the week of March 3 to 9, which is about 565 tonnes.",
     "565", "56.5", "56,530 kg = 56.53 t"),
    ("That's 91 months sooner, or about 6 years and 4 months.", "6 years and 4",
     "7 years and 7", "91 month = 7.58 year"),
    ("So far you have made three card payments of $31.50 each, totaling $104.50.",
     "$104.50", "$94.50", "3 x 31.50 = 94.50"),
    ("Fills are $12 a tank, which is $150 for the group's ten tanks.", "$150", "$120",
     "10 x 12 = 120"),
    ("Each class costs $32, and the three together come to $99.", "$99", "$96",
     "3 x 32 = 96"),
    ("Each reformer class is $32, so booking all three would come to $104.", "$104", "$96",
     "3 x 32 = 96"),  # what would be: the same arithmetic
    ("That one uses 2,250 kilograms of explosive across 50 holes, an average of 55 kilograms "
     "per hole.", "55 kilograms", "45 kilograms", "50 x 55 = 2,750"),
    ("Mid-roll accounted for 241 of the 375 uses of the code, or about 72%.", "72%", "64%",
     "241 / 375 = 64.3%"),
    ("The fish itself comes to $677.35, and with the $15.00 delivery charge the order "
     "totals $697.35.", "$697.35", "$692.35", "677.35 + 15 = 692.35"),
    ("The total is $209.88, and after your $50.00 deposit you'll owe $169.88 at pickup.",
     "$169.88", "$159.88", "209.88 - 50 = 159.88"),
    ("You exported 24.9 kWh and imported 7.5 kWh, so you came out ahead by about 18.4 kWh.",
     "18.4", "17.4", "24.90 - 7.50 = 17.40"),
    ("That's up about $630 from July's $3,310.54, an increase of roughly 16%.", "16%", "19%",
     "630 / 3,310.54 = 19.0%"),
    ("Sales grew from 310 to 465, a rise of 40%.", "40%", "50%", "155 / 310 = 50.0%"),
    # said again after words about it with a hedge alone
    ("In total, 96,300 kg of olives went through the mill, roughly 963 tonnes, producing "
     "15,726 liters of oil.", "963", "96", "96,300 kg = 96.30 t"),
])
def test_arithmetic_a_sentence_states_is_checked_against_itself(wrong, said, fixed,
                                                                  equation):
    assert checked(wrong) == equation
    assert checked(wrong.replace(said, fixed)) is None, fixed


@pytest.mark.parametrize("sentence", [
    # alternatives, not one value said twice: an annual plan, "30 days or 30 years"
    "It's $15.99 a month or $143.88 a year, so paying annually saves you $48.00.",
    "The Marchetti is free all month, at $190.00 a day or $800.00 a week.",
    "Cases are pursued whether they are 30 days or 30 years old.",
    # an amount each, a difference, one of several, a modifier, a range, a compound value
    "At 750 ml a bottle, that's roughly 26,676 liters of finished product.",
    "The flock ate 826.5 kilograms of feed, about 207 grams for every egg collected.",
    "The trail climbs 400 m over 5 km, about 2 km of it on gravel.",
    "Burnsall is at 1.67 m, which is 23 cm below its 1.90 m typical high.",
    "It filled 520 bottles of 330 ml, or 171.6 litres.",
    "Screen 5 has 120 hours left on its 2,500-hour lamp, or about 11 days at this pace.",
    "The reserve was a strip from 20 to 60 miles (30 to 100 km) wide.",
    "At 5 feet 4 inches (1.63 m), she was shorter than most.",
    "It was 1.72 m (5 ft 8 in) high.",
    "Weighing 5st 5lbs (34kg), he was the heaviest.",
    # conversions rounded as reference works round them; a temperature's change
    "The building was 610 feet (190 m) tall and 330 ft (100 m) long.",
    "It nests at elevations of up to 5,000 m (16,000 ft).",
    "The average temperature has risen by almost 1°C (about 1.3°F).",
    "It's cold up high, around minus 12 degrees Celsius, or about 10 degrees Fahrenheit.",
    # a count of something else than the amount is each of; another amount taking part
    "At $42 per face per week, four weeks comes to $1,176.",
    "At the reported prices, those sales come to $15,540, an average of $11.10 per dozen.",
    "Curlew costs $115.00 a night, so with the $35.00 cleaning fee your stay comes to $380.00.",
    "Three hours at $65 an hour comes to $195, plus $98 for Party Platter B.",
    "If you add a drink, each class is $32, so all three would come to $104.",
    # a percentage that is no change: an age band of a population
    "The population was 26.3% under 18, 13.6% from 18 to 24, 30.7% from 25 to 44.",
    "The song got maximum points from 12 points from eighteen of 41 countries, or 43.9%.",
])
def test_what_is_not_one_value_worked_out_of_others_gets_no_verdict(sentence):
    assert checked(sentence) is None


FISH = json.dumps({"order_id": "FM-3381", "lines": [
    {"item": "Turbot, whole", "kg": 6.5, "price_per_kg_cents": 5400},
    {"item": "Halibut fillet", "kg": 8.2, "price_per_kg_cents": 3980},
    {"item": "Langoustines", "kg": 3.0, "price_per_kg_cents": 4650}],
    "delivery_cents": 1500})  # 351.00 + 326.36 + 139.50 = 816.86 of fish, 831.86 in all


def evidence(context, sentence):
    return ContextEvidence.build([context]).features(sentence)


def test_a_worked_out_value_the_sentence_contradicts_rests_on_value_changed():
    """A total the result lacks is only marked (value_worked_out); said beside its own
    operands and wrong by them, it is contradicted."""
    wrong = evidence(FISH, "The fish comes to $816.86, and with the $15.00 delivery charge "
                           "the order totals $841.86.")
    assert wrong.line_changed == "816.86 + 15 = 831.86"
    assert basis(wrong) == "value_changed"
    assert explain(wrong, 0.5, structured=True).kind == "contradicted"
    right = evidence(FISH, "The fish comes to $816.86, and with the $15.00 delivery charge "
                           "the order totals $831.86.")
    assert right.line_changed is None and basis(right) != "value_changed"
    # every value found in the grounding: nothing of the sentence's is worked out here
    stated = json.dumps({"weight_kg": 2240, "weight_t": 22.4})
    assert evidence(stated, "It weighs 2,240 kg, or about 22.4 tonnes.").line_changed is None


def test_check_redacts_arithmetic_that_does_not_hold():
    runner = CliRunner()
    answer = ("Your order FM-3381 has three lines. "
              "The fish comes to $816.86, and with the $15.00 delivery charge the order "
              "totals $841.86.")
    r = runner.invoke(app, ["check", "--context", FISH, "-q", "What does it come to?",
                            "-a", answer, "--json"])
    assert r.exit_code == 1, r.output
    last = json.loads(r.stdout)["sentences"][-1]
    assert last["action"] == "redact" and last["released"] != last["original"]
    assert last["explanation"]["basis"] == "value_changed"
    assert last["explanation"]["evidence"] == "816.86 + 15 = 831.86"
