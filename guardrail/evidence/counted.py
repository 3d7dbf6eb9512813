"""How many items a tool result lists, and a count that says more ("a company of four
puppeteers" where ``puppeteers`` lists three; "Crews covered five trails" over four
``trails`` records).

    Lists(lines)                    the lists of a rendered structured grounding
    lists.miscounted(sentence, ns)  -> "trails: 4 listed" for a count of more items than
                                       every list its noun names holds together
    lists.total(n, stems)           ``n`` is how many one key's lists hold together
                                    over the records holding them, a key it names

A count of listed things is stated when the grounding lists that many (listing.py reads
every list's length as a value the grounding holds), so a count of the wrong list's
length, or of another value's, passed as found: "four puppeteers" against three names,
with 4 standing in "age guide: 4+".  Here a count is read against the lists whose key
ends in the word it counts, and only one over all of them together is flagged: fewer is
most often a part ("two of the trails are open"), and a sum over nested lists ("18 beds
across the rooms") is their total.  It says nothing where the grounding states that many
under a key of that word ("trail count: 5": a page of a longer list) or adds a column of
the list's records up to it ("7 items" over line items whose quantities make 7).
"""

from __future__ import annotations

import re
from typing import Collection, Optional, Sequence

from guardrail.evidence.numbering import INDEX
from guardrail.evidence.units import unit_after
from guardrail.evidence.values import CURRENCY_SIGNS, Number, numbers, sort_of
from guardrail.evidence.words import stem

_HEADER = re.compile(r"^(.+) (\d+) of (\d+):$")  # "a > rooms 1 of 2:" (its last key)
_TOP = "item"  # render.py's name for a top-level array: no word of the result's
_WORDS_AFTER = re.compile(r"[^.,;:!?()\"]{0,40}")
# a word that ends the noun a count counts: "5 miles of trails" counts miles
_ENDS = frozenset({"of", "per", "in", "for", "from", "at", "on", "with", "between", "to",
                   "across", "a", "an", "each", "and", "or", "more", "extra", "additional",
                   "other", "others"})  # "eight more confirmations": not all of them
_TIMES = frozenset({"second", "minute", "hour", "day", "night", "week", "month", "year"})
# "K-21", "NOAA 19": a name's number; "grades 4-8": a range's end
_LABEL = re.compile(r"(?:[A-Za-z][-_#]?|[A-Z]\w*\s|\d\s?[-–])$")
_AMOUNT = re.compile(r"^[-+]?[\d,]*\.?\d+$")  # a list of these holds amounts, not things
_WHOLE = re.compile(r"^\d[\d,]*$")
_VERBS = frozenset({"is", "was", "has", "does", "goes", "its", "this", "thus", "plus"})
_MOST = 1000  # a count of more is an amount, not listed things


def singular(word: str) -> str:
    """A noun in the singular, lower case ("trails" -> "trail", "buses" -> "bus")."""
    w = word.lower()
    for plural, single in (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"),
                           ("xes", "x"), ("ses", "s"), ("s", "")):
        if len(w) > len(plural) + 2 and w.endswith(plural) and not w.endswith("ss"):
            return w[:-len(plural)] + single
    return w


def _head(key: str) -> str:
    """The word a key ends in, in the singular ("spoke cables" -> "cable")."""
    words = re.findall(r"[a-z]+", key.lower())
    return singular(words[-1]) if words else ""


class Lists:
    """Each list of a rendered JSON grounding, by the word its key ends in: its records
    (a ``key i of n:`` line each) or its names (one ``key: value`` line each, in a run;
    a list of numbers holds amounts, not things); what a numeric key of a list's
    records adds up to; the numbers stated under a key holding that word."""

    def __init__(self, lines: Sequence[str]):
        lengths: dict[str, dict[str, int]] = {}   # head -> list path -> length
        sums: dict[str, set[float]] = {}          # head -> its records' columns added up
        stated: dict[str, set[float]] = {}        # word -> numbers under keys holding it
        columns: dict[tuple[str, str], float] = {}
        whole: set[float] = set()                 # every field's value that is one number
        run_key, run, named = None, 0, True
        for line in [*lines, ""]:
            key, sep, value = line.partition(": ")
            if not sep and (m := _HEADER.match(line)) and m[1] != _TOP and (head := _head(
                    m[1].rpartition(" > ")[2])):
                lengths.setdefault(head, {})[m[1]] = int(m[3])
            if sep and key == run_key:
                run, named = run + 1, named and not _AMOUNT.match(value)
                continue
            if run_key is not None and run >= 2 and named:
                lengths.setdefault(_head(run_key), {})[run_key] = run
            run_key, run, named = (key, 1, not _AMOUNT.match(value)) if sep else (None, 0, True)
            if not sep:
                continue
            if value == "(empty)":
                lengths.setdefault(_head(key), {})[key] = 0
            found = [x.value for x in numbers(value) if x.kind in ("number", "count")]
            parts = key.split(" > ")
            for w in re.findall(r"[a-z]+", key.lower()):  # "trail count: 5", "trails 2 >
                stated.setdefault(singular(w), set()).update(found)  # cone: 6" ("cone 6 trail")
            if _WHOLE.match(value.strip()):
                whole.add(float(value.strip().replace(",", "")))
            if len(found) == 1 and len(parts) >= 2 and INDEX.search(parts[-2]):
                at = (_head(INDEX.sub("", parts[-2])), INDEX.sub("", key))
                columns[at] = columns.get(at, 0.0) + found[0]  # "7 items": quantities
        for (head, key), total in columns.items():  # of the list, or of its key's words:
            for w in {head, *map(singular, re.findall(r"[a-z]+", key.lower()))}:  # "32 open
                sums.setdefault(w, set()).add(total)  # deals" over 4 ``deal count``s
        self._lengths, self._sums, self._stated = lengths, sums, stated
        by_path: dict[str, list[int]] = {}  # one key's lists, over the records holding them
        for lists in lengths.values():
            for path, n in lists.items():
                by_path.setdefault(INDEX.sub("", path), []).append(n)
        self._totals = [(sum(ns), frozenset(stem(w) for w in re.findall(
            r"[a-z]+", path.rpartition(" > ")[2].lower()))) for path, ns in by_path.items()
            if len(ns) >= 2 and sum(ns) >= 2]
        self._all = whole | {n for lists in lengths.values() for n in lists.values()}

    def total(self, n: Number, stems: Collection[str]) -> bool:
        """``n`` is how many items one key's lists hold together over the records
        holding them (two or more), and the sentence names a word of that key ("the
        crews groomed nine runs" over four machines' ``runs groomed``)."""
        return n.value.is_integer() and any(n.value == total and not words.isdisjoint(stems)
                                            for total, words in self._totals)

    def miscounted(self, sentence: str, nums: Sequence[Number]) -> Optional[str]:
        """``"<list>: <n> listed"`` for the first count in ``sentence`` of more things
        than every list its noun names holds together, None for none.  A count is a
        whole number of things ("five trails", "4 drive motors"), not an amount in a
        unit, money, a size ("eight-hour shifts"), the length of another list or a
        field's whole value ("60 payments" for ``term months: 60``)."""
        if not self._lengths:
            return None
        for n in nums:
            if n.kind not in ("count", "number") or n.percent or n.hedged \
                    or not n.value.is_integer() or not 2 <= n.value <= _MOST \
                    or n.value in self._all or sentence[n.end:n.end + 1] == "-" \
                    or sort_of(sentence, n) in CURRENCY_SIGNS or unit_after(sentence, n) \
                    or _LABEL.search(sentence, 0, n.start):
                continue
            head = _noun(sentence, n.end)
            lists = self._lengths.get(head) if head and head not in _TIMES else None
            if not lists:
                continue
            held = sum(lists.values())
            if n.value <= held or n.value in self._stated.get(head, ()) \
                    or n.value in self._sums.get(head, ()):
                continue
            path = max(lists, key=lists.__getitem__)
            return f"{INDEX.sub('', path)}: {held} listed"
        return None


def _noun(sentence: str, at: int) -> str:
    """What a count at ``at`` counts, in the singular: the word after it, or the one
    after that where that one is a plural ("six medication pairs": pair)."""
    words = []
    for w in re.findall(r"[A-Za-z]+", _WORDS_AFTER.match(sentence, at)[0])[:2]:
        if w.lower() in _ENDS:
            break
        words.append(w.lower())
    if len(words) == 2 and words[1].endswith("s") and words[1] not in _VERBS:
        return singular(words[1])
    return singular(words[0]) if words else ""
