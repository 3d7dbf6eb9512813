"""Fields read as the sentence means them (guardrail.evidence.fields, .group_states,
.keys, .values, .columns): a list's number, a state a field it names holds, a longer key
said, a price of nothing, a count of records holding two yes/no keys, a currency's code.
Each was written from a supported sentence of the blind pair turns-dt/-du read as a
changed value; each wrong sentence beside it is still read so.  All fail on 59fc5c5."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis
from guardrail.evidence.keys import clause_negated
from guardrail.evidence.values import numbers, sort_of
from guardrail.evidence.words import negated, stem


def evidence(context, sentence, question=""):
    return ContextEvidence.build([context], question).features(sentence)


GLAZES = ("| Piece | Price | Height (cm) | Firing turnaround | In stock |\n"
          "|---|---|---|---|---|\n"
          "| Tea bowl | $15.00 | 7 | 5 days | yes |\n"
          "| Butter dish | $21.00 | 4 | 7 days | yes |\n"
          "| Salad plate | $18.00 | 3 | 7 days | no |\n"
          "| Egg cup | $8.00 | 5 | 4 days | yes |\n"
          "| Soap dish | $11.00 | 2 | 4 days | yes |")


def test_a_lists_number_is_no_value():
    """"3." numbers an item of the answer's list: no height of another record (read as
    the salad plate's 3 cm without the list marker)."""
    right = evidence(GLAZES, "3. Egg cup: $8.00, ready in 4 days.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(GLAZES, "3. Egg cup: $8.00, ready in 4 days, and it is 3 cm tall.")
    assert wrong.field_changed is not None


ICE = "\n".join(["location: Pike Narrows", "vehicle_access: ATV and snowmobile only",
                 "truck_access: closed", "plowed_road_status: open to Marker 4",
                 "ice_thickness_in: 14"])


def test_a_state_said_of_a_field_it_names_is_that_fields():
    right = evidence(ICE, "Only ATVs and snowmobiles are allowed, and the plowed road is open "
                          "as far as Marker 4.")
    assert right.field_changed is None
    wrong = evidence(ICE, "The ice is 14 inches thick and truck access is open.")
    assert wrong.field_changed == "truck_access: closed"


INFLATABLES = json.dumps({"units": [
    {"name": "Pirate Ship", "available": True, "next_available": None},
    {"name": "Rocket Tower", "available": False, "next_available": "2025-07-26"},
    {"name": "Candy Castle", "available": False, "next_available": "2025-08-02"}]})


def test_a_longer_key_said_names_no_yes_no_key_of_its_words():
    """"next available" says ``next_available``, nothing of ``available``."""
    right = evidence(INFLATABLES, "Rocket Tower is next available on Saturday, July 26.")
    assert right.field_changed is None
    wrong = evidence(INFLATABLES, "Rocket Tower is available that day.")
    assert wrong.field_changed == "units 2 > available: false"


TEA = json.dumps({"shops": [
    {"name": n, "open_now": o, "oat_milk": m, "oat_milk_upcharge_cents": c}
    for n, o, m, c in [("Leaf Lab", True, True, 60), ("Pearl Point", True, False, None),
                       ("Boba Barn", False, True, 50), ("Moon Sip", True, True, 0),
                       ("Tea Tide", True, True, 40)]]})


def test_a_price_of_nothing_negates_nothing_but_a_key_of_that_price():
    assert not negated("Oat milk costs nothing extra.")
    assert negated("Oat milk is not offered.")
    assert negated("There are no additional seats.") and negated("There is no more oat milk.")
    assert clause_negated("there is no more oat milk", {"oat", "milk"}, stem)
    assert not clause_negated("oat milk costs nothing extra", {"oat", "milk"}, stem)
    assert clause_negated("at no extra charge", {"extra", "charg"}, stem)
    right = evidence(TEA, "Moon Sip is open, and oat milk costs nothing extra.")
    assert right.field_changed is None and not right.negation_mismatch
    wrong = evidence(TEA, "Pearl Point is open, and oat milk costs nothing extra.")
    assert wrong.field_changed == "shops 2 > oat milk: false"


def test_a_count_of_records_holding_two_yes_no_keys_counts_those_holding_both():
    """Four shops are open, three of them with oat milk."""
    right = evidence(TEA, "Three shops are open right now and offer oat milk.")
    assert right.field_changed is None
    wrong = evidence(TEA, "Two shops are open right now and offer oat milk.")
    assert wrong.field_changed is not None


FONDUE = ("line_id,item,category,qty,unit_price_chf\n"
          "1,Cheese fondue (per person),main,2,29.50\n"
          "2,Boiled potatoes,side,2,6.50\n"
          "3,Fendant 50cl,drink,1,32.00\n"
          "4,Sparkling water 1L,drink,2,7.50\n"
          "5,Chocolate fondue,dessert,1,24.00")  # 59 + 13 + 32 + 15 + 24 = 143


def test_a_currency_written_by_its_code_is_money():
    said = "It came to CHF 47.00, or 47.00 CHF."
    assert [sort_of(said, n) for n in numbers(said)] == ["¤", "¤"]
    assert [sort_of("It was USD 40.", n) for n in numbers("It was USD 40.")] == ["$"]
    wrong = evidence(FONDUE, "Altogether the bill comes to CHF 153.00.")
    assert wrong.line_changed == "the records' qty x unit price chf add up to 143"
    assert evidence(FONDUE, "Altogether the bill comes to CHF 143.00.").missing_numbers == ()
    # a group's total over line totals: the drinks' two lines
    assert evidence(FONDUE, "Drinks account for CHF 47.00 of it.").missing_numbers == ()


BALLOONS = "\n".join(["booking_id: BK-55127", "artist: Helium Heroes", "design: Grand Arch",
                      "columns: 2", "helium_columns: false", "event_date: 2025-10-04"])


def test_the_words_of_the_results_own_name_name_no_key():
    """"Helium Heroes" is the artist: it says nothing of ``helium_columns``."""
    right = evidence(BALLOONS, "Helium Heroes will install a Grand Arch with two columns.")
    assert right.field_changed is None
    wrong = evidence(BALLOONS, "Helium Heroes will fill the two columns with helium.")
    assert wrong.field_changed == "helium_columns: false"
