"""The keys of a rendered tool result: its ``key: value`` pairs, the stems naming a key,
and a sentence's clauses (where what it says of a key stands).

    pairs("a > b > key: value; k: v")   -> [("a > b > key", "value"), ("k", "v")]
    key_stems(path, stem, stopwords)    the stems that name a field
    has(key_stem, stems)                a sentence's stems hold a key's stem
    clauses(sentence, stem)             (start, end, stems) of each clause
    naming(text, stem)                  the stems a text names keys by, plainly or negated
    negated_words(words, stem)          the stems a negation governs
    clause_negated(sentence, key, stem) the clause naming a key is negated
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from guardrail.evidence import units
from guardrail.evidence.lexicon import (GENERIC, IDENTITY, NEGATIONS, NOT_NAMING, OPPOSITES,
                                        PHRASES, SAME, UNITS)
from guardrail.evidence.values import PARTS

# a key, or a path of keys ("a > b > key", each up to 60 characters): deep JSON paths
# run past 60 characters in all
_KEY_VALUE = re.compile(r"^(?P<key>(?:[^:>]{1,60}? > ){0,16}[^:>]{1,60}?):\s+(?P<value>\S.*)$")
_PAREN = re.compile(r"\([^)]*\)")
_NEG_PREFIX = re.compile(r"^(?:un|non|in)(?=[a-z]{5})", re.I)
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
                          and w.lower() not in stopwords)
        if found:
            return found
    return frozenset()


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
    """The sentence's clauses: (start, end, the stems of their words)."""
    cuts = [(m.start(), m.end()) for m in CLAUSE.finditer(sentence)]
    bounds = zip([0] + [e for _, e in cuts], [s for s, _ in cuts] + [len(sentence)])
    return [(a, b, {stem(w) for w in WORDS.findall(sentence[a:b].replace("-", " "))
                    if not w[0].isdigit()}) for a, b in bounds]


def naming(text: str, stem: Stem) -> tuple[set[str], set[str], list[str]]:
    """The stems a text names keys by, those it names negated ("closed" names ``open``
    negated, "unpaid" ``paid``; "available" names ``in stock``), and its words and
    phrases in lower case."""
    words = WORDS.findall(text.replace("-", " "))
    stems = {stem(w) for w in words if not w[0].isdigit() and w.lower() not in NOT_NAMING}
    negated = {stem(_NEG_PREFIX.sub("", w)) for w in words if _NEG_PREFIX.match(w)}
    said = re.findall(r"[a-z]+(?:_[a-z]+)*", PHRASES.sub(
        lambda m: m[1].replace(" ", "_"), text.lower()))
    for w in said:
        negated |= {stem(k) for k in OPPOSITES.get(w, "").split("_") if len(k) > 2}
        stems |= {stem(k) for k in SAME.get(w, "").split("_") if len(k) > 2}
    return stems, negated, said


def negated_words(words: Sequence[str], stem: Stem) -> set[str]:
    """The stems of the words that a negation up to three words before them governs
    ("hasn't been started")."""
    neg = [w.lower() in NEGATIONS or w.lower().endswith(("n't", "n’t")) for w in words]
    return {stem(w) for i, w in enumerate(words) if any(neg[max(0, i - 3):i])}


def clause_negated(sentence: str, key: Iterable[str], stem: Stem) -> bool:
    """The clause of the sentence that names ``key`` (its stems) is negated: the first
    that names all of it ("renews November 15 and is not set to auto-renew" for ``auto
    renew``), else the first that names most of it."""
    parts = [WORDS.findall(c.replace("-", " ")) for c in CLAUSE.split(sentence)]
    named = [(sum(has(k, {stem(w) for w in words}) for k in key), -i)
             for i, words in enumerate(parts)]
    best = max(named, default=(0, 0))
    return best[0] > 0 and any(w.lower().replace("’", "'") in NEGATIONS for w in parts[-best[1]])
