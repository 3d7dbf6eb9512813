"""A tool result's field, and whether a number a sentence says is its value.

    Field                      one ``key: value`` of a rendered tool result
    FieldCheck                 what a sentence says of the fields it names (fields.py)
    states(sentence, n, f)     ``n`` is the field's value, in its units or in others
    keyed(sentence, n, f)      ``n`` is what the key itself names ("24h"), not its value
    whole_after_of(sentence, n)  ``n`` is a whole ("four of the five"), not a part
    rate_over(sentence, n, f, keys)  a rate per a thing the record counts ("$28 per player")
    attributive(sentence, n)   a date before what it names ("your March 11 claim")
    no_count_of(sentence, n, f)  ``n`` picks one ("level 9") or measures ("15 mm"): no count
    comparable(n, f)           ``n`` is of the field's sort (a share for a share)
    bound_kept(sentence, n, f) ``n`` is a bound the field's value keeps ("at least 7 m")
    bound_of(sentence, n, fields, about)  such a bound, of the records the sentence is about
    SET_APART, ASIDE           a change or a thing set aside ("leaving the ignored item
                               aside"), a thing set aside: what a clause says of no field
                               it names
    off_hundred(fields), said_off(sentence, n, offs)   a share of a whole against another
                               said as how far from all of it ("3% above the forecast")
    DIFFERENCE                 a value said as a difference ("15 more rolls"): no field's
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Collection, Optional, Sequence

from guardrail.evidence import units
from guardrail.evidence.lexicon import CALENDAR
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import Number, numbers

_SHARE = re.compile(r"(?<![^\W_])(?:pct|percent|percentage|probability|share)(?![^\W_])|%",
                    re.I)  # "deposit_pct" too
# a value said as a difference: "15 more rolls", "three wins behind", "1.4 LU quieter than"
DIFFERENCE = (r"(?:(?<=\d)|\b(?:two|three|four|five|six|seven|eight|nine|ten))(?:\s[A-Za-z°]+)?"
              r"\s(?:more|fewer|short of|above|below|behind|[a-z]{3,}er (?:than|to))\b")
# what a key holding money says: "price", "cost usd", "amount cents", "rent", "balance"
MONEY_KEY = re.compile(
    r"(?<![a-z])(?:price|cost|fee|amount|total|subtotal|balance|rent|revenue|budget|paid|"
    r"payments?|pay|charges?|value|spend|spent|sales?|income|salary|wages?|tips?|deposit|"
    r"refund|credit|debit|tax|discount|invoice|bill|premium|payout|fares?|earnings?|profit|"
    r"cash|fund|donations?|bid|estimate|quote|worth|owed|owing|due|rates?|fine|penalty|"
    r"surcharge|margin|loan|interest|payroll|gross|net|msrp|retail|wholesale|"
    r"award|prize|grant|stipend|allowance|reimburs\w*|outstanding|money|currency|ccy|"
    r"usd|eur|gbp|cad|aud|nzd|jpy|chf|sek|nok|dkk|inr|brl|mxn|zar|cents?|pence|penny|"
    r"dollars?|euros?|pounds?|gst|vat|committed|forecast|invested|raised|pledged|"
    r"collected|billed|charged|earned|savings|capex|opex|arr|mrr|gmv|tuition|dues|rebate|"
    r"subsid\w*|bonus|reward|jackpot|stake|wager|payable|receivable|ebitda)s?(?![a-z])",
    re.I)
# the time a statement holds at ("as of Friday, March 1", "as at 8:30 AM"), and the keys
# that hold such a time
_AS_OF = re.compile(r"\bas\s+(?:of|at)\s+(?:[A-Z][a-z]+day,?\s+)?$", re.I)
_AS_OF_KEY = re.compile(r"as[\s_]+(?:of|at)|updated|snapshot|generated|report|retrieved|"
                        r"fetched|current|checked", re.I)
_UNTIL = re.compile(r"\b(?:until|till)\s+(?:about\s+|around\s+)?$", re.I)
_START_KEY = re.compile(r"(?:^|[\s>_])(?:open|opens|opening|start|starts|from|begin|begins)$",
                        re.I)
# a date a thing began on (``deferred on``, ``start date``), not one it lasts until
_BEGUN_KEY = re.compile(rf"{_START_KEY.pattern}|(?:^|[\s>_])(?!expire|end|due|close|renew)"
                        r"[a-z]+(?:ed|ing)?[\s_]+(?:on|since)$|(?:^|[\s>_])(?:start|begin|"
                        r"since)[\s_]+date$", re.I)
_MINOR_AFTER = re.compile(r"\s?(?:cents?|pence|p)\b")  # "18 cents", "86p"
_TIME_KEY = re.compile(r"(?<![^\W_])(?:s|sec|secs|seconds?|ms|min|mins|minutes?|h|hr|hrs|hours?|"
                       r"days?|d|duration|time|eta|age|latency|elapsed|wait|uptime)(?![^\W_])",
                       re.I)
_WHOLE_AFTER_OF = re.compile(r"\bof\s+(?:the|its|their|your|his|her|our|all)?\s*$", re.I)
# nouns a number after them picks one of ("level 9", "bay 2", "mile 21")
_WHICH = frozenset("level floor gate bay aisle row room platform track lane pier dock berth "
                   "stall table seat court hole stage round lap heat leg flight route unit lot "
                   "plot section zone block building hall ward bed terminal station stop mile "
                   "page chapter step phase tier week day game".split())
_ATTRIBUTIVE = re.compile(r"\b(?:your|the|this|that|its|their|his|her|our|my)\s+$", re.I)
# a rate for each of some things: "$28 per player", "about $28 a player"
_PER_THING = re.compile(r"\s?(?:per|a|an|each|every|for each|for every)\s+([A-Za-z]+)", re.I)
# "1.2 cents of value per mile": a unit (and what of) between the number and its thing
_RATE_AFTER = re.compile(r"\s+[A-Za-z]+(?:\s+of\s+[A-Za-z]+)?" + _PER_THING.pattern, re.I)
_NOUN_AFTER = re.compile(r"\s+(?!(?:at|on|in|to|from|until|by|and|or|is|was|for)\b)[a-z]")

# an identifier: letters and digits in one token ("v1.9.2", "B42", "RR423152050", "2.14.0-rc1")
HANDLE = re.compile(r"(?<![\w.\-])(?=[\w.\-]*\d)(?=[\w.\-]*[A-Za-z])"
                    r"[A-Za-z\d]+(?:[.\-][A-Za-z\d]+)*")
MEASURE = re.compile(r"\d+(?:\.\d+)?(?:-[A-Za-z]+)+")
GLUED = re.compile(r"\d{1,4}[A-Za-z]{1,2}\b")  # a seat or a gate as written: "14C", "12A"
NAME_ID = re.compile(r"[A-Za-z][A-Za-z\d]*(?:[-_/][A-Za-z\d]+)*[-_/]\d+")  # "BK-2291"
CHANGE = re.compile(r"\b(?:above|below|under|over|beyond|short of|more than|less than)\s+"
                    r"(?:its|your|their|his|her|you|they|he|she|we)\b|" + DIFFERENCE + r"|\b(?:"
                    r"gained|lost|put on|dropped|rose|fell)\s+(?:by\s+)?(?:about\s+)?\d", re.I)
# "6 kg above its", "3.4 kg more than you declared", "he has gained 69 kg": a change
ASIDE = re.compile(r"\b(?:leaving|setting|putting)\b.*\baside\b|\b(?:apart from|aside from|"
                   r"except(?: for)?|excluding|other than|besides|not counting)\b", re.I)
SET_APART = re.compile(rf"{CHANGE.pattern}|{ASIDE.pattern}", re.I)
# a change, or what the clause sets aside ("Leaving the ignored item aside, that is 3"):
# no value of the field it names


@dataclass(frozen=True)
class FieldCheck:
    changed: Optional[str] = None   # the line of a field the sentence gives another value
    agreed: bool = False            # it names a field and states its value


@dataclass(frozen=True)
class Field:
    key: frozenset[str]        # the stems that name it: "checked bag included" -> check, bag, includ
    name: str                  # the key as written
    value: str
    flag: Optional[bool]       # a yes/no value
    values: StoredValues       # its numbers, dates, times
    words: frozenset[str]      # stems of the value's words
    line: int
    record: int
    listed: bool               # one of several values of its key in its record
    path: str = ""             # the key with its parents ("dimensions cm > height")

    @functools.cached_property
    def unit(self) -> Optional[units.Unit]:
        """The unit of its value: written after it ("7300 kg") or named by its key
        ("height m", "dimensions cm > height"); read only when a sentence gives one."""
        return next((u for n in numbers(self.value) if (u := units.unit_after(self.value, n))),
                    None) or units.key_unit(self.path)


def states(sentence: str, n: Number, f: Field) -> bool:
    """``n`` is the field's value, in its own units or another ("38.9 kWh" for
    ``consumption wh: 38920``)."""
    if f.values.has(n):
        return True
    u, unit = units.unit_after(sentence, n), f.unit
    return bool(u and unit and u.dim == unit.dim and any(
        units.close(n, u, v, unit) for v in f.values.numbers))


_DUE = re.compile(r"\b(?:due|deadline)(?:\s+(?:on|by|date|is|of))?\s*$", re.I)


def keyed(sentence: str, n: Number, f: Field) -> bool:
    """``n`` is no value of the field: the period or size the key itself names ("in the
    last 24 hours" for ``evaluations 24h``), a time span where the key names no time
    ("in just under 7 minutes" for ``deploys 30d: 11``), or a date said due where the
    key names no due date."""
    digits = re.findall(r"\d+", sentence[n.start:n.end])
    if digits and all(d in re.findall(r"\d+", f.name) for d in digits):
        return True
    if n.kind == "date" and _DUE.search(sentence, 0, n.start) and not _DUE.search(f.path):
        return True  # "That August bill is due on August 25": no ``bill date``
    u = units.unit_after(sentence, n) if n.kind == "number" else None
    return bool(u and u.dim == "time" and not _TIME_KEY.search(f.name)
                and not f.values.has(n))


def labelled(sentence: str, n: Number, f: Field, stem: Callable[[str], str]) -> bool:
    """``n`` is said after a word naming the key of ``f`` ("Seat 9 sold on ...", "in
    seats 7 and 8" for ``seats: 9``): its value as a label, whatever word follows."""
    m = re.search(r"([A-Za-z]+)\s+(?:\d+\s*(?:,|and|&)\s*)*$", sentence[:n.start])
    return bool(m) and n.kind == "number" and any(stem(m[1]) == k for k in f.key)


def rate_over(sentence: str, n: Number, f: Field, keys: Collection[tuple[int, str]]) -> bool:
    """``n`` is a rate for each of some things that ``f``'s record counts ("$28 per
    player" beside ``players: 6``), so no value of ``players`` or ``price usd: 168``;
    ``price per player: 28`` it may be.  ``keys``: (record, last key segment) of every
    field."""
    m = _PER_THING.match(sentence, n.end) or _RATE_AFTER.match(sentence, n.end)
    return bool(m) and any((f.record, m[1].lower() + s) in keys for s in ("", "s")) \
        and not re.search(r"\bper\b", f.name)


def dated_elsewhere(said: Sequence[Number], f: Field, fields: Sequence[Field]) -> bool:
    """A time or date of ``said`` (a clause's values) that no field of the record of ``f``
    holds and a field of another record holding the same key does: the clause speaks of
    that one ("Friday's 8:00 PM show is sold out", of the 10:15 PM show's ``sold out:
    false``)."""
    peers = {g.record for g in fields if g.name == f.name} - {f.record, -1}
    return any(n.kind in ("time", "date")
               and not any(g.values.has(n) for g in fields if g.record == f.record)
               and any(g.values.has(n) for g in fields if g.record in peers) for n in said)


def over_records(n: Number, nums: Sequence[Number], columns: Sequence, key: str) -> bool:
    """``n`` speaks of ``key`` over all the records (``columns``: each key's numbers, one
    per record): their total ("3 agricultural tyres" in all), or one end of their range
    with the other end said too ("ranged from 13.6 to 15.1 grams")."""
    for c in columns:
        if c.key == key and c.values:
            if abs(sum(c.values) - n.value) <= n.precision:
                return True
            ends = {min(c.values), max(c.values)}
            if any(abs(e - n.value) <= n.precision for e in ends) and any(
                    m.start != n.start and abs(e - m.value) <= m.precision
                    for m in nums for e in ends if abs(e - n.value) > n.precision):
                return True
    return False


def whole_after_of(sentence: str, n: Number) -> bool:
    """``n`` is the whole a part is said of ("Four of the five checks passed")."""
    return n.kind in ("number", "count") and bool(_WHOLE_AFTER_OF.search(sentence, 0, n.start))


def attributive(sentence: str, n: Number) -> bool:
    """A date or time before the thing it names says which one ("Your March 11 claim
    has been processed"): it does not state the date of the key the sentence names."""
    return bool(_ATTRIBUTIVE.search(sentence[:n.start]) and _NOUN_AFTER.match(sentence, n.end))


def comparable(n: Number, f: Field, sentence: str = "") -> bool:
    """A value of the sentence's sort and the field's: a time for a time, a share for a
    share ("20%" is no ``down payment: 85000``, "$130,200" no ``probability pct: 70``), a
    quantity in the field's dimension ("8 minutes" is no ``capacity lb: 30``) and money
    for no quantity in units ("$117" is no ``crossing minutes: 95``) nor for a count whose
    key names no money ("$280.08" is no ``pages: 412``); no bound its value keeps."""
    return not (sentence and bound_kept(sentence, n, f)) and _of_sort(n, f, sentence)


def bound_of(sentence: str, n: Number, fields: Sequence[Field], about: Collection[int]) -> bool:
    """``n`` is a bound, of money or in a unit, that a field of that sort of the records
    the sentence is about keeps ("under $50 an hour" of ``hourly_rate_usd: 45``, "at least
    20 meters" of ``on_reel_m: 86.5``; not "at least 30 people" of that rate): no value
    the grounding lacks."""
    if not about or _bound(sentence, n) is None:  # most numbers: no bound before them
        return False
    money, unit = _money(sentence, n), units.unit_after(sentence, n)
    return any(f.record in about and (MONEY_KEY.search(f.path.replace("_", " ")) if money else
                                      f.unit is not None and unit is not None
                                      and f.unit.dim == unit.dim)
               and _of_sort(n, f, sentence) and bound_kept(sentence, n, f) for f in fields)


def _of_sort(n: Number, f: Field, sentence: str) -> bool:
    """``comparable`` but for bounds: the sorts alone."""
    values = f.values
    if n.kind == "count":  # "four-hour slots" for ``slot hours: 4``; else a count of things
        return values.has(n)
    money = sentence and n.kind == "number" and not n.percent and (
        any(c in "$€£¥" for c in sentence[max(0, n.start - 1):n.end])
        or bool(_MINOR_AFTER.match(sentence, n.end)))
    if sentence and n.kind == "number" and not n.percent and f.unit is not None:
        said = units.unit_after(sentence, n)
        if said is not None and said.dim != f.unit.dim or money:
            return False
    if money and not MONEY_KEY.search(f.path.replace("_", " ")) \
            and not any(c in "$€£¥" for c in f.value):
        return False
    if n.kind == "number" and (n.percent or _SHARE.search(f.path)):
        return n.percent and (bool(_SHARE.search(f.path)) or "%" in f.value or all(
            abs(v) <= 1 for v in values.numbers))
    if n.kind in ("time", "date") and sentence and _AS_OF.search(
            sentence, max(0, n.start - 40), n.start) and not _AS_OF_KEY.search(f.path):
        return False  # "six open tickets as of March 1": when it holds, no ``opened`` date
    if n.kind == "time":  # "open until 1:00 AM": an end, no ``open`` or start time
        return bool(values.times) and not (sentence and _UNTIL.search(
            sentence, max(0, n.start - 12), n.start) and _START_KEY.search(f.path))
    if n.kind == "date":  # "can stay deferred until August 20": no ``deferred on`` date
        return bool(values.dates) and not (sentence and _UNTIL.search(
            sentence, max(0, n.start - 12), n.start) and _BEGUN_KEY.search(f.path))
    if values.dates or values.times:  # of a date-time only its year: "51 minutes after";
        #                               "$1,467" is no year
        written = sentence[max(0, n.start - 1):n.end]
        return n.kind == "number" and n.value.is_integer() and 1000 <= n.value <= 2100 \
            and not (sentence and ("," in written or any(c in "$€£¥" for c in written)))
    if n.kind == "duration" and not _TIME_KEY.search(f.path) \
            and (f.unit is None or f.unit.dim != "time"):
        return False  # "in 3 hours, 41 minutes" is no ``finishers: 6210`` nor ``half: 2``
    return n.kind in ("number", "duration") and bool(values.numbers)


# a bound said before a number, the field's value above it or below it ("at least 7 meters",
# "under $50"); strict where the words are ("more than 7" is not 7). Not "up to" nor "over":
# "add up to $1,250" is a total, "39.1 points over 11 credits" a rate
_ABOVE = re.compile(r"\b(?:(?P<strict>more than|above|upwards of)|at least|no (?:fewer|less) "
                    r"than)\s*[$€£¥]?$", re.I)
_BELOW = re.compile(r"\b(?:(?P<strict>less than|fewer than|under|below)|at most|no more "
                    r"than)\s*[$€£¥]?$", re.I)


def _money(sentence: str, n: Number) -> bool:
    return any(c in "$€£¥" for c in sentence[max(0, n.start - 1):n.end])


def _bound(sentence: str, n: Number) -> Optional[re.Match]:
    """The bound said before ``n``, of money or a number (no share, date or time)."""
    before = sentence[max(0, n.start - 20):n.start]
    return None if n.kind != "number" or n.percent else (_ABOVE.search(before)
                                                         or _BELOW.search(before))


def bound_kept(sentence: str, n: Number, f: Field) -> bool:
    """``n`` is a bound of money or in a unit that the field's values all keep, in its
    unit or converted: "Three colours have at least 7 meters in stock" says nothing exact
    of ``in stock m: 42.5`` (a bound they break, "at least 7 meters" of 6.0, is still a
    value said otherwise; a bare count, "children under 12", is not read so: which field
    it bounds is not said)."""
    m = _bound(sentence, n)
    if m is None or not f.values.numbers:
        return False
    said = units.unit_after(sentence, n)
    if said is None and not _money(sentence, n) \
            or said is not None and (f.unit is None or said.dim != f.unit.dim):
        return False
    vals = [f.unit.to(v, said) if said is not None else v for v in f.values.numbers]
    above, strict = m.re is _ABOVE, bool(m["strict"])
    return all((v > n.value if strict else v >= n.value) if above else
               (v < n.value if strict else v <= n.value) for v in vals)


def no_count_of(sentence: str, n: Number, f: Field) -> bool:
    """``n`` is no count the field holds: it names which one after its noun ("level 9",
    "round 1" for ``floors: 18``, ``rounds: 5``; not for ``level: 3``), or it measures
    ("15 mm proud of the floor")."""
    if n.kind != "number" or f.values.has(n):
        return False
    last = f.name.split()[-1]
    if units.unit_after(sentence, n) is not None:
        return f.unit is None and last.endswith("s") and bool(f.values.numbers) and all(
            float(v).is_integer() for v in f.values.numbers)
    label = re.search(r"([A-Za-z]+)\s?#?$", sentence[:n.start])
    if not label or not n.value.is_integer():
        return False
    word = label[1].lower()
    return last == word + "s" or word in _WHICH and last not in (word, word + "s")


def titled(word: str) -> bool:
    """A word written as a name ("Greenhalgh"), not a month ("June") or a code ("LHR",
    "T09")."""
    return word[:1].isupper() and word[1:].islower() and word.lower() not in CALENDAR


def code_rivals(names: set[str], value: str, sentence: str, stem: Callable[[str], str],
                worded: bool) -> set[str]:
    """Of the names a sentence says, those that may say a field's ``value`` otherwise:
    any, unless the value is a code; then other codes ("DHL" for UPS), names a code of
    capitals cannot abbreviate ("Lufthansa" for SAS; "London" may be LHR), and names
    beside a code with digits only where the grounding holds names of its own
    (``worded``: "held by Harrowgate Legal" of ``account: PB-40917`` beside ``name:
    Greenhalgh Legal``; "to London" of ``flight: TP1351`` among codes, dates and numbers
    says no other value of any of them)."""
    digits = any(c.isdigit() for c in value)
    if not (digits or value.isupper()) or digits and worded:
        return names
    codes = {stem(w.lower()) for w in re.findall(r"\b[A-Z][A-Z0-9]+\b", sentence)}
    first = value.strip()[:1].lower()
    return {s for s in names if s in codes or not digits and not s.startswith(first)}


_ITEMS = re.compile(r",\s*(?:and\s+|or\s+)?")
_PLACE = re.compile(r"[^,]+, [A-Z]{2,3}")  # a city and its region's or country's code


def items_of(value: str) -> list[str]:
    """The items a field's value lists, a line per item as it were ("bug, good first
    issue": two); a place and its region's or country's code ("Leeds, GB", "Denver, CO")
    is one value, so another record's "Manchester, GB" is no item of its list."""
    if ", " not in value or _PLACE.fullmatch(value):
        return [value]
    return [x for x in _ITEMS.split(value) if x.strip()]


# a share of a whole against another (``performance_vs_forecast_pct``, ``pct_of_target``),
# and a share said as how far it lies above or below all of that other
_AGAINST_KEY = re.compile(r"(?:^|[\s_>])(?:vs|versus|of|to|against)[\s_]", re.I)
_OFF = re.compile(r"\s*(?:above|over|ahead of|more than|higher than|below|under|short of|"
                  r"behind|less than|lower than)\b", re.I)


def off_hundred(fields: Sequence[Field]) -> frozenset[float]:
    """How far from 100 each share of a whole against another lies, that the result
    states (``performance_vs_forecast_pct: 103``: 3)."""
    return frozenset(round(abs(v - 100), 6) for f in fields if f.flag is None
                     and _SHARE.search(f.path) and _AGAINST_KEY.search(f.path)
                     for v in f.values.numbers if 0 < v < 300 and v != 100)


def said_off(sentence: str, n: Number, offs: frozenset[float]) -> bool:
    """``n`` is such a distance, said as one ("Output came in 3% above the project's
    forecast")."""
    return n.percent and bool(_OFF.match(sentence, n.end)) and any(
        abs(o - n.value) <= n.precision for o in offs)
