"""Which records of a tool result a sentence speaks of.

    Records(lines, records, postings, values).about(sentence, stems, nums, before)
                                 -> About: the records it is about, where its names and
                                    values stand, and whether it names several together

A search returns five hotels; an answer says "The Harbor Inn is $189 a night." The
price must be the Harbor Inn's, not another hotel's, so every check that compares a
value with "its" record first needs to know which record that is.  Records are the
items of a JSON array of objects (``rooms 2 of 3:`` and the lines under it), the rows
of a markdown table, or the blocks of a ``key: value`` text (numbering.py numbers them).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple, Optional, Sequence

from guardrail.evidence.claims import works_out
from guardrail.evidence.field import HANDLE
from guardrail.evidence.keys import CLAUSE, denied, pairs
from guardrail.evidence.numbering import INDEX
from guardrail.evidence.stored import StoredValues
from guardrail.evidence.values import ISO_DATE, Number, numbers
from guardrail.evidence.weekdays import weekday
from guardrail.evidence.words import STOPWORDS, WORD, content_words, stem

_NOT_NAMED = re.compile(r"\b(?:not|rather than|instead of|unlike|other than|except)\s+"
                        r"(?:the\s+)?(?:[A-Z][\w'’-]*(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*)")
_PRONOUN_START = re.compile(r"^\W*(?i:it|its|it's|they|their|them|this|that|these|those|"
                            r"he|she|his|her|both)\b")
# a person ("She also has one missing assignment in World History") or a possessive: the
# record is the one its names single out, if any
_POSSESSIVE_START = re.compile(r"^\W*(?i:its|their|his|her|she|he|this|that|these|those)\b")
_PLURAL_START = re.compile(r"^\W*(?i:they|them|these|those)\b")
# "That's enough for ...", "This means ...": said of what came before, not of a record
# ("That partition is assigned to ..." is the partition named before it)
_DEMONSTRATIVE_START = re.compile(r"^\W*(?i:that|this)(?:'s|’s|\s+(?:is|means|leaves|puts))\b")
_GENERIC_START = re.compile(r"^\W*[Tt]he [a-z]+\b")  # "The hotel ...", "The company ..."
_WEEKDAY = re.compile(r"\b(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b")
_DAY_VALUE = re.compile(r"(mon|tue|wed|thu|fri|sat|sun)(?:[a-z]*day|s|\.)?", re.I)
_VERSUS = re.compile(r"\S?\s*(?:to|vs\.?|versus|against|than)\s*[-+−$€£]?", re.I)
_RELATES = re.compile(r"\b(?:after|before|than|since|until|following|ahead of|behind|while|"
                      r"whereas)\b", re.I)
_KEYED = re.compile(r"\b([A-Za-z]{3,})\s+#?(\d+)\b(?![.,:]\d)")
# records named by a plural and their numbers: "Courts 1 to 3", "tables 2 and 3", "Stones
# 1, 4 and 6" (each record's name "Court 1")
_NUMBERED = re.compile(r"\b([A-Za-z]{3,}?)s\s+(\d{1,3}(?:,\s*\d{1,3})*),?\s+"
                       r"(and|or|to|through|-|\u2013)\s+(\d{1,3})\b(?![.,:]\d)")


def whole_names(lines: Sequence[str], records: Sequence[int]) -> list[str]:
    """The names of the whole result, outside every record (``shop: Ribbon & Roller
    Restorations``), in lower case, longest first: said in full, their words name no
    record that shares one ("Feed roller set", "Ribbon, black cotton")."""
    return sorted({v.strip().lower() for i, line in enumerate(lines) if records[i] == -1
                   for _, v in pairs(line) if len(WORD.findall(v)) >= 2
                   and not any(c.isdigit() for c in v)}, key=len, reverse=True)


def blanked(sentence: str, names: Sequence[str]) -> Optional[str]:
    """``sentence`` with each of ``names`` it says, as whole words, blanked out (None: it
    says none)."""
    out = sentence
    for name in names:
        out = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", lambda m: " " * len(m[0]), out,
                     flags=re.I)
    return out if out != sentence else None


class About(NamedTuple):
    records: Optional[set[int]]  # None: the grounding has fewer than two, or nothing tells
    values: list[set[int]]       # the records holding each of its names and values
    together: bool = False       # it names each of several records
    misplaced: int = 0           # naming several, values not of the one named before them


class Records:
    """A grounding's records, indexed once: ``records[i]`` is line ``i``'s, ``postings``
    the lines of each word stem, ``values`` the values of each record."""

    def __init__(self, lines: Sequence[str], records: Sequence[int],
                 postings: dict[str, list[int]], values: dict[int, StoredValues]):
        self.lines, self.records, self.postings, self.values = lines, records, postings, values
        self._holding: dict[Number, frozenset[int]] = {}  # a value's records, read once
        self._labels, self._labelled = _label_keys(lines, records)
        self._whole = whole_names(lines, records)
        self._days: dict[int, list[tuple[str, str, int]]] = {}  # (key, "wed", line)
        self._handled: dict[str, set[int]] = {}  # a handle's records: "t-09" -> {2}
        for i, line in enumerate(lines):
            for k, v in pairs(line) if records[i] >= 0 else ():
                if day := _DAY_VALUE.fullmatch(v.strip()):
                    self._days.setdefault(records[i], []).append((k, day[1][:3].lower(), i))
                elif HANDLE.fullmatch(v.strip()):
                    self._handled.setdefault(v.strip().lower(), set()).add(records[i])
        self._labelling = _labelling_dates(lines, records)

    def hits(self, stems: Sequence[str], nums: Sequence[Number],
             named: Sequence[set[int]] = ()) -> tuple[list[set[int]], dict[int, float]]:
        """Where each of the stems and values stands (the records holding it; lines
        outside records stand in every record), and how much of it each record holds: a
        name or value that few records share counts more (a currency that every record
        has hardly tells which one the sentence means).  ``named``: the records that a
        text's weekdays and keyed values name (``by_text``)."""
        items: list[set[int]] = []
        for s in dict.fromkeys(stems):
            where = {self.records[i] for i in self.postings.get(s, ())}
            # outside the records it is said of all of them, unless records hold it too
            # ("Email Delivery" of one component and of ``uptime pct > email delivery``)
            if where:
                items.append(set(self.values) if where == {-1} else where - {-1})
        for n in nums:
            n = replace(n, start=0, end=0)  # the value, wherever the sentence says it
            if (where := self._holding.get(n)) is None:
                if len(self._holding) >= 4096:  # shared by every answer: kept bounded
                    self._holding.clear()
                where = self._holding[n] = frozenset(
                    r for r, v in self.values.items() if v.has(n))
            if where:
                items.append(set(self.values) if -1 in where else set(where))
        items += named
        hits: dict[int, float] = {}
        for where in items:
            for r in where - {-1}:
                hits[r] = hits.get(r, 0.0) + 1.0 / len(where)
        return items, hits

    def about(self, sentence: str, stems: Sequence[str], nums: Sequence[Number],
              before: str) -> About:
        """The records the sentence is about: those holding the most of its words and
        values, each weighted by how few records hold it (ties kept, as search results repeat
        a thing, but for one it names by its whole label: "Plan B" of Plan C's $40); for "It
        ..." or "The hotel ...", those of the sentence before it that named something (up
        to three back, past other "It ..." sentences); all it names by one key, each its own."""
        if len(self.values.keys() - {-1}) < 2:
            return About(None, [])
        if masked := blanked(sentence, self._whole):
            sentence, stems = masked, [stem(w) for w in content_words(masked)]
        nums = [n for n in nums if n.kind != "count"]  # counts belong to no record
        own = _names(sentence)
        by_text = self._by_text(sentence)
        values, _ = self.hits(own, nums, by_text)
        named, by_stem = self._named(own, stems)
        # a number tagged as an id ("Her own PR, #479, ...") names its record
        tagged = self.hits((), [n for n in nums if sentence[n.start - 1:n.start] == "#"])[0]
        ids = set().union(*(w for w in tagged if len(w) == 1))
        # "Courts 1 to 3"; and two dates or times or more, each of one record ("You skipped
        # the week of May 5, so your next box arrives on May 14"): it speaks of each, but
        # where its names single out one record and no word relates it to another ("The
        # T-09 crack was found on February 24", another's date), of that one
        dated = self.hits((), [n for n in nums if n.kind in ("date", "time")])[0]
        handled = {r for m in HANDLE.finditer(sentence) for r in self._handled.get(
            m[0].lower(), ())}  # "T-09": a turbine's id
        named |= self._ranged(sentence) | (once if len(once := {
            r for w in dated if len(w) == 1 for r in w}) >= 2 and (
            len(handled) != 1 or _RELATES.search(sentence)) else set())
        if len(named | ids) >= 2:
            return About(named | ids, values, True, self._misplaced(sentence, nums, by_stem))
        if len(handled) == 1 and named <= handled and not ids and not any(
                works_out(sentence, n.start, n.end) and any(
                    handled.isdisjoint(w) for w in self.hits((), [n])[0])
                for n in nums):  # (unless "with 12 hours to go" is another record's only)
            return About(handled, values)  # "The etl-runner-2 pod uses ...": its id
        if (m := _POSSESSIVE_START.match(sentence)) and not _singles_out(self.hits(own, ())[0]) \
                and len(one := {r for w in self.hits(_words(" ".join(WORD.findall(
                    sentence[m.end():])[:2])), ())[0] if len(w) == 1 for r in w}) == 1:
            return About(one | ids, values)  # "His bordetella shot ...": its thing's record
        _, hits = self.hits(stems, nums, by_text)  # every content word, the first too
        # its dates and times ("It stayed closed on Thursday, June 5", "... by noon") say which
        # (a date names its record where the records' dates of that key tell them apart:
        # a day's log; "It becomes available on March 15" is still the plot named before)
        labelled = self.hits((), [n for n in nums if n.kind == "time" or n.kind == "date" and (
            int(n.value) // 100 % 100, int(n.value) % 100) in self._labelling])[0]
        for prev in _recent_sentences(before) \
                if not _singles_out(tagged) and self._refers(sentence, own, stems, values,
                                                             labelled) else ():
            said = [n for n in numbers(prev) if n.kind != "count"]
            _, before_hits = self.hits(_words(prev), said, self._by_text(prev))
            if before_hits and max(before_hits.values()) >= 0.5:
                hits = before_hits
                break
            if not _PRONOUN_START.match(prev):
                break  # "It ..." after "It ...": the one named before both
        if not hits or max(hits.values()) < 0.5:  # only words most records share:
            return About(ids or None, values)     # nothing tells
        top = max(hits.values())
        best = {r for r, h in hits.items() if h >= top - 1e-9}
        if len(best) > 1 and not any(works_out(sentence, n.start, n.end) for n in nums):
            said = {r for r in best for v in self._labelled.get(r, ()) if re.search(
                rf"(?<!\w){re.escape(v)}(?!\w)", sentence, re.I)}  # a tie: its named one
            best = said if len(said) == 1 else best
        return About(best | ids, values)

    def day_changed(self, sentence: str, about: Optional[set[int]]) -> Optional[str]:
        """The line of the weekday that the one record the sentence is about holds, where
        the sentence names, not negated, only another record's weekday of that key
        ("Basement Jazz goes to air on Thursday" for its row's ``day: Wednesday``, where
        Thursday is another show's day)."""
        if not about or len(about) != 1 or not (mine := self._days.get(next(iter(about)))):
            return None
        said = {m[1][:3].lower() for m in _WEEKDAY.finditer(sentence)
                if not denied(sentence, m.start())}
        if not said or said & {day for _, day, _ in mine}:
            return None
        for key, _, line in mine:
            if said & {d for r, held in self._days.items() if r not in about
                       for k, d, _ in held if k == key}:
                return self.lines[line]
        return None

    @staticmethod
    def gap(about: About) -> float:
        """The share of its names and values that lie outside the records it is about:
        against each record, the least left out (duplicates of one thing in search
        results: one of them holds it all); against all of them when it names each, a
        value the record named before it lacks counted out too (``About.misplaced``)."""
        if not about.records or not about.values:
            return 0.0
        if about.together:
            return min(1.0, (sum(1 for w in about.values if not w & about.records)
                             + about.misplaced) / len(about.values))
        return min(sum(1 for w in about.values if r not in w)
                   for r in about.records) / len(about.values)

    def _by_text(self, text: str) -> list[set[int]]:
        """The records that a text's weekdays name ("Wednesday": the record dated on
        one) and those its keys and values name ("Partition 2" for ``partition: 2``)."""
        out = []
        for m in _WEEKDAY.finditer(text):
            day = m[1].lower()[:3]  # "wed"
            where = {r for r, v in self.values.items() if r != -1 and any(
                y and weekday(y, mo, d) == day for y, mo, d in v.dates)}
            if where:
                out.append(where)
        for m in _KEYED.finditer(text):
            key = stem(m[1])
            where = {self.records[i] for i in self.postings.get(key, ())
                     if m[2] in self.lines[i] for k, v in pairs(self.lines[i])
                     if v == m[2] and stem(k.rsplit(" > ", 1)[-1]) == key}
            if where and -1 not in where:
                out.append(where)
        return out

    def _ranged(self, sentence: str) -> set[int]:
        """The records a plural and numbers name ("Courts 1 to 3": those whose name is
        "Court 1", "Court 2" or "Court 3"; a range of at most 12)."""
        out: set[int] = set()
        for m in _NUMBERED.finditer(sentence):
            said = [int(k) for k in re.findall(r"\d+", m[2])] + [int(m[4])]
            if m[3] not in ("and", "or"):  # a range: from its first number to its last
                if len(said) != 2 or not 0 < said[1] - said[0] <= 12:
                    continue
                said = list(range(said[0], said[1] + 1))
            names = {f"{m[1].lower()} {k}" for k in said}
            out |= {self.records[i] for i in self.postings.get(stem(m[1]), ())
                    if self.records[i] != -1 and any(
                        v.strip().lower() in names for _, v in pairs(self.lines[i]))}
        return out

    def _misplaced(self, sentence: str, nums: Sequence[Number], by_stem: dict[str, int]) -> int:
        """Of a sentence naming several records, the values that the record named last
        before them in their clause lacks and another of those it names holds ("the back
        door lock is at 64%, while the front door's is at 18%" where the front door's is
        64%)."""
        cuts = [0, *(m.end() for m in CLAUSE.finditer(sentence)), len(sentence) + 1]
        names = [(m.start(), by_stem[st]) for m in WORD.finditer(sentence)
                 if (st := stem(m[0])) in by_stem]
        out = 0
        for n in nums:  # the name before it in its clause, unless the name right after it
            #             holds it ("from 1.4 on Starter up to 140.2 on Enterprise"); none
            #             before it: no record ("19,057 votes to Janet's 18,422")
            if n.kind == "count":
                continue
            a = max(c for c in cuts if c <= n.start)
            b = min(c for c in cuts if c > n.start)
            before = [r for at, r in names if a <= at < n.start]
            after = [r for at, r in names if n.end <= at < b]
            if any(_VERSUS.fullmatch(sentence, m.end, n.start) for m in nums):
                continue  # "+36 to +34": the second is the other one's
            if before and not self.values[before[-1]].has(n) \
                    and not (after and self.values[after[0]].has(n)) \
                    and any(self.values[o].has(n) for o in set(by_stem.values())):
                out += 1
        return out

    def _named(self, own: Sequence[str], stems: Sequence[str] = ()
               ) -> tuple[set[int], dict[str, int]]:
        """The records that names of one key each single out ("The /Campaigns/2025
        folder takes up 612.8 GB, and /Video/Raw another 488.1 GB."); a name of another
        key is another record's value ("Ananya is organizing the Budget Check-in."
        where Mei organizes it).  Any other word of ``stems`` names a record where it is
        that record's label: a short value of a key that tells every record apart
        ("creatinine at 0.91 mg/dL and an eGFR of 81", ``analyte: Creatinine``)."""
        by_key: dict[str, set[int]] = {}
        stems_of: dict[str, dict[str, int]] = {}  # per key, the record each stem names
        plain = [s for s in dict.fromkeys(stems) if s not in own] if self._labels else []
        for s in [*dict.fromkeys(own), *plain]:
            lines = self.postings.get(s, ())
            if len({self.records[i] for i in lines}) != 1:
                continue  # in several records, or outside them: it singles out none
            at = {(key.rsplit(" > ", 1)[-1], self.records[i]) for i in lines
                  for key, value in pairs(self.lines[i])
                  if any(stem(w) == s for w in WORD.findall(value))
                  and (s in own or key.rsplit(" > ", 1)[-1] in self._labels)}
            if len({r for _, r in at}) == 1 and -1 not in {r for _, r in at}:
                for key, r in at:
                    by_key.setdefault(key, set()).add(r)
                    stems_of.setdefault(key, {})[s] = r
        if not by_key:
            return set(), {}
        key = max(by_key, key=lambda k: len(by_key[k]))
        return by_key[key], stems_of[key]

    def _refers(self, sentence: str, own: Sequence[str], stems: Sequence[str],
                values: list[set[int]], dated: list[set[int]] = ()) -> bool:
        """"It ...", "Its ...", "That's ..." and "The hotel ..." speak of the one named
        before them, unless the names after a possessive or a demonstrative ("Her Dell
        monitor (IT-MN-01477) ...", "This copy of The Velvet Semaphore ...") or the
        words of a generic subject or after "That's" ("- The turkey club at the deli is
        sold out." after the curry) single out a record; "It takes place in Kauri Room."
        names the value, "That partition ..." is the one named before it."""
        if _DEMONSTRATIVE_START.match(sentence):
            return not _singles_out(self.hits(stems, ())[0])
        if _PRONOUN_START.match(sentence):  # unless its date or time names one record, or
            #                                 its names do after "They" ("They add up to 299
            #                                 servings, and Grace Adeyemi's cake is the largest")
            return not ((_POSSESSIVE_START.match(sentence) or _PLURAL_START.match(sentence))
                        and _singles_out(self.hits(own, ())[0]) or _singles_out(dated))
        return bool(_GENERIC_START.match(sentence)) and not values \
            and not _singles_out(self.hits(stems, ())[0])


_LABEL_WORDS = 3


def _labelling_dates(lines: Sequence[str], records: Sequence[int]) -> frozenset[tuple[int, int]]:
    """The (month, day) of each date under a key whose records' dates all differ, two
    records or more (a day's log: ``days 3 > date``), not under one that records share
    (``available from``: a plot's)."""
    by_key: dict[str, list[tuple[int, int]]] = {}
    for line, r in zip(lines, records):
        for key, value in pairs(line) if r >= 0 else ():
            if m := ISO_DATE.match(value.strip()):
                by_key.setdefault(INDEX.sub("", key), []).append((int(m[2]), int(m[3])))
    return frozenset(d for held in by_key.values() if len(held) >= 2
                     and len(set(held)) == len(held) for d in held)


def _label_keys(lines: Sequence[str], records: Sequence[int]
                ) -> tuple[frozenset[str], dict[int, list[str]]]:
    """The keys that tell records apart: three records or more hold one, each with a
    value of its own in words, of at most ``_LABEL_WORDS`` words (``analyte``, ``app``),
    and each record's values of them, in lower case."""
    seen: dict[str, dict[int, str]] = {}
    for line, r in zip(lines, records):
        if r >= 0:
            for key, value in pairs(line):
                seen.setdefault(key.rsplit(" > ", 1)[-1], {})[r] = value.lower()
    keys = frozenset(k for k, by_record in seen.items() if len(by_record) >= 3
                     and len(set(by_record.values())) == len(by_record)
                     and all(len(WORD.findall(v)) <= _LABEL_WORDS and re.search("[a-z]", v)
                             for v in by_record.values()))
    return keys, {r: [seen[k][r] for k in keys if r in seen[k]] for j in keys for r in seen[j]}


def _singles_out(items: list[set[int]]) -> bool:
    """A word that one record alone holds."""
    return any(len(where) == 1 for where in items)


def _names(text: str) -> list[str]:
    """Stems of the words naming things: capitalised (not first), handles (``v1.9``);
    not those it says a thing is not ("going to Threads of Faith, not Eastern Trade
    Routes"; "into European Portuguese rather than Brazilian")."""
    text = _NOT_NAMED.sub(" ", text)
    return [stem(w) for i, w in enumerate(WORD.findall(text)) if not w[0].isdigit() and
            (i > 0 and w[0].isupper() or any(c in w for c in "-_") or
             any(c.isdigit() for c in w)) and w.lower() not in STOPWORDS]


def _words(text: str) -> list[str]:
    """Stems of every content word, the first included."""
    return [stem(w) for w in content_words(text)]


def _recent_sentences(text: str, n: int = 3) -> list[str]:
    """The last ``n`` sentences of ``text`` (the answer before it), the latest first."""
    out: list[str] = []
    text = text.rstrip()[-1200:]
    while text and len(out) < n:
        cut = max(text.rfind(". ", 0, len(text) - 1), text.rfind("\n", 0, len(text) - 1),
                  text.rfind("! ", 0, len(text) - 1), text.rfind("? ", 0, len(text) - 1))
        out.append(text[cut + 1:].strip())
        text = text[:cut + 1].rstrip() if cut >= 0 else ""
    return [s for s in out if s]
