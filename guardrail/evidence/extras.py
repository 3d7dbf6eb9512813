"""An extra a sentence says comes with something, which the tool result does not list.

    unlisted(sentence, known)   the extra's words ("a one-year guarantee on the movement"
                                of "The repair also comes with a one-year guarantee on the
                                movement.") where fewer than half of its content words
                                stand in the grounding (``known``: its stems), else None

A tool result lists what a booking, a quote or a plan holds: its items, its fees, its
yes/no keys (``materials_included: true``).  An answer that adds "also includes",
"also comes with", "also covers", "also offers" to one of them names one more thing;
where the result names nothing of that thing, the claim is one it cannot support.
"Also" is the cue: without it, "includes" and "covers" mostly restate a record ("It
covers four people: two adults at $18 each ..."), with it they add something.  Over the
127 hand-written sets written before it (docs/model-card.md, "An extra the tool result
does not list"), all 20 sentences with such a cue whose extra the grounding names fewer
than half of the words of were labelled unverifiable.
"""

from __future__ import annotations

import re
from typing import Optional

from guardrail.evidence.units import without_units
from guardrail.evidence.values import numbers
from guardrail.evidence.words import content_words, stem

_EXTRA = re.compile(
    r"\balso\s+(?:(?:usually|typically|now|even|still)\s+)?(?:includ(?:es|e|ed)|covers?|"
    r"(?:comes?|came)\s+with|offers?|provides?|supplies|supply|ships?|rents?(?:\s+out)?|lends?|"
    r"loans?|lets?|throws?\s+in|"
    r"gets?(?!\s+(?:along|in|on|to|up|back|off|out|through|paid|rid|there|cold|warm)\b)"
    r"(?:\s+access\s+to)?)\s+", re.I)
# where the extra ends: a clause of its own follows ("..., so you can warm up")
_END = re.compile(r"[,;:()]|\s[-\u2013\u2014]\s|\b(?:so|which|whereas|but|though|although|"
                  r"while|if|because|since|once|when|and you)\b", re.I)
# words any perk is said with, no thing of its own ("free access to", "at no extra charge")
_PERK = frozenset(map(stem, """free complimentary extra additional charge cost costs use
access option choice all full own new same every each plus""".split()))
SHARE = 0.5
"""The extra is unlisted where fewer than this share of its content words are known."""


def unlisted(sentence: str, known: frozenset[str]) -> Optional[str]:
    """The words of the extra ``sentence`` says comes with something ("also includes a
    five-year warranty"), where fewer than ``SHARE`` of their content words (numbers,
    units and the words every perk is said with left out) stand in the grounding whose
    stems are ``known``; None where it says no extra or the grounding names it."""
    m = _EXTRA.search(sentence)
    if m is None:
        return None
    rest = sentence[m.end():]
    extra = rest[:e.start()] if (e := _END.search(rest)) else rest
    bare = without_units(extra, nums := numbers(extra))
    for n in nums:  # "two spare devices": the count is no thing the result names
        bare = bare[:n.start] + " " * (n.end - n.start) + bare[n.end:]
    stems = [s for s in map(stem, content_words(bare)) if s not in _PERK]
    if not stems or sum(s in known for s in stems) >= SHARE * len(stems):
        return None
    return extra.strip().rstrip(".!?")
