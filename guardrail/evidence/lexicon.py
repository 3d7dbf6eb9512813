"""The words of tool results' keys and values: what names a field, what a state is.

    GENERIC, IDENTITY, UNITS    key words that do not name a field's content
    FLAGS, NULLS                yes/no and empty values
    OPPOSITES, SAME, REVERSE    a state in other words ("closed" for ``open: false``);
    STATED_OPPOSITES            and one said of a record ("is still outstanding")
    DEMONYMS                    a country's adjective ("Norwegian" for ``flag: Norway``)
    STATE                       what a sentence says something is ("is currently closed")
"""

from __future__ import annotations

import re

GENERIC = frozenset("value amount data info details item items result results is has date "
                    "datetime timestamp deadline enabled".split())
"""Words of a key that say nothing about what it holds: "order total > amount" is named
by its parent."""
IDENTITY = frozenset("id name title code ref url uuid sku slug handle".split())
"""Keys that name a record rather than state something of it (record_gap reads those)."""
UNITS = frozenset("c f m km kg kph mph pct usd eur gbp min mins sec secs h hr hrs ms mm cm ft "
                  "lb lbs".split())
CALENDAR = frozenset("january february march april may june july august september october "
                     "november december monday tuesday wednesday thursday friday saturday "
                     "sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays"
                     .split())
TITLES = frozenset("judge dr mr mrs ms mx prof professor coach captain capt officer nurse pastor "
                   "reverend rev father chef sergeant sgt detective dean senator mayor".split())
"""Words before a name that are no name ("Judge Alvarado", "Coach Rivera")."""
ZONES = frozenset("central eastern pacific mountain atlantic utc gmt et ct pt mt est edt cst cdt "
                  "pst pdt mst mdt".split())
"""Time zones, no names after a time ("6:00 PM Central") or before "time"."""
NOT_NAMING = frozenset(("currently",))
"""Words whose crude stem is a key's ("currently" / ``currency``) but never name it."""
FLAGS = {"true": True, "yes": True, "false": False, "no": False}
NULLS = frozenset(("null", "none", "n/a", "na", "-", "unknown", "tbd"))
NEGATIONS = frozenset("not no never none without isn't wasn't aren't weren't doesn't don't "
                      "didn't cannot can't won't hasn't haven't hadn't non lacks lack "
                      "lacking excludes excluded off neither nor nobody nothing".split())
# a yes/no key's value in other words: its word negated (``open: false`` -> "closed") or
# said another way (``in stock: true`` -> "available"); a phrase counts as one word
PHRASES = re.compile(r"\b(sold out|out of stock|on time|out of service|out of order|taken place|"
                     r"took place|open until|open till)\b", re.I)
OPPOSITES = {"closed": "open", "shut": "open", "offline": "online", "inactive": "active",
             "deactivated": "active", "suspended": "active", "paused": "active",
             "disabled": "enabled",
             "unpaid": "paid", "overdue": "paid", "private": "public", "optional": "required",
             "excluded": "included", "expired": "valid", "delayed": "on_time",
             "sold_out": "in_stock", "out_of_stock": "in_stock", "unavailable": "available",
             "faulty": "working", "broken": "working", "unlocked": "locked",
             "out_of_service": "operational_working", "out_of_order": "operational_working"}
# what a sentence says something is: "is currently closed" (negated: "hasn't been closed")
STATE = re.compile(r"(?:(\bnot|\bnever|n't)\s+(?:\w+\s+)?)?\b(?:is|are|was|were|remains?|"
                    r"stays?|be|been|shows? as|marked(?: as)?)\s+(?:(not|never)\s+)?(?:(?:"
                    r"currently|now|still|already|both|all|also)\s+)*([a-z]+)", re.I)
# a state said of one record ("7 Mill Pond Ln is still outstanding" of ``status: paid``);
# "£420 outstanding" after an amount names no state, so it is no opposite in keys' naming
STATED_OPPOSITES = {**OPPOSITES, "outstanding": "paid"}
REVERSE = {"open": "closed", "online": "offline", "active": "inactive", "enabled": "disabled",
            "paid": "unpaid", "public": "private", "valid": "expired", "locked": "unlocked"}
"""A state said where the record holds its opposite ("open" for ``state: closed``)."""
SAME = {"available": "in_stock", "on_time": "punctual", "punctual": "on_time",
        "working": "operational", "operational": "working", "currently": "now",
        "confirmed": "booked", "completed": "done",
        "taken_place": "held", "took_place": "held",
        "open_until": "close", "open_till": "close"}  # "open until 10 PM": ``close``
_COUNTRIES = """
norwegian norway swedish sweden danish denmark finnish finland icelandic iceland
german germany french france spanish spain portuguese portugal italian italy
dutch netherlands_holland belgian belgium swiss switzerland austrian austria polish poland
czech czechia greek greece turkish turkey_turkiye irish ireland scottish scotland
welsh wales english england british kingdom_britain american america_usa_united canadian canada
mexican mexico brazilian brazil argentine argentina argentinian argentina chilean chile
peruvian peru colombian colombia japanese japan chinese china korean korea indian india
pakistani pakistan thai thailand vietnamese vietnam indonesian indonesia
filipino philippines malaysian malaysia singaporean singapore australian australia
egyptian egypt moroccan morocco nigerian nigeria kenyan kenya ethiopian ethiopia
israeli israel iranian iran iraqi iraq saudi saudi_arabia emirati emirates russian russia
ukrainian ukraine hungarian hungary romanian romania croatian croatia estonian estonia
latvian latvia lithuanian lithuania panamanian panama liberian liberia maltese malta
cypriot cyprus bahamian bahamas zealander zealand
""".split()
DEMONYMS = dict(zip(_COUNTRIES[::2], _COUNTRIES[1::2]))
"""A country's adjective and the words of its name ("Norwegian-flagged" names ``Norway``)."""
