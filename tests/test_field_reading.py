"""Sentences that name a field and say nothing against it, read as English reads them
(guardrail.evidence.fields and keys): a particle is no negation, a clause asking for a
state says nothing of whether it holds, titles and time zones are no names, a date
before what it names says which one, and a clause or a joined sentence naming a field
of its own keeps its values.  Each has its contradicted twin, still caught."""

import json
from pathlib import Path

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.keys import clause_asks, clause_negated, name_words
from guardrail.evidence.words import stem

SETS = Path(__file__).resolve().parent.parent / "docs" / "model-card" / "paraphrases"
PROGRESS = json.dumps({"student": "Mia Cole", "progress": {
    "kata_signed_off": True, "kumite_signed_off": False, "assessments_left": 1}})
CALLOUTS = json.dumps({"callouts": [
    {"site": "Kessler Flats", "date": "2025-03-08", "job": "key broken in lock", "emergency": True},
    {"site": "Dunmore House", "date": "2025-03-19", "job": "lockout", "emergency": True},
    {"site": "Alder Court", "date": "2025-03-21", "job": "rekey", "emergency": False}]})
LOANS = json.dumps({"incoming_loans": [
    {"object": "Kashmir shawl", "arrives": "2025-02-24", "loan_agreement_signed": False},
    {"object": "Silk kimono", "arrives": "2025-03-02", "loan_agreement_signed": True}]})
DEVICES = json.dumps({"devices": [{"name": "Left earbud", "firmware": "3.2.1", "charging": False},
                                  {"name": "Right earbud", "firmware": "3.2.1", "charging": False}],
                      "update_available": "3.3.0"})
DOCKET = json.dumps({"judicial_officer": "Hon. Teresa Alvarado", "session": "AM",
                     "calendar_date": "2025-09-16", "courtroom": "4B", "hearings": [
                         {"time": "08:30", "case_no": "25CV01877", "status": "on calendar"},
                         {"time": "09:00", "case_no": "24CV11402", "status": "continued"}]})
ORDERS = json.dumps({"wave": "W-14", "cutoff": "15:30", "orders": [
    {"order": "A1", "carrier": "USPS"}, {"order": "A2", "carrier": "UPS"}]})
CLAIM = json.dumps({"claim_id": "DCL-47718", "provider": "Bright Harbor Dental",
                    "date_of_service": "2025-03-11", "processed_date": "2025-03-24",
                    "patient_share_cents": 3720})
PAGES = json.dumps({"pages": {"total": 33, "after_hours": 29}, "by_responder": [
    {"name": "Chloe Martin", "pages": 24, "response_time_min": 2.8},
    {"name": "Jonah Kim", "pages": 9, "response_time_min": 6.7}]})
REQUESTS = json.dumps({"requests": [
    {"id": "R-1", "issue": "slow kitchen sink", "status": "completed", "fixed": "2024-04-04"},
    {"id": "R-2", "issue": "ants in pantry", "status": "cancelled"}]})
PRINTERS = json.dumps({"date": "2025-11-12", "printers": [
    {"printer_id": "MS-P1", "model": "Prusa MK4", "in_service": True},
    {"printer_id": "MS-P2", "model": "Prusa MK4 S", "in_service": True},
    {"printer_id": "MS-P3", "model": "Bambu Lab X1 Carbon", "in_service": False,
     "expected_back": "2025-11-18"},
    {"printer_id": "MS-P4", "model": "Formlabs Form 3", "in_service": True}]})


def _changed(context: str, sentence: str, before: str = "") -> object:
    return ContextEvidence.build([context]).features(sentence, before).field_changed


@pytest.mark.parametrize("context,before,sentence", [
    # "off" after a verb is a particle: signed off is approved, broken off is broken
    (PROGRESS, "", "Your kata has been signed off, but your kumite hasn't."),
    (CALLOUTS, "", "Two jobs were emergencies: a key broken off in the lock at Kessler Flats "
                   "and a lockout at Dunmore House."),
    # asking for a state says nothing of whether it holds now
    (LOANS, "", "The Kashmir shawl, arriving February 24, still needs its loan agreement "
                "signed."),
    (DEVICES, "", "An update to 3.3.0 is waiting, and they'll need to be on the charger to "
                  "install it."),
    # a title before a name, and a time zone after a time, are no rival names
    (DOCKET, "", "Judge Alvarado has two matters listed for the morning session on "
                 "Tuesday, September 16."),
    (ORDERS, "", "The carrier cutoff for this wave is 3:30 PM Central."),
    # a date before what it names says which claim, not when it was processed
    (CLAIM, "", "Your March 11 claim with Bright Harbor Dental has been processed."),
    # the next clause names a field of its own, which holds its value
    (PAGES, "", "Jonah Kim had the fewest pages, but his 6.7-minute average response time "
                "was the slowest."),
    # "out of" a key's word negates it
    (PRINTERS, "", "The Bambu Lab X1 Carbon is out of service until November 18."),
    # a group's state, whatever month the sentence names (the record's date is in one)
    (PRINTERS, "", "On Wednesday, November 12, three of the four printers are in service."),
    # two sentences joined in one: the second speaks of another record
    (REQUESTS, "", "The slow kitchen sink was fixed on April 4, and the ant request was "
                   "cancelled because you resolved it yourself."),
])
def test_a_sentence_that_says_nothing_against_a_field_is_not_contradicted(context, before,
                                                                           sentence):
    assert _changed(context, sentence, before) is None


@pytest.mark.parametrize("context,sentence,changed", [
    (PROGRESS, "Your kata has not been signed off.", "progress > kata signed off: true"),
    (PROGRESS, "Your kata sign-off is turned off.", "progress > kata signed off: true"),
    (LOANS, "The loan agreement for the Kashmir shawl is signed.",
     "incoming loans 1 > loan agreement signed: false"),
    (DEVICES, "The left earbud is charging.", "devices 1 > charging: false"),
    (PRINTERS, "The Bambu Lab X1 Carbon is in service.", "printers 3 > in service: false"),
    (CLAIM, "Your claim was processed on March 11.",
     "processed date: 2025-03-24 (March 24, 2025)"),
    (REQUESTS, "The slow kitchen sink request was cancelled, and you can reopen it any time.",
     "requests 1 > status: completed"),
])
def test_the_same_fields_said_otherwise_are_still_contradicted(context, sentence, changed):
    assert _changed(context, sentence) == changed


def test_off_negates_only_as_a_state_and_asking_is_read_apart_from_negation():
    key = frozenset({stem("heater")})
    assert clause_negated("The heater is off.", key, stem)
    assert clause_negated("They turned the heater off.", key, stem)
    assert clause_negated("The heater was switched off", key, stem)
    assert not clause_negated("The heater was signed off by the inspector.", key, stem)
    signed = frozenset({stem("signed")})
    assert clause_asks("It still needs to be signed.", signed, stem)
    assert not clause_asks("It was signed.", signed, stem)
    # a key of the asking word itself is named, not asked for (``needs review``)
    assert not clause_asks("It needs review.", frozenset({stem("needs"), stem("review")}), stem)


def test_titles_and_time_zones_are_no_names():
    def names(s):
        return [n for n, _ in name_words(s, stem, frozenset())]
    assert names("Judge Alvarado sits at 9:00 AM Central.") == ["alvara"]
    assert names("It closes at 6 PM Pacific time, says Rhea Patel.") == ["rhea", "patel"]
    # a zone word elsewhere may be a name: "Pacific Gas" is one
    assert names("Bills from Pacific Gas arrive monthly.") == ["pacifi", "gas"]
    # a first word before a name is one too, unless a verb's -ing ("Counting Callum's")
    assert names("Noa Kapoor is away.") == ["noa", "kapoor"]
    assert names("Counting Callum's plan, it comes to $356.") == ["callum"]


def test_a_count_of_the_records_holding_a_yes_no_keys_yes_is_checked():
    """"Five of the six towers have passed" where four of the six hold ``passed: true``
    (turns-ba/13): the part it counts against the records holding the key; negated after
    the count, the records holding no.  A preface's negation ("Not quite:") is no part of
    the count's clause."""
    towers = json.dumps({"towers": [{"tower": f"T-{i}", "passed": p} for i, p in enumerate(
        (True, True, False, True, True, False), 1)]})
    assert _changed(towers, "Four of the six towers have passed.") is None
    assert _changed(towers, "Two of the six towers have not passed.") is None
    assert _changed(towers, "Not quite: four of the six towers have passed.") is None
    assert _changed(towers, "Five of the six towers have passed.") == "towers 3 > passed: false"
    assert _changed(towers, "Three of the six towers have not passed.") is not None
    # a whole that is not the records holding the key says nothing of them
    assert _changed(towers, "Five of the eight towers have passed.") is None


ANALYSERS = json.dumps({"site": "Ashby General", "machines": [
    {"name": "Ward 4 analyser", "room": "Ward 4", "online": True},
    {"name": "Maternity analyser", "room": "Maternity", "online": False},
    {"name": "ICU analyser", "room": "ICU", "online": True},
    {"name": "A&E analyser", "room": "A&E", "online": True}]})
LOTS = json.dumps({"sale": "Kelso autumn sale", "lots": [
    {"lot": 101, "breed": "Angus", "head": 12, "sold": True},
    {"lot": 102, "breed": "Hereford", "head": 9, "sold": True},
    {"lot": 103, "breed": "Charolais cross", "head": 15, "sold": False},
    {"lot": 104, "breed": "Limousin", "head": 7, "sold": True},
    {"lot": 105, "breed": "Simmental", "head": 10, "sold": True}]})
ARRIVALS = json.dumps({"date": "2025-06-02", "bookings": [
    {"ref": f"B-{i}", "carrier": c, "lane": i, "checked_in": ok} for i, (c, ok) in enumerate(
        [("Arden", True), ("Keenan Logistics", False), ("Donegal Fresh", False),
         ("Mersey", True), ("Brora", True), ("Tay", True), ("Wick", True)], 1)]})


@pytest.mark.parametrize("context,sentence", [
    (ANALYSERS, "Every machine except the maternity one is online."),
    (ANALYSERS, "All analysers apart from the maternity one are online."),
    (LOTS, "Four of the five lots sold; the 15 Charolais cross cattle in lot 103 went unsold."),
    (ARRIVALS, "Five have checked in, but Keenan Logistics on lane 2 and Donegal Fresh on "
               "lane 3 have not checked in yet."),
    (ARRIVALS, "Five of them have checked in; Keenan Logistics has not."),
    (ARRIVALS, "Two have not checked in: Keenan Logistics and Donegal Fresh.")])
def test_a_records_yes_no_said_of_its_group_with_the_exception_named_is_no_change(
        context, sentence):
    """A group's state with its exception carved out ("except", "apart from") or counted
    rightly (four of the five ``sold: true``; five ``checked in: true``) says the
    exception's yes/no as it is (turns-ca/9, -ch/1, -ck/11, -cn/15 were redacted)."""
    assert _changed(context, sentence) is None


@pytest.mark.parametrize("context,sentence,line", [
    (ANALYSERS, "The maternity analyser is online.", "machines 2 > online: false"),
    (ANALYSERS, "Two of the four machines are online.", "machines 2 > online: false"),
    (LOTS, "Lot 103 sold for the best price.", "lots 3 > sold: false"),
    # counted wrongly ("lane 2" is a label, not a count of two): still the exception's change
    (ARRIVALS, "Six have checked in, but Keenan Logistics on lane 2 has not checked in yet.",
     "bookings 2 > checked in: false"),
    (ARRIVALS, "Keenan Logistics has checked in.", "bookings 2 > checked in: false")])
def test_the_exceptions_twin_said_of_the_record_or_miscounted_is_still_changed(
        context, sentence, line):
    assert _changed(context, sentence) == line


def test_a_count_whose_whole_follows_a_possessive_is_checked():
    """"Five of last week's nine logged walks are still unpaid" where four of the nine
    records hold ``paid: false`` (turns-co/12): a possessive between "of" and the whole
    ("last week's", "the club's") is still a part of a whole."""
    walkers = "Hannah Hannah Tom Aisha Tom Tom Hannah Aisha Aisha".split()
    paid = (True, True, True, False, True, True, False, False, False)
    walks = json.dumps({"walks": [
        {"walk_id": f"W-{1040 + i}", "walker": w, "fee_cents": 1500, "paid": p}
        for i, (w, p) in enumerate(zip(walkers, paid), 1)]})
    assert _changed(walks, "Four of last week's nine logged walks are still unpaid.") is None
    assert _changed(walks, "Five of last week's nine logged walks are unpaid.") is not None
    assert _changed(walks, "Six of the agency's nine walks are paid.") is not None
    assert _changed(walks, "Five of the agency's nine walks are paid.") is None


def test_a_yes_no_key_of_several_things_is_read_for_the_one_the_sentence_names():
    """"The UV clarifier is running normally" where ``uv_clarifier > running`` is false
    and the pump's and the aerator's are true (turns-ba/4): the sentence names the
    clarifier, so the other ``running`` fields do not agree with it."""
    pond = json.dumps({"equipment": {"pump": {"running": True, "flow_gph": 5000},
                                     "uv_clarifier": {"running": False, "lamp_hours": 9120},
                                     "aerator": {"running": True}}})
    assert _changed(pond, "The UV clarifier is running normally.") == \
        "equipment > uv clarifier > running: false"
    assert _changed(pond, "The UV clarifier is off, but the pump is running.") is None
    assert _changed(pond, "The pump is running at 5,000 gallons an hour.") is None


def test_a_rate_per_the_thing_a_key_counts_is_no_count_of_it():
    ev = ContextEvidence.build([json.dumps({"bookings": [
        {"id": "B1", "date": "2025-06-14", "players": 6, "price_usd": 168},
        {"id": "B2", "date": "2025-06-15", "players": 4, "price_usd": 112}]})])
    for ok in ("Every booking is priced at the same $28 per player.",
               "Both bookings work out to about $28 a player."):
        assert ev.features(ok).field_changed is None, ok
    assert ev.features("The first booking is for 5 players.").field_changed \
        == "bookings 1 > players: 6"
    # a key that is itself a rate per the thing is stated by it
    ev = ContextEvidence.build([json.dumps({"tour": "Glacier walk", "price_per_person": 95})])
    assert ev.features("The glacier walk costs $95 per person.").field_changed is None
    assert ev.features("The glacier walk costs $85 per person.").field_changed \
        == "tour: Glacier walk; price per person: 95" or \
        ev.features("The glacier walk costs $85 per person.").missing_numbers


def test_a_key_word_in_the_sentence_gives_no_record_another_records_value():
    ev = ContextEvidence.build([json.dumps({"films": [
        {"title": "Moon Garden", "rating_age": "all ages", "minutes": 80},
        {"title": "Night Ferry", "rating_age": "12+", "minutes": 95},
        {"title": "Tin Soldiers", "rating_age": "6-11", "minutes": 70}]})])
    for ok in ("Night Ferry is rated for ages 12 and up.",
               "Tin Soldiers suits ages 6 to 11 and runs 70 minutes."):
        assert ev.features(ok).field_changed is None, ok
    for bad, line in (("Night Ferry is fine for all ages.", "films 2 > rating age: 12+"),
                      ("Tin Soldiers is for all ages.", "films 3 > rating age: 6-11")):
        assert ev.features(bad).field_changed == line, bad


FLIGHTS = json.dumps({"pilot": "Priya Raman", "flights": [
    {"flight_no": 1, "date": "2025-03-11", "altitude_agl_m": 80, "images": 412},
    {"flight_no": 2, "date": "2025-03-11", "altitude_agl_m": 80, "images": 388},
    {"flight_no": 3, "date": "2025-03-11", "altitude_agl_m": 60, "images": 146},
    {"flight_no": 4, "date": "2025-03-12", "altitude_agl_m": 60, "images": 300},
    {"flight_no": 5, "date": "2025-03-12", "altitude_agl_m": 60, "images": 310}]})
CLUB = json.dumps({"club": "Riverside RC", "erg_room_open": True, "water_closed": False,
                   "shipment": {"id": "SH-4479", "customs_cleared": False}})
LIFT = json.dumps({"building": {"name": "Harbour Point", "floors": 18},
                   "lifts": [{"id": "E2", "result": "conditional pass"}]})
SURVEY = json.dumps({"plan": {"altitude_agl_m": 120, "ground_sample_distance_cm": 8.0,
                              "lines": 22},
                     "airspace": {"class": "G", "distance_km": 19.5},
                     "forecast": {"wind_mph": 18, "gusts_mph": 50}})


@pytest.mark.parametrize("sentence, changed", [
    # a list of dates with their weekdays is one clause, not one clause per comma
    ("She flew five flights on Tuesday, March 11 and Wednesday, March 12, 2025.", False),
    ("She flew five flights on Tuesday, March 14 and Wednesday, March 15, 2025.", True),
])
def test_a_list_of_dates_is_one_clause(sentence, changed):
    ev = ContextEvidence.build([FLIGHTS])
    assert (ev.features(sentence).field_changed is not None) is changed


@pytest.mark.parametrize("sentence, changed", [
    # the negation of another clause says nothing of this key
    ("The erg room is open from 6:00 AM to 9:00 PM, and the water isn't closed.", False),
    ("The erg room is closed today, and the water isn't closed.", True),
    # waiting to clear: not cleared yet, so nothing said against ``customs cleared: false``
    ("Only the Comté in SH-4479 is still waiting to clear customs.", False),
    ("The Comté in SH-4479 has cleared customs.", True),
])
def test_a_yes_no_key_is_read_in_the_clauses_naming_it(sentence, changed):
    ev = ContextEvidence.build([CLUB])
    assert (ev.features(sentence).field_changed is not None) is changed


@pytest.mark.parametrize("sentence, changed", [
    # "level 9" picks a floor and "15 mm" measures: neither counts ``floors: 18``
    ("E2 leaves the car 15 mm proud of the floor at level 9.", False),
    ("The building has 12 floors.", True),
])
def test_which_one_or_a_measure_is_no_count_of_a_key(sentence, changed):
    ev = ContextEvidence.build([LIFT])
    assert (ev.features(sentence).field_changed is not None) is changed


@pytest.mark.parametrize("sentence, changed", [
    # 8 cm is the ground sample distance's value, not the airspace distance's
    ("It flies at 120 m, which gives a ground sample distance of 8 cm per pixel.", False),
    ("The nearest airport is at a distance of 12 km.", True),
    # a second value in the unit of a field holding the first is still checked
    ("Winds are at 18 mph, gusting to 38 mph.", True),
])
def test_a_value_held_in_its_unit_by_another_field_is_that_fields(sentence, changed):
    ev = ContextEvidence.build([SURVEY])
    got = ev.features(sentence)
    assert ((got.field_changed or got.line_changed) is not None) is changed


CHEMICALS = json.dumps({"darkroom": "Studio 2", "chemicals": [
    {"name": "Ilford Rapid Fixer", "capacity_rolls": 24, "rolls_processed": 9},
    {"name": "ID-11 developer", "capacity_rolls": 10, "rolls_processed": 10}]})


def test_a_value_said_as_a_difference_states_no_fields_value():
    """"capacity for 15 more rolls" where ``capacity rolls: 24`` and 9 are done says
    what is left, not the capacity (turns-cx/6 was redacted); its twin without "more"
    still changes it."""
    assert _changed(CHEMICALS, "The Rapid Fixer has capacity for 15 more rolls.") is None
    assert _changed(CHEMICALS, "The Rapid Fixer has capacity for 15 rolls.") \
        == "chemicals 1 > capacity rolls: 24"
    league = json.dumps({"teams": [{"team": "Rust Belt Rollers", "wins": 9, "losses": 1},
                                   {"team": "Harbor Wreckers", "wins": 6, "losses": 4}]})
    assert _changed(league, "The Harbor Wreckers have 3 wins.") == "teams 2 > wins: 6"
    # a count in words before the difference (turns-de/10, a roller-derby table, read
    # "three wins behind" as the team's 6 wins said otherwise)
    turn = next(d for d in map(json.loads, open(SETS / "turns-de.jsonl", encoding="utf-8"))
                if d["id"] == "turns-de/10")
    at = next(x for x in turn["sentences"]
              if "three wins behind" in turn["response"][x["start"]:x["end"]])
    said, before = turn["response"][at["start"]:at["end"]], turn["response"][:at["start"]]
    assert _changed(turn["context"], said, before) is None  # "them": the sentence before


TRAILS = json.dumps({"area": "Kettle Hollow", "trails": [
    {"name": n, "status": s} for n, s in [("Fern", "open"), ("Ridge", "closed"),
                                          ("Oak", "closed"), ("Birch", "open"),
                                          ("Quarry", "closed"), ("Mill", "open"),
                                          ("Heron", "partial")]]})
MEMBERS = json.dumps({"gym": "Northside", "members": [
    {"name": n, "auto_renew": a} for n, a in [("Ada", True), ("Ben", True), ("Cy", False),
                                              ("Di", True), ("Ed", False), ("Flo", True)]]})


@pytest.mark.parametrize("context,sentence", [
    (TRAILS, "Four of the seven trails are fully closed."),
    (TRAILS, "Kettle Hollow has four trails fully closed and one partly open."),
    (TRAILS, "Two of the seven trails are closed."),
    (MEMBERS, "Only three members have auto-renew turned on.")])
def test_a_count_of_the_records_holding_a_state_said_otherwise_is_a_change(context, sentence):
    """"four of Kettle Hollow's seven trails are fully closed" over three ``status:
    closed`` (turns-ck/13, -cx/23), "only three members have auto-renew turned on" over
    four (turns-cm/21): a count of a list's things, or a part of the records holding the
    key, checked against the records holding the state it names after them."""
    assert _changed(context, sentence) is not None


@pytest.mark.parametrize("context,sentence", [
    (TRAILS, "Three of the seven trails are fully closed."),
    (TRAILS, "Kettle Hollow has three trails closed and one partly open."),
    (TRAILS, "Two of the seven closed trails reopen next week."),      # a state before them
    (TRAILS, "Five of the seven trails are open or partly open."),     # two states
    (MEMBERS, "Four members have auto-renew turned on."),
    (MEMBERS, "The other two members have auto-renew turned off.")])
def test_a_count_of_the_records_holding_a_state_said_rightly_is_none(context, sentence):
    assert _changed(context, sentence) is None



def _turn_sentence(turn_id: str, words: str) -> tuple[str, str, str]:
    """A hand-written turn's context, and its sentence holding ``words`` with the answer
    before it."""
    turn = next(d for d in map(json.loads, open(SETS / f"{turn_id.split('/')[0]}.jsonl",
                                                encoding="utf-8")) if d["id"] == turn_id)
    at = next(x for x in turn["sentences"] if words in turn["response"][x["start"]:x["end"]])
    return (turn["context"], turn["response"][at["start"]:at["end"]],
            turn["response"][:at["start"]])


def test_what_is_left_of_a_records_whole_states_no_fields_value():
    """"has 5 places left" where the course holds ``places: 12`` and ``booked: 7`` says
    what is left, not its places (turns-df/23 was redacted); a number left that is no
    remainder still changes the field."""
    context, said, before = _turn_sentence("turns-df/23", "5 places left")
    assert _changed(context, said, before) is None
    assert _changed(context, said.replace("5 places", "4 places"), before) \
        == "courses 3 > places: 12"


def test_rather_than_before_a_words_key_negates_it():
    """"on call from home rather than on site" says ``on site: false`` (turns-df/11 was
    redacted as the field said otherwise); said the other way round it still changes."""
    context, said, before = _turn_sentence("turns-df/11", "rather than on site")
    assert _changed(context, said, before) is None
    turned = said.replace("on call from home rather than on site", "on site")
    assert _changed(context, turned, before) == "rota 4 > on site: false"


def test_a_yes_no_word_picking_records_out_says_nothing_of_the_others():
    """"7 trucks are out across the treated routes" picks the treated routes out and says
    nothing of the route holding ``treated: false`` (turns-dg/11 was redacted as that
    field said otherwise); a sentence saying that route or every route is treated still
    changes it."""
    context, said, before = _turn_sentence("turns-dg/11", "treated routes")
    assert _changed(context, said, before) is None
    for turned in ("Residential estates (flat) will be treated too.",
                   "All four routes are treated tonight."):
        assert _changed(context, turned, before) == "routes 4 > treated: false", turned


def test_a_yes_no_said_only_in_a_clause_naming_another_record_is_not_this_ones():
    """"The Gruyère is the only raw-milk cheese in the box, and the chèvre is the only one
    made from goat's milk" says raw milk of the Gruyère; the chèvre's ``raw milk: false``
    is not said otherwise (turns-dg/2 was redacted); the clause naming the chèvre as
    raw-milk still changes it."""
    context, said, before = _turn_sentence("turns-dg/2", "only raw-milk")
    assert _changed(context, said, before) is None
    assert _changed(context, "The chèvre is the only raw-milk cheese in the box.", before) \
        == "next box > items 2 > raw milk: false"
