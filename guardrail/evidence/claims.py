"""Does a sentence say something a context could support or not?

    is_claim(sentence)   greetings, hedges, offers, lead-ins and advice to check make no
                         claim; anything with a number or a word outside the small talk
                         vocabulary does
    works_out(sentence, at, end)  it says it worked the value at ``at:end`` out: a total, an
                         average, what a sum comes to, what is left, a value said again
                         in other units
    general(sentence)    it says what usually happens ("Refunds usually take three to
                         five days."), not what the grounding reports
"""

from __future__ import annotations

import re
from typing import Collection, Sequence

from guardrail.evidence.arithmetic import MEAN, SUM
from guardrail.evidence.values import Number
from guardrail.evidence.words import WORD, content_words, stem

META_WORDS = frozenset("""
here found find information info result results detail details help helps helpful know look
looking looked need needs anything else question questions following data search searched
summary tool tools check checked hope happy glad assist like want please feel free ask more
sure certainly course great thanks thank welcome let below above shows show provided based
available answer let's okay ok alright interesting note noted quick overview request
""".split())
_FILLER_START = re.compile(
    r"^\s*(here(?:'s| is| are)|let me|sure|certainly|of course|absolutely|great|okay|ok|"
    r"i hope|hope this|i'm happy|i am happy|i'd be happy|feel free|let me know|is there|"
    r"if you (?:have|need)|thanks|thank you|based on|according to|below|in summary|to summarize)\b",
    re.I)
_OFFER = re.compile(r"^\W*(?:just\s+)?(?:let me know|feel free|would you like|do you want|"
                    r"want me to|shall i|should i|if you(?:'d| would) like,? i can)\b", re.I)
# the assistant saying what it is about to do: "I'll look up your order now."
_INTENT = re.compile(r"^\W*(?:(?:ok(?:ay)?|sure|alright|one moment)\W+)?(?:i'll|i will|i'm "
                     r"going to|i am going to|let me|allow me to)\s+(?:now\s+|quickly\s+|"
                     r"first\s+|go ahead and\s+)?(?:search|look|check|pull|fetch|find|query|"
                     r"call|retrieve|open|run|grab|review|dig|try)\b[^:;,\u2014\u2013]*$", re.I)
_SMALL_TALK = re.compile(r"^\W*(?:(?:very |a )?good|great|excellent|fair) question\W*$|"
                         r"^\W*(?:no problem|got it|understood|you're welcome)\W*$", re.I)
# a short wish, said as one: "Enjoy your dinner!", "Safe travels!" (a longer one may
# carry a claim: "Enjoy your free upgrade to business class!")
_WISH = re.compile(r"^\W*(?:enjoy|have (?:a|an|fun)|good luck|safe travels|take care|"
                   r"bon app[eé]tit)\b[^.?!]*!\W*$", re.I)
_BECAUSE = re.compile(r",\s*(?:which|since|because|as)\b|\b(?:since|because)\b", re.I)
_CAVEAT = re.compile(  # about the data's reliability, not about the world; advice to check
    r"\b(?:could|may|might)\s+(?:be|have)\b[^.]*\b(?:out of date|outdated|inaccurate|"
    r"incomplete|changed)\b|\b(?:could|may|might) change(?: at any time| without notice)?"
    r"\W*$|\bsubject to change\b|\b(?:please|recommend|suggest|want to|be sure to)\s+"
    r"(?:verify|verifying|check|checking|confirm|confirming|double-check)\b|"
    # or opens by telling the reader to check: "Double-check with the provider before ..."
    r"^\W*(?:double[- ]check|re-?check|verify|confirm|check\s+(?:with|again|directly|"
    r"before|availability))\b", re.I)

# what usually happens: "tend to sell out", "are typically made by phone"; not a state
# ("is running normally", "finished normally") nor a frequency asked ("how often")
_GENERAL = re.compile(r"\b(?:usually|typically|generally|tends? to|in most cases|as a rule|"
                      r"more often than not|(?<!how )(?<!most )often|"
                      r"(?<![a-z]ing )(?<!finished )normally)\b", re.I)


# what most of a kind do: "Most patients with back pain notice improvement within ...";
# not what most of the records were or did ("Most boats were paid $5.25", "Most items
# arrived as ordered", "Most customers went for the basic shine")
_MOST_DO = re.compile(r"^\W*(?:most|many)\s+(?!of\b)(?:[a-z-]+\s+){0,4}?[a-z-]+s\s+"
                      r"(?:will\s+|also\s+|now\s+)?(?!(?:are|were|was|is|have|had|got|went|"
                      r"came|took|made|sold|paid|left|began|saw|gave|kept|held|won|lost|"
                      r"spent|bought|brought|chose|ran|ate|grew|rode|flew|fell|sat|stood|"
                      r"told|wrote|did|met|set|put|cost|hit|read)\b)([a-z]+)\b", re.I)


def general(sentence: str, said: Sequence[Number] = (), missing: Sequence[Number] = ()
            ) -> bool:
    """The sentence says what usually happens ("Maintenance crews usually clear faults
    like these within a day.") or what most of a kind do: a claim about the world
    beside the grounding, which a tool result, reporting what is, seldom makes
    (features.py weighs it against the words the grounding holds).  Where the grounding
    holds every value it states (``said``; none ``missing``), one at least neither a
    percentage nor a count, what most do is the grounding's ("Most walkers finish the
    trail in 6 hours" for ``typical_duration_min: 360``; "Most groups tip about 20%",
    "Most cats recover within two weeks" are no record's)."""
    valued = not missing and any(not n.percent and n.kind != "count" for n in said)
    return _GENERAL.search(sentence) is not None or not valued and bool(
        (m := _MOST_DO.search(sentence)) and not m[1].lower().endswith("ed"))


def is_claim(sentence: str) -> bool:
    """Does the sentence say something the context could support or not?  Greetings,
    hedges, offers, advice to check and lead-ins ("Here is what I found:") do not;
    anything with a number or a word outside the small talk vocabulary does."""
    text = sentence.strip()
    if not any(c.isalnum() for c in text):
        return False
    if _OFFER.match(text) and text.endswith("?") and not _BECAUSE.search(text):
        return False  # "Want me to retry it to the account ending 6789 instead?"
    if any(c.isdigit() for c in text):
        return True
    if _CAVEAT.search(text) or _OFFER.match(text) or _SMALL_TALK.match(text) \
            or _INTENT.match(text) and len(WORD.findall(text)) <= 12 \
            or _WISH.match(text) and len(WORD.findall(text)) <= 6:
        return False  # "... could be out of date.", "Let me know if ...", "Good question."
    words = content_words(text)
    rest = [w for w in words if w.lower() not in META_WORDS]
    if not rest or text.endswith("?") and len(words) <= 12:
        return False  # "Would you like the full itinerary?"
    if _FILLER_START.match(text) and text.endswith(":") and (
            len(rest) <= 3 or len(rest) <= 7 and text.lower().startswith("here")):
        return False  # "Here are the flights I found for Monday:"
    if text.endswith(":") and len(WORD.findall(text)) <= 6:
        return False  # a lead-in or heading: "From the tool response:"
    return True


_WORKED = re.compile(
    rf"{SUM.pattern}|{MEAN.pattern}|\b(?:adds? up|added up|adding up|remain\w*|still owed?|"
    r"saving|saves?|respectively|left (?:over|to)|(?:is|are|was|were|has|"
    r"have|had) (?:\w+ )?left)\b|[\d%] off\b|\bor (?:about|roughly|around|nearly|almost|"
    r"just over|just under)\b|\((?:about|roughly)\b", re.I)
# said before the value it works out: "comes to $697", "so you're owed $150"
_LEADS = re.compile(
    r"\b(?:comes? to|came to|coming to|works? out|worked out|amounts? to|that'?s|that is|"
    r"would|'d|"
    r"which is|which comes|making|so|(?:that|which|this) leaves|leaving|leaves? (?:you|us|"
    r"them|it|her|him)|means?|makes? it|puts? (?:\w+ ){0,2}at|(?:takes?|took|knocks?|"
    r"knocked) (?:\w+ )?off|(?:drops?|dropped|dropping|falls?|fell|rises?|rose|rising|climbs?|"
    r"climbed|goes up|went up|increases?|increased) to|"
    r"bring(?:s|ing)?\b(?: in|[^.;]{0,40}?\bto)|an? (?:\w+ )?(?:drop|rise|fall|increase|"
    r"decrease|gain|loss|difference|change|jump|dip|swing) of|"
    r"(?:winning margin|margin (?:over|between) \w+(?: \w+){0,3}?) (?:was|is|of|at))\b",
    re.I)
# said right after the value it works out: "eight more than", "28 flat sheets short",
# "0.13 seconds back", "87 days left", "44.3 points clear", "465 hours since then"
_TRAILS = re.compile(
    r"\s*(?:[\w$%'’-][\w$%.'’-]*\s+){0,3}?(?:"
    r"(?:more|less|fewer|higher|lower|longer|shorter|later|earlier|older|younger|cheaper|"
    r"bigger|smaller)\s+than\b|(?:short|behind|ahead|back|left|remaining|to go|to spare|"
    r"clear|since (?:then|that|the last|last))\b|"
    r"(?:over|under|above|below)(?=\s*(?:[.,;:!?)]|$|(?:the |its |your |their )?(?:target|"
    r"budget|limit|par|goal|minimum|maximum|cap|threshold|plan|forecast|estimate|expected)"
    r"\b)))", re.I)
# a sentence of rates: "Per round, the petrol buggies used about 0.72 litres, while ..."
_PER_OPENING = re.compile(r"^\W*per [a-z]+(?: [a-z]+)?,", re.I)
# sentences joined in one: "Parts add up to $269, and labor is 3 hours" works out only its
# first part's value
_JOINED = re.compile(r";\s+|,\s+(?:and|but|while|whereas|although|though)\s+", re.I)


def part_of(sentence: str, at: int) -> tuple[int, int]:
    """The bounds of the part of a joined sentence that holds offset ``at`` (its end one
    past the sentence's where it is the last part)."""
    cuts = [0, *(m.end() for m in _JOINED.finditer(sentence)), len(sentence) + 1]
    return max(c for c in cuts if c <= at), min(c for c in cuts if c > at)


def works_out(sentence: str, at: int, end: int, keys: Collection[str] = ()) -> bool:
    """Does the sentence say that it worked the value at ``at:end`` out ("in
    total", "comes to", "so you're owed", "or about 907 kg", "eight more than")?  Only
    the part of a joined sentence that holds the value counts, a word that leads to a
    result ("comes to", "so") only before it, and a comparison only right after it.  A
    value such a sentence gives that the grounding lacks is most often arithmetic no
    rule reproduced, not a value changed: over the 69 hand-written sets of tool turns,
    383 supported claims and 66 unsupported ones (``scripts/claim_bases.py``;
    docs/model-card.md, "Worked-out values the rules cannot reproduce").  A part that
    names a total, an average or what remains that the grounding holds as a key
    (``keys``: its keys' stems) says that field's value, worked out or not: "The total
    came to 429 EUR" for ``total_eur: 249.9`` is a value changed."""
    start, stop = part_of(sentence, at)
    worded = [m[0] for m in _WORKED.finditer(sentence, start, stop)]
    if any(w.isalpha() and stem(w.lower()) in keys for w in worded):
        return False
    return bool(worded or _LEADS.search(sentence, start, at)
                or _TRAILS.match(sentence[:stop], end) or _PER_OPENING.match(sentence))


_ASKS_VALUE = re.compile(  # "when" asked, not "what happens when I cancel"
    r"\b(?:when (?:is|was|were|are|did|does|do|will|can|could|should|would|has|have|had)|"
    r"what (?:year|date|time|day)|which (?:year|date|day)|how (?:many|much|long|tall|high|"
    r"far|old|big|large|often|fast|heavy|deep|wide|soon|late|early))\b", re.I)


def asks_value(question: str) -> bool:
    """The question asks for a value: a date or time ("When was it built?"), a count or a
    quantity ("How tall is it?").  A value the grounding lacks in the answer is then the
    answer said otherwise, not a detail it adds (``judge.explain``)."""
    return bool(_ASKS_VALUE.search(question))
