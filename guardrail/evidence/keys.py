"""The keys of a rendered tool result: its ``key: value`` pairs, the stems naming a key,
and a sentence's clauses (where what it says of a key stands).

    pairs("a > b > key: value; k: v")   -> [("a > b > key", "value"), ("k", "v")]
    key_stems(path, stem, stopwords)    the stems that name a field
    has(key_stem, stems)                a sentence's stems hold a key's stem
    path_words(path, stem, stopwords)   the stems of a key path's words
    own_paths(fields, stems, ...)       of one key's fields, those whose own path words it names
    name_words(sentence, stem, ignored) the words naming things, where they stand
    clauses(sentence, stem)             (start, end, stems) of each clause
    joined(sentence, stem)              (start, end, stems) of each sentence joined in it
    naming(text, stem)                  the stems a text names keys by, plainly or negated
    negated_words(words, stem)          the stems a negation governs
    clause_negated(sentence, key, stem) the clause naming a key is negated
    clause_asks(sentence, key, stem)    the clause naming a key asks for it ("still needs")
"""

from __future__ import annotations

import collections
import functools
import re
from typing import Callable, Collection, Iterable, Sequence

from guardrail.evidence import units
from guardrail.evidence.field import Field
from guardrail.evidence.lexicon import (CALENDAR, DEMONYMS, GENERIC, IDENTITY, NEGATIONS,
                                        NOT_NAMING, OPPOSITES, PHRASES, SAME, TITLES, UNITS,
                                        ZONES)
from guardrail.evidence.values import PARTS

# a key, or a path of keys ("a > b > key", each up to 60 characters): deep JSON paths
# run past 60 characters in all
_KEY_VALUE = re.compile(r"^(?P<key>(?:[^:>]{1,60}? > ){0,16}[^:>]{1,60}?):\s+(?P<value>\S.*)$")
_PAREN = re.compile(r"\([^)]*\)")
_NEG_PREFIX = re.compile(r"^(?:un|non|in)(?=[a-z]{5})", re.I)
OUT_OF = re.compile(r"\bout of ([A-Za-z]+)", re.I)
_JOINED = re.compile(r";\s+|,\s+(?:and|but|while|whereas|so)\s+(?=(?:\S+\s+){3})", re.I)
_REQUIRED = re.compile(r"\b(?:needs?|must|ha(?:s|ve) to|(?:is|are|has|have) yet to|awaiting|"
                       r"waiting (?:for|on|to)|still to be)\b", re.I)
_SWITCHED = frozenset("turn turned turns switch switched switches shut set toggled".split())
_STATE_VERBS = frozenset("is are was were be been being it's turned switched set shut stays stay "
                         "remains remain kept left goes went gone toggled".split())
CLAUSE = re.compile(r",\s+|;\s+|\s+(?:but|and|while|whereas|although|though|if|unless|because|"
                    r"when)\s+", re.I)
WORDS = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+(?:[.,:]\d+)*")

Stem = Callable[[str], str]


def pairs(line: str) -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs of a rendered line: ``a > b > key: value``, a table row
    ``k: v; k: v``, a search snippet ``Title — k: v · k: v``, a list item ``- K: v``."""
    text = line.strip().lstrip("-*+ ").replace("**", "")
    out = []
    for part in PARTS.split(text):
        part = part.rsplit(" — ", 1)[-1]
        m = _KEY_VALUE.match(part.strip())
        if m:
            out.append((m["key"].strip(), m["value"].strip()))
    return out


_BOUND = {"min": "minimu", "max": "maximu"}


def key_stems(key: str, stem: Stem, stopwords: frozenset[str]) -> frozenset[str]:
    """The stems naming a field: its own key's, or where that is generic ("amount") its
    parent's ("order total > amount" -> order, total); none for a key naming a record."""
    for segment in reversed(key.split(" > ")):
        words = WORDS.findall(_PAREN.sub(" ", segment).replace("_", " ").replace("-", " "))
        if any(w.lower() in IDENTITY for w in words):
            return frozenset()
        found = frozenset(stem(w) for w in words if len(w) > 1 and not w[0].isdigit()
                          and w.lower() not in GENERIC and w.lower() not in UNITS
                          and w.lower() not in units.UNITS
                          and w.lower() not in stopwords) | {  # "min order kg": a bound,
            _BOUND[w.lower()] for w in words[:-1] if w.lower() in _BOUND}  # not minutes
        if found:
            return found
    return frozenset()


def name_words(sentence: str, stem: Stem, ignored: Collection[str]) -> list[tuple[str, int]]:
    """Stems of the words that name things, with where they stand: capitalised and not
    the first word (unless a capitalised word follows it: "Noa Kapoor is ...", not
    "Counting Callum's plan"), nor a month or a day, nor a title before a name ("Judge
    Alvarado"), nor a time zone ("6:00 PM Central", "Pacific time"), nor a unit after a
    number ("9:33 AM", "150 kW"), nor a stem of ``ignored`` (stopwords; a key's word:
    "SSO" for ``sso_provider``), nor two capitals ("PO boxes", "an ID")."""
    out = []
    found = list(WORDS.finditer(sentence.replace("-", " ")))
    for i, m in enumerate(found):
        w, lower = m[0], m[0].lower()
        after = found[i + 1][0] if i + 1 < len(found) else ""
        if not (i or len(found) > 1 and found[1][0][0].isupper() and not lower.endswith(
                "ing")) or not w[0].isupper() \
                or lower in CALENDAR or lower in ignored \
                or lower in TITLES and after[:1].isupper() \
                or lower in ZONES and (after.lower() == "time" or re.search(
                    r"(?:\d|[AP]M)\s?$", sentence[:m.start()], re.I)) \
                or re.search(r"\d\s?$", sentence[max(0, m.start() - 2):m.start()]) \
                or len(w) <= 2 and w.isupper():  # "PO boxes", "an ID": no name
            continue
        if (s := stem(w)) not in ignored:
            out.append((s, m.start()))
    return out


@functools.lru_cache(maxsize=4096)  # a result's paths, read for many sentences
def path_words(path: str, stem: Stem, stopwords: frozenset[str]) -> frozenset[str]:
    """The stems of a key path's words of four letters or more (no index, no stopword)."""
    return frozenset(stem(w) for w in WORDS.findall(path.replace("_", " "))
                     if len(w) > 3 and not w[0].isdigit()) - stopwords


def more_unnamed(more: frozenset[str], stems: Collection[str]) -> bool:
    """A field's path words beyond the key a sentence names, none of them named: "a depth
    of 92 m, about 302 feet" is ``total depth m: 92``, not ``casing > depth m: 24``
    (``more``: casing)."""
    return bool(more) and not more & set(stems)


def phrases(keys: Iterable[str]) -> re.Pattern:
    """The keys of two words or more as written (``pass mark``), to blank from a sentence
    where its words are read as values ("fell short of the pass mark" says no ``pass``)."""
    names = {k.lower() for k in keys if re.fullmatch(r"[A-Za-z]+(?: [A-Za-z]+)+", k)}
    return re.compile("|".join(rf"\b{re.escape(k)}\b" for k in sorted(
        names, key=len, reverse=True)) or "(?!)", re.I)


def own_paths(fields: Sequence[tuple[bool, Field]], stems: Collection[str], stem: Stem,
              stopwords: frozenset[str]) -> list[tuple[bool, Field]]:
    """Of (verdict, field) pairs of one yes/no key, those whose path has a word no
    other's has and ``stems`` name ("uv clarifier" beside "pump" and "aerator"); none for
    a key of values, which a sentence compares across paths ("198 g, under goal")."""
    if len(fields) < 2 or any(f.flag is None for _, f in fields):
        return []
    words = [path_words(f.path, stem, stopwords) for _, f in fields]
    seen = collections.Counter(w for ws in words for w in ws)
    return [pair for pair, ws in zip(fields, words) if any(seen[w] == 1 and w in stems
                                                            for w in ws)]


def has(key_stem: str, stems: Iterable[str]) -> bool:
    """A key's stem against a sentence's: equal, or the same first five letters
    ("remote" / "remotely", "wrap" / "wrapped")."""
    n = min(len(key_stem), 5)
    return any(s == key_stem or (n >= 4 and s[:n] == key_stem[:n]) for s in stems)


_ECHO = frozenset("query request params parameters filters filter input search".split())


def echo(path: str) -> bool:
    """The key path repeats what the tool was asked (``query > remote: any``)."""
    return path.split(" > ", 1)[0].strip().lower() in _ECHO and " > " in path


def clauses(sentence: str, stem: Stem) -> list[tuple[int, int, set[str]]]:
    """The sentence's clauses: (start, end, the stems of their words).  A part that
    holds only a date, a weekday or a year continues the one before it: "on Tuesday,
    March 11 and Wednesday, March 12, 2025" is one list of dates, not five clauses."""
    cuts = [(m.start(), m.end()) for m in CLAUSE.finditer(sentence)]
    out: list[tuple[int, int, set[str]]] = []
    for a, b in zip([0] + [e for _, e in cuts], [s for s, _ in cuts] + [len(sentence)]):
        words = WORDS.findall(sentence[a:b].replace("-", " "))
        if out and words and all(w[0].isdigit() or w.lower() in CALENDAR for w in words):
            out[-1] = (out[-1][0], b, out[-1][2] | {stem(w) for w in words
                                                     if not w[0].isdigit()})
            continue
        out.append((a, b, {stem(w) for w in words if not w[0].isdigit()}))
    return out


def joined(sentence: str, stem: Stem) -> list[tuple[int, int, set[str]]]:
    """Each sentence joined in this one ("The sink was fixed, and the ant request was
    cancelled."), where it stands and the stems of its words: parts after a semicolon or
    a comma and a conjunction, with three words or more (a list, "navy, teal, and
    graphite", is one part)."""
    cuts = [0, *(x for m in _JOINED.finditer(sentence) for x in m.span()), len(sentence)]
    return [(a, b, {stem(w) for w in WORDS.findall(sentence[a:b])})
            for a, b in zip(cuts[::2], cuts[1::2])]


_OWED = re.compile(r"(\b(?:is|are|was|were|remains?|stays?)\s+(?:still\s+)?)outstanding\b", re.I)
# "at the start of the year", "by the end of the month": a time of the calendar, no key
_CALENDAR_EDGE = re.compile(r"\b(?:start|beginning|end|middle)\s+of\s+(?:the|this|last|next)\s+"
                            r"(?:year|month|week|quarter|day)\b", re.I)


def naming(text: str, stem: Stem) -> tuple[set[str], set[str], list[str]]:
    """The stems a text names keys by, those it names negated ("closed" names ``open``
    negated, "unpaid" ``paid``, "out of service" ``in service``; "available" names ``in
    stock``), and its words and phrases in lower case."""
    text = _CALENDAR_EDGE.sub(" ", _OWED.sub(r"\1unpaid", text))  # "still outstanding": unpaid
    words = WORDS.findall(text.replace("-", " "))
    stems = {stem(w) for w in words if not w[0].isdigit() and w.lower() not in NOT_NAMING}
    negated = {stem(_NEG_PREFIX.sub("", w)) for w in words if _NEG_PREFIX.match(w)} | {
        stem(w) for w in OUT_OF.findall(text)}  # "out of service" for ``in service``
    said = re.findall(r"[a-z]+(?:_[a-z]+)*", PHRASES.sub(
        lambda m: m[1].replace(" ", "_"), text.lower()))
    for w in said:
        negated |= {stem(k) for k in OPPOSITES.get(w, "").split("_") if len(k) > 2}
        stems |= {stem(k) for k in (SAME.get(w) or DEMONYMS.get(w, "")).split("_") if len(k) > 2}
        stems |= {_BOUND[w]} if w in _BOUND else set()  # "the min order" names a minimum
    return stems, negated, said


def negates(words: Sequence[str], i: int, contracted: bool = True) -> bool:
    """``words[i]`` is a negation (``contracted``: any word ending in "n't").  "off" is
    one only as a state ("is off", "turned off"), not as a particle ("signed off" is
    approved, "broken off", "$25 off")."""
    w = words[i].lower().replace("’", "'")
    if w == "off":  # "is off"; "turned the heater off"
        return i > 0 and words[i - 1].lower().replace("’", "'") in _STATE_VERBS or any(
            x.lower() in _SWITCHED for x in words[max(0, i - 3):i])
    return w in NEGATIONS or contracted and w.endswith("n't")


def negated_words(words: Sequence[str], stem: Stem) -> set[str]:
    """The stems of the words that a negation up to three words before them governs
    ("hasn't been started")."""
    neg = [negates(words, i) for i in range(len(words))]
    return {stem(w) for i, w in enumerate(words) if any(neg[max(0, i - 3):i])}


def _clause_naming(sentence: str, key: Iterable[str], stem: Stem) -> list[str]:
    """The words of the clause that names ``key`` (its stems): the first that names all
    of it, else the first that names most of it; none if no clause names any of it."""
    parts = [WORDS.findall(c.replace("-", " ")) for c in CLAUSE.split(sentence)]
    named = [(sum(has(k, {stem(w) for w in words}) for k in key), -i)
             for i, words in enumerate(parts)]
    best = max(named, default=(0, 0))
    return parts[-best[1]] if best[0] > 0 else []


# "rather than on site", "instead of the covered one": a word may stand before the key's
_INSTEAD = re.compile(r"\b(?:rather than|instead of)(?: (?:the|a|an|on|in|at|its|their|being))?$",
                      re.I)
# a verb that says the thing is gone: "has lost its power connection", "lacks a permit"
_LOST = re.compile(r"\b(?:lost|lose|loses|losing|lacks?|lacking|without)"
                   r"(?:\s+(?:its|their|his|her|the|a|an|any|all))?$", re.I)


def clause_negated(sentence: str, key: Iterable[str], stem: Stem) -> bool:
    """The clause of the sentence that names ``key`` is negated ("renews November 15 and
    is not set to auto-renew" for ``auto renew``)."""
    words = _clause_naming(sentence, key, stem)
    # "off" after the key's own verb is the key's ("you shut off the water": ``water shut off``)
    return any(negates(words, i, False) and not _free(words, i, key, stem) and not (
        words[i].lower() == "off" and words[i - 1].lower() in _SWITCHED
        and any(has(k, {stem(words[i - 1])}) for k in key)) for i in range(len(words))) or any(
        _INSTEAD.search(before := " ".join(words[max(0, i - 3):i])) or (
            lost := _LOST.search(before)) and not any(has(k, {stem(lost[0].split()[0])})
                                                      for k in key)  # ``lost circulation``
        for i, w in enumerate(words) if any(has(k, {stem(w)}) for k in key))  # "open rather
    #                                                    than covered", "lost its power"


_FREE = frozenset({"extra", "additional", "charge", "cost", "fee", "surcharge", "upcharge"})


def _free(words: Sequence[str], i: int, key: Iterable[str], stem: Stem) -> bool:
    """The negation ``words[i]`` prices something at nothing ("oat milk costs nothing
    extra", "at no additional charge"), saying nothing of a key but one of that price."""
    nxt = [w.lower() for w in words[i + 1:i + 3]]  # "no extra charge" for ``charged``
    return bool(nxt) and nxt[0] in _FREE and not any(has(k, set(map(stem, nxt))) for k in key)


def denied(sentence: str, at: int) -> bool:
    """The clause up to ``at`` is negated: "haven't paid the $25 deposit" states no
    record's $25."""
    start = max((m.end() for m in CLAUSE.finditer(sentence, 0, at)), default=0)
    words = WORDS.findall(sentence[start:at])
    return any(negates(words, i) for i in range(len(words)))


def clause_asks(sentence: str, key: Iterable[str], stem: Stem) -> bool:
    """The clause naming ``key`` asks for what it names, so it says nothing of whether
    it holds now: "still needs its loan agreement signed", "they'll need to be on the
    charger" (a key of its own such a word, ``needs review``, is named, not asked)."""
    asked = _REQUIRED.search(" ".join(_clause_naming(sentence, key, stem)))
    return bool(asked) and not any(has(k, {stem(w) for w in WORDS.findall(asked[0])})
                                   for k in key)


_THAN = frozenset({"than", "versus", "vs", "unlike", "against", "compared"})


def compared(said: Sequence[str], stem: Stem) -> set[str]:
    """The stems of the words a comparison names as the other side ("$1,300 more than the
    fresco", "against the Lino"): no value the sentence gives its own record; ``said``: a
    sentence's words in lower case, in order."""
    return {stem(w) for i, w in enumerate(said)
            if _THAN.intersection(said[max(0, i - 2):i])}


def in_a_row(value: str, said: Sequence[str]) -> bool:
    """An item of a list ``value`` ("labels: bug, good first issue") stands in ``said``
    (a sentence's words in lower case, in order) with its words in a row: "room" alone
    says no "private room"."""
    text = f" {' '.join(said)} "
    return any(f" {' '.join(WORDS.findall(x)).lower()} " in text
               for x in re.split(r",|;| and ", value))
