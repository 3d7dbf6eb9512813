"""A record's status said in other words, and said otherwise.

    status_of(text)                 the kind of status a field's value names ("in_progress",
                                    "awaiting_materials", "fault"), or None
    Statuses(fields, owned).changed(sentence, about)
                                    the line of a status field of the record a clause of
                                    the sentence speaks of, where the clause says a status
                                    of a kind that field's cannot be

Tool results hold a job's, an order's or a machine's state as a code (``status:
in_progress``, ``fog_detector_status: fault``); answers say it in words ("is still being
made", "has been wrapped up", "is working normally").  A field's own value said otherwise
("closed" for ``open``, another record's ``shipped``) is read by fields.py; a paraphrase of
another kind is not, and the answer that says a repair in progress "has been wrapped up"
passes.  Here both sides are read as kinds (done, in progress, waiting, shipped, ready,
cancelled, fault, working, open, and a claim's or request's approved or denied; the
statuses of agents' everyday tools: a trip late or on time, boarding, departed, in the
air or arrived, a parcel in transit or delivered, a bill paid or unpaid, a build passed,
a change merged, a booking confirmed or waitlisted), and a clause that names one record,
says one kind and not its record's, where the two cannot both hold, changes that
record's status field; one that says its record's own kind in other words ("is running
late" for ``delayed``) agrees with it.  A code naming what it is the outcome of
(``insurance_rejected``) reads as the outcome; a history's entries (``status_history``)
are past states of the thing, not records of their own; a record named by its code
("TP1352 is", "build 4812 has") is no count.

Precision first: a kind is read only in a part of the sentence that names one record by
words only it holds (a status word names none), or a status key's own words, or in a
sentence of one part about one record with one status field; a kind that picks records
("the cancelled order"), a hedged one ("nearly finished") and one said of a count ("two
failed") say nothing; a negated kind ("has not shipped") changes only a field of that
kind; a part saying the field's own kind, or one another field of its record holds
(``conclusion: cancelled`` beside ``status: completed``), says nothing; and kinds that can
hold together (an order in production is also not shipped; a job waiting on parts may be
under way) are no change.  Measured in docs/model-card/history.md, "A status said as
another kind" and "Statuses as agents' tools hold them".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Collection, Optional, Sequence

from guardrail.evidence.field import Field
from guardrail.evidence.keys import WORDS, Stem
from guardrail.evidence.owned import Owned
from guardrail.evidence.values import numbers

# each kind: how a field's value names it (the value, "_" read as " ") and how a sentence does
_KINDS = {
    "done": (r"complete|completed|done|finished|resolved|fixed|repaired|closed out",
             r"(?:has|have|had|was|were|been|is|are|now|all|already|since)\s+"
             r"(?:(?!(?:it|them|this|that|one)\s)\w+\s+)?"  # "have it done": to be
             r"(?:completed?|finished|done|resolved|fixed|repaired)|wrapped up|"
             r"(?:has|have|had) (?:\w+ )?(?:completed|finished|resolved)|"
             r"(?:has|have|had) (?:already |now )?gone through"),  # a payment, a refund
    "progress": (r"in progress|in production|in repair|underway|under way|ongoing|in work|"
                 r"processing|preparing",
                 r"in progress|in production|under ?way|ongoing|being (?:re(?!fund)[a-z]+ed|made|"
                 r"built|worked on|produced|assembled|sewn|stitched|woven|cast|fitted|"
                 r"serviced|cleaned|processed|prepared)|still (?:in the works|on the bench)"),
    "waiting": (r"awaiting\w*(?: \w+)?|waiting(?: \w+)?|pending(?: \w+)?|queued|on hold|"
                r"not started",
                r"awaiting|waiting (?:on|for)(?! you| \d| about| over| nearly)|pending|queued|"
                r"on hold(?! for)|(?:not|n't) (?:yet )?(?:been )?started|yet to (?:start|begin)"),
    "shipped": (r"shipped|dispatched|in transit|out for delivery",
                r"shipped|dispatched|in transit|on (?:its|their) way|out for delivery"),
    "ready": (r"ready(?: for (?:collection|pickup|pick up))?|ready to collect|awaiting pickup",
              r"ready (?:for|to) (?:collection|collect|pick ?up|be collected)"),
    "cancelled": (r"cancell?ed|withdrawn|called off|void",
                  r"cancell?ed|called off|withdrawn|scrapped"),
    "fault": (r"fault|faulty|broken|failed|failure|out of service|out of order|down|error|"
              r"offline|unhealthy|unreachable",
              r"faulty|broken|out of (?:service|order)|not working|malfunctioning|failed|"
              r"(?:is|are|was|were) (?:\w+ )?down\b(?! to| by| from| about| \d)|offline|"
              r"unreachable|reporting (?:a|an) (?:fault|error)"),
    "working": (r"ok|working|operational|normal|functional|in service|healthy|online|up|running",
                r"working (?:normally|fine|properly|as (?:it )?should)|in (?:good )?working "
                r"order|fully operational|(?:is|are|was|were) (?:\w+ )?operational|"
                r"functioning (?:normally|properly)|back in service|online|up and running|"
                r"back up\b|(?:is|are) (?:\w+ )?healthy"),
    # a build's or a check's outcome
    "passed": (r"pass|passed|passing|success|successful|succeeded|green",
               r"passed|passing|succeeded|(?:is|are|was|were) (?:\w+ )?successful|went green|"
               r"went (?:out|through) (?:cleanly|fine|smoothly|without (?:a hitch|problems|"
               r"issues))"),
    # when a trip runs, where it is (a flight, a train, a ferry), and a parcel's last step
    "late": (r"delayed|late|behind schedule|running late",
             r"delayed|running (?:\w+ )?late|behind schedule|(?:is|are|was|were) (?:\w+ )?late\b"),
    "on_time": (r"on time|on schedule|ontime", r"on time|on schedule|as scheduled|no delays?"),
    "boarding": (r"boarding|now boarding|gate open",
                 r"(?:is|are) (?:now )?boarding|now boarding|"
                 r"boarding (?:now|has (?:begun|started))"),
    "departed": (r"departed|en route|in air|airborne|in flight|took off",
                 r"(?:has|have|had) (?:already )?(?:departed|taken off)|took off"),
    "airborne": (r"(?!)", r"in the air|airborne|en route|in flight"),
    "arrived": (r"arrived|landed",
                r"(?:has|have|had) (?:already |just )?(?:landed|arrived)|landed"),
    "delivered": (r"delivered", r"(?:was|were|been|got) (?:\w+ )?delivered|delivered to"),
    "transit": (r"(?!)",
                r"in transit|on (?:its|their) way|out for delivery|still with the carrier"),
    # an invoice's or a bill's
    "paid": (r"paid|paid in full|settled", r"(?:was|were|been|is|are) (?:\w+ )?(?:paid|settled)|"
             r"paid in full|(?:has|have) (?:already )?paid"),
    "unpaid": (r"unpaid|not paid|outstanding|overdue|past due",
               r"unpaid|overdue|past due|(?<!\d )outstanding|(?:has|have|had)(?: not|n't) (?:yet )?"
               r"(?:been )?paid|not (?:yet )?(?:been )?paid|yet to (?:be )?pa(?:y|id)"),
    # a change request's, a booking's
    "merged": (r"merged", r"(?:was|were|been|got) (?:\w+ )?merged|merged into"),
    "confirmed": (r"confirmed|booked|reserved",
                  r"(?:is|are|was|were|been) (?:\w+ )?confirmed"),
    "waitlisted": (r"waitlisted|wait listed|on waitlist|on the waitlist",
                   r"wait ?listed|on (?:the |a )?wait ?list"),
    "approved": (r"approved|accepted|granted|authori[sz]ed",
                 r"(?:was|were|been|got)\s+(?:(?!not\b|never\b)\w+\s+)?(?:approved|accepted|"
                 r"granted|authori[sz]ed)|(?:is|are)\s+(?:(?!not\b|never\b)\w+\s+)?"
                 r"(?:approved|granted|authori[sz]ed)"),  # "Walk-ins are accepted": a rule
    "denied": (r"denied|rejected|declined|refused|disallowed",
               r"denied|rejected|declined|refused|turned down"),
    "open": (r"open|unresolved|under review|in review",
             r"(?:still|remains?) open|unresolved|under review|awaiting (?:a |the )?(?:final )?"
             r"decision"),
    # what a count of stock says (``stock_count``): kinds of no value's words
    "stocked": (r"(?!)", r"in stock|available to (?:order|buy|purchase|book)|available (?:right )?"
                r"now|(?:seats?|tickets?|rooms?|spots?|places?|units?|tables?) (?:are )?(?:still )?"
                r"(?:available|left|remaining)"),
    "sold_out": (r"(?!)", r"sold out|out of stock|fully booked|booked up|none (?:left|available|"
                 r"in stock)|no (?:more )?(?:[A-Za-z]+ ){0,2}?(?:stock|units?|seats?|tickets?|"
                 r"rooms?|spots?|places?|tables?)(?: are)? (?:left|available|remaining)"),
}
_VALUE = {k: re.compile(rf"(?:{v})", re.I) for k, (v, _) in _KINDS.items()}
_SAID = {k: re.compile(rf"\b(?:{s})\b", re.I) for k, (_, s) in _KINDS.items()}
# the kinds a field's kind cannot be said as: a job done is not under way, waiting or open
_CLASH = {
    "done": {"progress", "waiting", "open", "cancelled"},
    "progress": {"done", "shipped", "ready", "cancelled", "delivered"},
    "waiting": {"done", "shipped", "ready", "cancelled", "approved", "denied", "delivered",
                "confirmed"},
    "shipped": {"progress", "waiting", "ready", "cancelled", "delivered", "arrived"},
    "ready": {"progress", "waiting", "shipped", "cancelled"},
    "cancelled": {"done", "progress", "waiting", "shipped", "ready", "open", "late", "on_time",
                  "boarding", "departed", "airborne", "arrived", "delivered", "confirmed"},
    "fault": {"working", "passed"},
    "working": {"fault"},
    "passed": {"fault"},
    "open": {"done", "cancelled", "approved", "denied", "merged"},
    "approved": {"denied", "waiting", "open"},  # a claim, a request, an application
    "denied": {"approved", "waiting", "open"},
    "stocked": {"sold_out"},
    "sold_out": {"stocked"},
    "late": {"on_time", "cancelled"},
    "on_time": {"late", "cancelled"},
    "boarding": {"departed", "airborne", "arrived", "cancelled"},
    "departed": {"boarding", "arrived", "cancelled", "waiting"},
    "arrived": {"boarding", "airborne", "cancelled", "waiting"},
    "delivered": {"transit", "progress", "ready", "cancelled"},
    "paid": {"unpaid", "denied", "waiting", "open"},
    "unpaid": {"paid"},
    "merged": {"open"},
    "confirmed": {"waiting", "cancelled", "waitlisted", "denied"},
    "waitlisted": {"confirmed"},
}
# where a thing's past states are listed (a calendar's ``events`` are things of their own)
_PAST = re.compile(r"\b(?:status history|history|histories|timeline|tracking(?: >)? events|"
                   r"transitions|status updates|audit log)\b", re.I)
_OUTCOMES = {"denied", "fault", "cancelled", "late"}  # what a code's last word may say
_STATUS_KEY = re.compile(r"\b(?:status|state|stage|condition|progress)\b", re.I)
# a count of what is left to sell or book (``stock``, ``seats available``, ``units on
# hand``), not of time or money left (``days remaining``, ``balance remaining``)
_STOCK_KEY = re.compile(r"\b(?:stock|inventory|on hand|available|availability|remaining|left)\b",
                        re.I)
_NOT_STOCK = re.compile(r"\b(?:days?|hours?|minutes?|weeks?|months?|years?|balance|budget|credits?|"
                        r"amount|cents|usd|eur|gbp|percent|pct|hp|lives|attempts|tries)\b", re.I)
_WHOLE = re.compile(r"\d+")
_STOCK = ("stocked", "sold_out")
# a kind that picks records rather than says one's ("the cancelled order", "orders that were
# not cancelled"), one hedged ("nearly finished"), or said of a count ("two failed", "20
# are finished"): no status of one record
_PICKS = re.compile(r"\b(?:the|a|an|its|their|your|his|her|our|this|that|these|those|for|of|"
                    r"with|any|no|each|every|nearly|almost|partly|partially|mostly|half|"
                    r"(?:that|which|who) (?:\w+ ){0,3})\s*$", re.I)
_COUNTED = re.compile(r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|both|all|"
                      r"none|several|most|many|some|few)\s+(?:of\b|are\b|were\b|is\b|was\b|"
                      r"have\b|has\b|had\b|(?:[a-z]+\s+){1,4}(?:are|were)\b|"  # "3 jets are"
                      r"(?:\w+\s+)?(?:succeeded|failed|finished|completed))",
                      re.I)
# the sentences joined in one ("The sink was fixed, and the ant request was cancelled")
_PARTS = re.compile(r";\s+|,\s+(?:and|but|while|whereas|so|though|although|since|because)\s+|"
                    r"\s+(?:but|while|whereas|although|though)\s+", re.I)
_HEDGED = re.compile(r"\b(?:nearly|almost|partly|partially|mostly|half)\b", re.I)
_IF = re.compile(r"\b(?:if|unless|whether|once|would|could)\b", re.I)  # what may be, not is
_NOT = re.compile(r"\b(?:not|never|no|no longer|yet to)\s+(?:\w+\s+){0,2}$|n't\s+(?:\w+\s+){0,2}$",
                  re.I)


def status_of(value: str) -> Optional[str]:
    """The kind of status ``value`` (a field's, as written) names; None for any other."""
    text = value.replace("_", " ").replace("-", " ").strip()
    if len(text.split()) > 3 or any(c.isdigit() for c in text):
        return None
    kind = next((k for k, p in _VALUE.items() if p.fullmatch(text)), None)
    words = text.split()
    if kind is None and len(words) > 1 and not _HEDGED.fullmatch(words[0]):
        # a code naming what its outcome is of ("insurance_rejected", "payment_failed"; not a
        # stage, "blocking_complete") or what it waits on ("awaiting_prescriber_approval")
        last, first = status_of(words[-1]), status_of(words[0])
        kind = last if last in _OUTCOMES else first if first == "waiting" else None
    return kind


def stock_of(f: Field) -> Optional[str]:
    """"stocked" or "sold_out" for a count of stock (``seats_available: 0``), else None."""
    if f.flag is not None or not _WHOLE.fullmatch(f.value.strip()) \
            or not _STOCK_KEY.search(f.path) or _NOT_STOCK.search(f.path):
        return None
    return "stocked" if int(f.value) else "sold_out"


# what names one thing rather than counts things: a code ("SUP-3390", "TP1352", "#1182") or
# a number after the word for what it numbers ("build 4812", "pull request 1182")
_CODE = re.compile(r"\b[A-Za-z]+[-_#]?\d[\w-]*|#\d+|\b(?:build|ticket|order|flight|train|"
                   r"invoice|request|pr|issue|job|run|case|booking|gate|room|no\.?|number|"
                   r"version)\s*#?\d[\w.-]*", re.I)


def _blanked(clause: str) -> str:
    """``clause`` with its dates and codes blanked (``values.numbers`` reads the dates)."""
    clause = _CODE.sub(lambda m: " " * len(m[0]), clause)
    for n in numbers(clause):
        if n.kind == "date":
            clause = clause[:n.start] + " " * (n.end - n.start) + clause[n.end:]
    return clause


def _said(clause: str) -> tuple[set[str], set[str]]:
    """The kinds a clause says, and those it says negated ("has not shipped yet")."""
    said, negated = set(), set()
    # "the claim from May 27 was ...": a date's day is no count
    if _COUNTED.search(clause) and _COUNTED.search(_blanked(clause)):
        return said, negated
    for kind, p in _SAID.items():
        for m in p.finditer(clause):
            if _PICKS.search(clause, 0, m.start()) or _HEDGED.search(m[0]) \
                    or _IF.search(clause, 0, m.start()):
                continue
            if "not working" in m[0].lower() or "n't" in m[0] or " not " in m[0]:
                said.add(kind)  # the negation is the kind's own words
            elif _NOT.search(clause, 0, m.start()):
                negated.add(kind)
            else:
                said.add(kind)
    return said, negated


class Statuses:
    """The status fields of a grounding, read once: ``changed(sentence, about)``."""

    def __init__(self, fields: Sequence[Field], owned: Owned, stem: Stem, lines: Sequence[str]):
        self.stem, self._owned, self._lines = stem, owned, lines
        # the entries of a history are the thing's past states, not things of their own
        past = [bool(_PAST.search(f.path.rpartition(" > ")[0])) for f in fields]
        self._past = {k for f, p in zip(fields, past) if p and (k := status_of(f.value))}
        fields = [f for f, p in zip(fields, past) if not p]  # (a state of it said: the past)
        self._things = {f.record for f in fields}  # and a sentence names none of them
        kinds = [(f, kind) for f in fields if (kind := status_of(f.value) or stock_of(f))]
        # a list of values, not a status and another object's (``courier > status``)
        paths = Counter((f.record, f.path) for f in fields)
        self._status = [(f, kind) for f, kind in kinds
                        if f.flag is None and paths[f.record, f.path] == 1
                        and (_STATUS_KEY.search(f.path) or kind not in ("working", "open"))]
        self._kinds: dict[int, set[str]] = {}  # every status kind a record's fields hold
        for f, kind in kinds:
            self._kinds.setdefault(f.record, set()).add(kind)
        # the records holding a status of any value ("delinquent" names no kind)
        self._records = {f.record for f in fields
                         if _STATUS_KEY.search(f.path.rpartition(" > ")[2])} | set(self._kinds)
        self._words = set().union(*(f.words for f, _ in kinds))  # and those values' words
        self._plain = {stem(w) for w in ("status", "state", "stage", "condition", "progress")}
        self._counted = {stem(w) for w in (  # a stock count's key names what it counts
            "stock inventory available availability remaining left on hand count quantity "
            "qty in units seats tickets rooms spots places tables items").split()}

    def changed(self, sentence: str, about: Optional[Collection[int]]) -> Optional[str]:
        """The line of a status field a clause of the sentence says otherwise, or None."""
        if not self._status:
            return None
        parts = _PARTS.split(sentence)
        for clause in parts:
            said, negated = _said(clause)
            if not said and not negated:
                continue  # of several parts, each names its record ("the Monday installs
            #               are complete, and Lena's was cancelled": the first, not hers)
            for f, kind in self._fields_of(clause, about if len(parts) == 1 else None):
                # its own kind said beside another ("shipped and on its way"), or a kind
                # another field of its record holds (``status: completed``, ``conclusion:
                # cancelled``), or the object around the records does (an appointment
                # ``booked`` around its forms ``not_started``), or its history ("went under
                # review on March 29" of an application now ``approved``): no change
                if said & (self._kinds.get(f.record, set()) | self._kinds.get(-1, set())
                           | self._past | {kind}):
                    break
                if said & _CLASH[kind] or kind in negated:
                    return self._lines[f.line]
        return None

    def agreed(self, sentence: str, about: Optional[Collection[int]]) -> bool:
        """A clause of a sentence ``changed`` found nothing in (fields.py asks only then)
        says a status field's own kind in other words ("is running late" for ``status:
        delayed``)."""
        if not self._status:
            return False
        parts = _PARTS.split(sentence)
        return any(kind in _said(clause)[0]
                   for clause in parts
                   for f, kind in self._fields_of(clause, about if len(parts) == 1 else None))

    def _named(self, f: Field, kind: str) -> set[str]:
        """The words of a status field's key a clause must name to speak of it."""
        return set(f.key) - self._plain - (self._counted if kind in _STOCK else set())

    def _fields_of(self, clause: str, about: Optional[Collection[int]]
                   ) -> list[tuple[Field, str]]:
        """The status fields a clause speaks of: those of the one record whose own words it
        names, else those whose key it names (``fog detector status``), else the only one
        of the one record the sentence is about."""
        stems = {self.stem(w) for w in WORDS.findall(clause.replace("-", " "))}
        # a status names no record ("complete" is no name of the one job ``completed``)
        named = {r for r, own in self._owned.own.items()
                 if r in self._things and own & stems - self._words}
        # a key of more words than "status" counts only where the clause names them
        # (``payment status`` is not the job's ``status``)
        fit = [(f, k) for f, k in self._status if self._named(f, k) <= stems]
        if len(named) == 1:
            return [(f, k) for f, k in fit if f.record in named]
        if named:
            return []
        keyed = [(f, k) for f, k in fit if self._named(f, k)]
        if keyed:
            return keyed
        if about is not None and len(about) == 1:
            mine = [(f, k) for f, k in fit if f.record in about]
            return mine if len(mine) == 1 else []
        # the one status of a grounding of one record ("Its status is ...")
        return fit if len(self._status) == 1 and len(self._records - {-1}) <= 1 else []
