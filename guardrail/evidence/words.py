"""Words as the evidence features read them: a crude stem, content words, negations.

    stem("changes") == stem("changed") == "chang"
    content_words(text)   its words that say something: no stopwords, no numbers
    negated(text)         it holds a negation ("No. 5" is none)
    prose_units(text)     prose cut into sentence-sized units
    versioned(upto, end, lower)  a version said after its name as the grounding has them
"""

from __future__ import annotations

import re

STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can cannot could did do does doing don't down during
each few for from further had has have having he her here hers herself him himself his how i
if in into is isn't it it's its itself just let me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should so some such than that
that's the their theirs them themselves then there there's these they this those through to
too under until up very was wasn't we were what when where which while who whom why will with
would you your yours yourself yourselves s t can will just don should now i'm i've i'd i'll
you're we're they're it'll one's may might must shall also however therefore thus overall
""".split())
NEGATIONS = frozenset("not no never none nothing nobody neither nor without isn't wasn't "
                      "aren't weren't doesn't don't didn't cannot can't won't hasn't haven't "
                      "hadn't false".split())
# an identifier (TXN75280238, SK701) is one word: it names its record
WORD = re.compile(r"[A-Za-z]+\d[A-Za-z\d]*|[A-Za-z][A-Za-z'’\-]*|\d+(?:[.,:]\d+)*")
_NUMBERED = re.compile(r"\bno\.\s?(?=\d)", re.I)  # "Symphony No. 5": a number sign
_FREE = re.compile(r"\bnothing\s+(?=extra\b)|\bno\s+(?=(?:extra|additional)\s+(?:charge|cost|"
                   r"fee)s?\b)", re.I)  # a price of nothing: "costs nothing extra"


def negated(text: str) -> bool:
    """``text`` holds a negation ("Symphony No. 5" holds none, nor "oat milk costs nothing
    extra", a price)."""
    return any(w.lower() in NEGATIONS for w in WORD.findall(_FREE.sub(" ", _NUMBERED.sub(
        " ", text))))


def stem(word: str) -> str:
    """A crude, fast stem: lower case, no possessive, the first six letters."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[:-len(suffix)]
            break
    # "change", "changes", "changed", "changing": one stem (a final e is dropped)
    return (w[:-1] if len(w) > 4 and w.endswith("e") else w)[:6]


def flat(text: str) -> str:
    """The text's words, lower case, one space between them."""
    return " ".join(re.findall(r"\w+", text.lower()))


def initials(lines: list[str]) -> frozenset[str]:
    """The initials of 2 to 5 consecutive content words of each line ("ce", "ceo" and
    "eo" of "chief executive officer"): what an acronym may stand for."""
    runs = set()
    for line in lines:
        first = "".join(w[0].lower() for w in content_words(line))
        runs |= {first[i:i + k] for k in range(2, 6) for i in range(len(first) - k + 1)}
    return frozenset(runs)


def content_words(text: str) -> list[str]:
    return [w for w in WORD.findall(text)
            if not w[0].isdigit() and w.lower().replace("’", "'") not in STOPWORDS]


def prose_units(text: str) -> list[str]:
    """Prose cut into sentence-sized units (lines, then sentence ends)."""
    out = []
    for line in text.split("\n"):
        for piece in re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])|(?<=[.!?])(?<![Nn]o\.)\s+(?=\d)",
                              line):  # "Well No. 3" is one
            if piece.strip():
                out.append(piece.strip())
    return out


_VERSION = re.compile(r"([A-Za-z][A-Za-z+#]*)\s+v?(\d+\.\d+)$")


def versioned(upto: str, end: int, lower: str) -> bool:
    """A version written after its name as the grounding (``lower``, in lower case) has
    them together ("Python 3.12" for ``runtime: python3.12``, "Postgres 16.3" for
    ``postgres:16.3-alpine``); ``upto``: the sentence up to the version's ``end``."""
    m = _VERSION.search(upto)
    return m is not None and m.end(2) == end and re.search(
        rf"(?<![a-z\d]){re.escape(m[1].lower())}[\s:/_v-]*{re.escape(m[2])}(?![\d.]*\d)",
        lower) is not None
