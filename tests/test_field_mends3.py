"""Fields read as the sentence means them, third round (guardrail.evidence.owned, .keys,
.group_states, .field, .fields, .left, .ratios, .stored, .misadded, .swapped): a yes/no
key said both ways in one sentence, a count's own clause, "outstanding" as unpaid, a
thing done against a thing that can be done, a value said as a label, a price in cents
"each", a date said due, seats assigned, a rate with its unit before "per", a rate in
cents, amounts named and added up, another record's number in a clause naming it, a
value within its record's range.  Each but the sum was written from a supported sentence
of the hand-written sets read as a changed or missing value (turns-ee, -ei, -ck, -bq and,
measured first, -ej/-ek and -el); the sum from a wrong one of -ek that was only marked.
Each wrong sentence beside a right one is still read so.  All fail on 589a061."""

import json

from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.group_states import counted_flag
from guardrail.evidence.judge import basis


def evidence(context, sentence, before=""):
    return ContextEvidence.build([context], "").features(sentence, before)


HIRE = json.dumps({"contract": "HC-1001", "currency": "USD", "charges": [
    {"invoice": "INV-1", "period": "2025-09-01/2025-09-07", "amount_cents": 64500, "paid": True},
    {"invoice": "INV-2", "period": "2025-09-08/2025-09-12", "amount_cents": 46000,
     "paid": False, "due": "2025-09-22"}]})


def test_a_yes_no_said_both_ways_names_two_records_states():
    """"which is paid" is the first week's, "still outstanding" the second's."""
    right = evidence(HIRE, "You've been invoiced $645.00 for the first week, which is paid, "
                           "and $460.00 for September 8 to 12, which is still outstanding.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(HIRE, "The $460.00 invoice for September 8 to 12 has been paid.")
    assert wrong.field_changed == "charges 2 > paid: false"


def test_outstanding_says_unpaid_as_a_state_not_after_an_amount():
    wrong = evidence(HIRE, "The $645.00 invoice for the first week is still outstanding.")
    assert wrong.field_changed == "charges 1 > paid: true"
    assert evidence(HIRE, "Together that is $460.00 outstanding.").field_changed is None


DUES = json.dumps({"member": "Harold Pike", "membership": {
    "type": "senior", "year": 2024, "fee_cents": 9500, "paid": True}, "charges": [
    {"item": "locker rental", "amount_cents": 2500, "paid": False},
    {"item": "guest passes", "amount_cents": 1200, "paid": False}]})


def test_a_yes_no_said_both_ways_is_read_where_the_record_is_named():
    """The membership is named where "paid" is said; "two other charges" where
    "outstanding" is."""
    right = evidence(DUES, "Harold's $95 senior membership for 2024 is paid, but two other "
                           "charges are outstanding.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(DUES, "Harold's $95 senior membership for 2024 is still outstanding.")
    assert wrong.field_changed == "membership > paid: true"


OUTAGES = json.dumps({"account": "BB-1", "outages": [
    {"id": "O-1", "cause": "scheduled maintenance", "planned": True},
    {"id": "O-2", "cause": "equipment failure", "planned": False},
    {"id": "O-3", "cause": "power interruption", "planned": False},
    {"id": "O-4", "cause": "scheduled maintenance", "planned": True},
    {"id": "O-5", "cause": "fiber damage", "planned": False}]})


def test_a_count_of_a_key_said_both_ways_is_read_in_its_own_clause():
    """"two of them planned" counts the planned records, whatever "unplanned" says after."""
    right = "Your line had five outages, two of them planned maintenance and three unplanned."
    assert evidence(OUTAGES, right).field_changed is None
    fields = ContextEvidence.build([OUTAGES], "").fields
    assert counted_flag(fields, right) is None
    wrong = right.replace("two of them", "three of them").replace("three unplanned",
                                                                 "two unplanned")
    assert counted_flag(fields, wrong) == "outages 2 > planned: false"


LOANS = json.dumps({"patron": "LIB-1", "loans": [
    {"title": "Braiding Sweetgrass", "due_date": "2025-10-14", "renewals_used": 1,
     "renewable": False},
    {"title": "Sourdough Basics", "due_date": "2025-10-20", "renewals_used": 0,
     "renewable": True}]})


def test_a_thing_done_is_not_whether_it_can_be():
    """``renewable`` says what can be done: "you haven't renewed it" says nothing of it."""
    right = evidence(LOANS, "Sourdough Basics isn't due until October 20, and you haven't "
                            "renewed it yet.")
    assert right.field_changed is None and basis(right) != "value_changed"
    wrong = evidence(LOANS, "Sourdough Basics is due on October 20 and can't be renewed.")
    assert wrong.field_changed == "loans 2 > renewable: true"


TICKETS = json.dumps({"listing": {"section": "118", "seats": ["7", "8", "9", "10"]},
                      "sales": [{"order": "ORD-1", "seats": ["7", "8"],
                                 "sale_price_cents_each": 16500, "transferred": True},
                                {"order": "ORD-2", "seats": ["9"],
                                 "sale_price_cents_each": 15000, "transferred": False}]})


def test_a_value_said_as_a_label_and_a_price_in_cents_each():
    right = evidence(TICKETS, "Seat 9 sold for $150, but it hasn't been transferred yet.")
    assert right.field_changed is None and not right.missing_numbers
    wrong = evidence(TICKETS, "Seat 9 sold for $165, but it hasn't been transferred yet.")
    assert basis(wrong) in ("value_changed", "other_record")


BILLS = json.dumps({"account": "WA-1", "due_days_after_bill": 21, "bills": [
    {"bill_date": "2025-06-03", "amount_billed_cents": 12960},
    {"bill_date": "2025-08-04", "amount_billed_cents": 14208}]})


def test_a_date_said_due_is_no_bill_date():
    right = evidence(BILLS, "That August bill is due on August 25, 2025.")
    assert right.field_changed is None
    wrong = evidence(BILLS, "The August bill is dated August 5, 2025.")
    assert wrong.field_changed is not None and "bill date" in wrong.field_changed


LICENCES = json.dumps({"org": "H&G", "licenses": [
    {"product": "DocuFlow", "seats_total": 25, "seats_assigned": 22, "price_per_seat_cents": 14400},
    {"product": "SecureVault", "seats_total": 40, "seats_assigned": 31,
     "price_per_seat_cents": 450},
    {"product": "MeetSpace", "seats_total": 15, "seats_assigned": 9,
     "price_per_seat_cents": 18000}]})


def test_seats_left_of_those_assigned_are_no_other_records_value():
    right = evidence(LICENCES, "SecureVault has 9 spare seats, and DocuFlow has 3 spare seats "
                               "at $144.00 each per year.")
    assert right.field_changed is None


UPGRADES = json.dumps({"passenger": {"tier": "Silver", "miles_balance": 48200},
                       "upgrade_options": [
                           {"cabin": "premium_economy", "cash_cents": 21900, "miles": 22000},
                           {"cabin": "first", "cash_cents": 54900, "miles": 45000}]})
PLANS = json.dumps({"provider": "Nimbus", "currency": "USD", "plans": [
    {"name": "Plus", "storage_gb": 200, "monthly_price_cents": 299},
    {"name": "Pro", "storage_gb": 2000, "monthly_price_cents": 999}]})


def test_a_rate_in_cents_with_its_unit_before_per():
    """1.2 cents a mile: $549 over 45,000 miles; half a cent a GB: $9.99 over 2,000."""
    right = evidence(UPGRADES, "First class works out to about 1.2 cents of value per mile, "
                               "based on the cash price.")
    assert right.field_changed is None and not right.missing_numbers
    wrong = evidence(UPGRADES, "First class works out to about 2.4 cents of value per mile, "
                               "based on the cash price.")
    assert wrong.missing_numbers
    plans = evidence(PLANS, "Per gigabyte, Pro costs about half a cent per GB each month, "
                            "against roughly 1.5 cents on Plus.")
    assert not plans.missing_numbers and basis(plans) != "value_changed"


STATEMENT = json.dumps({"loan": "ML-1", "total_payment_due_cents": 267450,
                        "principal_balance_cents": 31248711,
                        "payment_breakdown": {"principal_cents": 59214, "interest_cents": 159500,
                                              "escrow_cents": 48736},
                        "ytd": {"principal_paid_cents": 521990, "interest_paid_cents": 1443820}})


def test_amounts_it_names_added_up_otherwise():
    """"Principal and interest together" names two amounts of one object: their sum is
    $2,187.14, so $2,178.14 is a value changed, with the sum as evidence."""
    wrong = evidence(STATEMENT, "Principal and interest together account for $2,178.14 of "
                                "the payment.")
    assert basis(wrong) == "value_changed"
    assert wrong.line_changed == "principal cents 592.14 + interest cents 1,595 = 2,187.14"
    right = evidence(STATEMENT, "Principal and interest together account for $2,187.14 of "
                                "the payment.")
    assert right.line_changed is None and basis(right) != "value_changed"
    # far from every sum of what it names: another amount, not a sum said wrongly
    other = evidence(STATEMENT, "Principal and interest together account for $9,500.00.")
    assert other.line_changed is None


CLASSES = json.dumps({"school": "Cadence", "classes": [
    {"title": "Beginner Ukulele", "age_min": 8, "age_max": 12, "spots_left": 4},
    {"title": "Junior Drum Circle", "age_min": 7, "age_max": 10, "spots_left": 0},
    {"title": "Intro to Keyboard", "age_min": 9, "age_max": 13, "spots_left": 6}]})
CLAIM = json.dumps({"claim": "CLM-1", "status": "approved", "line_items": [
    {"item": "kitchen flooring replacement", "claimed_cents": 640000, "approved_cents": 585000},
    {"item": "drywall repair", "claimed_cents": 215000, "approved_cents": 215000},
    {"item": "water extraction and drying", "claimed_cents": 180000, "approved_cents": 180000},
    {"item": "cabinet base replacement", "claimed_cents": 120000, "approved_cents": 0,
     "denial_reason": "pre-existing rot"}]})


def test_a_value_within_the_records_range_is_no_other_records():
    """9 is the keyboard class's minimum age, and within the drum circle's 7 to 10."""
    right = evidence(CLASSES, "Junior Drum Circle takes 9-year-olds, but it is full.")
    assert basis(right) != "value_changed"
    wrong = evidence(CLASSES, "Junior Drum Circle takes children from age 9, but it is full.")
    assert basis(wrong) in ("value_changed", "other_record")


def test_a_value_in_a_clause_naming_another_record_is_that_records():
    right = evidence(CLAIM, "The $1,200 cabinet base replacement was denied because of "
                            "pre-existing rot, and the kitchen flooring was approved at $5,850 "
                            "rather than $6,400.")
    assert basis(right) != "value_changed"
    wrong = evidence(CLAIM, "The cabinet base replacement was approved at $5,850.")
    assert basis(wrong) == "value_changed"
