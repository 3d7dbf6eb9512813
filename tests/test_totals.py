"""Totals over a tool result's records without a cue word (guardrail.evidence.totals):
found where chance seldom makes one, read through ContextEvidence."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.totals import CHANCE, Column, totalled, within_record
from guardrail.evidence.values import numbers

SOLAR = json.dumps({"site": "SLR-1", "daily": [
    {"date": f"2024-06-{10 + i}", "energy_wh": e, "export_wh": x}
    for i, (e, x) in enumerate([(41230, 19130), (38760, 17240), (22410, 6980),
                                (44870, 23650), (45120, 24310), (39980, 18870),
                                (30050, 11420)])]})
PAYSLIP = json.dumps({"employee": "E-10482", "gross_cents": 291688, "deductions": [
    {"name": "401(k)", "pre_tax": True, "amount_cents": 17501},
    {"name": "Medical PPO", "pre_tax": True, "amount_cents": 8450},
    {"name": "Federal income tax", "pre_tax": False, "amount_cents": 26412},
    {"name": "Social Security", "pre_tax": False, "amount_cents": 17561},
    {"name": "Medicare", "pre_tax": False, "amount_cents": 4107},
    {"name": "CO state income tax", "pre_tax": False, "amount_cents": 11692}]})


def missing(context, sentence):
    return [n.value for n in ContextEvidence.build([context]).features(sentence).missing_numbers]


def total(sentence, columns):
    """``totalled`` for the sentence's first value."""
    return totalled(sentence, numbers(sentence)[0], columns)


def test_a_key_added_up_over_the_records_in_the_unit_the_answer_writes():
    # 262,420 Wh over the seven days, 121,600 Wh exported; no "total" in the first
    assert missing(SOLAR, "Your system produced about 262.4 kWh that week.") == []
    assert missing(SOLAR, "Over the week, 121.6 kWh went out to the grid.") == []
    assert missing(SOLAR, "It averaged 37,488.6 Wh a day.") == []  # the mean
    # a total off in its last digit, or in another dimension, is still missing
    assert missing(SOLAR, "Your system produced about 262.9 kWh that week.") == [262.9]
    assert missing(SOLAR, "The panels ran for 262.4 minutes.") == [262.4]


def test_some_of_the_records_added_up_exactly_as_written():
    # the four taxes, not the pre-tax deductions: $264.12 + $175.61 + $41.07 + $116.92
    assert missing(PAYSLIP, "Taxes took $597.72 in total:") == []
    assert missing(PAYSLIP, "Taxes took $597.27 in total:") == [597.27]   # digits swapped
    # a partial sum is exact: no partial sum is read from a hedged value
    assert missing(PAYSLIP, "Taxes took about $597.72.") == [597.72]


def test_a_small_value_is_no_total_since_chance_gives_one_too_easily():
    column = Column("seats", (3.0, 5.0, 2.0, 7.0))
    # 8 = 3 + 5, but 11 partial sums of small counts hit most small values
    assert not total("so 8 of them left", [column])
    # 17 = 3 + 5 + 2 + 7, all of them: two sums tried, width 1, 2 / 17 > CHANCE
    assert 2 / 17 > CHANCE
    assert not total("17 seats", [column])
    big = Column("amount", (26412.0, 17561.0, 4107.0, 11692.0, 8450.0))
    assert total("$59,772 in taxes", [big])   # 2 totals and 26 partial sums: 28 / 59,772
    assert not total("$59,773 in taxes", [big])


def test_temperatures_are_not_added_up():
    column = Column("high c", (20.0, 21.5, 19.0))
    assert not total("60.5 °C in all", [column])


GIFTS = json.dumps({"year": 2024, "gifts": [
    {"date": "2024-02-03", "charity": "Doctors Without Borders", "amount_usd": 100},
    {"date": "2024-04-11", "charity": "City Literacy Project", "amount_usd": 250},
    {"date": "2024-06-20", "charity": "Doctors Without Borders", "amount_usd": 150},
    {"date": "2024-08-02", "charity": "Animal Rescue League", "amount_usd": 40},
    {"date": "2024-09-14", "charity": "Animal Rescue League", "amount_usd": 75},
    {"date": "2024-11-29", "charity": "City Literacy Project", "amount_usd": 500}]})


def test_a_key_added_up_over_the_records_sharing_a_value_the_sentence_names():
    # 40 + 75: a small total, found because the sentence names the charity
    assert missing(GIFTS, "Animal Rescue League: $115 over two donations.") == []
    assert missing(GIFTS, "Doctors Without Borders got $250 in all.") == []
    assert missing(GIFTS, "Animal Rescue League: $125 over two donations.") == [125.0]
    # the same total for a group the sentence does not name is no evidence
    assert missing(GIFTS, "You gave $115 over two donations.") == [115.0]
    assert missing(GIFTS, "City Literacy Project: $115 over two donations.") == [115.0]


def test_a_worked_out_value_in_other_units_is_exact_to_its_last_digit():
    trips = json.dumps({"rides": [{"distance_km": 12.4}, {"distance_km": 16.4},
                                  {"distance_km": 25.6}]})
    assert missing(trips, "In all you rode 54.4 km, or about 33.8 miles.") == []
    # 33.8 miles is 54.4 km; "about 35 miles" is no rounding of it
    assert missing(trips, "In all you rode 54.4 km, or about 35 miles.") == [35.0]


def test_spans_of_time_added_up_over_a_key_that_names_its_unit():
    sessions = json.dumps({"rate_usd": 40, "sessions": [
        {"day": "Mon", "hours": 2.5}, {"day": "Wed", "hours": 3.25}, {"day": "Fri", "hours": 2.0}]})
    assert missing(sessions, "That's 7 hours 45 minutes in all.") == []
    assert missing(sessions, "That's 465 minutes in all.") == []
    assert missing(sessions, "That's 8 hours 15 minutes in all.") == [495.0]
    # a key naming no unit of time is no span
    counts = json.dumps({"days": [{"day": "Mon", "visits": 2.5}, {"day": "Wed", "visits": 3.25},
                                  {"day": "Fri", "visits": 2.0}]})
    assert missing(counts, "That's 7 hours 45 minutes in all.") == [465.0]
    # then priced by the hour: the span, in hours, times the rate it states
    assert missing(sessions, "That's 7.75 hours in all, which at $40 an hour is $310.") == []
    assert missing(sessions, "That's 7.75 hours in all, which at $40 an hour is $320.") \
        == [320.0]


def test_two_values_of_one_record_combined_where_chance_seldom_gives_it():
    milestone = [(65000.0, 71240.0, 12.0, 30.0)]   # budget, cost, tasks done, tasks

    def combined(sentence):
        return within_record(numbers(sentence)[0], milestone)
    assert combined("$6,240 over its budget")            # cost less budget
    assert not combined("$6,420 over its budget")        # digits swapped
    assert not combined("about $6,240 over its budget")  # hedged: no exact working
    assert not combined("18 tasks to go")  # 30 - 12, but 18 results one unit wide: chance
    # no sums: an answer adding a fee the total already holds makes one
    assert not within_record(numbers("£2,420.20 payable")[0], [(2382.2, 38.0)])
    assert within_record(numbers("£2,344.20 before the fee")[0], [(2382.2, 38.0)])


STAMPS = ("catalog_no,country,qty,catalog_value_each_usd,paid_each_usd\n"
          "SG 1,Great Britain,1,425.00,310.00\nSG 2,Great Britain,1,780.00,520.00\n"
          "Scott 11,United States,2,95.00,60.00\nScott 65,United States,4,12.50,6.00\n"
          "SG 33,Canada,1,140.00,115.00\n")


def test_a_total_of_each_records_quantity_times_its_amount_each():
    # 425 + 780 + 2 x 95 + 4 x 12.50 + 140 = 1,585; paid 310 + 520 + 120 + 24 + 115 = 1,089
    assert missing(STAMPS, "The collection has a combined catalogue value of $1,585.") == []
    assert missing(STAMPS, "You paid $1,089 for them.") == []
    # the amounts each added up without their quantities, or a line total changed
    assert missing(STAMPS, "Their combined catalogue value is $1,595.") == [1595.0]
    # one record's line total, where the count it states is the quantity
    order = json.dumps({"order": "GC-30417", "items": [
        {"title": "Kind of Blue", "qty": 1, "unit_price_cents": 3499},
        {"title": "Songs in the Key of Life", "qty": 1, "unit_price_cents": 4299},
        {"title": "Funeral", "qty": 2, "unit_price_cents": 2699},
        {"title": "Outer sleeves", "qty": 1, "unit_price_cents": 1299}],
        "subtotal_cents": 14495, "discount_cents": 1450, "shipping_cents": 899,
        "tax_rate_pct": 8, "tax_cents": 1044, "total_cents": 14988})
    assert missing(order, "The two copies of Funeral come to $53.98 together.") == []
    assert missing(order, "The two copies of Funeral come to $54.98 together.") == [54.98]
    # the products are of a quantity and an amount each, not of any two keys
    books = ("title,pages,price_usd\nA,310,12.50\nB,204,9.00\nC,188,15.00\n")
    assert missing(books, "That is $7,467.00 worth of pages.") == [7467.0]


def test_a_share_the_sentence_states_of_a_value_of_its_record_or_what_is_left():
    quote = json.dumps({"quote": "Q-0612", "site": "22 Linden Ct", "items": [
        {"item": "Takedown", "qty": 1, "unit_price_cents": 240000},
        {"item": "Stump grinding", "qty": 1, "unit_price_cents": 32500},
        {"item": "Crown reduction", "qty": 1, "unit_price_cents": 185000},
        {"item": "Deadwood removal", "qty": 3, "unit_price_cents": 9500}],
        "total_cents": 486000, "deposit_pct": 25, "permit_days": 10})
    assert missing(quote, "They'd want a 25% deposit of $1,215 to book it.") == []
    assert missing(quote, "They'd want a 25% deposit of $1,225 to book it.") == [1225.0]
    # what is left once the share is taken off
    assert missing(quote, "After the 25% deposit, $3,645 is due on completion.") == []
    # a share the grounding does not state is no operand
    assert sorted(missing(quote, "They'd want a 20% deposit of $972 to book it.")) == [20.0, 972.0]


FLIGHT = json.dumps({"operator": "Skyward Balloon Co.", "booking_ref": "SBC-7741",
                     "flight_date": "2025-09-21", "passengers": [
                         {"name": "Elena Ruiz", "weight_kg": 61},
                         {"name": "Omar Ruiz", "weight_kg": 84}],
                     "est_flight_duration_min": 60, "total_experience_hours": 3.5,
                     "price_per_person_cents": 27900, "paid": True})
LOG = json.dumps({"angler": "R. Okafor", "trips": [
    {"trip": 101 + i, "date": f"2025-06-{3 + 7 * i:02d}", "hours_fished": h, "caught": c,
     "kept": k, "largest_length_cm": cm} for i, (h, c, k, cm) in enumerate(
        [(3.5, 6, 3, 41), (2.0, 3, 0, 29), (5.0, 5, 4, 52), (4.0, 8, 5, 38), (3.0, 2, 1, 47)])]})
ROLL = """player,instrument,scheduled,attended,excused,unexcused
Nora Quinn,trumpet,12,12,0,0
Felix Ward,trumpet,12,9,2,1
Grace Osei,horn,12,11,1,0
Liam Byrne,horn,12,7,1,4
Ada Kovac,trombone,12,10,2,0
Ines Duarte,bass trombone,12,8,4,0
Ravi Shah,tuba,12,11,0,1"""


def test_a_count_the_sentence_states_times_a_value_of_its_record():
    assert missing(FLIGHT, "Your two seats came to $558 and are already paid.") == []
    # a product off in its last digit, or said roughly, is still missing
    assert missing(FLIGHT, "Your two seats came to $568 and are already paid.") == [568.0]
    assert missing(FLIGHT, "Your two seats came to about $558.") == [558.0]


def test_a_total_in_hours_tries_only_the_keys_that_are_spans_of_time():
    # 17.5 hours over the trips: against five keys of all kinds the sums tried were too
    # many for the width of "17.5 hours"; only ``hours_fished`` can add up to hours
    assert missing(LOG, "Over 17.5 hours on the water, you landed plenty.") == []
    assert missing(LOG, "Over 17.0 hours on the water, you landed plenty.") == [1020.0]


def test_a_count_followed_by_a_keys_own_word_is_that_keys_total():
    assert missing(ROLL, "That makes six unexcused absences in the section.") == []
    assert missing(ROLL, "That makes five unexcused absences in the section.") == [5.0]
    assert missing(ROLL, "That makes three unexcused absences in the section.") == [3.0]


def test_a_rate_per_unit_times_the_key_in_that_unit_and_a_price_times_the_number_sold():
    green = json.dumps({"as_of": "2025-05-12", "lots": [
        {"origin": "Ethiopia Guji", "on_hand_kg": 142.5, "cost_per_kg_cents": 780},
        {"origin": "Colombia Huila", "on_hand_kg": 48.0, "cost_per_kg_cents": 640},
        {"origin": "Brazil Cerrado", "on_hand_kg": 205.0, "cost_per_kg_cents": 510}]})
    # 1,111.50 + 307.20 + 1,045.50
    assert missing(green, "The green coffee on hand is worth $2,464.20 at cost.") == []
    assert missing(green, "The green coffee on hand is worth $2,446.20 at cost.") == [2446.2]
    machine = json.dumps({"machine": "VM-12", "slots": [
        {"item": "Snickers", "price_cents": 175, "sold": 44},
        {"item": "Sun Chips", "price_cents": 150, "sold": 31},
        {"item": "Kind Bar", "price_cents": 250, "sold": 27}]})
    assert missing(machine, "The machine took $191.00 in sales.") == []  # 77 + 46.5 + 67.5
    assert missing(machine, "The machine took $190.00 in sales.") == [190.0]


def test_a_share_added_to_a_value_of_its_record_where_the_sentence_says_it_is_added():
    trade = json.dumps({"trade_in": "TI-5521", "cash_offer_cents": 16610,
                        "store_credit_bonus_pct": 10, "items": 6})
    assert missing(trade, "As store credit, the 10% bonus would make it $182.71.") == []
    assert missing(trade, "As store credit, the 10% bonus would make it $184.71.") == [184.71]
    # without a word saying it is added, the value with its share is not tried
    assert missing(trade, "As store credit, at 10% it would be $182.71.") == [182.71]


def test_a_keys_total_over_the_records_of_a_group_the_sentence_names():
    pickups = json.dumps({"route": "Compost R2", "pickups": [
        {"date": f"2025-06-{d:02d}", "site": site, "bins_emptied": b, "weight_kg": kg}
        for d, site, b, kg in ((9, "Eastside Depot", 5, 260), (10, "Mill Park", 3, 140),
                               (11, "Eastside Depot", 4, 215), (12, "Mill Park", 2, 96),
                               (13, "Eastside Depot", 4, 224))]})
    assert missing(pickups, "Eastside Depot collected 699 kg from 13 bins.") == []
    assert missing(pickups, "Mill Park collected 236 kg from 5 bins.") == []
    # counts no group or key totals
    assert missing(pickups, "Eastside Depot collected 699 kg from 6 bins.") == [6.0]
    assert missing(pickups, "Eastside Depot collected 699 kg from 12 bins.") == [12.0]


def test_one_value_of_each_record_the_sentence_names_added_where_it_says_so():
    gallons = ((480, 360), (610, 510), (540, 420), (0, 0), (750, 630), (390, 320), (230, 190))
    sap = json.dumps({"sugarbush": "North Ridge", "days": [
        {"date": f"2025-03-{10 + i}", "line": line, "sap_gal": g, "high_f": 40 + i}
        for i, pair in enumerate(gallons) for line, g in zip(("upper", "lower"), pair)]})
    said = "On Friday, March 14 the upper and lower lines gave {} gallons between the two."
    assert missing(sap, said.format("1,380")) == []
    assert missing(sap, said.format("1,390")) == [1390.0]
    # without a word saying it adds up, two records' values make no sum (and fourteen
    # values hold too many partial sums for a total without one)
    assert missing(sap, "On Friday, March 14 the upper and lower lines gave 1,380 gallons."
                   ) == [1380.0]


def test_a_party_times_a_price_and_a_fee_each():
    park = json.dumps({"park": "Canopy Run", "party_size": 5,
                       "booking_fee_cents_per_person": 300, "tours": [
                           {"tour": "Treetop 8", "price_cents": 9900},
                           {"tour": "Canyon Flyer", "price_cents": 7400}]})
    said = "At $99 each plus the $3 per-person fee, that's {} for the five of you."
    assert missing(park, said.format("$510")) == []
    assert missing(park, said.format("$505")) == [505.0]


def test_a_total_said_as_adding_up_and_the_other_clauses_still_checked():
    # nine keys of numbers: without a cue word, 18 totals and means are too many to try
    # for a whole number of dollars
    games = json.dumps({"umpire": "R. Diaz", "games": [
        {"game_id": 3307 + i, "fee_cents": fee, "round_trip_miles": miles, "field": i % 3,
         "league_age": 12 + i % 2, "innings": 6 + i % 2, "crew_size": 2 + i % 2,
         "start_hour": 9 + i} for i, (fee, miles) in enumerate(
            ((5500, 14), (4500, 0), (6500, 22), (7500, 18), (6000, 0)))]})
    assert missing(games, "The game fees add up to $300.") == []
    assert missing(games, "The game fees add up to $310.") == [310.0]
    repair = json.dumps({"line_items": [{"part": "pump", "price_cents": 18900, "labor_hours": 1.2},
                                        {"part": "hose", "price_cents": 8000}]})
    ev = ContextEvidence.build([repair]).features("Parts add up to $269, and labor is 3 hours.")
    assert ev.field_changed == "line items 1 > labor hours: 1.2"


def test_sums_across_records_are_capped_however_wide_the_bound():
    from guardrail.evidence.totals import ACROSS, across
    records = [tuple(float(1000 * r + v) + 0.25 for v in range(12)) for r in range(4)]
    # 0 + 1000 + 2000 + 3000, four quarters and 10 more: found among 6 values a record
    n = numbers("between them $6,011.00 in all")[0]
    assert 12 ** 4 > ACROSS and not across(n, records)
    assert across(n, [r[:6] for r in records])  # 6^4 = 1,296 sums: tried


def test_a_groups_total_where_the_sentence_counts_the_group_as_a_part_of_all():
    """"Three of your six claims were denied": the part's size (three, before "of") is
    the group's, though only the whole (six) is a count the grounding holds."""
    claims = json.dumps({"claims": [
        {"id": f"C-{i}", "billed_cents": b, "status": s} for i, (b, s) in enumerate(
            [(28650, "paid"), (14200, "denied"), (41575, "paid"), (19830, "denied"),
             (186400, "in_review"), (52000, "denied")])]})
    said = "Three of your six claims were denied, totalling $860.30 in billed charges."
    assert missing(claims, said) == []
    assert missing(claims, said.replace("860.30", "806.30")) == [806.3]
    # a part of another size names no group of these three
    assert missing(claims, said.replace("Three", "Two")) == [860.3]
    assert missing(claims, "Three of your six claims were paid, totalling $860.30.") == [860.3]


def test_a_keys_total_over_the_records_a_yes_no_key_holds_yes_for():
    """"the four stations that are renting ... 12 e-bikes": ``ebikes available`` added up
    over the records with ``renting: yes`` (a hyphen in the sentence's word, none in the
    key); the records holding no name no group."""
    docks = json.dumps({"stations": [
        {"station": s, "ebikes_available": e, "renting": r} for s, e, r in (
            ("Harbor Square", 0, "yes"), ("Pier 7", 6, "yes"), ("Custom House", 5, "yes"),
            ("Ferry West", 2, "no"), ("Dockside", 1, "yes"))]})
    said = "Across the four stations that are renting, there are 12 e-bikes available."
    assert missing(docks, said) == []
    assert missing(docks, said.replace("12", "13")) == [13.0]
    # a negated sentence names no yes group, and the records holding no name no group
    assert missing(docks, "The station that is not renting has 12 e-bikes.") == [12.0]


def test_how_far_apart_a_value_it_states_and_one_of_its_records_are():
    """"0.12 feet under the 11.5-foot moderate flood level": the crest (11.38) of the
    record it is about, less the level it states; "267 more than Khruangbin": two records'
    minutes apart.  Exact to the digits written, announced by a word saying so, and
    never a level ("down to 14 seats")."""
    gauge = json.dumps({"station": "Cole Point", "flood_levels_ft": {"minor": 10.5, "moderate":
                        11.5}, "crests": [{"date": "2025-03-12", "crest_ft": 11.38},
                                          {"date": "2025-03-13", "crest_ft": 10.94}]})
    said = "On March 12 the crest stayed {} feet under the 11.5-foot moderate flood level."
    assert missing(gauge, said.format("0.12")) == []
    assert missing(gauge, said.format("0.21")) == [0.21]
    # no word saying how far apart: a number the result lacks
    assert missing(gauge, "On March 12 the crest was 0.12 feet.") == [0.12]
    artists = json.dumps({"top_artists": [{"artist": "Phoebe Bridgers", "minutes": 1312},
                                          {"artist": "Khruangbin", "minutes": 1045},
                                          {"artist": "Japanese Breakfast", "minutes": 987}]})
    top = "Phoebe Bridgers was your top artist with 1,312 minutes, {} more than Khruangbin."
    assert missing(artists, top.format("267")) == []
    assert missing(artists, top.format("276")) == [276.0]
    # where one stands against the other: "short", "behind", "ahead", "to go"
    tier = json.dumps({"name": "Priya Raman", "tier": "GOLD", "miles_balance": 84210,
                       "tier_qualifying": {"segments": 31, "miles": 38450, "spend_usd": 6120},
                       "next_tier": {"name": "PLATINUM", "required_miles": 50000,
                                     "required_spend_usd": 9000},
                       "expiring_miles": [{"miles": 12000, "expires_on": "2025-01-31"}],
                       "recent_activity": [
                           {"date": "2024-11-02", "type": "FLIGHT", "miles": 2318},
                           {"date": "2024-10-21", "type": "PARTNER", "miles": 1500},
                           {"date": "2024-10-08", "type": "FLIGHT", "miles": 1776}]})
    short = "Platinum requires 50,000 miles and $9,000, so you're {} miles and $2,880 short."
    assert missing(tier, short.format("11,550")) == []
    assert missing(tier, short.format("11,450")) == [11450.0]
    seats = json.dumps({"shows": [{"time": "16:20", "format": "IMAX", "seats_total": 120,
                                   "seats_sold": 106, "seats_left": 12}]})
    # a level, not a difference: 120 less the 106 sold is 14, but 12 are left
    assert missing(seats, "The 4:20 PM IMAX show is down to 14 seats.") == [14.0]


def test_an_objects_amounts_added_up_are_its_total():
    """A quote's charges (``charges > base cents`` and three more) add up to the price
    the answer quotes; one sum per object, so chance seldom gives one."""
    quote = json.dumps({"quote_id": "CQ-2025-4471", "passengers": 48, "charges": {
        "base_cents": 265000, "mileage_cents": 89280, "driver_lodging_cents": 16500,
        "fuel_surcharge_cents": 12400, "gratuity_included": False}, "deposit_pct": 25})
    assert missing(quote, "Bluewater has quoted you $3,831.80 for the round trip.") == []
    assert missing(quote, "Bluewater has quoted you $3,381.80 for the round trip.") == [3381.8]
    # two amounts are no object's total: one of them and another number may make it
    two = json.dumps({"charges": {"base_cents": 265000, "fuel_cents": 12400}, "seats": 56})
    assert missing(two, "The quote is $2,774.00.") == [2774.0]


def test_a_rounded_total_in_a_unit_is_tried_against_the_keys_in_that_unit():
    """"about 1.13 million gallons": the runs' ``water gal`` add up to 1,126,000; the keys
    without a unit (guns) are not tried beside it, so chance does not bar the total, and
    no run's own value of the key is said otherwise."""
    snow = json.dumps({"resort": "Tamarack Crest", "runs": [
        {"trail": t, "guns": {"fan": f, "tower": w}, "water_gal": g, "depth_gain_in": d}
        for t, f, w, g, d in (("Lower Spruce", 4, 6, 412000, 9), ("Kestrel Bowl", 6, 0, 298000, 7),
                              ("Mill Pond", 0, 8, 355000, 10), ("Chairlift 3", 2, 0, 61000, 3))]})
    ev = ContextEvidence.build([snow])
    got = ev.features("The crew used about 1.13 million gallons of water.")
    assert not got.missing_numbers and got.field_changed is None
    wrong = ev.features("The crew used about 1.31 million gallons of water.")
    assert wrong.missing_numbers


def test_line_totals_of_a_plural_count_key_times_a_price():
    from guardrail.evidence.features import ContextEvidence
    ramen = json.dumps({"shop": "Menya Kaze", "by_dish": [
        {"dish": "tonkotsu ramen", "bowls": 58, "price_cents": 1650},
        {"dish": "shoyu ramen", "bowls": 31, "price_cents": 1500},
        {"dish": "miso ramen", "bowls": 27, "price_cents": 1700},
        {"dish": "vegan shio ramen", "bowls": 12, "price_cents": 1600}]})
    ev = ContextEvidence.build([ramen], "")
    # 58 x $16.50 + 31 x $15 + 27 x $17 + 12 x $16 = $2,073
    assert not ev.features("At menu prices, the day's ramen sales come to $2,073.").missing_numbers
    assert ev.features("At menu prices, the day's ramen sales come to $2,173.").missing_numbers


CI_RUN = json.dumps({"suite": "integration", "passed": 11, "failed": 1, "duration_s": 48})
CI_SUITES = json.dumps([{"suite": "unit", "passed": 11, "failed": 1},
                        {"suite": "e2e", "passed": 4, "failed": 2}])


def test_the_whole_of_a_counted_part_made_up_by_its_record():
    # 12 = passed 11 + failed 1: no cue word, the partitive says it
    assert missing(CI_RUN, "Eleven of the twelve checks passed.") == []
    assert missing(CI_RUN, "11 of the 12 tests passed.") == []
    assert missing(CI_SUITES, "Four of the six end-to-end tests passed.") == []
    # a whole the part and its record do not make stays missing
    assert missing(CI_RUN, "Eleven of the fifteen checks passed.") == [15]
    assert missing(CI_SUITES, "Four of the five end-to-end tests passed.") == [5]
    # a part the record lacks makes no whole
    assert missing(CI_RUN, "Ten of the twelve checks passed.") == [12]


def test_a_record_of_many_counts_makes_no_whole():
    box = json.dumps({"team": "Hawks", "made": 11, "missed": 1, "blocks": 3, "steals": 5,
                      "fouls": 7, "turnovers": 9})
    assert missing(box, "Eleven of the twelve shots went in.") == [12]


def test_years_are_no_total_and_no_mean():
    wines = json.dumps({"wines": [
        {"name": "Domaine Celestin Pinot Noir", "vintage": 2020, "price": 38},
        {"name": "Quinta da Serra Tinto", "vintage": 2019, "price": 22},
        {"name": "Kiri Ridge Sauvignon Blanc", "vintage": 2023, "price": 19}]})
    # 2021 is the vintages' mean, rounded: no vintage of any wine
    assert missing(wines, "The Kiri Ridge Sauvignon Blanc is a 2021 vintage.") == [2021]
    assert missing(wines, "The Kiri Ridge Sauvignon Blanc is a 2023 vintage.") == []
    # a key naming a year whose values are no years still adds up
    visits = json.dumps({"months": [{"visitors": 1840, "visitors_prev_year": 1620},
                                    {"visitors": 2415, "visitors_prev_year": 2380},
                                    {"visitors": 2960, "visitors_prev_year": 2710}]})
    assert missing(visits, "It welcomed 7,215 visitors, up from 6,710 the previous summer.") == []
