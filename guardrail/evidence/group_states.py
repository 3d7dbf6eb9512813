"""Which records a field check reads: those the sentence is about, or every record where
it says something of a group.

    field_check(fields, sentence, numbers, about, worked)   -> FieldCheck
    counted_flag(fields, sentence)   "Five of the six towers have passed": the line of a
                                     record that makes the count of a yes/no key's yes
                                     other than it says
    counted_state(fields, sentence)  the same for a state ("four trails are closed")
    counted_right(fields, sentence, line)   the sentence counts rightly the records
                                     holding what it says of the yes/no key at ``line``

``Fields.check`` reads the fields a sentence names in the records it is matched to.  A
sentence about several records ("Cedar Court has three tickets that aren't closed yet,
two of them high priority"; "Both high-priority tickets are open"; "Four of the six
candidates passed") is often matched to one of them, and that one's state
(``priority: LOW``, ``passed: false``) then reads as changed.  Where the check finds
only a one-word state changed and the sentence counts records (a count of two or more,
"both", "all four") without naming the records it is about, the state is checked against
every record instead: said of a group, it is changed only if no record holds it.  Named
("Owen Ruiz and Aarav Mehta both passed"), the records keep it.  A number keeps its
record: another record's 100 is no support for "scores ranged from 38% to 100%".

A record's yes/no said of the group the other way round is that record's exception, not
a changed value, where the sentence carves it out ("Every machine except the maternity
one is online"; "He ate every day except Friday") or counts rightly the records holding
what it says ("Four of the five lots sold; lot 103 went unsold"; "Five have checked in,
but two vans have not").  A count said otherwise is still checked (``counted_flag``),
and so is a count of a list's things holding a state ("only three members have
auto-renew turned on", "four trails fully closed": ``counted_state``).
"""

from __future__ import annotations

import functools
import re
from typing import Collection, Optional, Sequence

from guardrail.evidence.field import Field, FieldCheck
from guardrail.evidence.counted import singular
from guardrail.evidence.fields import Fields
from guardrail.evidence.lexicon import CALENDAR
from guardrail.evidence.keys import CLAUSE, WORDS, Stem, has, naming, negates
from guardrail.evidence.numbering import INDEX
from guardrail.evidence.owned import both_ways
from guardrail.evidence.values import Number, numbers, partitive, parts_of

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
# a group of records ("both tickets", "all four bottles", "all of them"), not "all ages"
_GROUP = re.compile(r"\bboth\b|\ball (?:of|the|these|those|its|their|your|\d+|two|three|"
                    r"four|five|six|seven|eight|nine|ten)\b", re.I)
_SMALL = "two three four five six seven eight nine ten eleven twelve".split()
_VERBS = frozenset({"have", "has", "are", "were", "is", "was"})
_OF_THEM = re.compile(rf"\b(\d+|{'|'.join(_SMALL)}) of (?:them|those|these)\b", re.I)
_NOUN = re.compile(r"\s+([A-Za-z]+)")
# the whole of a part ("three of Dry Creek Farms' five pivots"), the rest of a group
# ("the other three lots"): no count of the records holding a state
_PART_BEFORE = re.compile(r"(?:\bof\b[^,;:.]{0,40}|\b(?:other|remaining|rest of the))\s+$", re.I)
_CUT = re.compile(f"{CLAUSE.pattern}|:", re.I)
_STATE = re.compile(r"[A-Za-z]{3,}|[A-Za-z]+[_ -][A-Za-z]+")  # "closed", "in_shop"; not "M"
# a group's exception carved out: "every stop except Beckett Falls", "all but one", "her
# cake awaits its deposit, and every other order has paid" (the exception named first)
_EXCEPT = re.compile(r"\b(?:except|apart from|aside from|other than|save for|all but|"
                     r"with the exception of)\b|(?<=\w)\W+(?:\w+\W+)*?(?:every other|"
                     r"all (?:the )?others?|the others|the rest)\b", re.I)


def field_check(fields: Optional[Fields], sentence: str, nums: Sequence[Number],
                about: Optional[set[int]], worked: Collection[int] = (),
                before: str = "") -> FieldCheck:
    """``fields.check`` of the sentence's ``nums`` in the records it is ``about``, or in
    every record where it says a one-word state of a group it does not name; then a
    count of the records holding a yes/no key's yes (``counted_flag``) or a state
    (``counted_state``), its whole in the sentence ``before`` it too ("Four of them")."""
    if fields is None:
        return FieldCheck()
    check = fields.check(sentence, nums, about, worked)
    line = check.changed
    if line is not None and (_EXCEPT.search(sentence) and _flag_at(fields, line) is not None
                             or counted_right(fields, sentence, line)):
        check = FieldCheck(None, check.agreed)  # the group's exception (module docstring)
        line = None
    whole = _whole_before(sentence, before) if line is None else None
    if line is None and (counted := counted_flag(fields, sentence)
                         or counted_state(fields, sentence) or whole and (
                             counted_flag(fields, whole) or counted_state(fields, whole))
                         ) is not None:
        return FieldCheck(counted)
    if line is None or about is None or "; " in line \
            or any(c.isdigit() for c in line.rpartition(": ")[2]):
        return check  # nothing changed, every record read, or a number or a CSV row
    if not (any(n.kind == "count" and n.value >= 2 for n in nums) or _GROUP.search(sentence)):
        return check
    # a sentence that names records it is about ("Owen Ruiz and Aarav Mehta both passed")
    # says the state of those records: it keeps them
    theirs = fields.words_of(about)  # a month or a day names no record ("On November 12")
    if any(fields.stem(w) in theirs for w in _CAPITALISED.findall(sentence)
           if w.lower() not in CALENDAR):
        return check
    wide = fields.check(sentence, nums, None, worked)
    return wide if wide.changed is None else check


_THEM_OPENS = re.compile(r"^\W*(\w+)\s+of\s+(?:them|those|these)\b", re.I)
_LAST = re.compile(r"(?<=[.!?])\s+")


def _whole_before(sentence: str, before: str) -> Optional[str]:
    """"Four of them were completed" after "You've made seven study room bookings": the
    sentence with the one count of the sentence before it as its whole ("Four of the 7
    study were completed"; the count reads only the whole), or None."""
    if not (m := _THEM_OPENS.match(sentence)) or not before.strip():
        return None
    last = _LAST.split(before.strip())[-1]
    if parts_of(last):  # "Four of your seven are serviceable. Three of those four ...":
        return None     # the part is the whole, and no key counts it
    counts = [n for n in numbers(last) if n.kind == "count" and n.value.is_integer()
              and n.value >= 2 and _NOUN.match(last, n.end)]
    if len(counts) != 1:
        return None
    return f"{m[1]} of the {int(counts[0].value)} " \
           f"{_NOUN.match(last, counts[0].end)[1]}{sentence[m.end():]}"


def counted_flag(fields: Fields, sentence: str) -> Optional[str]:
    """The line of a record that makes a count of the records holding a yes/no key's
    yes other than the sentence says ("Five of the six towers have passed" where four of
    the six hold ``passed: true``; "only three members have auto-renew turned on" where
    four ``members`` records hold ``auto renew: true``); no, where its clause is negated
    after the count ("two of the three have not signed").  Only where the whole it counts
    is the number of records holding the key (or the list they make is the thing it
    counts), and the sentence names all of the key."""
    by_key = _flags(fields)
    found = _wholes(fields, sentence) if by_key else []
    if not found:
        return None
    named = naming(sentence, fields.stem)
    for part, end, counts in found:
        clause = _clause(sentence, end)
        words = WORDS.findall(clause)
        said = not any(negates(words, i) for i in range(len(words)))
        # a count of a list's things names the key in its own clause ("three members have
        # auto-renew turned on"), a part of a whole anywhere ("Two of the three ... unpaid")
        stems, negated, _ = named if counts.whole else naming(clause, fields.stem)
        if not counts.whole and {"or", "both"} & {w.lower() for w in words}:
            continue  # "three items that are both vegetarian and gluten-free"
        for (_, key), held in by_key.items():
            if counts(held) and part <= len(held) and all(has(k, stems | negated)
                                                          for k in key):
                st, ng = stems, negated
                if counts.whole:  # its own clause says the state it counts, if it names the
                    #               key ("two of them planned and three unplanned"); no other
                    #               where the sentence says the key both ways ("Two of the
                    #               stalls haven't been assigned: MS-03, without power, ...")
                    own = naming(_own(sentence, end), fields.stem)
                    if all(has(k, own[0] | own[1]) for k in key):
                        st, ng = own[0], own[1]
                    elif both_ways(CLAUSE.split(sentence), key, fields.stem) or _counted_apart(
                            sentence, _own(sentence, end), key, fields.stem):
                        continue
                state = _state_said(said, key, st, ng)
                if sum(f.flag == state for f in held) != part and len(_holding(
                        fields, sentence[end:], clause, key, held, said, st, ng)) != part:
                    other = [f for f in held if f.flag != state] or held
                    return fields.lines[other[0].line]
    return None


def counted_state(fields: Fields, sentence: str) -> Optional[str]:
    """The same for a one-word state ("Six of the seven machines are currently active"
    where five of the seven hold ``status: active``; "four trails fully closed" over
    three ``status: closed``): the state named in the count's clause after what it
    counts, not negated, and not before it ("two of the five closed trails")."""
    for part, end, counts in _wholes(fields, sentence) if _states(fields) else ():
        said = WORDS.findall(_clause(sentence, end))
        words = [w if w.islower() else "" for w in said]  # "Fellside Nursery" names no state
        if {"or", "both"} & set(words) or any(negates(said, i) for i in range(len(said))):
            continue  # "open or partly open", "both vegetarian and gluten-free"; "not closed"
        for held in _states(fields).values():
            if not counts([f for fs in held.values() for f in fs]):
                continue
            for value, having in held.items():
                if value in words[1:] and len(having) != part:
                    other = having if part < len(having) else [
                        f for v, fs in held.items() if v != value for f in fs]
                    return fields.lines[other[0].line]
    return None


def counted_right(fields: Fields, sentence: str, line: str) -> bool:
    """The yes/no field at ``line`` is one of a key's that the sentence counts rightly:
    a count (2 or more, fewer than the records holding the key) whose clause names the
    key, and as many records hold what that clause says of it ("Five have checked in":
    five ``checked in: true``; "two are unpaid": two ``paid: false``), or as many hold
    what it says of every yes/no key it names ("Three shops are open right now and offer
    oat milk": three of the records holding ``open_now: true`` hold ``oat_milk: true``)."""
    held = _flag_at(fields, line)
    if held is None:
        return False
    key, fields_of = held
    for count, end in _counts(sentence):
        if not 2 <= count < len(fields_of):
            continue
        cut = CLAUSE.search(sentence, end)
        clause = sentence[end:cut.start() if cut else len(sentence)]
        stems, negated, _ = naming(clause, fields.stem)
        if not all(has(k, stems | negated) for k in key):
            continue
        words = WORDS.findall(clause)
        said = not any(negates(words, i) for i in range(len(words)))
        if sum(f.flag == _state_said(said, key, stems, negated) for f in fields_of) == count \
                or len(_holding(fields, sentence[end:], clause, key, fields_of, said, stems,
                                negated)) == count:
            return True
    return False


def _holding(fields: Fields, rest: str, clause: str, key: frozenset[str],
             held: Sequence[Field], said: bool, stems: set[str], negated: set[str]
             ) -> set[int]:
    """The records of ``held`` (a yes/no key's fields) holding what ``clause`` (the
    start of ``rest``, the sentence after a count; ``stems``, ``negated``: the words
    naming the key) says of ``key``, and what ``rest`` says of every other yes/no key of
    those records it names ("Three shops are open right now and offer oat milk":
    ``open_now: true`` and ``oat_milk: true``)."""
    holding = {f.record for f in held if f.flag == _state_said(said, key, stems, negated)}
    more, less, _ = naming(rest, fields.stem)
    after = WORDS.findall(rest[len(clause):])
    also = not any(negates(after, i) for i in range(len(after)))
    records = {f.record for f in held}
    for (_, other), its in _flags(fields).items():
        if other != key and {f.record for f in its} == records \
                and all(has(k, more | less) for k in other):
            state = _state_said(said if all(has(k, stems | negated) for k in other)
                                else also, other, more, less)
            holding &= {f.record for f in its if f.flag == state}
    return holding


def _state_said(said: bool, key: frozenset[str], stems: set[str], negated: set[str]) -> bool:
    """The yes/no a clause says of a key: ``said`` (its verb not negated), the other way
    round where it names the key negated ("Two of the three are unpaid": ``paid: false``)."""
    return said != any(has(k, negated) and not has(k, stems - negated) for k in key)


def _counts(sentence: str) -> list[tuple[int, int]]:
    """The counts of things a sentence says, each with where what it says of them
    starts: "Five have", "four of the five lots", "three of them"; not a label's number
    ("lane 2")."""
    found = [(int(n.value), n.end) for n in numbers(sentence) if n.kind == "count"]
    found += [(part, end) for part, _, end in parts_of(sentence)]
    return found + [(int(numbers(m[1])[0].value), m.end()) for m in _OF_THEM.finditer(sentence)]


class _Counts:
    """Which records a count may count: those of a key ``whole`` records hold (a part of
    a whole), or the records of the list its ``noun`` names."""

    def __init__(self, fields: Fields, whole: int = 0, noun: str = ""):
        self.fields, self.whole, self.noun = fields, whole, noun

    def __call__(self, held: Sequence[Field]) -> bool:
        if self.whole:
            return len(held) == self.whole
        listed = _list_of(self.fields, held)  # "Six have checked in": the one list's
        return listed == self.noun or self.noun.lower() in _VERBS and listed != ""


_OF_THEM = re.compile(r"\b(\d+|[a-z]+)\s+of\s+them\b", re.I)
_FRONTED = re.compile(r"^(?:of|among)\s+(?:the|its|their|your|these|those|all)\s+(\d+|[a-z]+)"
                      r"\b[^,;:.]{0,60},\s+(\d+|[a-z]+)\b", re.I)


@functools.lru_cache(maxsize=8)  # read by counted_flag and counted_state alike
def _wholes(fields: Fields, sentence: str) -> list[tuple[int, int, _Counts]]:
    """Each count a sentence makes of records: the part, where its clause starts, and
    which records it may count: "Five of the six towers" those of a key six records hold,
    "four trails" (a count of things, its noun) the records of the ``trails`` list; not
    the whole of a part ("four of the five lots")."""
    found = [(part, end, _Counts(fields, whole)) for part, whole, end in parts_of(sentence)]
    for m in _OF_THEM.finditer(sentence):  # "Nine players entered, four of them juniors";
        #                                      not "three of them still have seats"
        before = [int(n.value) for n in numbers(sentence[:m.start()]) if n.kind == "count"
                  and n.value.is_integer() and _NOUN.match(sentence, n.end)] if len(
            WORDS.findall(_clause(sentence, m.end()))) <= 2 else []
        for part, whole, _ in parts_of(f"{m[1]} of {before[-1]}") if before else ():
            found.append((part, m.end(), _Counts(fields, whole)))
    for m in _FRONTED.finditer(sentence):  # "Of the six lots in the warehouse, three are"
        found += [(part, m.end(), _Counts(fields, whole))
                  for part, whole, _ in parts_of(f"{m[2]} of {m[1]}")]
    wholes = {end for _, end, _ in found}
    for n in numbers(sentence):
        if n.kind == "count" and n.value.is_integer() and n.value >= 2 and n.end not in wholes \
                and not _PART_BEFORE.search(sentence, 0, n.start) \
                and (m := _NOUN.match(sentence, n.end)) \
                and (m[1].lower() not in _VERBS or _opens(sentence, n.start)):
            found.append((int(n.value), m.end(), _Counts(fields, noun=singular(m[1]))))
    return found


def _clause(sentence: str, at: int) -> str:
    """The sentence from ``at`` to the end of its clause (or a colon: "six commissions
    listed: four confirmed, ..." says no state of the six)."""
    cut = _CUT.search(sentence, at)
    return sentence[at:cut.start() if cut else len(sentence)]


def _opens(sentence: str, at: int) -> bool:
    """``at`` starts its clause: "Six have checked in", "..., and three are unpaid"; not
    "The first three are", "a table for two has"."""
    a = max((m.end() for m in _CUT.finditer(sentence, 0, at)), default=0)
    return sentence[a:at].strip().lower() in ("", "and", "but", "while", "so")


def _counted_apart(sentence: str, own: str, key: Collection[str], stem: Stem) -> bool:
    """Another clause than ``own`` names the whole key and counts records of its own:
    "Three of the four huts are free, and two of them fit a group of six with wheelchair
    access" counts no huts holding ``wheelchair accessible`` as three."""
    return any(partitive(c, len(c)) and all(has(k, set().union(*naming(c, stem)[:2]))
                                            for k in key)
               for c in CLAUSE.split(sentence) if c != own)


def _own(sentence: str, at: int) -> str:
    """The clause (``CLAUSE``) of the sentence that ``at`` falls in."""
    a = max((m.end() for m in CLAUSE.finditer(sentence, 0, at)), default=0)
    cut = CLAUSE.search(sentence, at)
    return sentence[a:cut.start() if cut else len(sentence)]


def _list_of(fields: Fields, held: Sequence[Field]) -> str:
    """The list the records of ``held`` make, in the singular ("trails 2 > status" ->
    "trail"); "" where they make more than one."""
    paths = {fields.lines[f.line].rpartition(" > ")[0] for f in held}
    lists = {INDEX.sub("", p).rpartition(" > ")[2] for p in paths}
    return singular(lists.pop().rpartition(" ")[2]) if len(lists) == 1 and lists != {""} else ""


def _flag_at(fields: Fields, line: str) -> Optional[tuple[frozenset[str], list[Field]]]:
    """The yes/no key whose field in some record is ``line``: its stems, its fields."""
    return next(((key, held) for (_, key), held in _flags(fields).items()
                 if any(fields.lines[f.line] == line for f in held)), None)


@functools.lru_cache(maxsize=8)
def _states(fields: Fields) -> dict[str, dict[str, list[Field]]]:
    """Each key holding a state of a word or two in three records or more ("status:
    closed", "status: in_shop"): its name -> each state, in lower case -> its fields."""
    out: dict[str, dict[str, list[Field]]] = {}
    for f in fields.fields:
        if f.record >= 0 and f.flag is None and not f.listed and _STATE.fullmatch(f.value):
            out.setdefault(f.name, {}).setdefault(f.value.lower(), []).append(f)
    return {k: v for k, v in out.items() if sum(map(len, v.values())) >= 3 and len(v) >= 2}


@functools.lru_cache(maxsize=8)  # one grounding's Fields, read for each of its sentences
def _flags(fields: Fields) -> dict[tuple[str, frozenset[str]], list[Field]]:
    """Each yes/no key's fields, one per record: (its name, its stems) -> fields."""
    out: dict[tuple[str, frozenset[str]], list[Field]] = {}
    for f in fields.fields:
        if f.flag is not None and f.record >= 0 and not f.listed and f.key:
            out.setdefault((f.name, f.key), []).append(f)
    return out
