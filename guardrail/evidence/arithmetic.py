"""Values an answer works out from the context's own: sums, differences, shares, rates.

    derived(sentence, n, values, ...)   the sentence's value ``n`` is worked out from the
                                        grounding's values, as the sentence's words say
    columns(fields)                     per tool result: one key across records

Assistants do small sums: "5 seats, 3 of which are in use, so 2 are still free"
(``seats: 5``, ``seats_used: 3``), "$49 a month, or $588 a year" (``monthly_price: 49``),
"It lasts 90 minutes" (14:00 to 15:30), "two open invoices totaling $6,065.50".  To the
value lookups such a number is one the context lacks, so the sentence looks made up.
But any small number is the difference of two others somewhere in a context ("It still
has 8 rooms"), and a changed value must not pass as one.  So each kind counts only where
the sentence's words announce it ("left", "in all", "per", "more than") and only with
operands that say what they are: values the sentence itself states, a value of the same
sort (the same currency sign or the same word after it), a whole and its use within the
record the sentence is about, one key across records, a count the sentence states first.
Looser first versions of three of these excused wrong counts on hand-written tool turns
("8 of them left", "9 EV spaces free", "4 spots still open"); the model card tells how.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Collection, Optional, Sequence

from guardrail.evidence import units
from guardrail.evidence.left import USED, WHOLE
from guardrail.evidence.listing import enumerated
from guardrail.evidence.columns import by_key, columns_of
from guardrail.evidence.totals import (CHANCE, Column, Group, across, apart_from, counted_of,
                                       key_total, rarely, share_of, totalled, whole_of,
                                       within_record)
from guardrail.evidence.spans import minutes_of, per_span, timed
from guardrail.evidence.priced import priced
from guardrail.evidence.values import (CURRENCY_SIGNS, Number, numbers, partitive, sort_of,
                                       word_after)

SUM = re.compile(r"\b(?:total|totals|totalling|totaling|in all|altogether|combined|together|"
                 r"sum|overall|all told|across|between (?:them|the two|both))\b", re.I)
# a total said as adding up: for a sum the sentence announces, not for what it says of the
# records otherwise ("Parts add up to $269, and labor is 3 hours": its labor is checked)
_ADDS_UP = re.compile(rf"{SUM.pattern}|\badds? up\b|\badded up\b", re.I)
_DIFFERENCE = re.compile(r"\b(?:left|remaining|remain|remains|still|unused|spare|more|fewer|"
                         r"less|difference|apart|longer|shorter|higher|lower|older|younger|"
                         r"cheaper|dearer|gap|short of|up from|down from|below|above|under|"
                         r"available|down|up|drop|dropped|rise|rose|fell|increase|decrease|"
                         r"leaves|leaving|faster|slower|away|closer|nearer|farther|colder|"
                         r"warmer|hotter|cooler|heavier|lighter|bigger|smaller|larger|wider|"
                         r"narrower|deeper|shallower|taller|over(?=\s*(?:[.,;:!?)]|$|"
                         r"budget|the (?:budget|limit|cap|target))))\b", re.I)
# how far apart two values are, said of where one stands against the other
_APART = re.compile(rf"{_DIFFERENCE.pattern}|\b(?:short|behind|ahead|to spare|to go)\b",
                    re.I)
MEAN = re.compile(r"\b(?:average|averages|averaged|averaging|avg|mean|"
                  r"per (?:day|week|month) on)\b", re.I)
_ADDED = re.compile(r"\b(?:added|adding|including|included|plus|extra|"
                    r"with (?:fees|tax|taxes|shipping)|after (?:fees|tax|taxes))\b", re.I)
_PER = re.compile(r"\b(?:at|per|each|every)\b|\ba (?:day|week|month|year|hour)\b", re.I)
_CHANGE = re.compile(r"\b(?:over|above|below|under|up|down|more|less|higher|lower|increased?|"
                     r"decreased?|rise|rose|drop|dropped|grew|fell|gain|loss|growth)\b", re.I)
_OF = re.compile(r"%?\s+of\b", re.I)
_LESS = re.compile(r"\b(?:discount|discounted|off|credit|credited|refund|refunded|saving|"
                   r"deducted|minus|less)\b", re.I)
_ITEMS = 7  # values of one sort an itemised whole is looked for among
_TIMES = re.compile(r"\b(?:times|fold)\b", re.I)
_COMPARE = re.compile(r"\b(?:more|fewer|less|higher|lower|ahead|behind|than|difference|gap)\b",
                      re.I)
_LEFT = re.compile(r"\b(?:left|remaining|remain|remains|free|open|available|spare|unused|"
                   r"short|to go|still|under)\b", re.I)
_EACH = re.compile(r"\b(?:per|each|apiece|a head)\b[^.;]*\b(?:so|which (?:comes|works out) "
                   r"to|comes to|making|for (?:all|the|your)|total|would (?:pay|cost|be))\b"
                   r"|\b(?:would pay|would cost|comes to)\b[^.;]*\b(?:per|each)\b", re.I)
# a period the sentence names, and the factors from the periods a context states rates in
_RATES = ((re.compile(r"\b(?:a|per|each|every) year\b|\bannual(?:ly)?\b|\byearly\b|"
                      r"\bper annum\b", re.I), (12.0, 52.0, 365.0)),
          (re.compile(r"\b(?:a|per|each|every) month\b|\bmonthly\b", re.I), (1 / 12, 30.0)),
          (re.compile(r"\b(?:a|per|each|every) week\b|\bweekly\b", re.I), (7.0, 1 / 52)),
          (re.compile(r"\b(?:a|per|each|every) day\b|\bdaily\b", re.I), (1 / 7, 1 / 30, 24.0)),
          (re.compile(r"\b(?:an|per|each|every) hour\b|\bhourly\b", re.I), (60.0, 1 / 24)))
MAX_VALUES = 40
"""More numbers than this in a grounding and none of them is an operand by itself."""
_RECORD_VALUES = 12
"""A share of two values of a record that the sentence leaves unsaid is looked for in
records of at most this many numbers (132 ratios)."""

def _close(v: float, n: Number) -> bool:
    return abs(v - n.value) <= max(n.precision, 1e-9)


def _rate(v: float, n: Number) -> bool:
    """A rate rounds: within 0.5 % (10 % when hedged), whatever the digits written."""
    return abs(v - n.value) <= (0.1 if n.hedged else 0.005) * abs(v)


def columns(fields: Sequence) -> tuple[Column, ...]:
    """The numbers of each key that two records or more hold, one per record (a key in
    cents also in units): what a total over records adds up.  ``fields``: a tool
    result's ``Field``s (fields.py)."""
    return columns_of(by_key(fields)[0])


def _total(n: Number, columns: Sequence[Column], counts: Sequence[int],
           every: bool = True) -> bool:
    """``n`` totals one column: all of it, all of one sign ("charges" are the negative
    amounts), or, where the sentence counts them first ("two open invoices totaling
    $6,065.50"), that many of one sign.  Exact to the written digits: a rounded total
    ("about $6,000") is no evidence of which records it adds."""
    for _, column in columns:
        if every and len(column) >= 2 and _close(abs(sum(column)), n):
            return True  # gains and losses together ("up about $1,950 across your holdings")
        for part in ([abs(v) for v in column if v > 0], [abs(v) for v in column if v < 0]):
            if every and len(part) >= 2 and _close(sum(part), n):
                return True
            for k in counts if not n.hedged else ():
                if 2 <= k < len(part) and math.comb(len(part), k) <= 5000 and any(
                        _close(sum(c), n) for c in itertools.combinations(part, k)):
                    return True
    return False


def derived(sentence: str, n: Number, values: Sequence[float],
            times: Collection[int] = (), said: Optional[Sequence[Number]] = None,
            columns: Sequence[Column] = (),
            records: Sequence[Sequence[float]] = (),
            left: Sequence[Sequence[float]] = (),
            anchored: Sequence[Number] = (), named: Sequence[Group] = (),
            lent: tuple[Sequence[int], Sequence[Group]] = ((), ())) -> bool:
    """``n`` (a value of ``sentence``) is worked out from the grounding as the sentence's
    words say.  ``values``: the grounding's numbers; ``times``: its times of day (minutes
    after midnight); ``columns``: one key's value in each record (``columns``);
    ``records``: the numbers of each record the sentence is about; ``left``: what is left
    of a whole in those records (``remainders``); ``said``: the sentence's values, when
    the caller has read them already; ``anchored``: those of its values the grounding
    states; ``named``: the groups of records it names (totals.py); ``lent``: the counts
    and groups of the sentence before, where it points back at that one (referred.py)."""
    said = numbers(sentence) if said is None else said
    if timed(sentence, n, times, said) or per_span(sentence, n, said) \
            or _shown(sentence, n, anchored) \
            or _itemised(sentence, n, said, anchored) or enumerated(sentence, n):
        return True
    counts = [int(m.value) for m in said if m.kind == "count" and m.start < n.start]
    shares = [m.value for m in anchored if m.percent and m.start != n.start]
    several = [m.value for m in said if m.start != n.start and 2 <= m.value <= 12
               and m.value.is_integer() and m.kind in ("number", "count") and not m.percent
               and sort_of(sentence, m) not in CURRENCY_SIGNS]
    if _each_with(sentence, n, several, anchored) or priced(sentence, n, anchored, columns) \
            or SUM.search(sentence) and across(n, records, counts):
        return True  # "$99 each plus the $3 fee, $510 for the five of you"; "1,380 gallons
        #              between the two lines" (750 and 630 in the two records it is about)
    if totalled(sentence, n, columns, counts, named, partitive(sentence, n.start)) \
            or within_record(n, records) or whole_of(sentence, n, records) \
            or share_of(n, shares, records, columns, sentence) \
            or counted_of(n, several, records) or key_total(sentence, n, columns, named) \
            or any(lent) and totalled(sentence, n, columns, *lent):
        return True  # a key added up over the records, or two values of its record
        #              combined, where chance seldom gives one; or over those the
        #              sentence before names or counts ("Between them they pay $214")
    if n.kind not in ("number", "count"):
        return False
    parts = [m.value for m in said if m.start >= n.end and m.kind in ("number", "count")
             and not m.percent]
    if len(parts) >= 2 and SUM.search(sentence) and _close(sum(parts), n):
        return True  # the parts it sums after it: "37 issues in total: 2 critical, 5 high,
        #              11 medium and 19 low"; "The total is $385: $294 for the nights, ..."
    after = word_after(sentence, n)[:5]
    if (counts or lent[0]) and not n.hedged and len(after) >= 4 and _total(
            n, [c for c in columns if after in c.key.lower()], counts or lent[0], every=False):
        return True  # "three courses, for 11 credits": a count, then the key's own word
    # the sentence's own values, and those of the same sort as ``n`` ("$42" and "$50.90")
    operands = sorted({m.value for m in said if m.start != n.start and m.value > 0})
    if n.percent:  # a share of two values it states ("$85,000 down on $425,000: 20%"; of
        #            two added, "$100,000 and $50,000 ... together account for 60% of it"), of a
        #            record's value it states in its key's total ("48 events, about 41% of
        #            the total": 48 of the 117 the records' events add up to), or
        #            of one it states and a value of its record ("1,108 errors, about 83%";
        #            "roughly 3.5% of its 4,680 sessions")
        #            or, said as a share ("about", "of"), of two values of its record that
        #            it leaves unsaid ("using 81% of its CPU limit": 1620 of 2000; "the
        #            deployment is at about 83% of its capacity": 5 of its 6 replicas,
        #            beside its pods' numbers), or, with no such word, to digits chance
        #            seldom hits among all its records' ratios ("came in at 92.5%": 111/120);
        #            or of a part it counts ("of") in the records of a key ("Seven of them
        #            succeeded, a 70% success rate": 7 of the 10 records of ``runs``).
        #            The numbers all its records share (the result's own) are one more.
        common = set.intersection(*map(set, records)) if len(records) > 1 else set()
        records = [*records, tuple(sorted(common))] if common else records
        return any(_close(100 * a / b, n) for a, b in itertools.permutations(operands, 2)) \
            or bool(SUM.search(sentence)) and any(  # "together account for 60% of it"
                _close(100 * (a + b) / c, n) for a, b in itertools.combinations(operands, 2)
                for c in operands if c > a + b) \
            or any(_close(100 * a / total, n) for c in columns for a in operands
                   if a in c.values and (total := sum(c.values)) > a) \
            or any(_close(100 * a / b, n) for rec in records for a in operands if a in rec
                   for b in rec if b > a) \
            or any(_close(100 * a / b, n) for rec in records for b in operands if b in rec
                   for a in rec if 0 < a < b) \
            or (n.hedged or _OF.match(sentence, n.end)) and any(
                _close(100 * a / b, n) for rec in records if len(rec) <= _RECORD_VALUES
                for a in rec for b in rec if 0 < a < b) \
            or rarely(n, [100 * a / b for rec in records if len(rec) <= _RECORD_VALUES
                          for a in rec for b in rec if 0 < a < b]) \
            or any(_close(100 * a / k, n) for a in partitive(sentence, n.start)
                   for k in {len(c.values) for c in columns} if k > a) \
            or bool(_CHANGE.search(sentence)) and (  # "$1,620.77 against $1,500: about 8%
                #   over"; "412 ms, about 37% over the SLO" (300 ms in its record)
                any(_close(100 * abs(a - b) / b, n) for a, b in itertools.permutations(operands, 2))
                or any(_close(100 * abs(a - b) / b, n) for rec in records
                       if len(rec) <= _RECORD_VALUES for a in operands for b in rec if b > 0))
    # a grounding of many numbers holds nearly any sum or difference of two of them: its
    # values then count only through the columns and records the sentence names
    pool = sorted({v for v in values if v > 0}) if len(values) <= MAX_VALUES else []
    alike = sorted({m.value for m in said if m.start != n.start and m.value > 0
                    and sort_of(sentence, m) == sort_of(sentence, n) != ""})
    counted = [int(m.value) for m in said if m.kind == "count" and m.start != n.start]
    return _summed(sentence, n, operands, alike, pool, columns, counted) \
        or _apart(sentence, n, operands, alike, pool, columns, left) \
        or bool(_APART.search(sentence)) and apart_from(sentence, n, anchored, records) \
        or _scaled(sentence, n, operands, alike, pool, said, records)


def _shown(sentence: str, n: Number, anchored: Sequence[Number]) -> bool:
    """The sentence shows its working on values the grounding states: ``n`` is the sum,
    difference, product, ratio or share of two of them ("7 unassigned seats, since 43 of
    your 50 are assigned"; "42 pages times two copies, so 84 pages"; "45.7 GB of your 50
    GB, roughly 91%"), or one of them said again in other units ("285 minutes, or 4 hours
    45 minutes"; "40.4 miles, or about 65 km").  Exact to the digits written: no cue
    word is needed, as a changed value seldom happens to be what two others of its
    sentence make."""
    minutes = minutes_of(sentence, n) if n.kind in ("duration", "number") else None
    spans = [d for m in anchored if m.start != n.start
             and (d := minutes_of(sentence, m)) is not None]
    # the same span again, or what is left of one against another ("6 hours 38 minutes
    # of rest against the 8-hour requirement, so 1 hour 22 minutes to go")
    if minutes is not None and (any(abs(d - minutes) <= 1e-6 for d in spans) or any(
            abs(abs(a - b) - minutes) <= 1e-6 for a, b in itertools.combinations(spans, 2))):
        return True
    unit = units.unit_after(sentence, n)  # "40.4 miles, or about 65 km", 40.4 a total:
    if unit:  # to its last written digit, hedged or not ("about 80 °F" is not 78.1 °F)
        digits = sentence[n.start:n.end].rpartition(".")[2] if "." in sentence[
            n.start:n.end] else ""
        last = 0.5 * 10.0 ** -sum(c.isdigit() for c in digits)
        if any((other := units.unit_after(sentence, m)) and other.dim == unit.dim and abs(
                other.to(m.value, unit) - n.value) <= max(last, 0.005 * n.value)
               for m in anchored if m.start != n.start):
            return True
    if n.kind not in ("number", "count") or n.percent:
        return False  # a share of two values it states: derived() reads those of all kinds
    ops = {m.value for m in anchored if m.start != n.start and m.kind in ("number", "count")
           and m.value > 0} | {m.value / 60 for m in anchored if m.kind == "duration"}
    #        (a span in hours: "16.75 hours, which at $120 an hour comes to $2,010")
    pairs = list(itertools.permutations(sorted(ops), 2))
    # a ratio below one is no whole number said ("3 of 5 ... so 1" is not 0.6)
    return any(_close(v, n) for a, b in pairs for v in (a + b, a - b, a * b)) or any(
        _close(a / b, n) for a, b in pairs if a > b)


def _itemised(sentence: str, n: Number, said: Sequence[Number],
              anchored: Sequence[Number]) -> bool:
    """The sentence itemises a whole: of three or more values of ``n``'s sort (the same
    currency sign or word after them), the largest is the sum of all the others ("The
    bill came to $213.50: a $95 call-out fee, a $45 surcharge, $60 for labor and $13.50
    for the keys"), each perhaps times a count the sentence states ("$410 for the first
    two nights and $465 for the last two, so $1,750"; "$840, and adding the 6 meters at
    $42 a meter brings it to $1,092") and less one it calls a discount ("an $11.00
    silver-tier discount").  ``n`` is the whole or a part, and the grounding states
    every other value: exact to the digits written, where the ways tried times their
    width stay under ``CHANCE`` of the whole, which a changed value seldom makes."""
    sort = sort_of(sentence, n)
    alike = [m for m in said if not m.percent and sort_of(sentence, m) == sort]
    if n.hedged or not sort or not 3 <= len(alike) <= _ITEMS or any(m.hedged for m in alike):
        return False
    stated = {m.start for m in anchored}
    if any(m.start not in stated for m in alike if m.start != n.start):
        return False
    whole = max(alike, key=lambda m: m.value)
    parts = [-m.value if _taken_off(sentence, m) else m.value for m in alike if m is not whole]
    times = [1.0, *sorted({m.value for m in said if m.kind in ("number", "count")
                           and m.start in stated and sort_of(sentence, m) != sort
                           and not m.percent and 2 <= m.value <= 100
                           and m.value == int(m.value)})]
    slack = whole.precision + 1e-9  # to the whole's last written digit
    ways = len(times) ** len(parts)
    if ways * 2 * slack > CHANCE * whole.value:
        return False
    return any(abs(sum(c * p for c, p in zip(factors, parts)) - whole.value) <= slack
               for factors in itertools.product(times, repeat=len(parts)))


def _each_with(sentence: str, n: Number, several: Sequence[float],
               anchored: Sequence[Number]) -> bool:
    """``n`` is a count the sentence states times the sum of two values of ``n``'s sort
    that it states and the grounding holds, where it says they are each ("at $99 each
    plus the $3 per-person fee, that's $510 for the five of you"), exact to the digits
    written and with few results tried."""
    sort = sort_of(sentence, n)
    alike = [m.value for m in anchored if m.start != n.start and not m.percent
             and sort_of(sentence, m) == sort]
    if n.hedged or not sort or not several or len(alike) < 2 or not _PER.search(sentence):
        return False
    results = {k * (a + b) for k in several for a, b in itertools.combinations(alike, 2)}
    return len(results) * 2 * n.precision <= CHANCE * n.value and any(
        _close(r, n) for r in results)


def _taken_off(sentence: str, m: Number) -> bool:
    """The sentence calls ``m`` a deduction, in the words just before it or after it
    up to the next comma ("less your $11 member discount"; "an $11.00 discount")."""
    before = re.split(r"[,;:]", sentence[max(0, m.start - 12):m.start])[-1]
    after = re.split(r"[,;:.]|\$", sentence[m.end:m.end + 24])[0]
    return bool(_LESS.search(before) or _LESS.search(after))


def _summed(sentence: str, n: Number, operands: Sequence[float], alike: Sequence[float],
            pool: Sequence[float], columns: Sequence[Column], counts: Sequence[int]) -> bool:
    """A sum the sentence announces: of two values it states ("5 seats and the 3 in use
    make 8 in all"), over records ("two open invoices totaling $6,065.50"; "$51.97
    altogether over the last three months": as many records as it counts), their mean
    ("about 32 minutes of prep on average"), a value it states plus another record's of
    the same key ("the primary at $750, and together with the replica $1,125"), or a
    value it states plus a fee of the context ("$42, or $50.90 once fees are added")."""
    written = units.unit_after(sentence, n)  # "a combined 258.9 miles" adds no km
    columns = [c for c in columns if not (written and (k := units.key_unit(c.key))
                                          and k.dim == written.dim and k.name != written.name)]
    if _ADDS_UP.search(sentence) and (
            any(_close(a + b, n) for a, b in itertools.combinations(operands, 2))
            or columns and _total(n, columns, counts)
            or any(_close(a + b, n) for _, col in columns for i, a in enumerate(col)
                   if a in operands for j, b in enumerate(col) if j != i)):
        return True
    if MEAN.search(sentence) and any(  # "about 32 minutes of prep on average"
            (_rate if n.hedged else _close)(sum(col) / len(col), n) for _, col in columns):
        return True
    return bool(_ADDED.search(sentence)) and any(_close(a + v, n) for a in alike for v in pool)


def _apart(sentence: str, n: Number, operands: Sequence[float], alike: Sequence[float],
           pool: Sequence[float], columns: Sequence[Column],
           left: Sequence[Sequence[float]]) -> bool:
    """A difference the sentence announces: of two values it states ("so 2 are still
    free"), of one it states and one of the context of the same sort ("144 kWh more than
    the previous period"), what is left of a whole in its record ("8 spots left"), or one
    key between two records, exactly, beside a comparison and for the key it counts ("154
    more signups")."""
    if _DIFFERENCE.search(sentence) and (
            any(_close(b - a, n) for a, b in itertools.combinations(operands, 2))
            or any(_close(abs(a - v), n) for a in alike for v in pool if v != n.value)):
        return True
    if _LEFT.search(sentence) and (any(_close(v, n) for rest in left for v in rest) or any(
            _close(sum(a) - sum(b), n) for (ka, a), (kb, b) in itertools.permutations(columns, 2)
            if len(a) == len(b) and WHOLE.search(ka) and USED.search(kb))):
        return True  # "164 open spaces" over three levels: their spaces less those occupied
    after = re.match(r"\s?(?:more|fewer|less)?\s?([A-Za-z]{3,})", sentence[n.end:])
    return bool(after and _COMPARE.search(sentence)) and any(
        abs(abs(a - b) - n.value) <= 1e-6 * max(1.0, n.value) for key, col in columns
        if len(col) <= 12 and after[1].lower()[:5] in key.lower()
        for a, b in itertools.combinations(col, 2))


def _scaled(sentence: str, n: Number, operands: Sequence[float], alike: Sequence[float],
            pool: Sequence[float], said: Sequence[Number],
            records: Sequence[Sequence[float]] = ()) -> bool:
    """A share it states of a whole of the same sort ("62%, roughly 8.4 kWh of its 13.5
    kWh capacity"), a ratio of two values it states ("40 hours, which is 5 days at 8 hours
    a day"), or of one it states and one of its record ("£11.83 per purchase"), a value
    each times a count ("$25 per person, so $100 for your party"; "$68.50
    per guest, $8,220 for 120 guests"), or a rate over the period it names ("$588 a
    year" for $49 a month)."""
    shares = [m.value for m in said if m.percent and m.start != n.start]
    if any(_rate(p / 100 * w, n) for p in shares for w in alike if w > n.value):
        return True
    if _PER.search(sentence) and any(
            _close(a / b, n) for a, b in itertools.permutations(operands, 2)):
        return True
    if (_PER.search(sentence) or _TIMES.search(sentence)) and (
            n.hedged or not n.value.is_integer()) and any(
            _close(a / b, n) and b >= 10 or _close(b / a, n) for rec in records
            if len(rec) <= _RECORD_VALUES for a in operands for b in rec if b > 0 and b != a):
        return True  # "£1,975.10 ... at around £11.83 per purchase" (167 purchases in its
        #              record); "about 3.7 times its £4,820.35 spend" (its revenue)
    if _EACH.search(sentence) and any(_close(a * k, n) for a in operands
                                      for k in {*pool, *operands}
                                      if k.is_integer() and 2 <= k <= 1000 and k != a):
        return True
    return any(_rate(v * k, n) for period, factors in _RATES
               if period.search(sentence) for k in factors for v in pool)
