"""A record's status said in other words (guardrail.evidence.statuses): the kinds a field's
value names, the clauses that say a kind of one record, the readings that say nothing of
one, and the verdict read through ContextEvidence and the judge."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import basis, explain
from guardrail.evidence.statuses import status_of

REPAIRS = json.dumps({"depot": "Harbour Road", "work_orders": [
    {"wo": "WO-301", "crew": "Crew A", "task": "replace cracked bench slats",
     "location": "Quay Street", "status": "completed", "parts_cents": 4200},
    {"wo": "WO-302", "crew": "Crew B", "task": "rewire lantern bracket",
     "location": "Mill Lane", "status": "in_progress", "parts_cents": 12900},
    {"wo": "WO-303", "crew": "Crew C", "task": "repaint railings",
     "location": "Fisher Steps", "status": "awaiting_parts", "parts_cents": 0},
    {"wo": "WO-304", "crew": "Crew A", "task": "clear drain grate",
     "location": "Rope Walk", "status": "cancelled", "parts_cents": 0}]})
ORDER = json.dumps({"order": "LN-8841", "items": [
    {"item": "brass storm lantern", "status": "shipped", "shipped_on": "2025-02-03"},
    {"item": "copper hand lamp", "status": "in_production", "est_ready": "2025-02-14"}]})
PUMP = json.dumps({"station": "North Weir", "pump_status": "fault", "fault_code": "P-17",
                   "telemetry_online": True})
RUNS = json.dumps({"runs": [
    {"run": 881, "branch": "fix/login-timeout", "status": "completed", "conclusion": "cancelled"},
    {"run": 882, "branch": "main", "status": "completed", "conclusion": "success"}]})
CLAIMS = json.dumps({"policy": "PP-5520", "claims": [
    {"claim_id": "C-1", "submitted": "2025-03-04", "condition": "dental extraction",
     "status": "paid", "paid_cents": 38700},
    {"claim_id": "C-2", "submitted": "2025-05-27", "condition": "annual wellness exam",
     "status": "denied", "paid_cents": 0},
    {"claim_id": "C-3", "submitted": "2025-06-30", "condition": "thyroid bloodwork",
     "status": "in_review", "paid_cents": None}]})
DROPS = json.dumps({"standing_orders": [
    {"customer": "Harbour Deli", "loaves": 6, "active": True},
    {"customer": "Quayside Cafe", "loaves": 12, "active": False}]})


def changed(context, sentence, before=""):
    return ContextEvidence.build([context], "").features(sentence, before).field_changed


@pytest.mark.parametrize("value, kind", [
    ("completed", "done"), ("in_progress", "progress"), ("In production", "progress"),
    ("awaiting_materials", "waiting"), ("awaiting_part", "waiting"), ("pending", "waiting"),
    ("shipped", "shipped"), ("in_transit", "shipped"), ("ready_for_collection", "ready"),
    ("cancelled", "cancelled"), ("fault", "fault"), ("out_of_service", "fault"),
    ("operational", "working"), ("resolved", "done"), ("open", "open"),
    ("Kitchen sink draining slowly", None), ("2025-03-01", None), ("confirmed", "confirmed"),
    ("Crew B", None), ("approved", "approved"), ("paid", "paid"), ("denied", "denied"),
    ("rejected", "denied")])
def test_a_fields_value_names_a_kind_of_status_or_none(value, kind):
    assert status_of(value) == kind


@pytest.mark.parametrize("context, sentence, line", [
    (REPAIRS, "Crew B has also wrapped up the lantern bracket rewiring on Mill Lane.",
     "status: in_progress"),
    (REPAIRS, "The railings at Fisher Steps have already been finished.", "status: awaiting_parts"),
    (REPAIRS, "The bench slats on Quay Street are still awaiting parts.", "status: completed"),
    (ORDER, "The brass storm lantern has not shipped yet and is still being made.",
     "status: shipped"),
    (ORDER, "The copper hand lamp has shipped, so it should reach you soon.",
     "status: in_production"),
    (PUMP, "The pump at North Weir is working normally.", "pump status: fault"),
    # a decision said the other way round, or made where none is; a date is no count
    (CLAIMS, "The annual wellness exam claim from May 27 was accepted as covered.",
     "status: denied"),
    (CLAIMS, "The dental extraction claim was denied.", "status: paid"),
    (CLAIMS, "The thyroid bloodwork claim has been approved.", "status: in_review"),
])
def test_a_status_said_as_a_kind_its_record_cannot_be_is_changed(context, sentence, line):
    got = changed(context, sentence)
    assert got is not None and got.endswith(line), got


@pytest.mark.parametrize("context, sentence", [
    (REPAIRS, "Crew B is still working on the lantern bracket on Mill Lane."),
    (REPAIRS, "The bench slats on Quay Street were replaced and the job is complete."),
    (REPAIRS, "The railings at Fisher Steps are on hold until the parts arrive."),
    # a kind that picks records, a hedged one, one said of a count
    (REPAIRS, "Not counting the cancelled job, the parts come to $171."),
    (REPAIRS, "The lantern bracket on Mill Lane is nearly finished."),
    (REPAIRS, "Two of the four jobs are finished."),
    # a negated kind changes only a field of that kind
    (ORDER, "The copper hand lamp has not shipped yet and is still being made."),
    (ORDER, "The brass storm lantern shipped on February 3 and is on its way."),
    # a kind another field of the record holds: GitHub's status and conclusion
    (RUNS, "The run on fix/login-timeout was cancelled after a minute."),
    (PUMP, "The pump at North Weir is reporting a fault, code P-17."),
    (CLAIMS, "The annual wellness exam claim from May 27 was denied."),
    (CLAIMS, "The dental extraction claim was approved and paid out $387."),
    (CLAIMS, "The thyroid bloodwork claim is still under review."),
    (CLAIMS, "The annual wellness exam claim was not approved."),
    (CLAIMS, "Online claims are accepted around the clock, and the thyroid bloodwork one "
             "is still under review."),
    # someone approving something is no record's decision
    (CLAIMS, "The wellness exam claim was denied, though the vet had approved the visit."),
])
def test_a_status_its_record_can_be_or_no_record_status_changes_nothing(context, sentence):
    assert changed(context, sentence) is None


def test_a_status_field_another_clause_names_is_not_read_in_this_one():
    """"the bench slats were replaced, and the lantern job is still under way": each part
    speaks of its own record, both right."""
    assert changed(REPAIRS, "The Quay Street bench slats are done, and the Mill Lane lantern "
                            "bracket job is still in progress.") is None
    assert changed(REPAIRS, "The Quay Street bench slats are done, and the Mill Lane lantern "
                            "bracket job is finished too.") is not None


def test_a_part_naming_no_record_is_not_read_as_the_record_another_part_names():
    """"The Quay Street and Mill Lane jobs are complete, and Crew A's drain job was
    cancelled": the sentence is about the drain job (Crew A, Rope Walk), and its first
    part names no one record, so the cancelled job is not said to be complete."""
    assert changed(REPAIRS, "The morning jobs are already complete, and the Rope Walk "
                            "drain grate job was cancelled.") is None
    assert changed(REPAIRS, "The Rope Walk drain grate job is already complete.") is not None


def test_paused_is_the_opposite_of_active():
    assert changed(DROPS, "Harbour Deli is also paused this week.") is not None
    assert changed(DROPS, "Quayside Cafe is also paused this week.") is None


def test_the_judge_calls_a_status_said_otherwise_a_contradiction():
    ev = ContextEvidence.build([REPAIRS], "How are the repairs going?")
    f = ev.features("Crew B has also wrapped up the lantern bracket rewiring on Mill Lane.")
    assert basis(f) == "value_changed"
    assert explain(f, 0.9, True).kind == "contradicted"


ENTRIES = json.dumps({"event": "Harbour Rapid Open", "entries": [
    {"name": n, "junior": j, "paid": p} for n, j, p in [
        ("Ada Quill", False, True), ("Bo Lind", True, True), ("Cy Ng", False, True),
        ("Di Roy", True, False), ("Ed Pike", False, True), ("Fay Oduya", False, True),
        ("Gus Hart", True, True)]]})
TOURS = json.dumps({"booking_ref": "IH-2210", "extras": {
    "sauna_session": {"date": "2025-01-22", "booked": True},
    "reindeer_sled_ride": {"date": "2025-01-23", "booked": False, "waitlist_position": 3}}})


@pytest.mark.parametrize("sentence, wrong", [
    ("Seven players have entered the Harbour Rapid Open, four of them juniors.", True),
    ("Seven players have entered the Harbour Rapid Open, three of them juniors.", False),
    ("Seven players have entered, two of them unpaid.", True),
    ("Seven players have entered, one of them unpaid.", False),
    # a clause of more words after "of them" says more than a state ("still have seats")
    ("Seven players have entered, and four of them still have to pay at the door.", False),
])
def test_a_count_of_them_is_a_count_of_the_records_holding_a_state(sentence, wrong):
    """"Seven players have entered, four of them juniors": the part counted of the count
    before it, where three ``junior: true``."""
    assert (changed(ENTRIES, sentence) is not None) is wrong


@pytest.mark.parametrize("sentence, wrong", [
    ("Of the seven entries, four are juniors.", True),
    ("Of the seven entries, three are juniors.", False),
    ("Among the seven players in the open, two are unpaid.", True),
    ("Among the seven players in the open, one is unpaid.", False),
])
def test_a_count_fronted_by_its_whole_is_a_count_of_the_records_holding_a_state(sentence, wrong):
    """"Of the six lots in the warehouse, three are organic": the part after the comma
    counts of the whole before it."""
    assert (changed(ENTRIES, sentence) is not None) is wrong


def test_confirmed_says_a_booked_key_yes():
    assert changed(TOURS, "Your reindeer sled ride on January 23 is confirmed as well.") \
        .endswith("booked: false")
    assert changed(TOURS, "Your sauna session on January 22 is confirmed.") is None


def test_a_noun_of_a_done_keys_verb_says_nothing_of_whether_it_was_done():
    """``delivered: false``: "Delivery is promised for Friday" names the delivery, not
    whether it happened; "free shipping" says nothing of ``shipped``.  The participle and
    the verb still do."""
    order = json.dumps({"order": "PW-5521", "delivered": False, "shipped": False,
                        "shipping_cents": 0, "promised": "2025-10-24"})
    assert changed(order, "Delivery is promised for Friday, October 24, and the order "
                          "hasn't been delivered yet.") is None
    assert changed(order, "Shipping on this order is free.") is None
    assert changed(order, "The order was delivered on Friday, October 24.") is not None
    assert changed(order, "The order has shipped.") is not None
