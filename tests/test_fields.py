"""A sentence that names a field of a tool result and gives it another value
(guardrail.evidence.fields), read through ContextEvidence as the judge reads it."""

import json
from pathlib import Path

import pytest

from guardrail.evidence.currency import coded, mentioned
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.fields import pairs
from guardrail.evidence.judge import explain

FLIGHT = json.dumps({"flight_no": "SK701", "terminal": "5", "seats_left": 22,
                     "refundable": True, "checked_bag_included": False,
                     "fare": {"amount": 454.22, "currency": "EUR"}, "carrier": "SAS",
                     "departs": "2024-02-03T11:10:00Z"})
STAFF = json.dumps([
    {"employee_id": "E1", "full_name": "Nina Weber", "office": "Bologna", "remote": False},
    {"employee_id": "E2", "full_name": "Oliver Jensen", "office": "Lyon", "remote": True}])
FILMS = json.dumps([{"film_title": "Copper Sky", "genre": "drama"},
                    {"film_title": "Quiet Volcano", "genre": "western"}])
FLATS = ("| Name | Furnished | Bedrooms |\n| --- | --- | --- |\n"
         "| Flat Alder | no | 2 |\n| Flat Birch | yes | 3 |")


def test_the_pairs_of_every_rendered_line():
    assert pairs("data > order > order total > amount: 454.22") == [
        ("data > order > order total > amount", "454.22")]
    assert pairs("name: Flat Alder; furnished: no; bedrooms: 2") == [
        ("name", "Flat Alder"), ("furnished", "no"), ("bedrooms", "2")]
    assert pairs("results 1 > snippet: SK732 — Airline: SAS · Gate: B6") == [
        ("Airline", "SAS"), ("Gate", "B6")]
    assert pairs("  - **Checked bag included:** no") == [("Checked bag included", "no")]
    assert pairs("item 1 of 3:") == []


@pytest.mark.parametrize("context,before,sentence,changed", [
    (FLIGHT, "", "Flight SK701 includes a checked bag.", "checked bag included: false"),
    (FLIGHT, "", "The ticket is non-refundable.", "refundable: true"),
    (FLIGHT, "Flight SK701 is run by SAS. ", "It leaves from Terminal 2.", "terminal: 5"),
    (FLIGHT, "", "The carrier is Lufthansa.", "carrier: SAS"),
    (STAFF, "", "Nina Weber is based in the Lyon office.", "item 1 > office: Bologna"),
    (STAFF, "Nina Weber joined in 2021. ", "She works remotely.", "item 1 > remote: false"),
    (FLATS, "", "Flat Alder is furnished.", "name: Flat Alder; furnished: no; bedrooms: 2"),
    # another record's value of a field the sentence does not name
    (FILMS, "Copper Sky came out in 2001. ", "It is a western.", "item 1 > genre: drama"),
])
def test_a_field_given_another_value_is_contradicted(context, before, sentence, changed):
    ev = ContextEvidence.build([context]).features(sentence, before)
    assert ev.field_changed == changed and not ev.field_agreed
    why = explain(ev, 0.5)
    assert (why.kind, why.severity, why.evidence) == ("contradicted", "high", changed)


@pytest.mark.parametrize("context,before,sentence", [
    (FLIGHT, "", "Flight SK701 does not include a checked bag."),
    (FLIGHT, "", "The ticket is refundable, but no checked bag is included."),
    (FLIGHT, "", "It leaves from Terminal 5 with 22 seats left."),
    (FLIGHT, "", "The fare comes to 454.22 euros."),
    (FLIGHT, "", "The carrier is SAS."),
    (STAFF, "", "Nina Weber is based in the Bologna office."),
    (STAFF, "Oliver Jensen is in Lyon. ", "He works remotely."),
    (FLATS, "", "Flat Alder is unfurnished."),
    (FLATS, "", "Flat Birch is furnished and has 3 bedrooms."),
])
def test_a_field_stated_as_the_context_has_it_agrees(context, before, sentence):
    ev = ContextEvidence.build([context]).features(sentence, before)
    assert ev.field_changed is None and ev.field_agreed


@pytest.mark.parametrize("context,sentence", [
    # the number belongs to another field the sentence does not name by its key
    (FLIGHT, "The terminal for the 11:10 departure is on the plan."),
    # it names no field: nothing to compare
    (FLIGHT, "The flight is popular with families."),
    # the date is not a rival value of the office
    (STAFF, "Nina Weber has been in the office since January."),
    # its own record's value, the field unnamed
    (FILMS, "Quiet Volcano is a western."),
    # a record the sentence does not single out: any record's value may be meant
    (STAFF, "One of them works remotely."),
])
def test_nothing_is_said_where_the_sentence_does_not_state_a_field(context, sentence):
    assert ContextEvidence.build([context]).features(sentence).field_changed is None


def test_prose_has_no_fields_to_check():
    ev = ContextEvidence.build(["The terminal: a place where flights leave. It is busy."])
    assert ev.fields is None
    assert ev.features("The terminal is quiet.").field_changed is None


CATALOGUE = json.dumps([
    {"film_title": "Copper Sky", "release_year": 2003, "critic_score": 7.2, "cast": ["A", "B"],
     "added_at": "2023-12-21T21:15:00-06:00"},
    {"film_title": "Paper Kites", "release_year": 1974, "critic_score": 6.5,
     "cast": ["C", "D", "E"], "added_at": "2025-09-03T06:35:00-03:00"},
    {"film_title": "Harvest of Stars", "release_year": 1987, "critic_score": 9.0,
     "cast": ["F", "G"], "added_at": "2024-12-03T19:50:00-05:00"}])
RECIPES = json.dumps([{"dish": "Bobotie", "servings": 3, "cook_rating": 4.8},
                      {"dish": "Chakalaka Stew", "servings": 2, "cook_rating": 3.2}])


@pytest.mark.parametrize("context,before,sentence,changed", [
    # another record's number for this record, the field unnamed
    (CATALOGUE, "", "Paper Kites came out in 1987.", "item 2 > release year: 1974"),
    (CATALOGUE, "Harvest of Stars is on the list. ", "It came out in 1974.",
     "item 3 > release year: 1987"),
    # the named field's value is another; a rounding of another field's value
    # (3 for a rating of 3.2) does not make the sentence about that field
    (RECIPES, "", "The Chakalaka Stew makes 3 servings.", "item 2 > servings: 2"),
])
def test_another_records_number_given_to_this_record_is_contradicted(context, before, sentence,
                                                                     changed):
    ev = ContextEvidence.build([context]).features(sentence, before)
    assert ev.field_changed == changed and not ev.field_agreed


@pytest.mark.parametrize("context,before,sentence", [
    (CATALOGUE, "", "Paper Kites came out in 1974."),
    # "It" after "It has three lead actors": the count names no record, the film before does
    (CATALOGUE, "Harvest of Stars came out in 1987. Critics score the film 9.0 out of 10. "
                "It has two lead actors. ", "It was added to the catalogue on December 3, 2024."),
    # a value about in more than one field name of other records: nothing tells which
    (RECIPES, "", "The Chakalaka Stew is rated about 3 out of 5."),
    (CATALOGUE, "", "Paper Kites came out about 15 years before Harvest of Stars, in 1987."),
])
def test_a_number_of_its_own_record_or_of_another_named_record_is_not_changed(context, before,
                                                                              sentence):
    ev = ContextEvidence.build([context]).features(sentence, before)
    assert ev.field_changed is None


CHARGES = json.dumps([
    {"txn_ref": "TXN1", "merchant": "Livraria Ipê", "charged": {"amt": 869.3, "ccy": "BRL"}},
    {"txn_ref": "TXN2", "merchant": "Taquería El Faro", "charged": {"amt": 120.0, "ccy": "MXN"}}])
FLAT = json.dumps({"apartments": [
    {"name": "Torre Ipanema",
     "agreed_lease_terms_2024": {"monthly_rent_current": {"amt": 404790, "ccy": "KRW"}},
     "value": {"amt": 397000000, "ccy": "INR"}},
    {"name": "Casa Verde",
     "agreed_lease_terms_2024": {"monthly_rent_current": {"amt": 1887.29, "ccy": "INR"}},
     "value": {"amt": 41000000, "ccy": "KRW"}}]})


@pytest.mark.parametrize("context,before,sentence,changed", [
    (CHARGES, "The first charge was at Livraria Ipê. ", "It was for 869.30 rand.",
     "item 1 > charged > ccy: BRL"),
    (CHARGES, "", "The Livraria Ipê charge came to 869.30 rupees.", "item 1 > charged > ccy: BRL"),
])
def test_an_amount_in_another_currency_is_contradicted(context, before, sentence, changed):
    ev = ContextEvidence.build([context]).features(sentence, before)
    assert ev.field_changed == changed and not ev.field_agreed


@pytest.mark.parametrize("context,before,sentence", [
    (CHARGES, "The first charge was at Livraria Ipê. ", "It was for 869.30 Brazilian reais."),
    (CHARGES, "The first charge was at Livraria Ipê. ", "It was for R$869.30."),
    (CHARGES, "The second charge was at Taquería El Faro. ", "It came to 120 pesos."),
    (CHARGES, "", "Nothing here won a prize."),
    # a key path longer than 60 characters is still a field: its currency is read
    (FLAT, "", "The flat in Torre Ipanema rents for ₩404,790 a month."),
])
def test_an_amount_in_its_own_currency_is_not_changed(context, before, sentence):
    assert ContextEvidence.build([context]).features(sentence, before).field_changed is None


PARTS = json.dumps({"shop": "Ribbon & Roller Restorations",
                    "query": "parts compatible with Smith-Corona Sterling (1950s)",
                    "results": [
                        {"part": "Platen, recovered", "qty": 2, "price_cents": 8900,
                         "compatible": ["Sterling", "Clipper"]},
                        {"part": "Feed roller set (4)", "qty": 0, "price_cents": 3400},
                        {"part": "Drawband, braided", "qty": 14, "price_cents": 650},
                        {"part": "Ribbon, black cotton", "qty": 40, "price_cents": 950}]})


@pytest.mark.parametrize("value, key, codes", [
    ("GBP", "ccy", {"GBP"}), ("€", "symbol", {"EUR"}), ("R$ 12.50", "price", {"BRL"}),
    ("869.3 rand", "paid", {"ZAR"}), ("pound sterling", "currency", {"GBP"}),
    # a currency's name among other words, or alone under another key, codes none
    ("parts compatible with Smith-Corona Sterling (1950s)", "query", set()),
    ("Sterling", "compatible", set()), ("pound sterling", "name", set()),
])
def test_the_currencies_a_tool_results_value_codes(value, key, codes):
    assert coded(value, key) == codes


def test_a_name_that_is_a_currency_word_gives_no_record_a_currency():
    """``query: ... Smith-Corona Sterling`` and ``compatible: Sterling`` name a typewriter,
    not sterling: a price in dollars changes no field."""
    ev = ContextEvidence.build([PARTS])
    assert ev.features("New black cotton ribbons are $9.50 each, with 40 available."
                       ).field_changed is None
    assert ev.features("Braided drawbands are $6.50, and there are 14 on hand."
                       ).field_changed is None


def test_the_name_of_the_whole_result_names_no_record_that_shares_its_words():
    """"Ribbon & Roller Restorations" is the shop: its words are no other record's part
    ("Feed roller set", "Ribbon, black cotton") given to the platen."""
    ev = ContextEvidence.build([PARTS])
    said = "Ribbon & Roller Restorations has 2 recovered platens in stock at $89 each."
    assert ev.features(said).field_changed is None
    # another record's count given to the platen is still another record's
    assert ev.features("Ribbon & Roller Restorations has 14 recovered platens in stock."
                       ).field_changed is not None


def test_a_deep_key_path_is_a_field():
    line = "payload > payload > apartments 1 > terms > monthly rent > ccy: KRW"
    assert pairs(line) == [("payload > payload > apartments 1 > terms > monthly rent > ccy",
                            "KRW")]


@pytest.mark.parametrize("text,codes", [
    ("It was for 869.30 rand.", {"ZAR"}), ("ccy: BRL", {"BRL"}), ("R$ 12.50", {"BRL"}),
    ("It cost 12 pesos.", {"MXN", "COP", "ARS", "CLP"}), ("It is 40 euros.", {"EUR"}),
    ("It costs 500 Brazilian reais", {"BRL"}), ("TRY 500", {"TRY"}),
    # words that are currencies only beside a number, and codes only in capitals
    ("It won the award.", set()), ("The real issue is cost.", set()), ("try again", set()),
    # a number near it is not enough: an amount stands right before it
    ("The layover is 1 hour 23 minutes, and you won't need to change terminals.", set()),
    ("about 12.5 million won", {"KRW"}),
    # pounds weighed are a mass, pounds paid sterling
    ("It stands 124 cm tall, weighing about 26 pounds.", set()),
    ("The heavier case is 30 pounds.", set()), ("It sold for 26 pounds.", {"GBP"}),
    ("It weighs 41 kilograms, about 90 pounds, and is 210 cm long.", set()),  # converted
    ("The 12 kg bag costs 30 pounds to check in.", {"GBP"}),  # a price, a way after
])
def test_the_currencies_a_text_names(text, codes):
    assert mentioned(text) == codes


LEDGER = ("| Txn ref | Merchant | Spend category | Flagged |\n| --- | --- | --- | --- |\n"
          "| TXN75280238 | Rooibos Corner | fuel | yes |\n"
          "| TXN99297636 | Bazaar Cardamom | pharmacy | no |")
READINGS = json.dumps([{"monitor": "Polanco", "sampled_at": "11:00", "band": "moderate"},
                       {"monitor": "Roma", "sampled_at": "17:00", "band": "good"}])


def test_an_identifier_names_the_record_that_it_refers_to():
    """"It" after "Transaction TXN75280238 ..." is that transaction: its category is
    fuel; another's is pharmacy."""
    ev = ContextEvidence.build([LEDGER])
    before = "Transaction TXN75280238 is flagged for review. "
    assert ev.features("It is categorised as fuel.", before).field_changed is None
    assert ev.features("It is categorised as pharmacy.", before).field_changed is not None


def test_a_time_or_date_is_not_taken_for_another_records_value():
    """A time picks a reading ("Polanco's 5 PM reading") more often than it states one:
    it is not read as Roma's 17:00 given to Polanco.  A year still is (above)."""
    ev = ContextEvidence.build([READINGS])
    assert ev.features("Polanco's 5 PM reading was moderate.").field_changed is None


def test_a_yes_no_field_said_in_other_words():
    ev = ContextEvidence.build([json.dumps({"name": "Cafe Luna", "open_now": False,
                                            "in_stock": True, "on_time": False})])

    def got(sentence):
        f = ev.features(sentence)
        return f.field_changed, f.field_agreed
    # the key's word negated by an opposite, or said by another word
    assert got("Cafe Luna is currently closed.") == (None, True)
    assert got("Cafe Luna is open now.") == ("open now: false", False)
    assert got("It is available.") == (None, True)
    assert got("It is sold out.") == ("in stock: true", False)
    assert got("The flight is delayed.") == (None, True)
    assert got("The flight is on time.") == ("on time: false", False)
    # an opposite of a word that is not the key's changes nothing
    assert got("It has a private room.") == (None, False)


TRAINS = json.dumps({"query": {"from": "Zürich HB", "remote": "any"}, "connections": [
    {"train": "EC 315", "departure": "2025-07-18T07:33:00+02:00", "changes": 0,
     "fares": [{"class": "2nd", "price_chf": 79.0}]},
    {"train": "IC 21", "departure": "2025-07-18T08:09:00+02:00", "changes": 1,
     "fares": [{"class": "2nd", "price_chf": 52.4}]}]})
ACCOUNT = json.dumps({"user": {"email": "d.okafor@example.com", "email_verified": True,
                               "sso_provider": None, "created_at": "2025-07-07T09:12:00Z",
                               "first_response_at": "2025-07-07T10:03:00Z"}})
QUAKES = json.dumps({"features": [{"place": "Ovalle, Chile", "mag": 5.6},
                                  {"place": "west of Ovalle", "mag": 4.9},
                                  {"place": "Banda Sea", "mag": 4.7}]})


@pytest.mark.parametrize("context,before,sentence", [
    # what it says of a field stands in the clause naming it (or the next): the fare is
    # not the number of changes, "SSO" (a key's word) is no rival email address
    (TRAINS, "", "The 8:09 AM connection is 52.40 francs, but it involves one change."),
    (ACCOUNT, "", "His account isn't linked to an SSO provider, and his email address is "
                  "verified."),
    # "64 francs" counts francs: it is no train number
    (TRAINS, "", "The 7:33 AM train costs 79 francs."),
    # a duration is no value of a date-time field
    (ACCOUNT, "", "He got a first response 51 minutes after he opened the ticket."),
    # several records' values of one field: a list, not a swap
    (QUAKES, "", "The other two were a 4.9 west of Ovalle and a 4.7 in the Banda Sea."),
    # the tool's echo of the query says nothing of the answer's records
    (TRAINS, "", "The IC 21 connection is fully remote."),
])
def test_what_a_sentence_says_of_other_fields_or_records_is_not_a_changed_value(
        context, before, sentence):
    assert ContextEvidence.build([context]).features(sentence, before).field_changed is None


def test_the_clause_naming_a_field_still_carries_its_changed_value():
    ev = ContextEvidence.build([TRAINS]).features(
        "If you want to save money, the 8:09 AM connection has 2 changes.")
    assert ev.field_changed == "connections 2 > changes: 1"


ISSUE = ("- **Number:** 3093\n- **Title:** Memory leak in websocket client\n"
         "- **State:** open\n- **Author:** lim-wei\n- **Closed at:** n/a")
ISSUES = ("number: 4382\nrepository: orbit-labs/kite\nlabels: bug, documentation\n"
          "state: closed\n\nnumber: 5515\nrepository: pohutukawa/forms\n"
          "labels: enhancement, bug, good first issue\nstate: open")


@pytest.mark.parametrize("context,before,sentence,changed", [
    # a one-word state said as its opposite
    (ISSUE, "", "It is currently closed.", "- **State:** open"),
    # a list of this record's items with another record's item in it
    (ISSUES, "Issue #4382 is in orbit-labs/kite. ", "It is labeled bug and good first issue.",
     "labels: bug, documentation"),
])
def test_a_state_said_as_its_opposite_and_a_list_with_another_records_item(
        context, before, sentence, changed):
    ev = ContextEvidence.build([context]).features(sentence, before)
    assert ev.field_changed == changed


@pytest.mark.parametrize("context,before,sentence", [
    (ISSUE, "", "It hasn't been closed yet."),
    (ISSUE, "", "It is currently open."),
    (ISSUES, "", "Issue #4382 is closed."),
    (ISSUES, "Issue #4382 is in orbit-labs/kite. ", "It is labeled bug and documentation."),
])
def test_a_state_and_a_list_as_the_record_has_them(context, before, sentence):
    assert ContextEvidence.build([context]).features(sentence, before).field_changed is None


def test_another_records_value_counts_as_written_and_cents_as_units():
    issues = json.dumps([{"number": 3241, "state": "open", "author": "kenji-t"},
                         {"number": 9243, "state": "closed", "author": "lim-wei"}])
    # "opened" (it was created) is not the other record's ``state: open``
    assert ContextEvidence.build([issues]).features(
        "Issue #9243 was opened by lim-wei.").field_changed is None
    invoices = json.dumps([{"number": "INV-0412", "amount_due_cents": 480000},
                           {"number": "INV-0533", "amount_due_cents": 126550}])
    assert ContextEvidence.build([invoices]).features(
        "INV-0533 is for $1,265.50.").field_changed is None


def test_an_acronym_of_the_context_words_and_an_empty_value_said_as_none():
    companies = ("- **Sakura Biotech**\n  - Chief executive: Priya Sharma\n  - Sector: biotech\n"
                 "- **Jade Harbor Foods**\n  - Chief executive: Zara Watanabe\n"
                 "  - Sector: food")
    ev = ContextEvidence.build([companies])
    ceo = ev.features("Jade Harbor Foods is run by CEO Zara Watanabe.")
    cfo = ev.features("Jade Harbor Foods is run by CFO Zara Watanabe.")
    assert (ceo.missing_names, cfo.missing_names) == (0, 1)
    assert ceo.word_precision > cfo.word_precision
    issue = json.dumps({"number": 3093, "state": "open", "assignee": None})
    ev = ContextEvidence.build([issue])
    assert ev.features("Nobody is assigned to the issue yet.").field_agreed
    assert not ev.features("It is assigned to the triage team.").field_agreed


def test_a_date_of_another_field_given_to_the_field_it_names():
    term = json.dumps({"term": "Fall 2025", "add_deadline": "2025-09-12",
                       "drop_deadline": "2025-10-17", "credits": 11})
    ev = ContextEvidence.build([term])
    assert ev.features("You have until Friday, October 17 to add another course."
                       ).field_changed == "add deadline: 2025-09-12 (September 12, 2025)"
    assert ev.features("You have until Friday, October 17 to drop a course.").field_changed is None
    assert ev.features("You can add courses until September 12, and drop them until "
                       "October 17.").field_changed is None


def test_an_identifier_the_grounding_lacks_in_place_of_a_fields_identifier():
    issue = json.dumps({"issue": {"number": 6348, "milestone": "v1.9.2", "gate": "B42"}})
    ev = ContextEvidence.build([issue])
    assert ev.features("Issue #6348 is part of the v3.0-beta milestone."
                       ).field_changed == "issue > milestone: v1.9.2"
    assert ev.features("Issue #6348 is part of the v1.9.2 milestone.").field_changed is None
    assert ev.features("Issue #6348 is part of the v1.9.2 milestone.").field_agreed


def test_a_value_with_a_unit_of_several_words_is_the_fields_value():
    tower = json.dumps({"name": "Eiffel Tower", "forecast": {"high_c": 25}})
    ev = ContextEvidence.build([tower])
    assert ev.features("The forecast high is 77 degrees Fahrenheit.").field_agreed
    assert ev.features("The forecast high is 25 degrees Fahrenheit.").field_changed


def test_clauses_percentages_and_a_value_written_without_its_unit():
    store = json.dumps({"store": "Main St", "pharmacy": {"drive_thru": True},
                        "wind": {"speed_mph": 35, "gusts_mph": 50},
                        "loan": {"down_payment": 85000, "probability_pct": 70}})
    ev = ContextEvidence.build([store])
    # the negation stands in a clause of its own ("if you'd rather not ...")
    assert ev.features("There's a pharmacy drive-thru if you'd rather not go inside."
                       ).field_changed is None
    assert ev.features("There's no pharmacy drive-thru.").field_changed
    assert ev.features("Winds are around 35 mph, gusting to 50.").field_changed is None
    assert ev.features("The down payment is 20% of the price.").field_changed is None
    assert ev.features("Weighted by probability, that is $130,200.").field_changed is None
    assert ev.features("The probability is 60%.").field_changed == "loan > probability pct: 70"


def test_a_yes_no_field_said_to_be_off():
    home = json.dumps({"grid_connected": True, "storm_watch": False})
    ev = ContextEvidence.build([home])
    assert ev.features("Storm Watch is off.").field_agreed
    assert ev.features("Storm Watch is on.").field_changed == "storm watch: false"


def test_a_setting_named_by_its_parent_turned_on_or_off():
    card = json.dumps({"balance_cents": 1435, "autoload": {"enabled": False,
                                                           "amount_cents": 2000}})
    ev = ContextEvidence.build([card])
    assert ev.features("Autoload is turned on, so it tops up $20.").field_changed \
        == "autoload > enabled: false"
    assert ev.features("Autoload is turned off.").field_agreed
    assert ev.features("Autoload isn't enabled.").field_agreed


def test_the_words_of_the_record_a_sentence_is_about_are_no_rival_names():
    gallery = json.dumps({"gallery": "Halvorsen Contemporary", "exhibitions": [
        {"title": "Salt & Static", "artist": "Mira Okonjo", "room": "West Hall"},
        {"title": "Quiet Machines", "artist": "Tomas Lind", "room": "Gallery 2"}]})
    ev = ContextEvidence.build([gallery])
    assert ev.features("Tomas Lind's Quiet Machines opens in Gallery 2.").field_changed \
        is None
    assert ev.features("The gallery is run by Oskar Berg.").field_changed \
        == "gallery: Halvorsen Contemporary"


def test_a_yes_no_field_is_read_in_the_clause_that_names_its_whole_key():
    holiday = json.dumps({"holiday_closures": [{"date": "2025-07-04", "pharmacy_closed": True,
                                                "store_closed": False}]})
    ev = ContextEvidence.build([holiday])
    assert ev.features("The pharmacy will be closed on July 4, although the store itself "
                       "stays open that day.").field_changed is None
    assert ev.features("The store will be closed on July 4.").field_changed \
        == "holiday closures 1 > store closed: false"


def test_a_one_word_yes_no_key_inside_an_object_the_sentence_does_not_name_says_nothing():
    """``freeze > active: false`` is the freeze's state: "an active plan" says nothing of
    it; "the freeze is active" does."""
    member = json.dumps({"member": "Tobias Ferreira", "plan": "Adult Monthly Unlimited",
                         "status": "active", "monthly_fee_cents": 8900,
                         "freeze": {"active": False, "months_used_this_year": 0}})
    ev = ContextEvidence.build([member])
    assert ev.features("Tobias has an active Adult Monthly Unlimited plan at $89.00 a month."
                       ).field_changed is None
    assert ev.features("His membership freeze is active right now.").field_changed \
        == "freeze > active: false"


def test_a_value_followed_by_a_word_of_its_keys_path_may_be_that_fields():
    """"above the 0.5% tolerance": ``tolerances pct > pvy: 0.5``, named by its parent, states
    0.5; the lot's own 0.9% is no other value of it."""
    seed = json.dumps({"program": "Seed Potato Certification",
                       "tolerances_pct": {"pvy": 0.5, "leafroll": 0.5, "blackleg": 0.25},
                       "lots": [{"lot": "KM-24-03", "variety": "Red Norland", "inspections": [
                           {"n": 1, "pvy_pct": 0.31}, {"n": 2, "pvy_pct": 0.9}]},
                                {"lot": "KM-24-04", "variety": "Russet Burbank", "inspections": [
                           {"n": 1, "pvy_pct": 0.12}, {"n": 2, "pvy_pct": 0.19}]}]})
    ev = ContextEvidence.build([seed])
    assert ev.features("The Red Norland lot was rejected after PVY reached 0.9% on its second "
                       "inspection, above the 0.5% tolerance.").field_changed is None
    assert ev.features("The PVY tolerance is 0.75%.").field_changed \
        == "tolerances pct > pvy: 0.5"


def test_an_amount_is_no_year_of_a_date_field():
    """``prices as of`` holds a date-time: "$1,467" and "1,416" are amounts, no years of it;
    a date is still compared."""
    fuel = json.dumps({"prices_as_of": "2025-07-18T06:30:00-04:00", "results": [
        {"name": "Shipwright Cove", "diesel_usd_gal": 4.72},
        {"name": "Ellery Marina", "diesel_usd_gal": 4.89}]})
    ev = ContextEvidence.build([fuel])
    assert ev.features("At those prices, 300 gallons would run $1,416 at Shipwright Cove and "
                       "$1,467 at Ellery Marina.").field_changed is None
    assert ev.features("Prices as of July 2023.").field_changed is not None


def test_weekdays_in_the_plural_are_no_rival_names():
    gallery = json.dumps({"gallery": "Halvorsen Contemporary",
                          "hours": {"tue_sun": "10:00-18:00", "mon": "closed"}})
    ev = ContextEvidence.build([gallery])
    assert ev.features("The gallery is open 10 AM to 6 PM and closed on Mondays.") \
        .field_changed is None


def test_a_name_that_a_record_holds_is_that_records_though_a_key_outside_names_it_too():
    status = json.dumps({"page": "Relaypost Status", "overall_status": "partial_outage",
                         "components": [{"name": "API", "status": "operational"},
                                        {"name": "Webhooks", "status": "partial_outage"}],
                         "incidents": [{"title": "Delayed email", "updates": [
                             {"status": "investigating", "body": "We are looking into reports "
                              "of delays."}, {"status": "identified", "body": "Fixing."}]}],
                         "uptime_pct": {"API": 99.98, "Webhooks": 99.71}})
    ev = ContextEvidence.build([status])
    ok = ev.features("Relaypost is reporting a partial outage affecting Webhooks.")
    assert ok.field_changed is None and ok.record_gap == 0.0
    wrong = ev.features("Relaypost is reporting a partial outage affecting the API.")
    assert wrong.field_changed is not None or wrong.record_gap > 0.0


def test_a_time_of_a_field_that_the_sentence_names_by_its_path():
    hours = json.dumps({"pharmacy_hours": [{"day": "monday", "open": "08:00", "close": "21:00"},
                                           {"day": "sunday", "open": "10:00", "close": "16:00"}],
                        "pharmacy_lunch_closure": {"start": "13:30", "end": "14:00"}})
    ev = ContextEvidence.build([hours])
    assert ev.features("The pharmacy closes for lunch from 1:30 to 2 PM.").field_changed is None
    # the lunch break's times given to the closing time the sentence names
    assert ev.features("The pharmacy closes at 1:30 PM on Mondays.").field_changed is not None


def test_neither_negates_a_legend_is_no_record_and_an_identifier_is_no_quantity():
    routes = json.dumps({"routes": [{"name": "I-70 W", "tolls": False},
                                    {"name": "US-6 W", "tolls": False}]})
    ev = ContextEvidence.build([routes])
    assert ev.features("Neither route has tolls.").field_changed is None
    assert ev.features("The I-70 route has tolls.").field_changed is not None
    # ``fieldNames`` says what a key means: its words are no other record's value
    board = json.dumps({"issues": [
        {"key": "CHK-884", "fields": {"summary": "Saved cards UI", "customfield_10016": 8}},
        {"key": "CHK-885", "fields": {"summary": "Flag rollout", "customfield_10016": 2}}],
        "fieldNames": {"customfield_10016": "Story Points"}})
    ev = ContextEvidence.build([board])
    assert ev.features("The saved cards UI is the biggest item at 8 points.").field_changed \
        is None
    # "build-host-3" is a name, not the number 3 ("port 5432 ... the host")
    docker = json.dumps({"host": "build-host-3", "containers": [
        {"name": "gitea", "image": "gitea/gitea:1.21.11", "ports": [{"private": 3000}]},
        {"name": "gitea-db", "image": "postgres:16.3-alpine", "ports": [{"private": 5432}]}]})
    ev = ContextEvidence.build([docker])
    assert ev.features("- gitea-db runs Postgres 16.3 and reports healthy; its port 5432 "
                       "isn't published to the host.").field_changed is None


def test_a_state_said_negated_is_no_other_records_state():
    issues = json.dumps({"nodes": [
        {"identifier": "ENG-2231", "title": "Retry webhooks", "state": {"type": "started"}},
        {"identifier": "ENG-2240", "title": "Dashboard 500s", "state": {"type": "unstarted"}}]})
    ev = ContextEvidence.build([issues])
    assert ev.features("ENG-2240, the dashboard 500s, hasn't been started.").field_changed \
        is None
    assert ev.features("ENG-2240, the dashboard 500s, has been started.").field_changed \
        is not None


def test_the_clause_naming_the_whole_key_says_whether_a_flag_is_negated():
    renewals = json.dumps({"renewals": [
        {"vendor": "Snowflake", "product": "Enterprise capacity", "renewal_date": "2025-11-15",
         "auto_renew": False, "notice_period_days": 60},
        {"vendor": "Atlassian", "product": "Jira Software Cloud", "renewal_date": "2025-12-01",
         "auto_renew": True, "notice_period_days": 30}]})
    ev = ContextEvidence.build([renewals])
    said = "Snowflake Enterprise capacity renews November 15 and is not set to auto-renew."
    assert ev.features(said).field_changed is None
    assert ev.features(said.replace("is not set", "is set")).field_changed is not None
    # a date a field's number of days before a date of its record
    assert ev.features("To cancel Jira, notice is due by November 1.").missing_numbers == ()
    assert [n.value for n in ev.features(
        "To cancel Jira, notice is due by November 3.").missing_numbers] == [1103.0]


def test_a_key_named_in_part_beside_a_field_stated_in_full_is_not_changed():
    metrics = json.dumps({"metrics": {"median_first_response_min": 48,
                                      "p90_first_response_min": 212, "sla_breaches": 22}})
    ev = ContextEvidence.build([metrics])
    assert ev.features("Median first response was 48 minutes, with 22 SLA breaches."
                       ).field_changed is None
    assert ev.features("Median first response was 58 minutes.").field_changed is not None


def test_money_stated_before_another_word_is_still_the_named_fields_value():
    totals = json.dumps({"totals": {"committed": 39800, "forecast": 742200}})
    ev = ContextEvidence.build([totals])
    assert ev.features("The $39,800 already committed is on top.").field_changed is None
    assert ev.features("The $38,800 already committed is on top.").field_changed is not None


def test_amounts_in_minor_units_beside_a_lower_case_currency_code_are_also_in_units():
    payouts = json.dumps({"object": "list", "data": [
        {"id": "po_1", "amount": 482315, "currency": "usd", "arrival_date": "2025-09-02"},
        {"id": "po_2", "amount": 129050, "currency": "usd", "arrival_date": "2025-09-04"}]})
    ev = ContextEvidence.build([payouts])
    f = ev.features("$4,823.15 landed on September 2.")
    assert f.missing_numbers == () and f.field_changed is None
    assert [n.value for n in ev.features("$4,833.15 landed on September 2.").missing_numbers] \
        == [4833.15]
    # an upper-case code is how major units are written: 4823 is no $48.23
    dollars = json.dumps({"data": [{"id": "inv_1", "amount": 4823, "currency": "USD"},
                                   {"id": "inv_2", "amount": 1290, "currency": "USD"}]})
    assert [n.value for n in ContextEvidence.build([dollars]).features(
        "It came to $48.23.").missing_numbers] == [48.23]


def test_a_one_word_key_is_not_named_in_part_by_another_fields_key():
    vpn = json.dumps({"user": "a.okafor", "client_version": "5.2.1", "client_up_to_date": False})
    ev = ContextEvidence.build([vpn])
    assert ev.features("Your VPN client, version 5.2.1, is up to date.").field_changed \
        == "client up to date: false"


def test_a_date_without_its_year_is_no_base_for_days_before_it():
    renewals = json.dumps({"renewals": [
        {"product": "Jira", "renews": "December 1", "notice_days": 30},
        {"product": "Zoom", "renews": "2026-01-20", "notice_days": 45}]})
    ev = ContextEvidence.build([renewals])  # read without error, and nothing worked out
    assert [n.value for n in ev.features("To cancel Jira, notice is due by November 1."
                                         ).missing_numbers] == [1101.0]
    assert ev.features("To cancel Zoom, notice is due by December 6.").missing_numbers == ()


_COURSES = json.dumps({"courses": [
    {"code": "CS 101", "credits": 4, "seats_total": 100, "seats_taken": 97},
    {"code": "CS 102", "credits": 3, "seats_total": 50, "seats_taken": 20}]})
_USAGE = json.dumps({"usage_kwh": 900, "breakdown_kwh": {"peak": 300, "off_peak": 600},
                     "consumption_wh": 38920, "production_wh": 46400})
_FLAGS = json.dumps({"flag": "new-checkout", "evaluations_24h": {"production": 1843220,
                                                                 "staging": 5120}})
_PRS = json.dumps({"pull_requests": [
    {"number": 12, "title": "Fix login", "author": "ana", "reviewers": ["bo"],
     "mergeable_state": "clean"},
    {"number": 15, "title": "Migrate settings page", "author": "ana", "reviewers": [],
     "mergeable_state": "dirty"}]})
_BOX = json.dumps({"container_no": "ABCU1234567", "size": "40HC", "weight_kg": 18000,
                   "contents": "furniture"})


@pytest.mark.parametrize("context,before,sentence", [
    # worked out in its own record, though another record states the number
    (_COURSES, "", "CS 101 has just 3 of its 100 seats left."),
    # its value said before the clause that names it
    (_USAGE, "", "About 33% of your usage, 300 kWh, fell in peak hours, with the other 600 "
                 "kWh off-peak."),
    # in other units than the key's, before the clause naming it
    (_USAGE, "", "Your home used 38.9 kWh, so you generated roughly 7.5 kWh more than you "
                 "consumed."),
    # rounded to millions, and the period the key names is no value of it
    (_FLAGS, "", "It has been evaluated about 1.84 million times in production in the last "
                 "24 hours."),
    # "#15" names its record, whatever the sentence before spoke of
    (_PRS, "Ana's fix for the login, #12, is ready to merge. ",
     "Her own PR, #15 migrating the settings page, has no reviewers and its merge state "
     "is dirty."),
    # a number with its unit is no identifier in place of the container's
    (_BOX, "", "The container is a 40-foot high cube carrying 18,000 kg of furniture."),
    # a whole after "of" is no value of the part; a share key written with "_pct"; a
    # seat is an identifier; a time span is no value of a key that names no time
    (json.dumps({"checks": {"total": 5, "passed": 4, "failed": 1}}), "",
     "Four of the five checks passed."),
    ("quote_total: 15122\ndeposit_pct: 30\nvalid_until: 2024-10-17", "",
     "They want a 30% deposit, $4,536.60, with the balance due on completion."),
    (json.dumps({"segments": [{"flight": "DL 2174", "seat": "14C"},
                              {"flight": "DL 4410", "seat": "22A"}]}), "",
     "You're in seat 14C on the first leg and 22A on the second."),
    (json.dumps({"service": "search-indexer", "deploys_30d": 11, "last_deploy": {
        "version": "3.8.2", "duration_s": 412}}), "",
     "It was deployed in just under 7 minutes."),
])
def test_a_value_worked_out_rounded_or_said_elsewhere_in_the_sentence_is_not_changed(
        context, before, sentence):
    assert ContextEvidence.build([context]).features(sentence, before).field_changed is None


@pytest.mark.parametrize("context,sentence", [
    (_USAGE, "Your peak usage was 600 kWh, and off-peak usage was 300 kWh."),
    (_FLAGS, "It has been evaluated about 2.5 million times in production in the last 24 "
             "hours."),
    (json.dumps({"checks": {"total": 5, "passed": 4, "failed": 1}}),
     "Only 3 checks passed."),
    (json.dumps({"sla": {"first_response_median_min": 38, "target_min": 60}}),
     "The median first response is 41 minutes against a 60-minute target."),
])
def test_the_same_fields_given_other_values_are_still_caught(context, sentence):
    ev = ContextEvidence.build([context]).features(sentence)
    assert ev.field_changed is not None or ev.missing_numbers


def test_a_seat_or_gate_is_compared_as_written():
    ev = ContextEvidence.build([json.dumps({"booking": "K7Q2PL", "flight": "DL 2174",
                                            "seat": "14C", "terminal": "2"})])
    assert ev.features("Your seat is 8A.").field_changed == "seat: 14C"
    agreed = ev.features("Your seat is 14C.")
    assert agreed.field_changed is None and agreed.field_agreed


FERRY = json.dumps({"booking": "FB-2291", "route": {"from": "Anacortes", "crossing_minutes": 95},
                    "price_breakdown_cents": {"adult_fares": 9800, "vehicle": 13600},
                    "machines": [{"id": "D1", "capacity_lb": 30}, {"id": "D3", "capacity_lb": 45}]})


def test_money_or_another_dimension_is_no_value_of_a_field_in_units():
    ev = ContextEvidence.build([FERRY])
    # "crossing" names ``crossing minutes``; $117 is money, not minutes
    assert ev.features("With the car that comes to $117 for the crossing.").field_changed is None
    assert ev.features("The dryer D1 takes 8 minutes for 25 cents.").field_changed is None
    # a value of the field's own dimension is still compared
    assert ev.features("The crossing takes 80 minutes.").field_changed is not None
    assert ev.features("The D1 dryer has a capacity of 35 lb.").field_changed is not None


def test_a_parent_key_in_cents_holds_its_childrens_amounts_in_cents():
    ev = ContextEvidence.build([FERRY])
    assert ev.features("The adult fares came to $98.").missing_numbers == ()
    assert ev.features("The adult fares came to $98.").field_changed is None
    # a total it says it worked out and no rule reproduces: unverified arithmetic, no
    # field's value stated otherwise (judge.basis: value_worked_out)
    wrong = ev.features("The adult fares came to $89.")
    assert wrong.missing_numbers and wrong.works_out and wrong.field_changed is None


def test_a_number_after_the_fields_word_says_which_one_not_how_many():
    ev = ContextEvidence.build(["event: Fall Open\nrounds: 5\n"
                                "schedule: R1 Fri 19:00 | R2 Sat 10:00 | R3 Sat 16:00"])
    assert ev.features("It starts on Friday, with round 1 at 7:00 PM.").field_changed is None
    assert ev.features("The event has 6 rounds.").field_changed == "rounds: 5"


ADOPTIONS = json.dumps({"adoptions": [
    {"name": "Pepper", "adopted_on": "2025-05-03", "status": "finalized"},
    {"name": "Rocco", "adopted_on": "2025-05-17", "status": "returned",
     "returned_on": "2025-05-24"},
    {"name": "Maple", "adopted_on": "2025-05-28", "status": "pending_home_check"}]})


def test_another_records_value_counts_only_with_all_its_words():
    ev = ContextEvidence.build([ADOPTIONS])
    # "home" is one word of Maple's ``pending_home_check``, not that value
    assert ev.features("Rocco was brought back on May 24, a week after going home."
                       ).field_changed is None
    assert ev.features("Rocco's adoption, on May 17, is finalized.").field_changed \
        == "adoptions 2 > status: returned"
    assert ev.features("Pepper, adopted on May 3, was returned.").field_changed \
        == "adoptions 1 > status: finalized"


def test_the_line_a_flag_points_to_is_the_same_whatever_the_hash_seed():
    """Which changed line is reported used to follow set order, so it changed from one
    process to the next (``PYTHONHASHSEED``)."""
    import subprocess
    import sys
    from pathlib import Path
    code = ("import json\nfrom guardrail.evidence.features import ContextEvidence\n"
            "d = [json.loads(l) for l in open('docs/model-card/paraphrases/turns-af.jsonl')][21]\n"
            "ev = ContextEvidence.build([d['context']], d['question'])\n"
            "s = [x for x in d['sentences'] if x['start'] == 176][0]\n"
            "print(ev.features(d['response'][176:s['end']].strip(),"
            " d['response'][:176]).field_changed)")
    root = Path(__file__).resolve().parents[1]
    seen = {subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                           text=True, env={**__import__("os").environ, "PYTHONHASHSEED": s},
                           check=True).stdout for s in ("0", "1", "2", "3", "4", "5")}
    assert len(seen) == 1 and "listings 1 >" in seen.pop()


AUCTION = json.dumps({"consignor": "R. Vale", "lots": [
    {"lot": 41, "car": "1962 Jaguar E-Type", "hammer_usd": 96000, "reserve_usd": 90000},
    {"lot": 42, "car": "1957 Ford Thunderbird", "hammer_usd": None, "reserve_usd": 48000}]})


def test_a_clause_comparing_a_value_with_a_field_states_none_of_it():
    ev = ContextEvidence.build([AUCTION])
    said = "If you'd accept $2,000 under your reserve for the Thunderbird, take an offer."
    assert ev.features(said).field_changed is None  # (the $2,000 is a value it lacks)
    # the field's value said otherwise, with no comparison, is still a changed field
    said = "Your reserve for the Thunderbird is $47,000, so take the offer."
    assert ev.features(said).field_changed == "lots 2 > reserve usd: 48000"


def test_a_clause_holding_a_value_worked_out_of_a_field_states_none_of_it():
    grades = json.dumps({"courses": [
        {"course": "BIO 201", "credits": 4, "grade_points": 14.8},
        {"course": "CHEM 110", "credits": 3, "grade_points": 9.0},
        {"course": "HIST 140", "credits": 3, "grade_points": 12.0}]})
    ev = ContextEvidence.build([grades])
    said = "That comes from 35.8 grade points over your 10 credits."  # both totals
    assert ev.features(said).field_changed is None  # (10, a small total, stays unread)


def test_a_value_with_its_unit_that_a_bound_of_the_field_holds_is_about_the_bound():
    tour = json.dumps({"tour": "Treetop 8", "weight_min_lb": 70, "weight_max_lb": 260,
                       "nearest_site_weight_lb": 240,
                       "guests": [{"name": "Alex", "weight_lb": 196},
                                  {"name": "Jamie", "weight_lb": 148}]})
    ev = ContextEvidence.build([tour])
    assert ev.features("Everyone is within the 70 to 260 lb weight range."
                       ).field_changed is None
    # a value another entity's field holds is still another value of this one
    assert ev.features("Alex's weight is 240 lb.").field_changed is not None


def test_a_state_said_of_a_group_of_records_is_read_against_every_record():
    # a dojo's grading results (the tool result of turns-ar/19)
    grading = ContextEvidence.build([(Path(__file__).parent / "data" / "grading.json")
                                     .read_text()])

    def changed(sentence):
        return grading.features(sentence).field_changed

    # a count of the records: the state is said of a group, not of the one it is matched to
    assert changed("Four of the six candidates passed Saturday's grading on May 17.") is None
    # records it names keep their states, alone or together
    assert changed("Owen Ruiz passed his grading on May 17.") is not None
    assert changed("Owen Ruiz and Aarav Mehta both passed.") is not None
    assert changed("Eli Brandt did not pass.") is not None


def test_a_row_says_something_negated_only_in_a_field_the_sentence_names():
    """A table row reads "...; drought tolerant: no": a sentence about the row's survival
    rate negates nothing the row says, and one saying the species is drought tolerant
    does; a part with no key ("no shorts") or a count of 0 under a key it names counts."""
    trees = ("species,planted,alive,drought_tolerant\nRed maple,120,111,no\n"
             "Ginkgo,64,63,yes\n")
    ev = ContextEvidence.build([trees])
    assert not ev.features("Red maple came in at 111 of 120.").negation_mismatch
    assert ev.features("Red maple is drought tolerant.").negation_mismatch
    ev = ContextEvidence.build(["flavor,tubs_in_freezer,contains_nuts\nPistachio,0,yes\n"
                                "Mango,3,no\n"])
    assert not ev.features("Pistachio has no tubs left in the freezer.").negation_mismatch


def test_a_state_with_a_note_said_as_its_opposite_is_contradicted():
    """``trail_Eagle Chute: closed (snowmaking in progress)``: "Eagle Chute is open" says the
    opposite of the state before the note; the trail the sentence names is the one read,
    so another closed trail is not taken for it."""
    report = "\n".join(["resort: Whitepine Summit", "trails_open: 38",
                        "trail_Eagle Chute: closed (snowmaking in progress)",
                        "trail_Birch Meander: open, groomed",
                        "trail_Upper Cirque: closed (insufficient cover)"])
    ev = ContextEvidence.build([report])
    assert ev.features("Eagle Chute is open today.").field_changed \
        == "trail_Eagle Chute: closed (snowmaking in progress)"
    assert ev.features("Birch Meander is open and groomed.").field_changed is None
    assert ev.features("Eagle Chute is closed while snowmaking runs.").field_changed is None


def test_a_value_in_the_unit_of_the_field_whose_longer_key_the_sentence_names_more_of():
    """"the 38-second course time" names ``standard course time s`` (course, time) more
    than ``runs > time s``: 38 is its value, not another run time."""
    trial = json.dumps({"class": "Grade 5 Jumping", "standard_course_time_s": 38.0, "runs": [
        {"place": 1, "dog": "Zephyr", "time_s": 33.41}, {"place": 2, "dog": "Pip", "time_s": 34.02},
        {"place": 3, "dog": "Rocket", "time_s": 35.87}]})
    ev = ContextEvidence.build([trial])
    assert ev.features("All three rounds beat the 38-second course time.").field_changed is None
    assert ev.features("Zephyr's time was 38 seconds.").field_changed is not None


def test_a_country_said_by_its_adjective_is_the_country():
    """"a Norwegian-flagged ship" states ``flag: Norway``; "a Danish-flagged ship" does
    not."""
    ship = json.dumps({"vessel": {"name": "MV Polar Tern", "flag": "Norway", "crew": 41},
                       "fault": "F2"})
    ev = ContextEvidence.build([ship])
    assert ev.features("The MV Polar Tern, a Norwegian-flagged ship, has the F2 fault."
                       ).field_changed is None
    assert ev.features("The MV Polar Tern, a Danish-flagged ship, has the F2 fault."
                       ).field_changed == "vessel > flag: Norway"
    # "American" names the United States, and no ``state`` key
    ship = json.dumps({"vessel": {"name": "MV Sea Lark", "flag": "United States",
                                  "state": "docked"}})
    ev = ContextEvidence.build([ship])
    assert ev.features("The MV Sea Lark, an American-flagged ship, is docked."
                       ).field_changed is None
    assert ev.features("The MV Sea Lark, an American-flagged ship, is under way."
                       ).field_changed is None


def test_a_number_sign_is_no_negation():
    """"Symphony No. 5" and "Marsh Well No. 3" in a grounding negate nothing, and a
    line of key-value text is not cut at "No." either."""
    recital = json.dumps({"organist": "Ines Marr", "program": [
        {"order": 1, "work": "Prelude in B minor"},
        {"order": 2, "work": "Symphony No. 5: Toccata"}]})
    ev = ContextEvidence.build([recital])
    assert not ev.features("She closes with the Toccata from the Fifth Symphony."
                           ).negation_mismatch
    assert ev.features("She does not play the Toccata from the Fifth Symphony."
                       ).negation_mismatch
    sample = "sample_id: LAB-7\nsource: Marsh Well No. 3\nph: 7.4\n"  # one line, not two
    assert not ContextEvidence.build([sample]).features(
        "The sample from Marsh Well No. 3 has a pH of 7.4.").negation_mismatch


def test_a_zero_under_a_named_key_agrees_with_no_and_with_zero():
    """``open_balance_cents: 0`` on a line of its own: "no open balance" and "an open
    balance of $0" both agree with it; "no open balance" against 1250 cents does not, nor
    does a negation of a key the sentence does not name."""
    account = json.dumps({"member": "R. Vance", "open_balance_cents": 0,
                          "autopay": True, "late_fees_cents": 1250})
    ev = ContextEvidence.build([account])
    assert not ev.features("Her account has no open balance.").negation_mismatch
    assert not ev.features("Her account has an open balance of $0.").negation_mismatch
    assert ev.features("Her account has no late fees.").negation_mismatch


PRINT_JOB = json.dumps({"job": "PB-114", "cost_per_page_cents": 18,
                        "boxes": [{"box": 1, "pages": 412}, {"box": 2, "pages": 1144}]})


def test_money_is_no_value_of_a_count_whose_key_names_no_money():
    ev = ContextEvidence.build([PRINT_JOB])
    # "page" names ``pages``; $280.08 is what the pages cost, not how many there are
    assert ev.features("At 18 cents a page, the full batch will cost $280.08.",
                       ).field_changed is None
    assert ev.features("At 18 cents a page, box 1 comes to $74.16.").field_changed is None
    # a count said as a count is still compared
    assert ev.features("Box 1 holds 420 pages.").field_changed == "boxes 1 > pages: 412"


TICKETS = json.dumps({"site": "Kettle Peak", "tickets": [
    {"id": "T-1", "opened": "2025-02-03", "status": "open"},
    {"id": "T-2", "opened": "2025-02-11", "status": "open"}]})


def test_the_date_a_statement_holds_as_of_is_no_fields_date():
    ev = ContextEvidence.build([TICKETS])
    assert ev.features("T-1 is still open as of March 1, 2025.").field_changed is None
    assert ev.features("As of Saturday, March 1, ticket T-1 is still open.",
                       ).field_changed is None
    # the date the field holds, said otherwise, is still a changed value
    assert ev.features("T-1 was opened on March 1, 2025.").field_changed is not None


TYRES = json.dumps({"facility": "Redmoor", "pickups": [
    {"name": "Bayswater", "passenger": 120, "van": 18, "truck": 0, "agricultural": 0},
    {"name": "Dandenong Haulage", "passenger": 0, "van": 0, "truck": 22, "agricultural": 0},
    {"name": "Lilydale Farm", "passenger": 0, "van": 4, "truck": 0, "agricultural": 3}]})


def test_a_keys_total_over_the_records_is_no_other_records_value():
    ev = ContextEvidence.build([TYRES])
    # 22 is Dandenong's, but 3 agricultural tyres is the total over every pickup
    said = "Most were car tyres, 120 in all, with 22 van tyres, 22 truck tyres and 3 " \
           "agricultural tyres."
    assert ev.features(said).field_changed is None
    # another record's value that is no total is still given to the wrong record
    assert ev.features("Dandenong Haulage dropped off 22 truck tyres and 4 van tyres.",
                       ).field_changed == "pickups 2 > van: 0"


def test_a_count_word_that_is_the_fields_value_states_it():
    tunnel = json.dumps({"tunnel": "T2", "slot_hours": 4, "slots": [
        {"date": "2025-09-15", "status": "open"}, {"date": "2025-09-16", "status": "open"}]})
    ev = ContextEvidence.build([tunnel])
    # "four-hour" is ``slot hours``; "two" counts the slots and "2" names the tunnel
    ok = ev.features("Tunnel 2 has two open four-hour slots.")
    assert ok.field_changed is None and ok.field_agreed
    assert ev.features("Tunnel 2 has two open 6-hour slots.").field_changed == "slot hours: 4"


BIRD = json.dumps({"ring": "NW72218", "encounters": [
    {"date": "2023-05-03", "site": "Kilnsea", "mass_g": 13.6},
    {"date": "2023-09-09", "site": "Grand-Lieu, France", "mass_g": 15.1},
    {"date": "2024-06-21", "site": "Kilnsea", "mass_g": 13.9}]})


def test_both_ends_of_a_keys_range_over_the_records_are_no_other_records_values():
    ev = ContextEvidence.build([BIRD])
    before = "It was retrapped at Kilnsea on June 21, 2024, weighing 13.9 grams. "
    ok = ev.features("Its weight ranged from 13.6 to 15.1 grams.", before)
    assert ok.field_changed is None
    # one end only is another record's value given to this one
    assert ev.features("Its weight was 15.1 grams.", before).field_changed is not None


INK = json.dumps({"request": "RFQ-0419", "quantity_kg": 40, "quotes": [
    {"supplier": "Harrowgate Inks", "min_order_kg": 20, "lead_time_days": 5},
    {"supplier": "Nordbrand Farben", "min_order_kg": 50, "lead_time_days": 12}]})


def test_a_keys_min_or_max_before_other_words_is_a_bound_the_sentence_must_name():
    ev = ContextEvidence.build([INK])
    # "the 40 kg order" is the request's quantity, not any quote's minimum order
    assert ev.features("Two suppliers quoted on the 40 kg order.").field_changed is None
    assert ev.features("Harrowgate Inks has a minimum order of 25 kg.").field_changed \
        == "quotes 1 > min order kg: 20"
    assert ev.features("Harrowgate Inks has a min order of 20 kg.").field_agreed


def test_a_key_that_is_a_number_is_named_only_where_the_sentence_says_it():
    spec = json.dumps({"spec": {"fill_min_ml": {"500": 497, "1000": 994}}, "batches": [
        {"batch": "B-03", "size_ml": 500, "fill_avg_ml": 495.8, "result": "fail"},
        {"batch": "B-04", "size_ml": 1000, "fill_avg_ml": 998.7, "result": "pass"}]})
    ev = ContextEvidence.build([spec])
    # the 500 ml minimum, said without its key's 500: nothing of the 1000 ml one
    assert ev.features("B-03 averaged 495.8 ml against the 497 ml minimum.").field_changed \
        is None
    assert ev.features("The 1000 ml minimum fill is 990 ml.").field_changed \
        == "spec > fill min ml > 1000: 994"


def test_two_capitals_are_no_rival_name_for_a_fields_value():
    boxes = json.dumps({"customer": {"account": "PB-CUST-40917", "name": "Greenhalgh Legal"},
                        "boxes": [{"box": 1184, "status": "active"},
                                  {"box": 517, "status": "closed"}]})
    ev = ContextEvidence.build([boxes])
    # "PO" is an abbreviation, not an account the grounding lacks
    assert ev.features("Greenhalgh Legal has two PO boxes on the account, one still open."
                       ).field_changed is None
    assert ev.features("The account is held by Harrowgate Legal.").field_changed is not None


def test_a_key_that_says_out_of_is_said_by_out_of():
    kilns = json.dumps({"kilns": [{"kiln": "K1", "max_temp_c": 1300, "out_of_service": False},
                                  {"kiln": "Raku", "max_temp_c": 1000, "out_of_service": True}]})
    ev = ContextEvidence.build([kilns])
    assert ev.features("The Raku kiln tops out at 1,000°C and is out of service anyway."
                       ).field_changed is None
    assert ev.features("K1 is out of service.").field_changed is not None


def test_a_value_said_not_to_be_this_records_is_no_other_records_value_given_to_it():
    waitlist = json.dumps({"applicants": [
        {"id": "WL-2291", "deposit_paid_cents": 2500},
        {"id": "WL-2304", "deposit_paid_cents": 2500},
        {"id": "WL-2417", "deposit_paid_cents": 0}]})
    ev = ContextEvidence.build([waitlist])
    assert ev.features("WL-2417 hasn't paid the $25 deposit yet.").field_changed is None
    assert ev.features("WL-2417 has paid the $25 deposit.").field_changed is not None


def test_out_of_service_says_an_operational_or_working_key_the_other_way_round():
    vessel = json.dumps({"vessel": "CS Ocean Mender", "status": "transit",
                         "rov_operational": True, "weather_hold": False})
    ev = ContextEvidence.build([vessel])
    assert ev.features("Its ROV is currently listed as out of service."
                       ).field_changed == "rov operational: true"
    assert ev.features("Its ROV is operational.").field_changed is None
    pumps = json.dumps({"pumps": [{"pump": "P1", "working": False}, {"pump": "P2",
                                                                      "working": True}]})
    ev = ContextEvidence.build([pumps])
    assert ev.features("P1 is out of order.").field_changed is None
    assert ev.features("P2 is out of order.").field_changed is not None


def test_a_word_two_values_share_states_neither():
    items = json.dumps({"items": [
        {"item_id": "PM-8124", "description": "Sony headphones",
         "found_at": "2025-07-09T16:20:00", "found_on": "MV Solent Star"},
        {"item_id": "PM-8142", "description": "GoPro Hero 11",
         "found_at": "2025-07-13T14:30:00", "found_on": "MV Portmere Belle"}]})
    ev = ContextEvidence.build([items])
    # "MV" of both ships' names says nothing of which one: the GoPro's is the other one
    assert ev.features("The GoPro was found at 2:30 PM on July 13, aboard the MV Solent "
                       "Star.").field_changed == "items 2 > found on: MV Portmere Belle"
    assert ev.features("The GoPro was found at 2:30 PM on July 13, aboard the MV Portmere "
                       "Belle.").field_changed is None
    # a value whose words all stand in the other's ("Target" in "Above Target") keeps them
    domains = json.dumps({"domains": [{"domain": "People", "weight_pct": 42,
                                       "rating": "Above Target"},
                                      {"domain": "Process", "weight_pct": 50, "rating": "Target"}]})
    ev = ContextEvidence.build([domains])
    assert ev.features("In Process, at 50% of the exam, you were rated at Target."
                       ).field_changed is None


def test_what_is_left_of_a_whole_in_its_record_is_no_other_records_value():
    courses = json.dumps({"courses": [
        {"code": "ASL-101", "level": "ASL 1", "day": "Monday", "enrolled": 15, "capacity": 18},
        {"code": "ASL-102", "level": "ASL 2", "day": "Tuesday", "enrolled": 9, "capacity": 16},
        {"code": "ASL-201", "level": "ASL 3", "day": "Thursday", "enrolled": 4, "capacity": 12},
        {"code": "ASL-FAM", "level": "Family Signing", "day": "Sunday", "enrolled": 6,
         "capacity": 10}]})
    ev = ContextEvidence.build([courses])
    # 10 places less 6 enrolled, though ASL 3 has 4 enrolled
    assert ev.features("The Family Signing course on Sundays has 4 places left."
                       ).field_changed is None
    assert ev.features("The Family Signing course on Sundays has 15 students."
                       ).field_changed is not None  # ASL 1's


def test_another_records_value_of_another_sort_is_not_given_to_this_one():
    machines = json.dumps({"machines": [
        {"machine_id": "W3", "type": "washer", "capacity_lb": 40, "price_cents": 650},
        {"machine_id": "D1", "type": "dryer", "capacity_lb": 30, "minutes_per_coin": 8}]})
    ev = ContextEvidence.build([machines])
    # 40 minutes is no W3's 40 pounds
    assert ev.features("Dryer D1 gives 8 minutes per quarter, so a 40-minute dry takes five "
                       "quarters.").field_changed is None
    assert ev.features("Dryer D1 takes 40 pounds.").field_changed is not None



def test_a_value_another_field_holds_in_a_clause_naming_none_of_this_fields_own_words():
    jumper = ContextEvidence.build([json.dumps({"booking_ref": "GLB-77410", "jumper": {
        "name": "Kenji Moreau", "declared_weight_kg": 78, "measured_weight_kg": 81.4},
        "cord": {"class": "medium", "range_kg": [70, 90]}})])
    # "declared" stands only in the comparison: 81.4 kg is the measured weight
    said = "You weighed in at 81.4 kilograms, 3.4 kilograms more than you declared."
    assert jumper.features(said).field_changed is None
    # its clause names the declared weight, or the measured one: another value of it
    assert jumper.features("Your declared weight was 81.4 kilograms."
                           ).field_changed == "jumper > declared weight kg: 78"
    assert jumper.features("Your measured weight was 78 kilograms."
                           ).field_changed == "jumper > measured weight kg: 81.4"


def test_a_key_of_two_words_says_no_value_of_its_first():
    grading = ContextEvidence.build([json.dumps({"grading": {"max_score": 100, "pass_mark": 70},
                                                 "candidates": [
        {"name": "Leo Martins", "score": 92, "result": "pass"},
        {"name": "Sophie Grant", "score": 64, "result": "fail"}]})])
    said = "Sophie Grant fell short of the pass mark of 70, scoring 64."
    assert grading.features(said).field_changed is None
    assert grading.features("Sophie Grant's result was a pass."
                            ).field_changed == "candidates 2 > result: fail"


def test_pounds_after_a_weight_in_kilograms_are_no_currency():
    rower = ContextEvidence.build([json.dumps({"catalogue": "RowHome Rentals", "currency": "USD",
                                               "machines": [
        {"model": "AquaGlide W1", "monthly_rent_cents": 4900, "weight_kg": 41},
        {"model": "AirStroke 500", "monthly_rent_cents": 4500, "weight_kg": 26}]})])
    assert rower.features("The AquaGlide W1 weighs 41 kilograms, about 90 pounds."
                          ).field_changed is None
    assert rower.features("The AquaGlide W1 rents for 49 pounds a month."
                          ).field_changed == "currency: USD"


def test_a_negation_agrees_with_a_line_tied_for_best_of_the_records_it_is_about():
    keys = ContextEvidence.build([json.dumps({"job_id": "KJ-90352", "items": [
        {"profile": "KW1", "qty": 4, "cut_ok": True, "charged": True},
        {"profile": "SC1", "qty": 2, "cut_ok": True, "charged": True},
        {"profile": "KW1", "qty": 1, "cut_ok": False, "charged": False},
        {"profile": "ASSA Twin", "qty": 1, "cut_ok": True, "charged": True}]})])
    # the failed key's ``charged: false`` ties with the others' lines: it agrees
    assert not keys.features("You weren't charged for the failed key.").negation_mismatch
    # a record it names, or all of them, say otherwise
    assert keys.features("You weren't charged for the SC1 keys.").negation_mismatch
    assert keys.features("You weren't charged for any keys.").negation_mismatch
