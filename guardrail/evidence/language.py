"""Is a text English, the one language the shipped detectors were trained on?

    read(text) -> Reading         letters by script and function words by language
    Reading.english               True / False, or None where the text does not tell
    sentence_english(s, around)   a sentence's reading, or the reading around it
    grounding_english(documents)  False where most of the grounding is in another language

A detector that cannot read a sentence (Chinese, Russian, German, ...) or its grounding
gives scores that mean nothing: "它于1950年完工。" against a Chinese record of 1889
scores 0.06, released as checked.  The stream therefore passes such a sentence
unchecked and says so (``verification.other_languages``) instead of claiming to have
verified it.  No model: a sentence whose letters are mostly of another script than
Latin is not English; a Latin-script one is read by its function words ("der", "und",
"et", "los", ...), the commonest words of any language, which names and numbers do
not supply.  A sentence with too few of them to tell (a name, "330 Meter.") takes the
language of the answer around it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

__all__ = ["Reading", "grounding_english", "read", "sentence_english"]

ENGLISH = frozenset("""
the of and to is are were that this these those for with at by from it its be been has
have had not but or which who would can could their there they she his her you your we
our than about after only other some such each any if when what where how does did was
should must my them him out into it's there's isn't aren't wasn't don't doesn't can't
""".split())

# The commonest words of other languages written in Latin letters, less any that English
# writes too ("in", "die", "also", "no", "a", "on", "me", "so", "will", "plus") or
# that tool results or formulas abbreviate ("per", "est", "van", "ha", "se", "det", ...).
OTHER = frozenset("""
der das und ist nicht ein eine einen einem einer mit von zu dem auf für im sich auch
wurde wurden sind bei nach wird aus er sie oder werden haben ich wir ihr ihre sein seine
vom zum zur dass noch nur wie kann können über durch diese dieser dieses wenn aber sehr
mehr
le la les de des du et un une que qui dans pas sur aux avec ce cette elle ils
sont ou été à ses leur nous vous je mais comme était lui c'est d'un d'une
el los las del es una por como más fue está están pero sus entre
desde también muy
gli è che della delle nel nella alla sono non questo questa anche
hanno
um uma dos das é não foi são mais pelo pela ao à isso
het een en dat niet met voor zijn er aan ook als bij wordt werd heeft
och att som är på för inte till og ikke jeg til
jest nie się że przez jak tak już
ve bir ile için olarak çok
yang ini itu dengan untuk adalah dari tidak
và của là có được các những trong cho một không người
""".split()) - ENGLISH

# a word, its letters joined by underscores as a key writes them ("price_per_kg": one)
# a word, its letters joined by underscores as a key writes them ("price_per_kg": one)
_WORD = re.compile(r"[^\W\d]+(?:'[^\W\d]+)?")
_SAMPLE = 4000  # characters of a document read to tell its language
_WIDE = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")  # a letter of these is about a word


@lru_cache(maxsize=4096)
def _script(ch: str) -> int:
    """0: a Latin letter; else how much the letter weighs against Latin ones (1, or 3
    for a character of Chinese, Japanese or Korean, which says about as much as a word)."""
    if ord(ch) < 0x250:
        return 0
    name = unicodedata.name(ch, "").split(" ")[0]
    if name in ("LATIN", "FULLWIDTH", "MODIFIER", "COMBINING"):
        return 0
    return 3 if name in _WIDE else 1


@dataclass(frozen=True)
class Reading:
    """What a text shows of its language: letters in the Latin script and (weighed) in
    others, English function words, other languages' function words, and words."""

    latin: int = 0
    other_script: int = 0
    english_words: int = 0
    other_words: int = 0
    words: int = 0

    def __add__(self, other: "Reading") -> "Reading":
        return Reading(self.latin + other.latin, self.other_script + other.other_script,
                       self.english_words + other.english_words,
                       self.other_words + other.other_words, self.words + other.words)

    @property
    def english(self) -> Optional[bool]:
        """False: mostly another script (1.5 times the Latin letters, two at least), or
        three or more of another language's function words and over twice as many as
        English ones; True: English function words, at least as many as others; None:
        it does not tell (a name, "Er ist 330 Meter hoch.": read with what is around)."""
        if self.other_script >= 2 and self.other_script > 1.5 * self.latin:
            return False
        if self.other_words >= 3 and self.other_words > 2 * self.english_words:
            return False
        if self.english_words and self.english_words >= self.other_words:
            return True
        return None


def read(text: str, min_letters: int = 1) -> Reading:
    """A sentence's (or a document's) reading.  A function word counts in lower case,
    or capitalised as the first word of a text of four words or more: "Le" in "Victor
    Hugo wrote Le Comte de Monte-Cristo." is part of a title, as "La" in the list item
    "La Rambla", and "NE" is an abbreviation; and with ``min_letters`` letters at least
    (a tool result's "de" or "en" is a language code).  A letter of another script
    counts in a word of three such letters or more, or as a character of Chinese,
    Japanese or Korean: "θ = 2π/3" and "Δφ" are mathematics."""
    latin = other = run = 0
    for ch in text + " ":
        weight = _script(ch) if ch.isalpha() else 0
        latin += ch.isalpha() and not weight
        if weight == 1:
            run += 1
            continue
        other += weight + (run if run >= 3 else 0)
        run = 0
    english = others = 0
    found = _WORD.findall(text.replace("\u2019", "'")) if latin else []
    for i, w in enumerate(found):
        if len(w) < min_letters or not (w.islower() or i == 0 and len(found) >= 4
                                         and w.istitle()):
            continue
        w = w.lower()
        english += w in ENGLISH
        others += w in OTHER
    return Reading(latin, other, english, others, len(found))


def sentence_english(sentence: Reading, around: Reading) -> bool:
    """Whether to read a sentence as English: by its own reading where that tells, else
    by ``around`` (the question and the answer so far, the sentence included), else
    English (checked as before)."""
    own = sentence.english
    if own is not None:
        return own
    return (around + sentence).english is not False


def _document_english(text: str, sample: int = _SAMPLE) -> bool:
    """A document is read as English unless it clearly is not: ``sample`` characters
    from its start and its middle, which may be JSON with English keys and foreign
    values."""
    half = len(text) // 2
    r = read(text[:sample // 2], 3) + read(text[half:half + sample // 2], 3) \
        if len(text) > sample else read(text, 3)
    if r.other_script >= 20 and r.other_script > r.latin:
        return False
    # prose in another language: a third of its words are function words; records with
    # English keys and a few foreign names or places: few
    return not (r.other_words >= 8 and r.other_words > 2 * r.english_words
                and r.other_words >= 0.08 * r.words)


def grounding_english(documents: Sequence[str]) -> bool:
    """False where documents in another language hold more than half of the grounding's
    characters: the detector cannot tell what they support.  At most ``_SAMPLE`` * 2
    characters are read over all documents (64 documents: a few milliseconds, once per
    answer), at least 400 of each."""
    total = sum(len(d) for d in documents)
    sample = max(400, 2 * _SAMPLE // max(1, len(documents)))
    foreign = sum(len(d) for d in documents
                  if d.strip() and not _document_english(d, sample))
    return not total or foreign * 2 <= total


class AnswerLanguage:
    """One answer's reading, sentence by sentence: whether the detector can read each
    sentence and the grounding it is checked against.  ``around`` grows with every
    sentence read, from the question on."""

    def __init__(self, question: str = ""):
        self._around = read(question)
        self._grounding: tuple[Sequence[str], bool] = ((), True)

    def readable(self, sentence: str, documents: Sequence[str]) -> bool:
        own = read(sentence)
        english = sentence_english(own, self._around)
        self._around += own
        if self._grounding[0] is not documents:
            self._grounding = (documents, grounding_english(documents))
        return english and self._grounding[1]
