"""Units of measure (guardrail.evidence.units): a value converted is found, a value given
another unit is changed, read through ContextEvidence as the judge reads it."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import explain
from guardrail.evidence.units import Quantities, close, key_unit, unit_after
from guardrail.evidence.values import numbers

TOWER = json.dumps({"name": "Eiffel Tower", "height_m": 330, "weight_tonnes": 7300,
                    "forecast": {"high_c": 25, "low_c": 14}, "pm25": "13 µg/m³"})


def unit_of(text: str):
    (n,) = [n for n in numbers(text) if n.kind == "number"]
    u = unit_after(text, n)
    return u and u.name


@pytest.mark.parametrize("text, unit", [
    ("The tower is 330 metres tall.", "m"), ("a 330-metre tower", "m"), ("It is 330m.", "m"),
    ("about 1,083 feet", "ft"), ("It was 25 °C.", "°c"), ("77 degrees Fahrenheit", "°f"),
    ("90 milligrams per cubic meter", "mg/m3"), ("13 µg/m³ of fine particles", "ug/m3"),
    ("16 million pounds", "lb"), ("60 mph", "mph"), ("3 miles per hour", "mph"),
    ("4 GB of RAM", "gb"), ("5 km away", "km"), ("2 hectares", "ha"),
    ("a 5,000-square-foot lot", "ft2"), ("about 53 minutes", "min"), ("a 60-second TTL", "s"),
    ("3 days", "day"),
    # not units: a preposition, a bare degree, a count
    ("5 in the morning", None), ("It was 25° out.", None), ("12 stores", None),
])
def test_the_unit_written_after_a_value(text, unit):
    assert unit_of(text) == unit


@pytest.mark.parametrize("key, unit", [
    ("height m", "m"), ("forecast > high c", "°c"), ("forecast > low temp f", "°f"),
    ("high (°c)", "°c"), ("wind (km/h)", "km/h"), ("weight tonnes", "t"),
    ("weight in kg", "kg"), ("distance km", "km"), ("size gb", "gb"),
    # a letter is a unit only where the key says what it measures
    ("grade c", None), ("duration m", None), ("name", None), ("pm25", None), ("m", None),
    # a parent names the unit of every key under it; its letters do not count
    ("dimensions cm > height", "cm"), ("specs > size m > width", None),
    ("jobs 2 > duration s", "s"), ("duration min", "min"), ("retention days", "day"),
    ("cancellation policy 2 > days before arrival min", None), ("weight kg min", "kg"),
    # a rate is neither of its units
    ("avg pace s per km", None), ("idle fee usd per min", None),
])
def test_the_unit_a_key_names(key, unit):
    u = key_unit(key)
    assert (u and u.name) == unit


def test_close_converts_within_the_written_precision_or_one_percent():
    def said(text):
        (n,) = [n for n in numbers(text) if n.kind == "number"]
        return n, unit_after(text, n)
    m = unit_after("1 m", numbers("1 m")[0])
    c = unit_after("1 °C", numbers("1 °C")[0])
    assert close(*said("1,083 feet"), 330, m)        # 1,082.68
    assert close(*said("1,080 feet"), 330, m)        # rounded: within 1 %
    assert not close(*said("1,200 feet"), 330, m)
    assert close(*said("about 1,150 feet"), 330, m)  # hedged: within 10 %
    assert close(*said("77 °F"), 25, c) and close(*said("298 kelvin"), 25, c)
    assert not close(*said("25 °F"), 25, c)
    assert not close(*said("330 kg"), 330, m)        # another dimension never matches


def test_quantities_find_a_converted_value_and_a_changed_unit():
    lines = ["height m: 330", "weight tonnes: 7300", "pm25: 13 µg/m³", "floors: 3"]
    q = Quantities(lines)
    stated = {330.0, 7300.0, 13.0, 3.0}

    def check(sentence):
        return q.check(sentence, numbers(sentence), lambda n: n.value in stated)
    assert check("It is about 1,083 feet tall.").converted and not check(
        "It is about 1,083 feet tall.").changed
    assert check("It is 330 m tall.") == check("It is 330 metres tall.")  # as written
    got = check("It is 330 feet tall.")
    assert got.changed == "height m: 330" and got.changed_at and not got.converted
    assert check("It weighs 7,300 kilograms.").changed == "weight tonnes: 7300"
    assert check("It logged 13 mg/m³ of fine particles.").changed == "pm25: 13 µg/m³"
    # "pounds" may be money: converted when it fits, a changed unit only where it is
    # weighed ("weighs 4.8 pounds" for ``total weight kg: 4.8``) or a mass of a thing
    assert check("It weighs about 16 million pounds.").converted
    assert check("It sold for 7,300 pounds.").changed is None
    assert check("It weighs 7,300 pounds.").changed == "weight tonnes: 7300"
    assert check("It has a weight of about 7,300 lbs.").changed == "weight tonnes: 7300"
    assert check("The loan of 7,300 pounds weighs on it.").changed is None
    # a number whose context value has no unit, or one of another dimension: no verdict
    assert check("It has 3 km of corridors.").changed is None


def test_a_tool_result_converted_by_the_answer_is_supported_and_a_changed_unit_is_not():
    ev = ContextEvidence.build([TOWER], "Tell me about the tower")
    for ok in ("The Eiffel Tower is about 1,083 feet tall.", "It weighs about 16 million pounds.",
               "The forecast high is 77 degrees Fahrenheit.", "Its height is 1,083 feet.",
               "The tower is 330 meters tall."):
        got = ev.features(ok)
        assert not got.missing_numbers and got.line_changed is None, ok
        assert got.field_changed is None, ok
    for bad, line in (("The Eiffel Tower is 330 feet tall.", "height m: 330"),
                      ("It weighs 7,300 kilograms.", "weight tonnes: 7300"),
                      ("The forecast high is 25 degrees Fahrenheit.", "forecast > high c: 25"),
                      ("Its height is 330 feet.", "height m: 330")):
        got = ev.features(bad)
        assert got.missing_numbers, bad
        assert line in (got.line_changed, got.field_changed), bad
        assert explain(got, 0.5).kind == "contradicted", bad


def test_a_hedged_conversion_carries_no_wrong_value_with_it():
    """"about 1,109 feet" is within a hedge's 10 % of 330 m, and 338 m is exactly 1,109
    feet: the wrong 338 is not found by way of the approximate conversion."""
    ev = ContextEvidence.build([TOWER], "Tell me about the tower")
    wrong = "The tower is 338 meters tall, which is about 1,109 feet."
    got = ev.features(wrong)
    assert [wrong[n.start:n.end] for n in got.missing_numbers] == ["338"]
    assert not ev.features("The tower is 330 meters tall, which is about 1,083 feet."
                           ).missing_numbers


def test_a_prose_context_in_metres_supports_feet():
    ev = ContextEvidence.build(["The Eiffel Tower is 330 metres tall. It opened in 1889."])
    assert not ev.features("It is roughly 1,080 feet tall.").missing_numbers
    changed = ev.features("It is 330 feet tall.")
    assert changed.line_changed == "The Eiffel Tower is 330 metres tall."


def test_a_named_field_compares_values_in_its_unit():
    ev = ContextEvidence.build([json.dumps([{"city": "Lyon", "wind_kmh": 20},
                                            {"city": "Nice", "wind_kmh": 32}])])
    assert ev.features("In Lyon the wind is about 12 mph.").field_changed is None
    assert ev.features("In Lyon the wind is 20 mph.").field_changed == "item 1 > wind kmh: 20"


def test_a_share_of_a_unit_said_in_words():
    ev = ContextEvidence.build([json.dumps({"hotel": "Casa Azul", "distance_to_center_km": 1.2,
                                            "dimensions_cm": {"height": 104}})])
    assert not ev.features("It is roughly three quarters of a mile from the centre."
                           ).missing_numbers
    assert not ev.features("It is about 41 inches tall.").missing_numbers
    assert ev.features("It is about 50 inches tall.").missing_numbers


def test_a_duration_in_seconds_said_in_minutes():
    ev = ContextEvidence.build([json.dumps({"episode": 142, "duration_s": 3185,
                                            "jobs": [{"name": "lint", "duration_s": 48}]})])
    assert ev.features("It runs about 53 minutes.").missing_numbers == ()
    assert ev.features("Linting took 48 minutes.").line_changed == "jobs 1 > duration s: 48"


def test_a_quantity_said_in_words_converts_as_one_in_digits_does():
    """"within three months" of 90 days is "within 3 months": converted, within the
    half a unit a whole number is written to (or its hedge); a word number that
    converts to no value stays missing."""
    ev = ContextEvidence.build(["Returns are accepted within 90 days of delivery. "
                                "The course runs for 12 weeks."])
    for said in ("You can return it within about three months.",
                 "You can return it within three months.",
                 "You can return it within 3 months.",
                 "The course runs for roughly three months."):
        assert ev.features(said).missing_numbers == (), said
    for said in ("The course runs for about five months.", "It runs for five months.",
                 "You can return it within six months."):
        assert ev.features(said).missing_numbers, said
    # found converted, never changed: the grounding may write its own "five" in words
    leave = ContextEvidence.build(["Staff with five or more years of service accrue an "
                                   "additional 5 days per year."])
    got = leave.features("After five years with the company, you get five extra days.")
    assert got.line_changed is None and got.field_changed is None


def test_a_time_to_live_is_in_seconds_and_a_version_is_no_number():
    dns = json.dumps({"answers": [{"name": "status.example.io", "type": "CNAME", "ttl": 300}]})
    ev = ContextEvidence.build([dns])
    assert ev.features("It is a CNAME with a TTL of 5 minutes.").missing_numbers == ()
    assert ev.features("It is a CNAME with a TTL of 300 minutes.").line_changed
    assert [n.value for n in numbers("after the 2.14.0 rollout at 104.18.22.140, 3.5 km")] == [3.5]


def test_a_negative_value_said_as_its_size_and_currently_names_no_currency():
    battery = json.dumps({"battery_id": "PW-55021", "capacity_kwh": 13.5, "mode": "self_powered",
                          "power_kw": -2.3, "storm_watch": False, "outside_temp_c": -4})
    ev = ContextEvidence.build([battery])
    assert ev.features("It's currently discharging at 2.3 kW in self-powered mode."
                       ).field_changed is None
    assert ev.features("The outside temperature is 4 °C.").field_changed == "outside temp c: -4"
    passport = json.dumps({"application_ref": "PA-2025-0719344", "type": "renewal",
                           "status": "in_process", "currency": "USD"})
    assert ContextEvidence.build([passport]).features(
        "Your routine renewal (PA-2025-0719344) is currently in process.").field_changed is None


def test_short_tons_are_two_thousand_pounds():
    weighbridge = json.dumps({"loads": [{"ticket": 2291, "net_kg": 2260},
                                        {"ticket": 2292, "net_kg": 2095}]})
    ev = ContextEvidence.build([weighbridge])
    # 2,260 kg is 2.49 short tons (2.26 metric); not 2.9 of either
    assert ev.features("The first load came to 2.49 short tons.").missing_numbers == ()
    assert [n.value for n in ev.features("The first load came to 2.9 short tons."
                                         ).missing_numbers] == [2.9]


def test_a_records_unit_that_names_a_scale_reads_its_numbers_in_thousands():
    labs = ContextEvidence.build([json.dumps({"results": [
        {"test": "WBC", "value": 11.8, "unit": "10^3/uL", "ref_high": 11.0},
        {"test": "Hemoglobin", "value": 12.9, "unit": "g/dL", "ref_high": 15.5},
        {"test": "Platelets", "value": 312, "unit": "K/uL", "ref_high": 400}]})])

    def missing(sentence):
        return [n.value for n in labs.features(sentence).missing_numbers]

    assert missing("Your white cell count is 11.8 thousand per microliter.") == []
    assert missing("Your platelets are 312 thousand, within range.") == []
    assert missing("Your white cell count is 12.8 thousand per microliter.") == [12800]
    assert missing("Your hemoglobin is 12.9 thousand.") == [12900]  # its unit names no scale
    wind = ContextEvidence.build([json.dumps({"station": "Pier 4", "value": 7.5,
                                              "unit": "m/s"})])
    assert [n.value for n in wind.features("The wind is 7.5 million.").missing_numbers] \
        == [7500000]  # metres per second are no millions


def test_an_amount_for_each_of_some_things_keeps_its_unit_and_pounds_of_a_thing_are_mass():
    assert key_unit("includes > clay kg per student").name == "kg"
    assert key_unit("fee usd per min") is None and key_unit("fuel l per 100 km") is None
    assert key_unit("weight kg per day") is None   # a rate over time
    clay = ContextEvidence.build([json.dumps({"title": "Intro to Wheel Throwing",
                                              "includes": {"clay_kg_per_student": 2.5}})])

    def missing(sentence):
        return [n.value for n in clay.features(sentence).missing_numbers]

    assert missing("It includes 2.5 pounds of clay per student.") == [2.5]  # kg said as lb
    assert missing("It includes about 5.5 pounds of clay per student.") == []
    assert missing("It includes 2.5 kg of clay per student.") == []


@pytest.mark.parametrize("text, first, unit", [
    ("roughly 97 to 106 °F", "97", "°f"), ("or 32 to about 37 °F, with", "32", "°f"),
    ("between 185 and 296 lb since May", "185", "lb"), ("each around 48-51 MB", "48", "mb"),
    ("from 3.5 to 4 km away", "3.5", "km"),
    # no unit after the second value, or the first has its own: nothing is carried over
    ("won 820 to 801 and edged", "820", None), ("seats 5 to 8, but", "5", None),
    ("12 stores and 30 km of road", "12", None), ("from 2 ft to 1 m", "2", "ft"),
])
def test_a_range_writes_its_unit_once_after_both_values(text, first, unit):
    (n,) = [n for n in numbers(text) if text[n.start:n.end] == first]
    u = unit_after(text, n)
    assert (u and u.name) == unit


def test_a_range_converted_from_a_tool_result_is_found_and_a_wrong_bound_is_not():
    ev = ContextEvidence.build([json.dumps({"load": {"min_c": 0, "max_c": 3, "setpoint_c": 1},
                                            "ambient": {"low_c": 36, "high_c": 41}})])
    ok = ev.features("The load was meant to stay between 0 and 3 °C, or 32 to about 37 °F.")
    assert not ok.missing_numbers
    ok = ev.features("Ambient temperatures were 36 to 41 °C, roughly 97 to 106 °F.")
    assert not ok.missing_numbers
    bad = ev.features("Ambient temperatures were 36 to 41 °C, or 92 to 106 °F.")
    assert [n.value for n in bad.missing_numbers] == [92.0]


INVERTER = "\n".join(["inverter_id: INV-12", "dc_input_voltage_v: 1184", "igbt_temp_c: 91.4",
                      "line_current_a: 12.5", "inlet_pressure_bar: 9.5"])


@pytest.mark.parametrize("text, unit", [
    ("at 1,184 V", "v"), ("about 1.2 kV", "kv"), ("a 230-volt socket", "v"), ("12.5 amps", "a"),
    ("9.5 bar", "bar"), ("about 138 psi", "psi"), ("a 50 Hz grid", "hz"), ("2.4 GHz", "ghz"),
    ("won 3 v the visitors", None),  # a lower-case letter alone is no unit in prose
])
def test_electrical_units_pressure_and_frequency(text, unit):
    assert unit_of(text) == unit


def test_a_key_names_volts_or_amps_only_where_it_says_what_it_measures():
    assert key_unit("dc input voltage v").name == "v"
    assert key_unit("line current a").name == "a"
    assert key_unit("grade a") is None and key_unit("form v") is None


def test_a_value_in_a_unit_the_grounding_holds_is_not_vouched_for_by_a_number_merely_near():
    """"roughly 11.8 kV" is within a hedge's 10 % of the 12 of ``INV-12``; it is a voltage,
    and the grounding's voltage is 1,184 V: it is no value the grounding holds."""
    ev = ContextEvidence.build([INVERTER])
    wrong = ev.features("The DC input is still live, at roughly 11.8 kV.")
    assert [n.value for n in wrong.missing_numbers] == [11.8]
    for ok in ("The DC input is at about 1.2 kV.", "The DC input is at 1,184 V.",
               "The DC input reads roughly 1,180 volts.", "The inlet is at 9.5 bar, about 138 psi.",
               "The line draws about 12 amps."):
        assert not ev.features(ok).missing_numbers, ok
    assert ev.features("The DC input is at 1,350 V.").line_changed == "dc_input_voltage_v: 1184"



def test_a_wrong_total_and_its_conversion_do_not_vouch_for_each_other():
    """"2,200 pounds, or roughly 998 kg": 998 kg is 2,200 lb, and 2,200 is within a hedge's
    10 % of the 2,150 cents of a price; neither is a weight the grounding holds."""
    lines = [{"product": p, "bag_weight_lb": w, "bags": b, "unit_price_cents": c}
             for p, w, b, c in (("Senior pellet", 50, 20, 2495), ("Alfalfa cubes", 50, 12, 2150),
                                ("Beet pulp", 40, 8, 1875), ("Flax", 20, 3, 4150))]
    ev = ContextEvidence.build([json.dumps({"order_id": "ORD-77215", "lines": lines})])
    wrong = ev.features("All together the order weighs 2,200 pounds, or roughly 998 kg.")
    assert [n.value for n in wrong.missing_numbers] == [2200.0, 998.0]


def test_a_keys_total_given_in_another_unit_of_its_dimension_is_a_unit_changed():
    """The rounds' ``waste tonnes`` add up to 331.6: "about 332 kilograms" gives that total's
    digits in kilograms, a changed unit, not arithmetic no rule reproduces; "about 332
    tonnes" is the total, and a total in kilograms converted (331,600 kg) is no change."""
    rounds = json.dumps({"council": "Ashbury Vale", "rounds": [
        {"round_id": f"AV-{i}", "waste_tonnes": t, "households": h}
        for i, (t, h) in enumerate([(84.6, 1420), (79.1, 1385), (92.3, 1510), (75.6, 1290)])]})
    ev = ContextEvidence.build([rounds])
    wrong = ev.features("General waste came to about 332 kilograms across the four rounds.")
    assert wrong.line_changed == "rounds 1 > waste tonnes: 84.6"
    assert explain(wrong, 0.5).kind == "contradicted"
    for ok in ("General waste came to about 332 tonnes across the four rounds.",
               "General waste came to 331,600 kilograms across the four rounds."):
        assert ev.features(ok).line_changed is None, ok


def test_a_concentration_or_a_rate_is_neither_of_its_units():
    said = "with 9.1 mg/L of dissolved oxygen, 3 kg per day of feed and 5 kg of flour"
    assert [unit_after(said, n) and unit_after(said, n).name for n in numbers(said)] \
        == [None, None, "kg"]
    assert key_unit("dissolved_oxygen_mg_l") is None
    assert key_unit("flow_rate_l_per_s") is None
    assert key_unit("weight_kg").name == "kg"
    raceway = "water_temp_c: 11.8\ndissolved_oxygen_mg_l: 9.1\nflow_rate_l_per_s: 85"
    ev = ContextEvidence.build([raceway])
    ok = ev.features("The water is 11.8 °C with 9.1 mg/L of dissolved oxygen and a flow of "
                     "85 litres per second.")
    assert ok.field_changed is None and not ok.missing_numbers
    wrong = ev.features("There is 7.4 mg/L of dissolved oxygen.")
    assert [n.value for n in wrong.missing_numbers] == [7.4] and not wrong.field_agreed


def test_a_thickness_in_micrometres_said_in_mils_is_a_unit_changed():
    """``paint_thickness_um`` read back as thousandths of an inch: the numbers are the
    result's, the unit is not (a mil is 25.4 µm); converted, it is found."""
    job = json.dumps({"job_id": "GB-J-7731", "paint_thickness_um": {
        "hood": 118, "driver_door": 131, "trunk": 112}, "water_used_l": 38})
    ev = ContextEvidence.build([job])
    wrong = ev.features("Paint thickness ranged from 112 mils on the trunk to 131 mils on "
                        "the driver's door.")
    assert wrong.line_changed is not None and "112" in wrong.line_changed
    right = ev.features("Paint thickness ranged from 112 microns on the trunk to about "
                        "5.2 mils on the driver's door.")
    assert right.line_changed is None and not right.missing_numbers
    assert unit_after("It costs $3 mil a year.", numbers("It costs $3 mil a year.")[0]) is None
