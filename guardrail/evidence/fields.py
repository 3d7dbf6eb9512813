"""The fields of a tool result, and whether a sentence that names a field states its value.

    Fields(lines, records)                   once per grounding: every ``key: value``
    fields.check(sentence, numbers, about)   -> FieldCheck: a field it names with another
                                             value (the line saying so), or one it agrees with

An answer that names a field (``terminal: 5``, ``checked bag included: false``) and gives it
another value ("leaves from Terminal 2", "includes a checked bag") is contradicted, even where that
value stands elsewhere in the context.  So is one giving its record another record's value unnamed
("It is a western." for a drama), a list with another record's item, a state said as its opposite
("closed" for ``state: open``), a status of a kind it cannot be (statuses.py) or an identifier the
grounding never mentions ("v3.0-beta" for ``v1.9.2``).  Precision first: a field is read in the
clause naming it (or the next); a text is changed only by a name or another record's value; a
number only where no field of its record holds it; a yes/no value as flags.py reads it, unless
each clause naming it names only another record's words or times.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Collection, Optional, Sequence

from guardrail.evidence import left, units
from guardrail.evidence.arithmetic import MEAN as _MEAN, SUM as _SUM
from guardrail.evidence.columns import Group, by_key, columns_of, groups
from guardrail.evidence.currency import coded, mentioned, minor_units, other_currency
from guardrail.evidence.field import (
    ASIDE, GLUED, HANDLE, MEASURE, NAME_ID, SET_APART, Field, FieldCheck, attributive,
    code_rivals, comparable, dated_elsewhere, items_of, keyed, labelled, no_count_of, rate_over,
    states, titled, whole_after_of)
from guardrail.evidence.flags import flag_said
from guardrail.evidence.keys import (
    WORDS, Stem, clauses, compared, echo, has, in_a_row, joined, key_stems,
    more_unnamed, name_words, naming, negated_words, own_paths, pairs, path_words, phrases)
from guardrail.evidence.lexicon import FLAGS, NULLS, REVERSE, STATE, STATED_OPPOSITES
from guardrail.evidence.owned import Owned
from guardrail.evidence.records import blanked, whole_names
from guardrail.evidence.spans import date_apart, next_day
from guardrail.evidence.statuses import Statuses
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.swapped import swapped_value
from guardrail.evidence.totals import is_total
from guardrail.evidence.values import Number

_NONE = re.compile(r"(?i)\b(?:no|not|none|nobody|no one|nothing|never|without|unassigned)\b|n't\b")
_OVER_RECORDS = re.compile(f"{_SUM.pattern}|{_MEAN.pattern}", re.I)
_BOUNDS = ("min", "max", "minimum", "maximum", "limit", "range", "threshold", "target", "cap",
           "low", "high", "lower", "upper", "floor", "ceiling", "warn", "warning", "window")
_NOTED = re.compile(r"([A-Za-z]+)\s*[(,;]")


class Fields:
    """Every ``key: value`` of a grounding, by record, indexed by the keys' stems."""

    def __init__(self, lines: Sequence[str], records: Sequence[int], stem: Stem,
                 stopwords: frozenset[str]):
        self.stem, self.lines, self.stopwords = stem, lines, stopwords
        self._bounds = frozenset(stem(w) for w in _BOUNDS)  # a key's words for a limit
        self._path = functools.partial(path_words, stem=stem, stopwords=stopwords)
        found: list[tuple[str, str, int, int]] = []
        for i, line in enumerate(lines):
            found += [(k, v, i, records[i]) for k, v in pairs(line)]
        self._currencies = [(i, r, c) for k, v, i, r in found if (c := coded(v, k))]  # currencies
        self._whole = whole_names(lines, records)
        self._phrases = phrases(k.rsplit(" > ", 1)[-1] for k, _, _, _ in found)  # "pass mark"
        per_record: dict[tuple[str, int], int] = {}
        for k, _, _, r in found:
            k = k.rsplit(" > ", 1)[-1].lower()
            per_record[(k, r)] = per_record.get((k, r), 0) + 1
        self.fields: list[Field] = []
        self._by_prefix: dict[str, list[int]] = {}
        self._record_words: dict[int, set[str]] = {}
        self._key_words: dict[str, set[frozenset[str]]] = {}  # key -> its values' words
        by_record: dict[int, list[StoredValues]] = {}
        self._record_stems: dict[int, set[str]] = {}
        for i, line in enumerate(lines):
            self._record_stems.setdefault(records[i], set()).update(
                stem(w) for w in WORDS.findall(line.replace("-", " ")))
        self._nulls: list[tuple[frozenset[str], int]] = []  # (key, record) of empty values
        self._by_value: dict[str, list[int]] = {}       # categorical value stem -> fields
        self._by_key: dict[tuple[int, str], list[int]] = {}  # (record, key) -> fields
        self._of_record: dict[int, list[int]] = {}  # record -> its fields
        # line -> its amount in units, where the tool writes minor units (Stripe's cents)
        cents = minor_units([(path, v, r) for path, v, _, r in found])
        self.minor: dict[int, StoredValues] = {}
        unnamed: list[Field] = []
        for path, v, i, r in found:
            k, key = path.rsplit(" > ", 1)[-1], key_stems(path, stem, stopwords)
            words = frozenset(stem(w) for w in WORDS.findall(v) if not w[0].isdigit())
            self._record_words.setdefault(r, set()).update(words)
            minor = (path, r) in cents
            path += " cents" if minor else ""
            by_record.setdefault(r, []).append(StoredValues.of(v, key=path))
            self.minor.update({i: by_record[r][-1]} if minor else {})
            if not key or v.lower() in NULLS:
                if key:
                    self._nulls.append((key, r))
                elif v.lower() not in NULLS:  # ``amount``: no sentence names it, but a
                    #                             total over records adds it up
                    unnamed.append(Field(key, k.lower(), v, None, StoredValues.of(v, key=path),
                                         words, i, r, per_record[(k.lower(), r)] > 1, path))
                continue
            self._key_words.setdefault(k.lower(), set()).add(words)
            # "labels: bug, good first issue" lists items as a line per item does
            items = items_of(v)
            # an identifier holds digits, not a quantity ("build-host-3", "CHK-884")
            held_values = StoredValues.of("" if NAME_ID.fullmatch(v) else v, key=path)
            self.fields.append(Field(key, k.lower(), v, FLAGS.get(v.lower()), held_values,
                                     words, i, r,
                                     per_record[(k.lower(), r)] > 1 or len(items) > 1, path))
            j = len(self.fields) - 1
            for s in key:
                self._by_prefix.setdefault(s[:4], []).append(j)
            self._by_key.setdefault((r, k.lower()), []).append(j)
            self._of_record.setdefault(r, []).append(j)
            for item in items if FLAGS.get(v.lower()) is None else ():
                noted = _NOTED.match(item)  # a state with a note: "closed (snowmaking ...)"
                if noted or not any(c.isdigit() for c in item) and len(item.split()) <= 3:
                    words = WORDS.findall(noted[1] if noted else item)
                    for w in {stem(w) for w in words} - stopwords:
                        if len(w) >= 4:
                            self._by_value.setdefault(w, []).append(j)
        self._record_values = {r: StoredValues.union(v) for r, v in by_record.items()}
        said = WORDS.findall("\n".join(lines))  # its names: "Greenhalgh", not "June", "LHR"
        self._named = any(map(titled, said))
        self._held = frozenset().union(*self._record_words.values(), (  # and its title's
            self.stem(w) for w in said))  # ("Harbour Lane ...")
        self._all_values = StoredValues.union(list(self._record_values.values()))
        self.numeric, shared = by_key(self.fields + unnamed)  # one pass for both
        self.columns = columns_of(self.numeric)
        self._groups = [(w, g) for g in groups(self.numeric, shared) if (w := g.named - stopwords)]
        self.remainders = left.remainders(self.fields)
        self._records = len({r for r in records if r >= 0})
        self._text = "\n".join(lines).lower()
        # no names: stopwords and the keys' words ("SSO" for ``sso_provider``)
        self._not_names = stopwords | frozenset(
            stem(w) for path, _, _, _ in found for w in WORDS.findall(path.replace("_", " ")))
        self._owned = Owned(self._record_words, self._not_names, self._record_values)
        self._statuses = Statuses(self.fields, self._owned, stem, lines)

    record_values = property(lambda self: self._record_values, doc="Each record's values, "
                             "read once (-1: the result's own, outside its records).")

    owned = property(lambda self: self._owned, doc="Which record owns a value (``Owned``).")

    def of_key(self, record: int, name: str) -> list[int]:
        """The indices in ``fields`` of the record's fields of the key ``name``."""
        return self._by_key.get((record, name), [])

    def words_of(self, records: Collection[int]) -> set[str]:
        """The stems of the values of ``records`` (their names, states, ...)."""
        return set().union(*(self._record_words.get(r, set()) for r in records))

    def named_groups(self, stems: Collection[str], negated: bool = False) -> tuple[Group, ...]:
        """The groups whose shared value the sentence names; a negated one, no yes/no's yes."""
        return tuple(g for words, g in self._groups if all(w in stems for w in words)
                     and not (negated and g.flag))

    def check(self, sentence: str, nums: Sequence[Number],
              about: Optional[set[int]] = None, worked: Collection[int] = ()) -> FieldCheck:
        """What the sentence says of the fields it names, in the records it is ``about``
        (None: any); ``worked``: where the values it works out stand (not in ``nums``)."""
        words = WORDS.findall(sentence.replace("-", " "))
        stems, negated, said = naming(sentence, self.stem)
        names = name_words(sentence, self.stem, self._not_names)
        keying = naming(plain, self.stem)[0] if (plain := blanked(sentence, self._whole)) else stems
        named = [self.fields[j] for j in sorted({j for s in stems | negated  # "Helium Heroes"
                                                 for j in self._by_prefix.get(s[:4], ())})
                 if (about is None or self.fields[j].record in about or  # names no key
                     self.fields[j].record == -1)
                 and all(has(k, keying | negated) for k in self.fields[j].key)]
        named = [f for f in named if f.flag is None or not any(  # "next available": no
            set(f.name.split()) < set(g.name.split()) and g.name in sentence.lower()  # yes of
            and g.record == f.record for g in named)]  # ``available``
        held = ([self._all_values] if about is None else [StoredValues.union(  # one lookup
            [v for r, v in self._record_values.items() if r in about or r == -1])]) \
            if named else []
        parts = clauses(sentence, self.stem) if named else []
        keys_in = [{key for key in {g.key for g in named} if all(has(k, st) for k in key)}
                   for _, _, st in parts]  # the keys each clause names, read once
        # its records' words, or none's, are no rival names ("Gallery 2" beside ``gallery``)
        mine = set().union(*(self._record_words.get(r, set()) for r in (*(about or ()), -1)))
        # identifiers the grounding never mentions ("v3.0-beta" for v1.9.2; no "40-foot")
        new_handles = [m.start() for m in HANDLE.finditer(sentence)
                       if m[0].lower() not in self._text and not MEASURE.fullmatch(m[0])
                       ] if named else []
        verdicts: dict[str, list[tuple[bool, Field]]] = {}
        for f in named:
            # what it says of the field stands in the clause naming it, or the next, unless a
            # value worked out ("he averaged 26.6 points") or a comparison ("15 more") does
            at = [i for i, (_, _, st) in enumerate(parts) if any(has(k, st) for k in f.key)]
            apart = {i for i in at if any(parts[i][0] <= w < parts[i][1] for w in worked)
                     or SET_APART.search(sentence, parts[i][0], parts[i][1])}
            # the next clause, unless it names a field of its own ("... but his average")
            scope = [parts[j][:2] for i in at if i not in apart for j in (i, i + 1)
                     if j < len(parts) and (j == i or not keys_in[j] - {f.key})
                     ] or ([] if apart else [(0, len(sentence))])
            inside = [n for n in nums if any(a <= n.start < b for a, b in scope)]
            v = self._verdict(f, sentence, inside, stems, negated,
                              {w for w, at in names if any(a <= at < b for a, b in scope)}, held,
                              any(a <= at < b for at in new_handles for a, b in scope), mine)
            if v is False and (f.values.any and any(  # "268 kWh, fell in peak hours": its
                    states(sentence, n, f) and not any(g.values.has(n) for g in named
                                                        if g is not f)
                    for n in nums if n not in inside)  # value, said before the clause
                    or f.flag is not None and (  # or set aside ("leaving the ignored item aside")
                        at and all(ASIDE.search(sentence, *parts[i][:2]) for i in at)
                        or self._owned.said_of_others(sentence, parts, f, self.stem, nums)
                        or dated_elsewhere(inside, f, self.fields))):
                v = None  # a yes/no said only in clauses naming another record's words or times
            if v is not None:
                verdicts.setdefault(f.name, []).append((v, f))
        # an echoed query (``query > remote: any``) states nothing, nor is a key named in part
        # beside one it states (``p90 first response min``) its subject; of the fields of a
        # key, those whose own path words it names ("The UV clarifier is running")
        verdicts = {name: own_paths(fs, stems, self.stem, self.stopwords) or fs
                    for name, fs in verdicts.items()}
        kept = {(f.key, f.flag is not None) for fs in verdicts.values() for ok, f in fs if ok}
        changed = [fs for fs in verdicts.values() if not any(ok for ok, _ in fs)
                   and not all(echo(f.path) for _, f in fs)
                   and not any((len(f.key) > 1 or f.flag is not None and flag) and set(f.key) < k
                               for _, f in fs for k, flag in kept)]  # a longer key agreed
        agreed = any(ok for fs in verdicts.values() for ok, _ in fs) or bool(
            _NONE.search(sentence)) and any(  # "Nobody is assigned" for ``assignee: null``
                all(has(k, stems) for k in key) for key, r in self._nulls
                if about is None or r in about or r == -1)
        line = self.lines[changed[0][0][1].line] if changed else None
        if line is None and about is not None:
            # of several sentences joined in one, those that name something only the
            # record holds: "the sink was fixed, and the ant request was cancelled" gives
            # the sink no other state (a list, "navy, teal and graphite", is one; "Ribbon &
            # Roller Restorations has ...": the shop's name, no record's part)
            plain = blanked(sentence, self._whole) or sentence
            mine = self.words_of(about) - self.words_of(set(self._record_words) - about)
            own = [st for _, _, st in joined(plain, self.stem) if st & mine]
            line = self._swapped((set().union(*own) if own else naming(plain, self.stem)[0])
                                 - negated_words(words, self.stem), about, tuple(w.lower() for w
                                 in words), {self.stem(w) for m in self._phrases.finditer(sentence)
                                          for w in m[0].split()}
                                 ) or swapped_value(self, sentence, nums, about)
        line = line or next((self.lines[i] for i in other_currency(
            sentence, self._currencies, about)), None) or self._opposite(
            [m[3].lower() for m in STATE.finditer(sentence) if not (m[1] or m[2])], said, about
        ) or self._statuses.changed(sentence, about)  # "wrapped up" for ``in_progress``
        return FieldCheck(line, line is None and (agreed or self._statuses.agreed(sentence, about)))

    def _opposite(self, states: list[str], said: list[str], about: Optional[set[int]]
                  ) -> Optional[str]:
        """The line of a one-word state of the record the sentence is about that the
        sentence gives its opposite ("It is currently closed." where ``state: open``), but
        a state a field it names holds ("the plowed road is open": ``plowed_road_status``);
        ``states``: the words it says something is, ``said``: all its words."""
        if len(about or ()) > 1 or about is None and self._records > 1:
            return None  # which record's state it speaks of is not known
        stems = set(map(self.stem, said))
        for w in (w for w in states if not any(  # no field it names holds it
                f.key & stems and w in f.value.lower().split() for f in self.fields)):
            for value in [v for v in (STATED_OPPOSITES.get(w), REVERSE.get(w))
                          if v and v not in said]:
                for j in self._by_value.get(self.stem(value), ()):
                    f = self.fields[j]
                    noted = _NOTED.match(f.value)  # and the sentence names its key
                    if (f.value.lower().replace(" ", "_") == value or noted and noted[1].lower() ==
                            value and len(f.key & stems) >= min(2, len(f.key))
                            ) and not f.listed and (about is None or f.record in about):
                        return self.lines[f.line]
        return None

    def _swapped(self, stems: set[str], about: set[int], said: tuple[str, ...],
                 keyed: set[str]) -> Optional[str]:
        """The line of a field of the record the sentence is about that the sentence gives
        another record's value of, unnamed ("It is a western." of a drama); ``said``: its
        words in lower case, in order ("opened" is no ``state: open``; "room" no list item
        "private room"); ``keyed``: those of a key of two words or more it names."""
        own = set().union(*(self._record_stems.get(r, set()) for r in about))
        for s in sorted(stems - own - keyed - compared(said, self.stem)):  # in one order
            for j in self._by_value.get(s, ()):
                f = self.fields[j]
                if f.record in about or f.record == -1 or {s, s.removesuffix("s")} & f.key \
                        and not all(w.lower() in said for w in WORDS.findall(f.value)) \
                        or not (f.listed or f.words - self.stopwords <= stems) or not any(
                        w.lower() in said for w in WORDS.findall(f.value) if self.stem(w) == s) \
                        or f.listed and not in_a_row(f.value, said):
                    continue  # -1: the whole; a value: all its words, not its key's ("ages")
                mine = [self.fields[k] for r in about
                        for k in self._by_key.get((r, f.name), ())]
                # a list: one of its own items; else words beyond those both share ("MV ...")
                states = any(w in stems for g in mine
                             for w in (g.words if f.listed else g.words - f.words or g.words))
                if mine and (states if f.listed and mine[0].listed else not states):
                    return self.lines[mine[0].line]
        return None

    def _verdict(self, f: Field, sentence: str, nums: Sequence[Number], stems: set[str],
                 negated: set[str], names: set[str], held: list[StoredValues],
                 new_handle: bool = False, mine: frozenset[str] | set[str] = frozenset()
                 ) -> Optional[bool]:
        """True: the sentence states the field's value; False: another value; None: it
        says nothing checkable about it (``fill min ml > 1000`` where it does not say
        1000).  ``new_handle``: the clause naming the field holds an unknown identifier."""
        if f.flag is not None or f.name.isdigit() and f.name not in sentence:
            return flag_said(f, sentence, stems, negated, self.stem, [  # its record's
                self.fields[j] for j in self._of_record[f.record]]) if f.flag is not None else None
        if GLUED.fullmatch(f.value.strip()):  # "seat 8A" for ``seat: 14C``: as written
            said = {m[0].lower() for n in nums if (m := GLUED.match(sentence, n.start))}
            return (f.value.strip().lower() in said) if said else None
        if f.values.any:
            if any(f.values.has(n) and labelled(sentence, n, f, self.stem) for n in nums):
                return True  # "Seat 9 sold on ...": its value said as a label
            mine = [n for n in nums if comparable(n, f, sentence) and not keyed(sentence, n, f)
                    and not self._quantity_of_other(sentence, n, f) and not (  # "the three
                        _MEAN.search(sentence, max(0, n.start - 40), n.start)  # average 21 g"
                        and not _MEAN.search(f.path))]
            if not mine:
                return None
            if any(f.values.has(n) for n in mine if not units.unit_after(sentence, n)):
                return True  # "35 mph gusting to 50" for ``gusts mph: 50``
            said = [(n, u) for n in mine if (u := units.unit_after(sentence, n))]
            unit = f.unit if said else None
            said = [(n, u) for n, u in said if unit and u.dim == unit.dim]
            if measured := bool(said):  # "1,083 feet" for ``height m: 330``; "330 feet" is
                if any(units.close(n, u, v, unit) for n, u in said for v in f.values.numbers):
                    return True  # another value, unless a bound of it holds that
                if all(u.ambiguous for _, u in said):
                    return None
                mine = [n for n, _ in said]
            elif any(f.values.has(n) for n in mine):
                return True
            # "Four of the five checks passed": no value of ``passed``; nor "on February 12, two
            # days after you asked", "on October 13, shipped the next day" of the date fields
            mine = [n for n in mine if measured or not whole_after_of(sentence, n)]
            if not mine or next_day(sentence, f.values.dates) or all(
                    date_apart(sentence, n, nums, f.values.dates) for n in mine):
                return None
            # another field of the record holds it: the sentence is about that one (no rounding)
            # -- unless a date or time of a field unnamed ("until October 17 to add a course")
            exact = [replace(n, precision=0.0) for n in mine]
            if not any(h.has(n) for n in exact for h in held):
                # a total over records ("they logged 22.5 hours"), or left of a whole ("5 left")
                return None if _OVER_RECORDS.search(sentence) or any(
                    n.value in self.remainders.get(f.record, ()) for n in mine) or any(
                    c.key == f.path.rsplit(" > ", 1)[-1] and is_total(sentence, n, c)
                    for c in self.columns for n in mine) else False
            holders = [g for r in {f.record, -1} for g in
                       (self.fields[j] for j in self._of_record.get(r, ()))
                       if g is not f and any(g.values.has(n) for n in exact)]
            if measured:  # "within the 70 to 260 lb range" beside ``weight lb: 196``; "the
                #   38-second course time": the field more of whose longer key it names; "You
                #   weighed 81.4 kg, 3.4 kg more than you declared": one whose clause names
                #   none of its own words (``measured weight kg``, not ``declared ...``)
                parts = clauses(sentence, self.stem) if holders else []
                own = {n.start: next(st for a, b, st in parts if a <= n.start < b)
                       for n, _ in said} if holders else {}
                return None if any((g.key ^ f.key) & self._bounds for g in holders) or all(
                    any(g.unit is not None and (g.unit.name == u.name and g.values.has(n) or any(
                        units.close(n, u, v, g.unit) for v in g.values.numbers)) and (set(
                        f.key) < set(g.key) and (sum(has(k, stems) for k in g.key) > len(f.key)
                                                 or g.record == f.record and more_unnamed(
                                                     self._path(f.path) - self._path(g.path)
                                                     - f.key, stems))
                        or f.key - g.key and not any(has(k, own[n.start]) for k in f.key - g.key))
                        for g in holders) for n, u in said) else False
            # a holder named by key or path words ("lunch from 1:30": ``lunch closure > start``)
            return False if holders and all(n.kind in ("date", "time") and not n.hedged
                                            and not attributive(sentence, n)
                                            for n in mine) and not any(
                any(has(k, stems | negated) for k in
                    g.key | self._path(g.path) - self._path(f.path)) for g in holders) else None
        if f.words and any(has(w, stems) for w in f.words if len(w) > 1) \
                or f.value.lower() in sentence.lower():
            return True
        if f.listed or not f.words:
            return None
        if new_handle and HANDLE.search(f.value):  # "the v3.0-beta milestone" for v1.9.2
            return False
        # a rival, all of it, not negated ("didn't pass"): another record's value, or a name
        # never held ("run by Oskar Berg"; "going home" is no ``pending_home_check``)
        own, denied = self._record_words.get(f.record, set()) | mine, negated_words(
            WORDS.findall(sentence), self.stem)  # read once, not per rival
        rivals = [w for w in self._key_words.get(f.name, ()) if w and w != f.words
                  and not w <= denied]
        pool = code_rivals(set(names) - self._held, f.value, sentence, self.stem, self._named)
        return False if any(s not in own for w in rivals if w <= stems for s in w) or any(
            s in pool and s not in own for s in stems) else None

    def _quantity_of_other(self, sentence: str, n: Number, f: Field) -> bool:
        """``n`` counts something the field is not ("64 francs", "120 rooms", "level 9": no
        ``floors: 18``); "2 changes", "330 metres", "$25 per person" may be its value."""
        if rate_over(sentence, n, f, self._by_key) or no_count_of(sentence, n, f):
            return True  # a rate, or which one, not how many ("round 1" for ``rounds: 5``)
        m = re.match(r"\s?-?\s?([A-Za-z][A-Za-z'’]*)", sentence[n.end:])
        if not m or n.kind != "number" or any(c in "$€£¥" for c in
                                              sentence[max(0, n.start - 1):n.start + 1]):
            return False
        w = m[1].lower()
        return not (w in self.stopwords or w in ("per", "times") or units.unit_after(sentence, n)
                    or mentioned(w) or any(has(k, {self.stem(w)}) for k in f.key | self._path(
                        f.path)))  # "the 0.5% tolerance" for ``tolerances pct > pvy``
