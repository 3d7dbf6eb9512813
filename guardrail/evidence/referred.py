"""What a sentence that points back at the sentence before it adds up.

    said_before(sentence, before)   the sentence before, read for the records it names
                                    (stems, negated) and the counts it states, where
                                    ``sentence`` opens pointing back at them

"The Quayside Cryptic has four active syndication subscribers. Between them they pay $214
a week." adds up the ``weekly fee cents`` of the records holding ``active: true``, which
the first sentence names and the second only points at; "The six active cakes are worth
$1,330 altogether. They add up to 299 servings." adds up six of the seven ``servings``.
A total over some records is one the grounding lacks, and among the many sums of some
records a changed value is seldom told from a right one: only with the group or the count
the sentence before gives do the rules of totals.py try so few sums that chance seldom
gives one.  A sentence that names a group or states a count of its own is read alone.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from guardrail.evidence.values import numbers
from guardrail.evidence.words import content_words, negated, stem

# "They ...", "Between them ...", "Together those ...", "Combined, these ..."
_BACK = re.compile(r"^\W*(?:(?:between|among) them\b|(?:(?:together|combined|altogether|"
                   r"in all|all told|in total)\W+)?(?:they|those|these|their|them)\b)", re.I)


class Before(NamedTuple):
    """The sentence before one that points back at it."""
    stems: frozenset[str]   # its content words' stems: the groups it names
    negated: bool           # it is negated: no yes/no key's yes is named
    counts: tuple[int, ...]  # the counts in words it states ("six active cakes")


def last_sentence(text: str) -> str:
    """The last sentence of ``text`` (the answer before the sentence read)."""
    text = text.rstrip()[-600:]
    cut = max(text.rfind(". ", 0, len(text) - 1), text.rfind("\n", 0, len(text) - 1),
              text.rfind("! ", 0, len(text) - 1), text.rfind("? ", 0, len(text) - 1))
    return text[cut + 1:].strip()


def said_before(sentence: str, before: str) -> Optional[Before]:
    """The sentence before ``sentence``, where ``sentence`` opens pointing back at it and
    states no count in words of its own; None otherwise."""
    if not before or not _BACK.match(sentence) \
            or any(n.kind == "count" for n in numbers(sentence)):
        return None
    prev = last_sentence(before)
    return Before(frozenset(stem(w) for w in content_words(prev)), negated(prev),
                  tuple(int(n.value) for n in numbers(prev) if n.kind == "count"))
