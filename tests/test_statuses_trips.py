"""Statuses as agents' tools hold them (guardrail.evidence.statuses): a flight's, a parcel's,
an invoice's, a build's, a pull request's, a server's, a booking's and a ticket's, each
record named by its code ("TP1352", "SUP-3390", "build 4812"), which is no count."""

import json

import pytest

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.statuses import status_of


def flight(status):
    return {"flight": "TP1352", "status": status, "scheduled_departure": "2026-12-08T07:45:00Z",
            "gate": "B14"}


def order(status):
    return {"order_id": "A-99812", "status": status, "carrier": "UPS", "items": 3}


def invoice(status):
    return {"invoice": "INV-2041", "customer": "Acme Ltd", "amount_cents": 125000,
            "status": status, "due_date": "2026-12-15"}


def build(status):
    return {"pipeline": "main", "build": 4812, "status": status, "duration_s": 312}


def pull(state):
    return {"number": 1182, "title": "Fix race in cache eviction", "state": state,
            "author": "mreis"}


def host(status):
    return {"host": "db-primary", "status": status, "uptime_h": 412, "region": "eu-west-1"}


def booking(status):
    return {"booking_id": "BK-7731", "guest": "Ana Costa", "room": "Deluxe twin",
            "check_in": "2026-12-20", "status": status}


def ticket(status):
    return {"ticket": "SUP-3390", "subject": "Cannot reset password", "status": status,
            "priority": "high"}


def evidence(record, sentence):
    return ContextEvidence.build([json.dumps(record)], "").features(sentence)


@pytest.mark.parametrize("value, kind", [
    ("delayed", "late"), ("on_time", "on_time"), ("boarding", "boarding"),
    ("departed", "departed"), ("en_route", "departed"), ("landed", "arrived"),
    ("delivered", "delivered"), ("processing", "progress"), ("unpaid", "unpaid"),
    ("overdue", "unpaid"), ("paid", "paid"), ("success", "passed"), ("failed", "fault"),
    ("merged", "merged"), ("down", "fault"), ("healthy", "working"),
    ("confirmed", "confirmed"), ("waitlisted", "waitlisted"), ("scheduled", None)])
def test_the_kinds_of_trips_parcels_bills_builds_and_bookings(value, kind):
    assert status_of(value) == kind


@pytest.mark.parametrize("record, sentence", [
    (flight("delayed"), "Your flight TP1352 is on time."),
    (flight("delayed"), "The flight is not delayed."),
    (flight("delayed"), "Your flight TP1352 is running on schedule."),
    (flight("on_time"), "Your flight TP1352 is delayed."),
    (flight("cancelled"), "Your flight TP1352 is on time."),
    (flight("landed"), "TP1352 is still in the air."),
    (flight("departed"), "TP1352 has already landed."),
    (flight("boarding"), "TP1352 has already departed."),
    (order("delivered"), "Your order A-99812 is still in transit with UPS."),
    (order("in_transit"), "Your order A-99812 has been delivered."),
    (order("processing"), "Your order A-99812 has shipped with UPS."),
    (invoice("unpaid"), "Invoice INV-2041 has been paid."),
    (invoice("paid"), "Invoice INV-2041 is still outstanding."),
    (invoice("paid"), "Acme has not paid invoice INV-2041 yet."),
    (invoice("overdue"), "Invoice INV-2041 was paid on time."),
    (build("failed"), "Build 4812 on main passed."),
    (build("failed"), "Build 4812 on main succeeded."),
    (build("success"), "Build 4812 on main failed."),
    (pull("open"), "Pull request 1182 has been merged."),
    (pull("merged"), "Pull request 1182 is still open."),
    (host("down"), "db-primary is up and running."),
    (host("down"), "db-primary is online."),
    (host("healthy"), "db-primary is down."),
    (booking("confirmed"), "Booking BK-7731 is still pending."),
    (booking("pending"), "Booking BK-7731 is confirmed."),
    (booking("waitlisted"), "Booking BK-7731 is confirmed."),
    (booking("cancelled"), "Booking BK-7731 is confirmed."),
    (ticket("resolved"), "Ticket SUP-3390 is still open."),
    (ticket("open"), "Ticket SUP-3390 has been resolved."),
])
def test_a_status_said_otherwise_is_changed(record, sentence):
    got = evidence(record, sentence).field_changed
    key = "state" if "state" in record else "status"
    assert got is not None and got.startswith(f"{key}: "), got


@pytest.mark.parametrize("record, sentence", [
    (flight("delayed"), "Your flight TP1352 is delayed."),
    (flight("delayed"), "Unfortunately, TP1352 is running late."),
    (flight("on_time"), "Good news: TP1352 is on time."),
    (flight("on_time"), "TP1352 is not delayed."),
    (flight("cancelled"), "Your flight TP1352 has been cancelled."),
    (flight("landed"), "TP1352 has landed."),
    (flight("departed"), "TP1352 has departed and is in the air."),
    (flight("boarding"), "TP1352 is boarding now at gate B14."),
    (order("delivered"), "Your order A-99812 was delivered."),
    (order("in_transit"), "Your order A-99812 is on its way with UPS."),
    (order("processing"), "Your order A-99812 is still being processed."),
    (invoice("unpaid"), "Invoice INV-2041 is still unpaid."),
    (invoice("unpaid"), "Acme has not paid invoice INV-2041 yet."),
    (invoice("paid"), "Invoice INV-2041 has been paid in full."),
    (build("failed"), "Build 4812 on main failed."),
    (build("success"), "Build 4812 on main passed."),
    (build("success"), "Build 4812 succeeded in about five minutes."),
    (pull("open"), "Pull request 1182 is still open."),
    (pull("merged"), "Pull request 1182 was merged."),
    (host("down"), "db-primary is currently down."),
    (host("healthy"), "db-primary is healthy and online."),
    (booking("confirmed"), "Booking BK-7731 is confirmed."),
    (booking("pending"), "Booking BK-7731 is still pending confirmation."),
    (ticket("resolved"), "Ticket SUP-3390 has been resolved."),
    (ticket("open"), "Ticket SUP-3390 is still open."),
    # a count is still a count: "3 are delayed" says nothing of one record's status
    (flight("delayed"), "3 flights from this gate are on time today."),
])
def test_a_status_said_as_it_is_is_not_changed(record, sentence):
    assert evidence(record, sentence).field_changed is None


@pytest.mark.parametrize("record, sentence, agreed", [
    (flight("delayed"), "Unfortunately, TP1352 is running late.", True),
    (host("healthy"), "db-primary is up and running.", True),
    (flight("delayed"), "Your flight TP1352 is on time.", False),
])
def test_a_status_said_in_other_words_agrees_with_its_field(record, sentence, agreed):
    """"is running late" for ``status: delayed`` is the field said, not an unverifiable
    claim: the judge reads ``field_agreed``."""
    assert evidence(record, sentence).field_agreed is agreed


def test_a_status_of_the_object_around_the_records_is_read_for_them_too():
    """An appointment ``booked`` around a form ``not_started``: "your MRI is booked" (the
    form's name holds "MRI") says the appointment's status, not the form's; the form said
    done is still changed."""
    record = {"appointment": {"id": "apt_20931", "status": "booked",
                              "service": "MRI right knee", "start": "2025-02-27T07:45:00",
                              "forms": [{"name": "MRI safety questionnaire",
                                         "status": "not_started"}]}}
    assert evidence(record, "Your MRI of the right knee is booked for Thursday, "
                            "February 27.").field_changed is None
    got = evidence(record, "Your MRI safety questionnaire has been completed.").field_changed
    assert got == "appointment > forms 1 > status: not_started"


FOOD = {"order_id": "ord_8F2K19", "status": "preparing",
        "status_history": [{"status": "placed", "at": "2025-06-06T19:02:11"},
                           {"status": "accepted", "at": "2025-06-06T19:03:40"},
                           {"status": "preparing", "at": "2025-06-06T19:04:02"}],
        "courier": {"name": "Marco", "status": "heading_to_restaurant"}, "total_cents": 4185}


def test_a_history_holds_past_states_and_an_inner_object_its_own_status():
    """``status_history`` entries are the order's past states, not records of their own,
    and ``courier > status`` is the courier's: the order's own ``status: preparing`` is
    the one status a sentence naming no record speaks of."""
    assert evidence(FOOD, "Your order is already on its way to you.").field_changed \
        == "status: preparing"
    assert evidence(FOOD, "The restaurant accepted it at 7:03 PM.").field_changed is None
    assert evidence(FOOD, "Your order is still being prepared.").field_changed is None


@pytest.mark.parametrize("value, kind", [
    ("insurance_rejected", "denied"), ("payment_failed", "fault"),
    ("shipment_delayed", "late"), ("awaiting_prescriber_authorization", "waiting"),
    ("blocking_complete", None), ("partially_shipped", None)])
def test_a_code_naming_what_its_outcome_is_of_reads_as_that_outcome(value, kind):
    """A code's last word where it is an outcome, its first where it waits; a stage
    complete ("blocking_complete") is no order done, and a part shipped no order shipped."""
    assert status_of(value) == kind


@pytest.mark.parametrize("sentence, changed", [
    ("The billing-service 1.22.0 deploy to staging went through without problems.", True),
    ("The billing-service 1.22.0 deploy to staging failed after 83 seconds.", False),
    ("Two of last night's deploys went out cleanly.", False),
])
def test_a_deploy_said_to_go_through_is_a_deploy_passed(sentence, changed):
    csv = ("deploy_id,service,environment,version,status,duration_s\n"
           "dep_5501,web-frontend,production,4.8.1,succeeded,457\n"
           "dep_5502,billing-service,staging,1.22.0,failed,83\n"
           "dep_5504,search-indexer,production,0.9.7,succeeded,275\n")
    got = ContextEvidence.build([csv], "").features(sentence).field_changed
    assert (got is not None and "status: failed" in got) is changed, got


@pytest.mark.parametrize("record, sentence", [
    # a quantity down to a level, a time booked, a wait of a number of days: no status
    ({"system": "NFT-2", "status": "normal", "nutrient_tank_pct": 18},
     "Its nutrient tank is also down to 18%."),
    ({"job": "J-7", "status": "awaiting_deposit", "group": "Brightwater Tech"},
     "Brightwater Tech's group is booked on Eagle's Crown at 2:30 PM, but it's still "
     "waiting on a deposit."),
    ({"jobs": [{"watch": "Casio G-Shock DW-5600", "status": "ready", "days_waiting": 11},
               {"watch": "Seiko SKX007", "status": "in_repair", "days_waiting": 3}]},
     "The Casio G-Shock DW-5600 is done and has been waiting for 11 days."),
])
def test_words_of_a_status_said_of_something_else_change_nothing(record, sentence):
    assert evidence(record, sentence).field_changed is None


def test_a_calendars_events_are_things_of_their_own_and_a_parcels_tracking_events_past():
    """``events`` of a calendar each hold their own status; a parcel's ``tracking >
    events`` are the parcel's past scans."""
    calendar = {"date": "2025-07-17", "events": [
        {"title": "1:1 with Jonas", "start": "15:00", "status": "cancelled"},
        {"title": "Design review", "start": "10:00", "status": "confirmed"}]}
    assert evidence(calendar, "Your 1:1 with Jonas is confirmed.").field_changed \
        == "events 1 > status: cancelled"
    parcel = {"tracking_number": "1Z999", "status": "in_transit", "tracking": {"events": [
        {"status": "label_created", "at": "2025-07-14", "place": "Leeds"},
        {"status": "pending", "at": "2025-07-15", "place": "Manchester hub"}]}}
    assert evidence(parcel, "Your parcel has been delivered.").field_changed \
        == "status: in_transit"
    # a state its history holds is said of the past: "was pending at the Manchester hub"
    assert evidence(parcel, "It was pending at the Manchester hub on July 15.").field_changed \
        is None
