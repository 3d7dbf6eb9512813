"""What a sentence claims, and whether its grounding holds it: cheap evidence features.

    ContextEvidence.build(documents, question)   once per grounding (rendered, indexed)
    evidence.features(sentence)                  -> SentenceEvidence (numbers, words, lines)

The detector reads tokens; these features read values.  A sentence whose every number
is in the context (normalised: ``1,200`` = ``1200``, ``about 1.2 million`` ~ ``1,234,567``,
``25%`` = ``0.25``; converted, units.py; worked out, arithmetic.py) and whose content
words stand together in one context line is very likely supported, whatever its
wording; one with a number the context lacks is very likely not.  The judge (judge.py)
weighs these against the detector's token probabilities, as RAGulator does.  Which
sentences make a claim at all: claims.py.
"""

from __future__ import annotations

import copy
import functools
import itertools
import re
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from guardrail.evidence import listing as L
from guardrail.evidence.arithmetic import derived
from guardrail.evidence.between import a_bill, billed, named_apart
from guardrail.evidence.blocks import unfenced
from guardrail.evidence.carried import carried
from guardrail.evidence.changed import changed
from guardrail.evidence.claims import asks_value, general, works_out
from guardrail.evidence.counted import Lists
from guardrail.evidence.elapsed import Moments, in_period, period_days
from guardrail.evidence.exchanged import Rates
from guardrail.evidence.extras import unlisted
from guardrail.evidence.field import bound_of, off_hundred, said_off
from guardrail.evidence.fields import Fields
from guardrail.evidence.group_states import field_check
from guardrail.evidence.lexicon import CALENDAR
from guardrail.evidence.lined import tallies
from guardrail.evidence.misadded import Holders, adjusting, misadded, misgrouped, misnamed, rescaled
from guardrail.evidence.objects import object_sums
from guardrail.evidence.occurrences import Occurrences
from guardrail.evidence.operands import record_operands
from guardrail.evidence.selfcheck import miscalculated
from guardrail.evidence.ratios import per_key, table
from guardrail.evidence.numbering import enclosing, numbered
from guardrail.evidence.records import Records
from guardrail.evidence.referred import said_before
from guardrail.evidence.restated import Restatements, says_negated
from guardrail.evidence.resummed import resummed
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import Number, numbers
from guardrail.evidence.render import render
from guardrail.evidence.spans import (Labels, days_between, shifted_dates, years_apart,
                                      year_ranges)
from guardrail.evidence.totals import Group, rarely
from guardrail.evidence.together import named_sum
from guardrail.evidence.units import Quantities, without_units
from guardrail.evidence.weekdays import weekday_changed
from guardrail.evidence.words import (STOPWORDS, WORD, content_words, flat, initials,
                                      negated, prose_units, stem, versioned)

@dataclass(frozen=True)
class SentenceEvidence:
    """What the context says about one sentence's values and words."""

    n_numbers: int            # values: numbers, times, dates, durations, counts
    missing_numbers: tuple[Number, ...]
    n_words: int
    word_precision: float     # share of its content words found anywhere in the grounding
    best_line_recall: float   # the most of its content words that one context line holds
    best_line: Optional[str]
    n_names: int
    missing_names: int        # capitalised words (not first) the context lacks
    negation_mismatch: bool   # negated where its best line is not, or the other way round
    context_has_numbers: bool
    record_gap: float = 0.0   # share of what it found in the context that lies outside
    #                           the one record it is about (a value from another record)
    field_changed: Optional[str] = None  # the line of a field it names with another value
    field_agreed: bool = False           # it names a field and states the field's value
    line_changed: Optional[str] = None   # its closest line, holding another value of the
    #                                      sort of one it states and the context lacks
    restated: bool = False    # one line holds its words and numbers in order (restated.py)
    swapped: bool = False     # 2+ values given to the wrong record it names (misplaced)
    works_out: bool = False   # it says it worked a value out ("in total", "comes to"), or
    #                  states beside it quantities a tool result holds (a date names a record)
    general: bool = False     # it says what usually happens (claims.general), against a
    #                           tool result that holds fewer than half of its words
    extra: Optional[str] = None  # an extra it adds ("also includes X") no tool result names


GENERAL_WORDS = 0.5  # a general claim against a tool result holding less of its words: flagged
_IN_HANDLE = re.compile(r"[A-Za-z][-_#]?\d")  # the digits of "TRL-88213", "B42": no quantity
_ACRONYM = re.compile(r"^[A-Z]{2,5}$")
_EVERY = re.compile(r"\b(?:any|all|every\w*|each|none|no one|nothing|either|neither)\b", re.I)
_MARKER = re.compile(r"\s*\d{1,2}[.)]\s+(?=\S)")


class ContextEvidence:
    """A grounding indexed once for every sentence checked against it.

    ``build`` indexes the documents once per process for all the answers that share
    them (a tenant's stored context, a tool result re-sent each turn): reading every
    line of a large tool result costs far more than judging a sentence.  The question
    is added per answer on top of the shared index.

    ``records[i]`` says which record line ``i`` belongs to (an item of a JSON array of
    objects, a table row, a block of a ``key: value`` text), -1 for lines outside any;
    with two records or more a sentence is matched to the record it is about, and what
    it found only in other records is its ``record_gap``."""

    def __init__(self, lines: list[str], question: str, structured: bool,
                 records: Optional[list[int]] = None, counts: frozenset[int] = frozenset(),
                 parents: Optional[dict[int, int]] = None):
        self.lines, self.structured = lines, structured
        self._memo: dict[str, frozenset[str]] = {}  # shared by every copy of the index
        self._line_stems = [frozenset(stem(w) for w in content_words(x)) for x in lines]
        self._negated = [negated(x) for x in lines]
        self.stems = frozenset().union(*self._line_stems) if lines else frozenset()
        text = "\n".join(lines)
        self.lower = text.lower()
        self._flat = f" {flat(text)} "
        per_line = [StoredValues.of(x) for x in lines]  # parsed once
        self._records = records if records is not None else [-1] * len(lines)
        self._parents = parents or {}  # a nested record's enclosing one (records.numbered)
        self.fields = Fields(lines, self._records, stem, STOPWORDS) if structured else None
        self._adjusted = bool(self.fields) and adjusting([f.name for f in self.fields.fields])
        self._keys = Holders({f.name: f.key for f in self.fields.fields}
                             if self.fields else {})  # "total" names ``total eur``: works_out
        self._sums = object_sums(self.fields.fields) if self.fields else ()
        self._moments = Moments(lines, self._records)  # "down for almost 39 hours"
        self._offs = off_hundred(self.fields.fields) if self.fields else frozenset()
        self._periods = period_days(self.fields.fields) if self.fields else frozenset()
        self._billed = billed(self.fields.fields) if self.fields else {}  # "his $39 bill"
        self._amounts = table(lines, self._records) if structured else {}  # per a key
        for i, held in (self.fields.minor if self.fields else {}).items():  # Stripe's cents
            per_line[i] = StoredValues.union([per_line[i], held])
        self._postings: dict[str, list[int]] = {}
        for i, st in enumerate(self._line_stems):
            for s in st:
                self._postings.setdefault(s, []).append(i)
        by_record: dict[int, list[int]] = {}
        for i, r in enumerate(self._records):
            by_record.setdefault(r, []).append(i)
        self._operands = record_operands(lines, self._records)  # (no heading's, no index)
        self._record_values = {r: StoredValues.record([per_line[i] for i in idx],
                                                      [lines[i] for i in idx])
                               for r, idx in by_record.items()}  # events' ends, units' scale
        self.stored = StoredValues.union(per_line + list(self._record_values.values()), counts)
        self._where = Records(lines, self._records, self._postings, self._record_values)
        self.quantities = Quantities(lines)
        self.restatements = Restatements(lines, self._negated)
        self.labels, self._year_ranges = Labels(text), year_ranges(text)
        self.tallies = tallies(self.fields, lines, stem)  # records or a log's lines counted
        self._shifted = shifted_dates(self.fields.fields if self.fields else (),
                                      self._record_values)
        self.lists, self._counts = (Lists(lines), Occurrences(lines, self._records, self.lower)) \
            if structured else (None, None)  # how many each list holds, different things
        self._rates = Rates.of(self.fields.fields) if self.fields else None  # per currency
        self.question_stems = frozenset(stem(w) for w in content_words(question))
        self.asked, self.asks_value = StoredValues.of(question), asks_value(question)

    def asking(self, question: str) -> "ContextEvidence":
        """This index (shared, not copied) with another question."""
        ev = copy.copy(self)
        ev.question_stems = frozenset(stem(w) for w in content_words(question))
        ev.asked, ev.asks_value = StoredValues.of(question), asks_value(question)
        return ev

    @classmethod
    def build(cls, documents: Sequence[str], question: str = "") -> "ContextEvidence":
        return _indexed(tuple(documents)).asking(question)

    def _initials(self, acronym: str) -> bool:
        """Words of one line start with the acronym's letters, all of them or all but
        its last ("CEO": "chief executive officer" or "chief executive").  The initials
        of the grounding's word runs are read once, on the shared index, when an answer
        first holds an acronym."""
        if "runs" not in self._memo:
            self._memo["runs"] = initials(self.lines)
        runs = self._memo["runs"]
        return acronym in runs or len(acronym) >= 3 and acronym[:-1] in runs

    def _record_numbers(self, about: Optional[set[int]]) -> list[tuple[float, ...]]:
        """The numbers of the values of each record the sentence is about (every record
        of a small grounding when it is about none), each with those outside any record."""
        outer, ops = self._operands.get(-1, ()), self._operands
        chosen = about if about is not None else set(ops) - {-1} if len(ops) <= 12 else set()
        return [ops[r] + outer for r in sorted(chosen) if r in ops and r != -1] or [outer]

    def _record_dates(self, about: Optional[set[int]]) -> frozenset[tuple[int, int, int]]:
        """The dates of the records the sentence is about and of none (all: about none)."""
        if about is None:
            return self.stored.dates
        return frozenset().union(*(self._record_values[r].dates for r in about | {-1}
                                   if r in self._record_values))

    def _dated(self, n: Number, about: Optional[set[int]]) -> bool:
        """A date a field's number of days away from a date of the same record ("notice
        is due by November 1" for ``renewal date: 2025-12-01``, ``notice period days:
        30``)."""
        v = int(n.value)
        year, month, day = v // 10000, v // 100 % 100, v % 100
        return bool(day) and any((m, d) == (month, day) and year in (0, y)
                                 for r, shifted in self._shifted.items()
                                 if about is None or r in about for y, m, d in shifted)

    def _left(self, about: Optional[set[int]]) -> list[tuple[float, ...]]:
        """What is left of a whole in the records the sentence is about (all of them
        when it is about none)."""
        rest = self.fields.remainders if self.fields else {}
        return [v for r, v in rest.items() if about is None or r in about or r == -1]

    def _total_changed(self, sentence: str, missing: Sequence[Number],
                       nums: Sequence[Number], named: Sequence[Group], before: str,
                       about: Optional[set[int]]) -> Optional[str]:
        """A total over the records that a value the grounding lacks gives in another
        unit (the key's first line) or miscounts (misadded.py), arithmetic the sentence
        states, or works out of the sentence before, and gets wrong (selfcheck.py,
        resummed.py), a count of more than lists hold (counted.py)."""
        counted = (self.lists.miscounted(sentence, nums) or self._counts.changed(
            sentence, nums)) if self.lists else None  # occurrences.py
        if counted or not missing:  # most sentences state nothing the grounding lacks
            return counted
        columns = self.fields.columns if self.fields else ()
        key = rescaled(sentence, missing, columns)
        return next((self.lines[f.line] for f in self.fields.fields
                     if f.path.rsplit(" > ", 1)[-1] == key), None) if key else \
            misadded(sentence, missing, columns, self._adjusted) \
            or misgrouped(sentence, missing, named, before) \
            or miscalculated(sentence, missing, nums) or misnamed(sentence, missing, self.fields) \
            or named_sum(sentence, missing, about, self.fields.numeric if self.fields else {}) \
            or resummed(sentence, before, missing, nums)

    def _stated(self, n: Number) -> bool:
        return self.stored.has(n) or self.asked.has(n)

    def copied(self, sentence: str) -> bool:
        """The sentence stands word for word in the grounding (six words or more)."""
        return (said := flat(sentence)).count(" ") >= 5 and f" {said} " in self._flat

    def features(self, sentence: str, before: str = "") -> SentenceEvidence:
        """``before``: the answer up to the sentence; a sentence that opens with a
        pronoun ("It costs ...") is about the record the sentence before it named."""
        # "3. Espresso cup: $12.00": a list's 3 is no value of a tool result (the prose
        # head was fitted reading it as one, so prose reads it so still)
        marker = _MARKER.match(sentence) if self.structured else None
        nums = [n for n in numbers(sentence) if not marker or n.start >= marker.end()]
        units = self.quantities.check(sentence, nums, self._stated)
        bare = content_words(without_units(sentence, nums))  # "77 degrees Fahrenheit" for
        words = [w for w in content_words(sentence) if w in bare or stem(w) in self.stems]  # °C
        stems = [stem(w) for w in words]
        distinct = set(stems)
        neg = negated(sentence)
        where = self._where.about(sentence, stems, nums, before)
        about, gap = where.records, self._where.gap(where)
        unread = [n for n in nums if not (n.start in units.converted or self._stated(
            replace(n, hedged=False) if n.start in units.unmatched else n)
            or versioned(sentence[:n.end], n.end, self.lower)
            or self.labels.has(sentence, n)  # worked
            or self.fields and bound_of(sentence, n, self.fields.fields, about))]  # out?
        # a value the grounding states only in records the sentence is not about may be worked
        # out in its own ("3 of its 120 seats left" for 117 taken, where another course has 3
        # credits): worked out, it is no other record's value
        elsewhere = [n for n in nums if about and n not in unread and n.kind != "count"
                     and n.start not in units.converted and not any(
                         self._record_values[r].has(n) for r in about | {-1}
                         if r in self._record_values)]
        worked: set[int] = set()
        named, lent = (), ((), ())  # the groups it names, and those the sentence before does
        if unread or elsewhere:  # the records' numbers, read once for all of them
            records, left = self._record_numbers(about), self._left(about)
            spanned = {v for r in records for v in r}  # years a span may lie between
            times = self.stored.times if len(self.stored.times) <= 12 or not about else \
                frozenset().union(*(self._record_values[r].times for r in about
                                    if r in self._record_values))  # "six minutes after"
            columns, named = (self.fields.columns, self.fields.named_groups(distinct, neg)) \
                if self.fields else ((), ())
            lent = said_before(sentence, before)  # "Between them they pay $214 a week"
            lent = (lent.counts, self.fields.named_groups(lent.stems, lent.negated)
                    ) if lent and self.fields else ((), ())
            for _ in range(2):  # then from what the first pass worked out ("285 min, or 4 h 45")
                # a value found only as a hedged conversion ("about 1,109 feet") is
                # no operand: 10 % off, it would carry a wrong "338 meters" with it
                anchored = [n for n in nums if n.start in worked or n not in unread and not (
                    n.hedged and n.start in units.converted and not self._stated(n))]
                anchored += self.stored.exact(anchored)
                found = {n.start for n in unread + elsewhere if n.start not in worked and (
                    derived(sentence, n, self.stored.numbers, times, nums, columns, records,
                            left, anchored, named, lent)
                    or carried(sentence, n, nums, before)
                    or self._rates is not None and self._rates.converts(sentence, n, before)
                    or rarely(n, self._sums, True) or self._moments and self._moments.elapsed(
                        sentence, n) or said_off(sentence, n, self._offs)  # "3% above"
                    or in_period(sentence, n, self._periods)  # "over the 30 days"
                    or self.lists and (self.lists.total(n, distinct)
                                       or self._counts.agrees(sentence, n))  # "4 different"
                    or per_key(sentence, n, self._amounts, about)
                    or self.fields and named_apart(sentence, n, self.fields.fields, distinct)
                    or about and a_bill(n, about, self._billed)  # a record's amounts added
                    or n.kind == "date" and self._dated(n, about)
                    or days_between(sentence, n, nums, self._record_dates(about))
                    or years_apart(sentence, n, spanned, self._year_ranges)
                    or len(self.stored.dates) <= 4 and days_between(  # a stay: "seven
                        sentence, n, nums, self.stored.dates)  # nights" (its 3 dates)
                    or self.tallies is not None
                    and self.tallies.counts(sentence, n, distinct, nums))}
                if not found:
                    break
                worked |= found
        if gap and worked:  # a value worked out in its record, found in others by chance
            gap = self._where.gap(self._where.about(  # ("averaging about 86.9 kg")
                sentence, stems, [n for n in nums if n.start not in worked], before))
        missing = tuple(n for n in nums if n.start in units.changed_at or not (
            n.start in units.converted or n.start in worked or n not in unread))
        known = self.stems | self.question_stems | {  # "CEO" for "chief executive"
            stem(w) for w in words if _ACRONYM.match(w) and self._initials(w.lower())}
        found = sum(1 for s in stems if s in known)
        best, best_i = 0.0, None
        if stems:
            votes: dict[int, int] = {}
            for s in distinct:
                for i in self._postings.get(s, ()):
                    votes[i] = votes.get(i, 0) + 1
            if votes:
                best_i = max(votes, key=lambda i: (votes[i], -i))
                best = votes[best_i] / len(distinct)
        names = [m[0] for i, m in enumerate(WORD.finditer(sentence))  # "3:30 PM"; "May" for
                 if i > 0 and m[0][0].isupper() and m[0].lower() not in STOPWORDS  # 2025-05-..
                 and not (self.structured and m[0].lower() in CALENDAR)
                 and not re.search(r"\d\s?$", sentence[max(0, m.start() - 2):m.start()])]
        missing_names = sum(1 for w in names if w.lower() not in self.lower
                            and stem(w) not in known)
        # negated where no line tied for best, of the records it is about, is ("You
        # weren't charged for the failed key": its ``charged: false``, the others' true);
        # said of them all ("any", "every"), where the best one is not
        tied = best_i is not None and not _EVERY.search(sentence)
        mismatch = best_i is not None and all(
            neg != says_negated(self.lines[i], self._negated[i], sentence, self.structured)
            for i, v in votes.items() if i == best_i or tied and v == votes[best_i]
            and (not about or self._records[i] in about))
        # a value the sentence says it worked out ("that leaves 1,800 bushels") and the grounding
        # lacks is no field's or line's value stated otherwise: its operands stand there, not it
        unworked = {n.start for n in missing if works_out(
            sentence, n.start, n.end, self._keys.holding(sentence, n))}
        check = field_check(self.fields, sentence, [n for n in nums if n.start not in worked
                                                    and n.start not in unworked],
                            about and enclosing(about, self._parents),
                            worked, before)  # a group's state: every record (group_states.py)
        line = self.lines[best_i] if best_i is not None else None
        return SentenceEvidence(
            len(nums), missing, len(words), found / len(stems) if stems else 1.0, best,
            line, len(names), missing_names, mismatch, self.stored.any, gap,
            check.changed or self._where.day_changed(sentence, about),
            check.agreed, units.changed or self._total_changed(
                sentence, missing, nums, [*named, *lent[1]], before, about) or (
                line if line and best >= 0.5 and changed(
                    sentence, [n for n in missing if n.start not in unworked], line) else None
            ) or ((line or w) if (w := weekday_changed(sentence, self.stored.dates, before))
                  else None),
            self.restatements.line_of(sentence, neg) is not None, where.misplaced >= 2,
            bool(missing) and (len(unworked) == len(missing) or self.structured and any(
                n.kind not in ("date", "time") and n not in missing
                and not _IN_HANDLE.search(sentence, max(0, n.start - 2), n.start + 1)
                for n in nums)), self.structured and found < GENERAL_WORDS * len(stems)
            and general(sentence, nums, missing),
            unlisted(sentence, self.stems) if self.structured else None)


def index(documents: tuple[str, ...]) -> ContextEvidence:  # uncached (``build`` caches)
    lines, records = [], []  # each line's text and record (-1: none)
    counts: set[int] = set()
    parents: dict[int, int] = {}
    structured, next_record = False, 0
    for doc in map(unfenced, documents):
        r = render(doc)
        if r.structured:
            structured = True
            of_line, next_record, nested = numbered([x.text for x in r.lines], next_record,
                                                    r.format in ("markdown-table", "csv"))
            parents.update(nested)
            lines += [x.text for x in r.lines]
            records += of_line
            keys = [x.text.split(": ", 1)[0] if ": " in x.text else None for x in r.lines]
            counts |= {n for k, g in itertools.groupby(keys) if k is not None
                       for n in [len(list(g))] if n >= 2}  # a list of scalars, one per line
            counts |= L.rendered_counts(doc, r.format, r.block_lines)
            continue
        blocks = L.record_blocks(doc)
        structured |= L.is_key_value(doc)
        counts |= L.counts(doc)
        for block in blocks or [doc]:
            units = prose_units(block)
            lines += units
            records += [next_record if blocks else -1] * len(units)
            next_record += 1 if blocks else 0
    return ContextEvidence(lines, "", structured, records, frozenset(counts), parents)


_indexed = functools.lru_cache(maxsize=8)(index)
