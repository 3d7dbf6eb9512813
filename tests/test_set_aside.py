"""What a sentence names without saying it of a field: a yes/no key's thing, counted or
owned ("both of its renewals" says nothing of ``renewable``, flags._done_not_able), and a
thing a clause sets aside ("Leaving the ignored item aside, that is 3 of 87 packages"
gives ``ignored`` no value, field.SET_APART)."""

import json

from evidence_of import basis_of as b


LOAN = json.dumps({"title": "The Craft of Research", "due": "2025-10-14", "renewals_used": 2,
                   "renewals_max": 2, "renewable": False, "renew_block_reason": "max_renewals"})
OPEN_LOAN = json.dumps({"title": "Braiding Sweetgrass", "renewals_used": 0, "renewable": True})
SCAN = json.dumps({"summary": {"packages_scanned": 87, "vulnerable": 4, "ignored": 1},
                   "results": [{"name": "requests", "ignored": False},
                               {"name": "jinja2", "ignored": False},
                               {"name": "urllib3", "ignored": False},
                               {"name": "cryptography", "ignored": True}]})


def test_a_keys_thing_counted_or_owned_says_nothing_of_the_key():
    assert b(LOAN, "You have already used both of its renewals.") != "value_changed"
    assert b(OPEN_LOAN, "You haven't used any of its renewals.") != "value_changed"
    # said of the key itself, it still counts
    assert b(LOAN, "It can still be renewed.") == "value_changed"
    assert b(LOAN, "Renewals are allowed.") == "value_changed"
    assert b(OPEN_LOAN, "Renewals are not allowed.") == "value_changed"


def test_a_clause_setting_a_thing_aside_gives_it_no_value():
    assert b(SCAN, "Leaving the ignored item aside, that is 3 of 87 packages.") \
        != "value_changed"
    assert b(SCAN, "Apart from the ignored finding, 3 packages need upgrades.") \
        != "value_changed"
    assert b(SCAN, "Only 3 findings were ignored.") == "value_changed"
