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
cancelled, fault, working, open, and a claim's or request's approved or denied), and a
clause that names one record, says one kind and not its record's, where the two cannot
both hold, changes that record's status field.

Precision first: a kind is read only in a part of the sentence that names one record by
words only it holds (a status word names none), or a status key's own words, or in a
sentence of one part about one record with one status field; a kind that picks records
("the cancelled order"), a hedged one ("nearly finished") and one said of a count ("two
failed") say nothing; a negated kind ("has not shipped") changes only a field of that
kind; a part saying the field's own kind, or one another field of its record holds
(``conclusion: cancelled`` beside ``status: completed``), says nothing; and kinds that can
hold together (an order in production is also not shipped; a job waiting on parts may be
under way) are no change.  Measured in docs/model-card.md, "A status said as another
kind".
"""

from __future__ import annotations

import re
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
             r"(?:has|have|had) (?:\w+ )?(?:completed|finished|resolved)"),
    "progress": (r"in progress|in production|in repair|underway|under way|ongoing|in work",
                 r"in progress|in production|under ?way|ongoing|being (?:re(?!fund)[a-z]+ed|made|"
                 r"built|worked on|produced|assembled|sewn|stitched|woven|cast|fitted|"
                 r"serviced|cleaned|processed|prepared)|still (?:in the works|on the bench)"),
    "waiting": (r"awaiting\w*(?: \w+)?|waiting(?: \w+)?|pending|queued|on hold|not started",
                r"awaiting|waiting (?:on|for)(?! you)|pending|queued|on hold(?! for)|"
                r"(?:not|n't) (?:yet )?(?:been )?started|yet to (?:start|begin)"),
    "shipped": (r"shipped|dispatched|in transit|out for delivery",
                r"shipped|dispatched|in transit|on (?:its|their) way|out for delivery"),
    "ready": (r"ready(?: for (?:collection|pickup|pick up))?|ready to collect|awaiting pickup",
              r"ready (?:for|to) (?:collection|collect|pick ?up|be collected)"),
    "cancelled": (r"cancell?ed|withdrawn|called off|void",
                  r"cancell?ed|called off|withdrawn|scrapped"),
    "fault": (r"fault|faulty|broken|failed|failure|out of service|out of order|down|error",
              r"faulty|broken|out of (?:service|order)|not working|malfunctioning|"
              r"(?:has|have|had) failed|(?:is|are|was|were) down\b|reporting (?:a|an) (?:fault|"
              r"error)"),
    "working": (r"ok|working|operational|normal|functional|in service|healthy|online",
                r"working (?:normally|fine|properly|as (?:it )?should)|in (?:good )?working "
                r"order|fully operational|(?:is|are|was|were) (?:\w+ )?operational|"
                r"functioning (?:normally|properly)|back in service"),
    "approved": (r"approved|accepted|granted|authori[sz]ed|paid",
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
    "progress": {"done", "shipped", "ready", "cancelled"},
    "waiting": {"done", "shipped", "ready", "cancelled", "approved", "denied"},
    "shipped": {"progress", "waiting", "ready", "cancelled"},
    "ready": {"progress", "waiting", "shipped", "cancelled"},
    "cancelled": {"done", "progress", "waiting", "shipped", "ready", "open"},
    "fault": {"working"},
    "working": {"fault"},
    "open": {"done", "cancelled", "approved", "denied"},
    "approved": {"denied", "waiting", "open"},  # a claim, a request, an application
    "denied": {"approved", "waiting", "open"},
    "stocked": {"sold_out"},
    "sold_out": {"stocked"},
}
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
                      r"have\b|has\b|had\b|(?:\w+\s+)?(?:succeeded|failed|finished|completed))",
                      re.I)
# the sentences joined in one ("The sink was fixed, and the ant request was cancelled")
_PARTS = re.compile(r";\s+|,\s+(?:and|but|while|whereas|so|though|although)\s+|"
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
    return next((k for k, p in _VALUE.items() if p.fullmatch(text)), None)


def stock_of(f: Field) -> Optional[str]:
    """"stocked" or "sold_out" for a count of stock (``seats_available: 0``), else None."""
    if f.flag is not None or not _WHOLE.fullmatch(f.value.strip()) \
            or not _STOCK_KEY.search(f.path) or _NOT_STOCK.search(f.path):
        return None
    return "stocked" if int(f.value) else "sold_out"


def _undated(clause: str) -> str:
    """``clause`` with its dates blanked (``values.numbers`` reads them)."""
    for n in numbers(clause):
        if n.kind == "date":
            clause = clause[:n.start] + " " * (n.end - n.start) + clause[n.end:]
    return clause


def _said(clause: str) -> tuple[set[str], set[str]]:
    """The kinds a clause says, and those it says negated ("has not shipped yet")."""
    said, negated = set(), set()
    # "the claim from May 27 was ...": a date's day is no count
    if _COUNTED.search(clause) and _COUNTED.search(_undated(clause)):
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
        kinds = [(f, kind) for f in fields if (kind := status_of(f.value) or stock_of(f))]
        self._status = [(f, kind) for f, kind in kinds if f.flag is None and not f.listed
                        and (_STATUS_KEY.search(f.path) or kind not in ("working", "open"))]
        self._kinds: dict[int, set[str]] = {}  # every status kind a record's fields hold
        for f, kind in kinds:
            self._kinds.setdefault(f.record, set()).add(kind)
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
                # cancelled``): no change
                if said & (self._kinds.get(f.record, set()) | {kind}):
                    break
                if said & _CLASH[kind] or kind in negated:
                    return self._lines[f.line]
        return None

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
        named = {r for r, own in self._owned.own.items() if own & stems - self._words}
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
        return fit if len(self._status) == 1 and len(self._kinds.keys() - {-1}) <= 1 else []
