"""What a synthetic hallucination changes: sentences, numbers and names found in a
response, and the perturbations that change them with exact character spans.

    number / entity / negation / insertion / swap   (see ``train.synth``)

Each ``perturb_*`` returns ``(new response, changed spans)`` or None when it cannot
apply; ``PERTURB`` names them for ``make_synthetic``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Optional

Perturbed = tuple[str, tuple[tuple[int, int], ...]]  # (new response, changed spans)


# --- sentences ---------------------------------------------------------------

_ABBREV = {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "inc", "ltd", "co",
           "corp", "no", "e.g", "i.e", "u.s", "u.k", "approx", "fig", "gen", "gov", "sen", "rep"}
_BOUNDARY = re.compile(r"(?<=[.!?])[\"”’')\]]*\s+(?=[\"“(\[]?[A-Z0-9])")
_PASSAGE = re.compile(r"^\s*passage \d+:\s*", re.IGNORECASE)
_MARKER = re.compile(
    r"^(?:However|In addition|Additionally|Moreover|Furthermore|Also|For example|For instance|"
    r"In fact|Therefore|Thus|As a result|Meanwhile|Overall|In general|Generally|Typically|"
    r"Nevertheless|Instead|Similarly|Finally|Indeed),\s+(?=[A-Za-z])")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split at newlines and at ``.!?`` before a capital or digit,
    except after common abbreviations and single initials."""
    out = []
    for para in re.split(r"\n+", text):
        para = _PASSAGE.sub("", para).strip()
        start = 0
        for m in _BOUNDARY.finditer(para):
            before = para[start:m.start()].rstrip(".!?\"”’')]").split()
            last = before[-1].lower() if before else ""
            if last in _ABBREV or (len(last) == 1 and last.isalpha()):
                continue
            out.append(para[start:m.start()].strip())
            start = m.end()
        out.append(para[start:].strip())
    return [s for s in out if s]


def usable(sentence: str) -> bool:
    """A sentence worth copying: prose of 4-60 words ending in ``.``, ``!`` or ``?``."""
    words = sentence.split()
    if not 4 <= len(words) <= 60 or sentence[-1] not in ".!?":
        return False
    if "http" in sentence or "@" in sentence or "|" in sentence:
        return False
    letters = sum(c.isalpha() for c in sentence)
    return letters >= 0.6 * len(sentence) and (sentence[0].isupper() or sentence[0].isdigit())


def rephrase(sentence: str) -> str:
    """Drop a leading discourse marker ("However, ...") and re-capitalize: safe, meaning kept."""
    m = _MARKER.match(sentence)
    if not m:
        return sentence
    rest = sentence[m.end():]
    return rest[0].upper() + rest[1:]


# --- what can be changed ------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.,\-/])\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\w%]|[.,]\d)")
_NUMBER_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve"]
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_NAME_WORD = r"[A-Z][a-zA-Z0-9&\-]*(?:['’][A-Z][a-zA-Z]+)?"
_NAME = re.compile(rf"(?<![\w'’])({_NAME_WORD}(?:\s+(?:(?:of|de|la|von|van|der|du|del|da)\s+)?{_NAME_WORD})*)")
NOT_NAMES = set("""
a an the in on at for by with from to of this that these those it its he she they we you i his her
their our my your some many most all each every if when while as after before during however but
and or so there here according also although because since unlike like not no yes what which who
whom where why how then once both other another such one two three four five six seven eight nine
ten first second third last next new many several any few much more less only just even still
mr mrs ms dr sir
""".split())
_MONTH_DAY = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun"}
NOT_NAMES |= _MONTH_DAY


@dataclass(frozen=True)
class Found:
    """A stretch of text a perturbation can change: ``text == source[start:end]``."""

    start: int
    end: int
    text: str


def find_numbers(text: str) -> list[Found]:
    found = [Found(m.start(), m.end(), m.group()) for m in _NUMBER.finditer(text)]
    found += [Found(m.start(), m.end(), m.group()) for m in _NUMBER_WORD.finditer(text)]
    return sorted(found, key=lambda f: f.start)


def _sentence_starts(text: str) -> set[int]:
    starts = {0}
    for m in re.finditer(r"[.!?][\"”’')\]]*\s+", text):
        starts.add(m.end())
    return starts


def find_names(text: str) -> list[Found]:
    """Capitalized multi-word runs, minus leading function words ("The", "In") and
    month/day names; a single capitalized word starting a sentence is not a name."""
    starts = _sentence_starts(text)
    out = []
    for m in _NAME.finditer(text):
        words = list(re.finditer(r"\S+", m.group()))
        while words and words[0].group().lower() in NOT_NAMES:
            words.pop(0)
        if not words:
            continue
        s, e = m.start() + words[0].start(), m.start() + words[-1].end()
        name = text[s:e]
        if len(words) == 1 and (s in starts or len(name) < 2):
            continue
        out.append(Found(s, e, name))
    return out


def _other_number(value: str, rng: random.Random) -> str:
    """A different but plausible value written the same way as ``value``."""
    if value.lower() in _NUMBER_WORDS:
        new = rng.choice([w for w in _NUMBER_WORDS if w != value.lower()])
        return new.capitalize() if value[0].isupper() else new
    prefix = "$" if value.startswith("$") else ""
    suffix = "%" if value.endswith("%") else ""
    core = value[len(prefix):len(value) - len(suffix)]
    commas = "," in core
    decimals = len(core.split(".")[1]) if "." in core else 0
    x = float(core.replace(",", ""))
    for _ in range(20):
        if suffix and x <= 100:
            y = float(rng.randint(1, 99)) if decimals == 0 else round(rng.uniform(0.5, 99.5), decimals)
        elif decimals == 0 and 1000 <= x <= 2100 and not (commas or prefix or suffix):  # a year
            y = x + rng.choice([-1, 1]) * rng.randint(1, 15)
        elif decimals == 0 and x <= 12:
            y = float(rng.randint(0 if x > 1 else 2, 15))
        else:
            y = x * rng.choice([0.5, 0.6, 0.7, 0.8, 1.25, 1.5, 2.0, 3.0])
            if decimals == 0:
                y = round(y, -max(0, len(str(int(x))) - 2))  # keep it round: 38,900 -> 58,000
        if decimals:
            new = f"{y:,.{decimals}f}" if commas else f"{y:.{decimals}f}"
        else:
            new = f"{int(y):,}" if commas else str(int(y))
        if new != core and y >= 0:
            return prefix + new + suffix
    return ""


# --- perturbations -------------------------------------------------------------

@dataclass
class Pool:
    """What perturbations borrow from other documents."""

    names: list[tuple[str, int]]         # (name, document index)
    sentences: list[list[str]]           # usable sentences per document
    vocab: list[frozenset[str]]          # content words per document


def _replace(text: str, start: int, end: int, new: str) -> Perturbed:
    out = text[:start] + new + text[end:]
    assert out[start:start + len(new)] == new
    return out, ((start, start + len(new)),)


def perturb_number(resp: str, doc: int, context: str, pool: Pool, rng: random.Random) -> Optional[Perturbed]:
    found = find_numbers(resp)
    rng.shuffle(found)
    for f in found:
        new = _other_number(f.text, rng)
        if new and new != f.text:
            return _replace(resp, f.start, f.end, new)
    return None


def perturb_entity(resp: str, doc: int, context: str, pool: Pool, rng: random.Random) -> Optional[Perturbed]:
    found = find_names(resp)
    if not found or not pool.names:
        return None
    target = rng.choice(found)
    n_words = len(target.text.split())
    low_ctx = context.lower()
    candidates = []
    for _ in range(200):
        name, owner = rng.choice(pool.names)
        if owner == doc or name.lower() in low_ctx or name.lower() in resp.lower():
            continue
        candidates.append(name)
        if len(name.split()) == n_words or len(candidates) >= 20:
            break
    if not candidates:
        return None
    same = [c for c in candidates if len(c.split()) == n_words]
    return _replace(resp, target.start, target.end, (same or candidates)[-1])


_AUX = r"is|are|was|were|can|will|should|could|would|may|must|did|has been|have been|had been"
_ADD_NOT = re.compile(rf"\b({_AUX})\s+(?!(?:not|never|no|n't|only)\b)([a-z][a-z\-]*)\b")
_HAS_NOT = re.compile(r"\b(is|are|was|were|can|will|should|could|would|may|must|do|does|did|has|have|had)"
                      r"( not|not)\s+([a-z][a-z\-]*)\b")
_CONTRACTED = re.compile(r"\b(is|are|was|were|ca|wo|should|could|would|do|does|did|has|have|had)n['’]t"
                         r"\s+([a-z][a-z\-]*)\b")


def perturb_negation(resp: str, doc: int, context: str, pool: Pool, rng: random.Random) -> Optional[Perturbed]:
    edits = []  # (start, end, new text)
    for m in _HAS_NOT.finditer(resp):
        edits.append((m.start(), m.end(), f"{m.group(1)} {m.group(3)}"))
    for m in _CONTRACTED.finditer(resp):
        aux = {"ca": "can", "wo": "will"}.get(m.group(1), m.group(1))
        edits.append((m.start(), m.end(), f"{aux} {m.group(2)}"))
    for m in _ADD_NOT.finditer(resp):
        aux, word = m.group(1), m.group(2)
        if aux == "can":
            new = f"cannot {word}"
        elif " " in aux:  # has been -> has not been
            first, second = aux.split()
            new = f"{first} not {second} {word}"
        else:
            new = f"{aux} not {word}"
        edits.append((m.start(), m.end(), new))
    if not edits:
        return None
    s, e, new = rng.choice(edits)
    return _replace(resp, s, e, new)


def perturb_insertion(resp: str, doc: int, context: str, pool: Pool, rng: random.Random) -> Optional[Perturbed]:
    others = [i for i in range(len(pool.sentences)) if i != doc and pool.sentences[i]]
    if not others:
        return None
    # a sentence from the most similar of a few other documents: on topic, unsupported
    sample = rng.sample(others, min(100, len(others)))
    mine = pool.vocab[doc]
    sample.sort(key=lambda i: -len(mine & pool.vocab[i]) / (1 + len(mine | pool.vocab[i])))
    low_ctx = " ".join(context.split()).lower()
    for i in sample[:5]:
        choices = [s for s in pool.sentences[i] if " ".join(s.split()).lower() not in low_ctx]
        if choices:
            new = rephrase(rng.choice(choices))
            break
    else:
        return None
    bounds = [m.end() for m in re.finditer(r"[.!?][\"”’')\]]*(?=\s|$)", resp)]
    at = rng.choice(bounds) if bounds else len(resp)
    if at < len(resp):  # "A. | B."  ->  "A. NEW B."
        out = resp[:at] + " " + new + resp[at:]
        start = at + 1
    else:
        out = resp + " " + new
        start = len(resp) + 1
    assert out[start:start + len(new)] == new
    return out, ((start, start + len(new)),)


def _same_name_type(a: str, b: str) -> bool:
    return len(a.split()) == len(b.split())


def _number_type(value: str) -> tuple:
    is_year = bool(re.fullmatch(r"1[0-9]{3}|20[0-9]{2}", value))
    return value[:1] == "$", value[-1:] == "%", is_year, value.isalpha()


def _same_number_type(a: str, b: str) -> bool:
    return _number_type(a) == _number_type(b)


def perturb_swap(resp: str, doc: int, context: str, pool: Pool, rng: random.Random) -> Optional[Perturbed]:
    pairs = []
    sentence_spans = [(m.start(), m.end()) for m in re.finditer(r"[^.!?]+(?:[.!?]+|$)", resp)]
    for finder, same_type in ((find_names, _same_name_type), (find_numbers, _same_number_type)):
        items = finder(resp)
        for a_i, a in enumerate(items):
            for b in items[a_i + 1:]:
                same_sentence = any(s <= a.start and b.end <= e for s, e in sentence_spans)
                distinct = a.text.lower() not in b.text.lower() and b.text.lower() not in a.text.lower()
                if same_sentence and distinct and a.end <= b.start and same_type(a.text, b.text):
                    pairs.append((a, b))
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    out = resp[:a.start] + b.text + resp[a.end:b.start] + a.text + resp[b.end:]
    first = (a.start, a.start + len(b.text))
    second_start = b.start + len(b.text) - len(a.text)
    second = (second_start, second_start + len(a.text))
    assert out[first[0]:first[1]] == b.text and out[second[0]:second[1]] == a.text
    return out, (first, second)


PERTURB: dict[str, Callable[..., Optional[Perturbed]]] = {
    "number": perturb_number, "entity": perturb_entity, "negation": perturb_negation,
    "insertion": perturb_insertion, "swap": perturb_swap,
}
