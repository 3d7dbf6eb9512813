"""Which records a field check reads: those the sentence is about, or every record where
it says something of a group.

    field_check(fields, sentence, numbers, about, worked)   -> FieldCheck
    counted_flag(fields, sentence)   "Five of the six towers have passed": the line of a
                                     record that makes the count of a yes/no key's yes
                                     other than it says
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
but two vans have not").  A count said otherwise is still checked (``counted_flag``).
"""

from __future__ import annotations

import functools
import re
from typing import Collection, Optional, Sequence

from guardrail.evidence.field import Field, FieldCheck
from guardrail.evidence.fields import Fields
from guardrail.evidence.lexicon import CALENDAR
from guardrail.evidence.keys import CLAUSE, WORDS, has, naming, negates
from guardrail.evidence.values import Number, numbers, parts_of

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
# a group of records ("both tickets", "all four bottles", "all of them"), not "all ages"
_GROUP = re.compile(r"\bboth\b|\ball (?:of|the|these|those|its|their|your|\d+|two|three|"
                    r"four|five|six|seven|eight|nine|ten)\b", re.I)
_SMALL = "two three four five six seven eight nine ten eleven twelve".split()
_OF_THEM = re.compile(rf"\b(\d+|{'|'.join(_SMALL)}) of (?:them|those|these)\b", re.I)
# a group's exception carved out: "every stop except Beckett Falls", "all but one"
_EXCEPT = re.compile(r"\b(?:except|apart from|aside from|other than|save for|all but|"
                     r"with the exception of)\b", re.I)


def field_check(fields: Optional[Fields], sentence: str, nums: Sequence[Number],
                about: Optional[set[int]], worked: Collection[int] = ()) -> FieldCheck:
    """``fields.check`` of the sentence's ``nums`` in the records it is ``about``, or in
    every record where it says a one-word state of a group it does not name; then a
    count of the records holding a yes/no key's yes (``counted_flag``)."""
    if fields is None:
        return FieldCheck()
    check = fields.check(sentence, nums, about, worked)
    line = check.changed
    if line is not None and (_EXCEPT.search(sentence) and _flag_at(fields, line) is not None
                             or counted_right(fields, sentence, line)):
        check = FieldCheck(None, check.agreed)  # the group's exception (module docstring)
        line = None
    if line is None and (counted := counted_flag(fields, sentence)) is not None:
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


def counted_flag(fields: Fields, sentence: str) -> Optional[str]:
    """The line of a record that makes a count of the records holding a yes/no key's
    yes other than the sentence says ("Five of the six towers have passed" where four of
    the six hold ``passed: true``); no, where its clause is negated after the count
    ("two of the three have not signed").  Only where the whole it counts is the number
    of records holding the key, and the sentence names all of the key."""
    found = parts_of(sentence)
    if not found:
        return None
    stems, negated, _ = naming(sentence, fields.stem)
    by_key = _flags(fields)
    for part, whole, end in found:
        cut = CLAUSE.search(sentence, end)
        words = WORDS.findall(sentence[end:cut.start() if cut else len(sentence)])
        said = not any(negates(words, i) for i in range(len(words)))
        for (_, key), held in by_key.items():
            if len(held) == whole and part <= whole and all(has(k, stems | negated)
                                                            for k in key):
                # "Two of the three are unpaid" counts those holding no ``paid``
                state = said != any(has(k, negated) and not has(k, stems - negated)
                                    for k in key)
                if sum(f.flag == state for f in held) != part:
                    other = [f for f in held if f.flag != state] or held
                    return fields.lines[other[0].line]
    return None


def counted_right(fields: Fields, sentence: str, line: str) -> bool:
    """The yes/no field at ``line`` is one of a key's that the sentence counts rightly:
    a count (2 or more, fewer than the records holding the key) whose clause names the
    key, and as many records hold what that clause says of it ("Five have checked in":
    five ``checked in: true``; "two are unpaid": two ``paid: false``)."""
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
        state = (not any(negates(words, i) for i in range(len(words)))) != any(
            has(k, negated) and not has(k, stems - negated) for k in key)
        if sum(f.flag == state for f in fields_of) == count:
            return True
    return False


def _counts(sentence: str) -> list[tuple[int, int]]:
    """The counts of things a sentence says, each with where what it says of them
    starts: "Five have", "four of the five lots", "three of them"; not a label's number
    ("lane 2")."""
    found = [(int(n.value), n.end) for n in numbers(sentence) if n.kind == "count"]
    found += [(part, end) for part, _, end in parts_of(sentence)]
    return found + [(int(m[1]) if m[1].isdigit() else _SMALL.index(m[1].lower()) + 2, m.end())
                    for m in _OF_THEM.finditer(sentence)]


def _flag_at(fields: Fields, line: str) -> Optional[tuple[frozenset[str], list[Field]]]:
    """The yes/no key whose field in some record is ``line``: its stems, its fields."""
    return next(((key, held) for (_, key), held in _flags(fields).items()
                 if any(fields.lines[f.line] == line for f in held)), None)


@functools.lru_cache(maxsize=8)  # one grounding's Fields, read for each of its sentences
def _flags(fields: Fields) -> dict[tuple[str, frozenset[str]], list[Field]]:
    """Each yes/no key's fields, one per record: (its name, its stems) -> fields."""
    out: dict[tuple[str, frozenset[str]], list[Field]] = {}
    for f in fields.fields:
        if f.flag is not None and f.record >= 0 and not f.listed and f.key:
            out.setdefault((f.name, f.key), []).append(f)
    return out
