"""Whether a sentence says a yes/no field of a tool result as it holds, otherwise, or not
at all.

    flag_said(field, sentence, stems, negated, stem, fields)
        True: said as the field holds it ("Delivery is included" for ``delivery
        included: true``); False: said the other way round; None: nothing said of it

Most of the work is saying nothing where a word of the key stands for something else:
a noun of its verb ("the delivery" for ``delivered``), a thing done, not able to be
("both of its renewals" for ``renewable``), an object of the record the sentence does
not name (``freeze > active``), a word picking records out ("the treated routes"), a
thing another key of the record names ("no meeting room is available" for ``all
available`` beside ``rooms free``), a part of the records counted ("two of them fit a
group of six with wheelchair access").
"""

from __future__ import annotations

import re
from typing import Collection, Iterable, Optional

from guardrail.evidence.field import Field
from guardrail.evidence.keys import (CLAUSE, OUT_OF, WORDS, Stem, clause_asks, clause_negated,
                                     has, naming)
from guardrail.evidence.values import partitive


def _unnamed_parent(f: Field, stems: set[str], stem: Stem) -> bool:
    """``f`` sits in an object of its record that the sentence does not name (``freeze >
    active``, ``returns ashes > communal``; not ``results 2 > open``, a record)."""
    parent = f.path.rsplit(" > ", 2)[-2] if " > " in f.path else ""
    if not parent or parent[-1].isdigit():
        return False
    return not any(has(stem(w), stems) for w in WORDS.findall(parent) if len(w) > 2)


# a key that says a thing was done (``delivered``), and the nouns of its verb that say
# nothing of whether it was ("the delivery", "free shipping"; "its power connection" does)
_PARTICIPLE = re.compile(r"\b[a-z]{3,}ed\b", re.I)
_NOUN_FORM = re.compile(r"(?:ings?|y|ies|ances?|ences?|ments?)$", re.I)  # no participle
_DETERMINED = re.compile(r"\b(?:the|a|an|its|their|your|his|her|our|my|this|that)\s+$", re.I)
_PREPOSED = re.compile(r"^(in|on|at|under|off) ([a-z]+)$", re.I)  # ``in service``, ``on hold``
# a yes/no word before the records it picks out: "across the treated routes"
_PICKS = re.compile(r"\b(?:the|its|their|your|these|those|all|both|every)\s+(?:\w+\s+)?$", re.I)


def _filters(sentence: str, key: Iterable[str], stem: Stem) -> bool:
    """The key's word stands only before a plural noun after "the" ("7 trucks are out
    across the treated routes"): it picks records out and says nothing of the others."""
    words = [(m, stem(m[0].lower())) for m in WORDS.finditer(sentence)]
    at = [i for i, (_, s) in enumerate(words) if any(has(k, {s}) for k in key)]
    return bool(at) and all(
        i + 1 < len(words) and re.fullmatch(r"[a-z]{3,}s", words[i + 1][0][0])
        and not words[i + 1][0][0].endswith(("ss", "us", "is"))
        and _PICKS.search(sentence, 0, words[i][0].start()) for i in at)


_ABLE = re.compile(r"\b([a-z]{4,}?)l?[ai]ble\b", re.I)  # ``renewable``, ``cancellable``
# the thing a key's verb names, counted or owned: "both of its renewals", "two cancellations"
_THING = re.compile(r"l?(?:als?|ations?|ions?|ments?)", re.I)
_COUNTED_THING = re.compile(r"\b(?:its|their|your|his|her|our|my|both|all|\d+|one|two|three|"
                            r"four|five)\s+(?:\w+\s+)?$", re.I)
_DONE = re.compile(r"\b(?:ha(?:ve|s|d)|ha(?:ve|s|d)n['’]t|was|were|wasn['’]t|weren['’]t|"
                   r"already|been|you|they|we|I)\s+(?:(?:not|never|yet|just|already|been)\s+)?$",
                   re.I)  # "you haven't renewed", "was refunded"; not "is refunded"


def _done_not_able(name: str, sentence: str) -> bool:
    """The sentence says a thing was done ("you haven't renewed it yet"), or names the
    thing ("you have used both of its renewals"), not whether it can be (``renewable``;
    "can't be renewed", "is refunded if you cancel" say that)."""
    for root in _ABLE.findall(name):
        forms = list(re.finditer(rf"\b{root}\w*", sentence, re.I))
        if forms and all(m[0].lower().endswith("ed") and _DONE.search(sentence, 0, m.start())
                         or _THING.fullmatch(m[0][len(root):]) and _COUNTED_THING.search(
                             sentence, 0, m.start()) for m in forms):
            return True
    return False


def _of_another(f: Field, sentence: str, fields: Collection[Field], stem: Stem) -> bool:
    """``f``, a key of one word, is said of a thing that another key of its record
    (``fields``) names
    and that may itself be there or not (a yes/no key, a list, an empty one), in the
    words before the key's own in a clause ("no meeting room is available" for ``all
    available`` beside ``rooms free: (empty)``; "Wi-Fi is available" for ``available``
    beside ``wifi``): the sentence says nothing of ``f``.  Not the objects ``f`` sits in
    ("The flag is marked as stale" for ``flag > stale``), nor an amount ("the prize has
    been paid" for ``paid`` beside ``prize usd``)."""
    if len(f.key) != 1:
        return False
    (key,) = f.key
    own = {stem(w.lower()) for w in WORDS.findall(f.path)}
    for clause in CLAUSE.split(sentence):
        at = next((m.start() for m in WORDS.finditer(clause) if has(key, {stem(m[0].lower())})),
                  0)
        before = {stem(w.lower()) for text in (clause[:at], clause[:at].replace("-", ""))
                  for w in WORDS.findall(text)} - own  # "Wi-Fi" for ``wifi``
        if at and any(g is not f and key not in g.key
                      and (g.flag is not None or g.listed or g.value == "(empty)")
                      and g.key & before for g in fields):
            return True
    return False


def flag_said(f: Field, sentence: str, stems: set[str], negated: set[str], stem: Stem,
              fields: Collection[Field] = ()) -> Optional[bool]:
    """Whether the sentence (its ``naming`` stems and negated stems) says the yes/no
    field ``f`` as the field holds it; None where it says nothing of it.  ``fields``: the
    fields of ``f``'s record, which may name what the sentence says it of."""
    if any(d not in sentence for d in re.findall(r"\d+", f.name)):
        return None  # "open spaces" does not name ``open 24h``
    # "Delivery is promised for Friday", "its return date", "that allowance" say nothing
    # of ``delivered``, ``returned``, ``allowed`` ("did not pass" does)
    if done := tuple({stem(w) for w in _PARTICIPLE.findall(f.name)}):
        bare = {w.lower()[:-2] for w in _PARTICIPLE.findall(f.name)}
        sentence = WORDS.sub(lambda m: "it" if stem(m[0]).startswith(done) and (
            _NOUN_FORM.search(m[0]) or m[0].lower() in bare and _DETERMINED.search(
                m.string, 0, m.start())) else m[0], sentence)
        stems, negated, _ = naming(sentence, stem)
        if not all(has(k, stems | negated) for k in f.key):
            return None
    if _done_not_able(f.name, sentence):
        return None
    if (m := _PREPOSED.match(f.name)) and re.search(rf"\b{m[2][:5]}", sentence, re.I) \
            and not re.search(rf"\b(?:{m[1]}|out of)\s+(?:\w+\s+)?{m[2]}", sentence, re.I):
        return None  # "It was last serviced" says nothing of ``in service`` ("available" does)
    if len(f.key) == 1 and (_unnamed_parent(f, stems | negated, stem)
                            or _of_another(f, sentence, fields, stem)):
        return None  # "an active plan" says nothing of ``freeze > active``
    parts = CLAUSE.split(sentence)
    if len(parts) > 1:  # a clause names the whole key, or it is not said of it ("the
        #                 pharmacy will be closed, although the store stays open" says
        #                 nothing of ``store closed``), and only those clauses negate it
        #                 ("the erg room is open ..., and the water isn't closed")
        whole = [c for c in parts if all(has(k, set().union(*naming(c, stem)[:2]))
                                          for k in f.key)]
        if not whole:
            return None
        stems, negated, _ = naming(" ".join(whole), stem)
    if any(partitive(c, len(c)) for c in (whole if len(parts) > 1 else parts)):
        return None  # "two of them fit a group of six with wheelchair access": a part counted
    if clause_asks(sentence, f.key, stem) or len(f.key) == 1 and _filters(sentence, f.key, stem):
        return None
    if "out of" in f.name:  # ``out of service``: "out of service" says it, no opposite
        negated = negated - {stem(w) for w in OUT_OF.findall(sentence)}
    by_prefix = any(has(k, negated) and not has(k, stems - negated) for k in f.key)
    return f.flag != (by_prefix or clause_negated(sentence, f.key, stem))
