"""A total over a tool result's records said otherwise, and a change between two values
that a sentence states said otherwise (guardrail.evidence.misadded, .selfcheck), read through
ContextEvidence, the judge and `guardrail check` with the real detector."""

import json

from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis, explain
from guardrail.evidence.selfcheck import misworked
from guardrail.evidence.values import numbers

# four order lines: 12 x $18.50 + 6 x $21.00 + 3 x $74.00 + 4 x $9.50 = $608.00
ORDER = json.dumps({"order_no": "BR-8842", "lines": [
    {"item": "Chanter reed, medium", "qty": 12, "unit_price_cents": 1850},
    {"item": "Chanter reed, medium-hard", "qty": 6, "unit_price_cents": 2100},
    {"item": "Drone reed set", "qty": 3, "unit_price_cents": 7400},
    {"item": "Reed protector case", "qty": 4, "unit_price_cents": 950}],
    "discount_pct": 10, "shipping_cents": 1500})
# five bells weighing 4,027 kg between them, cast in five years
BELLS = json.dumps({"tower": "St Mary", "bells": [
    {"bell": i + 1, "weight_kg": w, "cast_year": y} for i, (w, y) in
    enumerate([(310, 1788), (402, 1788), (655, 1843), (1090, 1843), (1570, 1911)])]})


def evidence(context, sentence):
    return ContextEvidence.build([context]).features(sentence)


def test_a_total_over_every_record_said_near_it_and_not_it_is_a_value_changed():
    wrong = evidence(ORDER, "Before the discount, the items add up to $628.00.")
    assert wrong.line_changed == "the records' qty x unit price cents add up to 608"
    assert basis(wrong) == "value_changed"
    assert explain(wrong, 0.5, structured=True).kind == "contradicted"
    heavy = evidence(BELLS, "The five bells have a combined weight of 4,207 kilograms.")
    assert heavy.line_changed == "the records' weight kg add up to 4,027"
    # the right totals are found, and nothing is said to change
    for right in ("Before the discount, the items add up to $608.00.",
                  "The five bells have a combined weight of 4,027 kilograms."):
        ev = evidence(ORDER if "$" in right else BELLS, right)
        assert ev.missing_numbers == () and ev.line_changed is None, right


def test_a_total_with_something_added_or_taken_off_or_far_from_the_records_is_only_missing():
    # a discount taken and shipping added: $562.20 is right, and no rule reproduces it
    for sentence in ("The 10% discount takes $60.80 off, and shipping adds $15.00, for a "
                     "total of $562.20.",
                     "With the $15.00 shipping, the order totals $623.00.",  # beside it
                     "After the discount, the items add up to $547.20.",
                     "Altogether the order comes to $410.00.",  # a third off: some lines
                     "If you add another case, the items would add up to $617.50.",
                     "Your order has 25 items at $608.00 altogether."):  # no whole cue...
        ev = evidence(ORDER, sentence)
        assert ev.line_changed is None, sentence
    # ...and no key of the records is named for a value other than money or one in the
    # unit of the one key in its dimension, nor two keys
    assert evidence(BELLS, "Together they weigh 4,207 kilograms.").line_changed \
        == "the records' weight kg add up to 4,027"
    assert evidence(BELLS, "Together they were cast 4,207 times.").line_changed is None
    jobs = json.dumps({"jobs": [{"job": j, "labor_cents": a, "parts_cents": b} for j, a, b in
                                [("platen", 6500, 7800), ("ribbon", 2500, 900),
                                 ("keys", 4000, 1200)]]})  # labor $130 in all, parts $99
    assert evidence(jobs, "Labor and parts together came to $143.").line_changed is None
    assert evidence(jobs, "Labor came to $143 altogether.").line_changed \
        == "the records' labor cents add up to 130"


def test_another_amount_of_its_kind_in_its_part_is_an_operand_or_a_part():
    # "$4,197.00, with ... $1,648.00": the second amount may be a part of the first, or
    # what it was worked out from; neither total is read (the right one is $4,179.00)
    routes = json.dumps({"routes": [{"name": n, "passengers": p, "revenue_cents": c} for n, p, c in
                                    [("Strathmore Loop", 412, 164800), ("Coire", 276, 110400),
                                     ("Glen Arran", 198, 89100), ("Tarbet", 134, 53600)]]})
    assert evidence(routes, "Fare revenue totalled $4,197.00.").line_changed \
        == "the records' revenue cents add up to 4,179"
    assert evidence(routes, "Fare revenue totalled $4,197.00, with the Strathmore Loop "
                    "taking $1,648.00.").line_changed is None


def test_a_total_named_by_a_key_is_that_keys_only_where_the_key_may_hold_the_value():
    # "in total" names ``spots total``, which holds no hours: 9 hours is worked out (6 x 90
    # minutes), not a value of that field; a count of spots in total still reads the key
    course = json.dumps({"weeks": 6, "session_length_min": 90, "spots_total": 10,
                         "spots_taken": 7})
    hours = evidence(course, "That adds up to 9 hours of training in total.")
    assert hours.works_out and basis(hours) == "value_worked_out"
    spots = evidence(course, "There are 12 spots in total.")
    assert not spots.works_out and basis(spots) == "value_missing"


def test_a_change_between_two_values_the_sentence_states_said_otherwise():
    s = "The covered area grew from 310 to 465 square kilometres, an increase of 175."
    assert misworked(s, [n for n in numbers(s) if n.value == 175], numbers(s)) \
        == "465 - 310 = 155"
    context = json.dumps({"coverage_km2": {"2023": 310, "2024": 465}})
    wrong = evidence(context, s)
    assert wrong.line_changed == "465 - 310 = 155" and basis(wrong) == "value_changed"
    right = evidence(context, s.replace("175", "155"))
    assert right.missing_numbers == () and right.line_changed is None
    # a third value of its kind, an operand the grounding lacks, or a change from a value
    # it does not state ("rose by 12 to 140, against 95 a year ago"): no verdict
    bookings = json.dumps({"bookings": {"this_year": 140, "last_year": 95}})
    assert evidence(bookings, "Bookings rose by 12 to 140, against 95 a year ago."
                    ).line_changed is None
    for other in ("The covered area grew from 310 to 465 square kilometres over 3 years, "
                  "an increase of 175.",
                  "The covered area grew from 310 to 485 square kilometres, an increase "
                  "of 175."):
        assert evidence(context, other).line_changed is None, other


def test_check_redacts_a_miscounted_total_that_it_marked_before():
    runner = CliRunner()
    answer = ("It includes 12 medium chanter reeds at $18.50 each. "
              "Before the discount, the items add up to $628.00.")
    r = runner.invoke(app, ["check", "--context", ORDER, "-q", "What does it come to?",
                            "-a", answer, "--json"])
    assert r.exit_code == 1, r.output
    last = json.loads(r.stdout)["sentences"][-1]
    assert last["action"] == "redact" and last["released"] != last["original"]
    assert last["explanation"]["basis"] == "value_changed"
    assert last["explanation"]["evidence"] == "the records' qty x unit price cents add up to 608"


def test_line_totals_multiply_a_price_per_thing_by_the_count_of_those_things():
    """``price per skein cents`` times ``skeins``, not ``skein weight g``: 40 x $14.50 +
    25 x $8.90 + 30 x $16.20 = $1,288.50 (2cb0a50 paired the price with the weight only,
    so a wrong total over the lines passed as unverified arithmetic)."""
    yarn = json.dumps({"order_id": "WM-1020", "lines": [
        {"yarn": y, "skeins": n, "skein_weight_g": g, "price_per_skein_cents": c}
        for y, n, g, c in [("Oatmeal DK", 40, 100, 1450), ("Peat 4-ply", 25, 50, 890),
                           ("Slate Aran", 30, 100, 1620)]]})
    wrong = evidence(yarn, "Together the yarn comes to $1,312.50 before any shipping.")
    assert wrong.line_changed == "the records' skeins x price per skein cents add up to 1,288.50"
    right = evidence(yarn, "Together the yarn comes to $1,288.50 before any shipping.")
    assert right.missing_numbers == () and right.line_changed is None


def test_a_total_of_a_key_that_counts_things_is_a_count_of_any_noun():
    """``count`` over the records: "153 individual birds" is a total of it, though
    "individual" names no key (2cb0a50 read the value as no amount of any key)."""
    birds = json.dumps({"survey": "Garden count", "tallies": [
        {"observer": o, "species": s, "count": c} for o, s, c in
        [("Ana", "sparrow", 40), ("Ben", "starling", 35), ("Cy", "blackbird", 38),
         ("Di", "robin", 30)]]})
    wrong = evidence(birds, "Added together, the four of you counted 153 individual birds.")
    assert wrong.line_changed == "the records' count add up to 143"
    assert evidence(birds, "Added together, the four of you counted 143 individual "
                           "birds.").line_changed is None


# seven releases into three rivers; the four into the River Lune add up to 39,900 fish
RELEASES = "\n".join(["release_id,hatchery,river,stage,fish_count,avg_length_mm"] + [
    f"RL-{i},{h},River {r},{s},{n},{mm}" for i, (h, r, s, n, mm) in enumerate([
        ("Ashbeck", "Lune", "smolt", 8400, 142), ("Ashbeck", "Lune", "smolt", 6100, 138),
        ("Corran Falls", "Esk", "parr", 11800, 74), ("Corran Falls", "Esk", "smolt", 3200, 165),
        ("Ashbeck", "Wenning", "smolt", 5700, 140), ("Holm Mill", "Lune", "fry", 20500, 31),
        ("Holm Mill", "Lune", "smolt", 4900, 136)], 301)])
# two paludiers' pans: coarse and fleur de sel in kilograms, each a key of its own
PANS = json.dumps({"pans": [
    {"pan": "OE-01", "paludier": "Yann Le Gall", "gros_sel_kg": 2380, "fleur_de_sel_kg": 141},
    {"pan": "OE-02", "paludier": "Yann Le Gall", "gros_sel_kg": 2210, "fleur_de_sel_kg": 126},
    {"pan": "OE-03", "paludier": "Anais Bertho", "gros_sel_kg": 2050, "fleur_de_sel_kg": 118},
    {"pan": "OE-04", "paludier": "Anais Bertho", "gros_sel_kg": 2760, "fleur_de_sel_kg": 155}]})


def test_a_total_over_a_group_the_sentence_names_said_near_it_and_not_it():
    wrong = evidence(RELEASES, "Altogether that comes to 41,900 fish for the Lune.")
    assert wrong.line_changed == "the fish count of the Lune records add up to 39,900"
    assert basis(wrong) == "value_changed"
    # the group's total, and a total over every record, are read as such
    assert evidence(RELEASES, "Altogether that comes to 39,900 fish for the Lune."
                    ).missing_numbers == ()
    assert evidence(RELEASES, "Altogether 60,600 fish were released.").missing_numbers == ()
    # far from the group's total: arithmetic no rule reproduced, only marked
    far = evidence(RELEASES, "Altogether that comes to 47,900 fish for the Lune.")
    assert far.line_changed is None and basis(far) == "value_worked_out"


def test_a_groups_total_names_its_key_or_the_one_key_of_its_unit():
    # coarse and fleur de sel added: neither key's total, nor a key the sentence names
    both = evidence(PANS, "Yann Le Gall's two pans together produced 4,857 kg.")
    assert both.line_changed is None and basis(both) == "value_worked_out"
    # the coarse salt named: its key's total said otherwise
    coarse = evidence(PANS, "Yann Le Gall's two pans together produced 4,857 kg of gros salt.")
    assert basis(coarse) == "value_changed"


def test_nautical_miles_name_the_one_key_of_their_dimension():
    voyages = json.dumps({"vessel": "Polar Wren", "voyages": [
        {"voyage_id": f"PW-250{i}", "distance_nm": d, "booked": b}
        for i, (d, b) in enumerate([(520, 98), (310, 112), (640, 74), (545, 41)], 1)]})
    wrong = evidence(voyages, "Altogether the four voyages cover 2,150 nautical miles.")
    assert wrong.line_changed == "the records' distance nm add up to 2,015"
    assert evidence(voyages, "Altogether the four voyages cover 2,015 nautical miles."
                    ).missing_numbers == ()


# five tables: four 12 ft snooker tables take $4,417.50 between them, the pool table $768
TABLES = json.dumps({"club": "Crucible Cue Club", "tables": [
    {"table": i, "type": t, "hours_booked": h, "revenue_usd": r} for i, (t, h, r) in
    enumerate([("12 ft snooker", 142, 1349.0), ("12 ft snooker", 118, 1121.0),
               ("12 ft snooker", 131, 1244.5), ("7 ft pool", 96, 768.0),
               ("12 ft snooker", 74, 703.0)], 1)]})


def test_a_group_is_named_by_the_words_a_value_holds_beside_its_number():
    """``type: "12 ft snooker"`` names its records "snooker" as ``type: snooker`` would;
    the number and unit beside it name nothing."""
    wrong = evidence(TABLES, "Together the four snooker tables took $4,317.50.")
    assert wrong.line_changed == "the revenue usd of the snooker records add up to 4,417.50"
    assert basis(wrong) == "value_changed"
    right = evidence(TABLES, "Together the four snooker tables took $4,417.50.")
    assert right.missing_numbers == () and right.line_changed is None


FLIGHTS = json.dumps({"pilot": "Ruth Calloway", "flights": [
    {"date": f"2025-08-{d:02d}", "duration_min": m, "distance_km": k}
    for d, m, k in [(3, 42, 12.4), (10, 65, 28.0), (17, 12, 2.1), (24, 55, 3.5),
                    (31, 88, 41.3)]]})  # 262 minutes in the air


def test_a_key_in_minutes_adds_up_and_a_minimum_does_not():
    wrong = evidence(FLIGHTS, "Your total airtime came to 282 minutes.")
    assert wrong.line_changed == "the records' duration min add up to 262"
    assert evidence(FLIGHTS, "Your total airtime came to 262 minutes.").missing_numbers == ()
    # "min" of a key in another unit is a minimum: minimums add up to nothing
    lows = json.dumps({"days": [{"day": d, "min_temp_c": t} for d, t in
                                [(1, 4.0), (2, 5.5), (3, 3.0), (4, 6.0)]]})
    assert evidence(lows, "The lows added up to 20 degrees.").line_changed is None


def test_a_total_said_to_come_to_is_the_records_unless_a_discount_may_take_part():
    """ORDER holds a discount and shipping: "the order comes to $X" names no key and may
    be after them (only marked); said before the discount, or naming the items' key, the
    records' total is what it must be."""
    assert evidence(ORDER, "Before the discount, the reeds come to $628.00."
                    ).line_changed == "the records' qty x unit price cents add up to 608"
    after = evidence(ORDER, "The order comes to $562.20.")
    assert after.line_changed is None and basis(after) == "value_worked_out"
    # no discount, tax or fee in the grounding: "come to" reads the records' total
    plain = json.loads(ORDER)
    del plain["discount_pct"], plain["shipping_cents"]
    assert evidence(json.dumps(plain), "The order comes to $628.00."
                    ).line_changed == "the records' qty x unit price cents add up to 608"
    assert evidence(json.dumps(plain), "The order comes to $608.00.").missing_numbers == ()


def test_a_rate_per_period_times_its_count_of_periods_is_a_line_total():
    """``weeks`` x ``weekly rate cents`` per permit: 6 x $35 + 4 x $27.50 + 2 x $27.50
    = $375."""
    permits = json.dumps({"permits": [
        {"permit_id": 7710 + i, "plate": p, "weeks": w, "weekly_rate_cents": r}
        for i, (p, w, r) in enumerate([("KX21 PLM", 6, 3500), ("LB19 TRW", 4, 2750),
                                       ("YD70 HNE", 2, 2750)])],
        "discount_pct": 10})
    wrong = evidence(permits, "Before the discount the permits add up to $395.00.")
    assert wrong.line_changed == "the records' weeks x weekly rate cents add up to 375"
    right = evidence(permits, "Before the discount the permits add up to $375.00.")
    assert right.missing_numbers == () and right.line_changed is None


def test_a_key_named_in_the_plural_is_read_beside_a_discount():
    """"the fees" names ``fee_eur`` (the singular or the plural): a total of the key the
    sentence names is the records' even where the grounding holds a discount."""
    gigs = json.dumps({"gigs": [{"venue": v, "fee_eur": f} for v, f in
                                [("Aula", 4200), ("Kesselhaus", 5600), ("Mosaik", 3900),
                                 ("Stadtpark", 5700)]], "agency_discount_pct": 5})
    wrong = evidence(gigs, "In all, the fees add up to €19,600.")
    assert wrong.line_changed == "the records' fee eur add up to 19,400"
    assert evidence(gigs, "In all, the fees add up to €19,400.").missing_numbers == ()
    # naming no key, a total near the records' may be after the discount: only marked
    assert evidence(gigs, "In all, the bill comes to €18,430.").line_changed is None


def test_a_group_in_the_evidence_is_named_as_the_answer_names_it():
    """The evidence names a group in the answer's words, also where the sentence before
    named it ("Together they took ..."), not by the stems it is matched on ("snooke")."""
    said = ContextEvidence.build([TABLES], "").features(
        "Together they took $4,317.50.", "Four of the tables are 12 ft snooker tables. ")
    assert said.line_changed == "the revenue usd of the snooker records add up to 4,417.50"
    said = ContextEvidence.build([RELEASES], "").features(
        "Together they come to 41,900 fish.", "Four of the releases went into the River Lune. ")
    assert said.line_changed == "the fish count of the Lune records add up to 39,900"


# a week of steps: 44,790 metres between them, 44.79 km or about 27.8 miles
WEEK = json.dumps({"device": "Pulse 5", "days": [
    {"date": f"2025-05-{5 + i:02d}", "steps": s, "distance_m": m} for i, (s, m) in
    enumerate([(8412, 6230), (5120, 3790), (11876, 8950), (6034, 4470), (9870, 7310),
               (14220, 10850), (4310, 3190)])]})
FEES = json.dumps({"class": "Starfish 3", "fee_per_child_cents": 8500, "enrolled": [
    {"name": n, "fee_paid_cents": c} for n, c in
    [("Maya", 8500), ("Leo", 7650), ("Aarav", 8500), ("Sofia", 7650), ("Finn", 0)]]})


def test_a_total_said_in_another_unit_where_its_digits_are_a_thousand_times_the_keys():
    """"about 44.8 miles" where the metres add up to 44,790: the digits of the total in
    kilometres, said in miles."""
    wrong = evidence(WEEK, "Altogether you covered about 44.8 miles on foot.")
    assert wrong.line_changed and "distance m" in wrong.line_changed
    for right in ("Altogether you covered about 44.8 kilometres on foot.",
                  "Altogether you covered about 27.8 miles on foot."):
        assert evidence(WEEK, right).line_changed is None, right


def test_what_a_class_has_collected_is_a_total_of_its_records():
    assert evidence(FEES, "So far the class has collected $341 in fees.").line_changed \
        == "the records' fee paid cents add up to 323"
    assert evidence(FEES, "So far the class has collected $323 in fees.").line_changed is None


# a week of meter readings: 75.7 kWh by day and 47.9 kWh by night, 123.6 kWh in all
METER = json.dumps({"meter_id": "SM-0091", "readings": [
    {"date": f"2025-01-{13 + i}", "day_kwh": d, "night_kwh": n, "estimated": False}
    for i, (d, n) in enumerate([(9.8, 6.2), (10.4, 5.9), (8.7, 6.5), (11.2, 7.1), (9.1, 6.0),
                                (13.6, 8.4), (12.9, 7.8)])]})
INVOICES = ("invoice_id,pickup_date,pieces,amount_usd,payment_status\n"
            "INV-2201,2025-04-02,18,54.00,paid\nINV-2214,2025-04-09,22,66.00,paid\n"
            "INV-2230,2025-04-16,15,22.50,paid\nINV-2245,2025-04-23,20,60.00,unpaid\n"
            "INV-2258,2025-04-30,12,48.00,unpaid\n")


def test_a_total_in_a_unit_two_keys_hold_is_theirs_together():
    wrong = evidence(METER, "Over the week your meter recorded 131.6 kWh in total.")
    assert wrong.line_changed == "the records' day kwh and night kwh add up to 123.60"
    assert evidence(METER, "Over the week your meter recorded 123.6 kWh in total."
                    ).line_changed is None


def test_a_group_s_total_is_of_its_amounts_not_of_an_id_the_sentence_names():
    """"invoices" names ``invoice id``, whose values add up to nothing; the amount of
    the paid ones is $142.50."""
    wrong = evidence(INVOICES, "The first three invoices have been paid and come to $152.50.")
    assert wrong.line_changed == "the amount usd of the paid records add up to 142.50"
    assert evidence(INVOICES, "The first three invoices have been paid and come to $142.50."
                    ).line_changed is None
