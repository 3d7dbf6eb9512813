"""Centuries and decades, each a span of years.

    eras(text)   "the 12th century", "the twelfth century", "the 1100s", "the 1980s"
                 -> (start, end, first year, last year)

An answer says the years a text gives as the era that holds them: "built in the 1980s"
for ``year_built: 1987``, "founded in the late 12th century" for "in the late 1100s".
Read as numbers, "1980s" is 1980 and "12th century" is 12, and neither is in the text,
so a right sentence looks changed.  An era is read as its span of years instead
(values.numbers gives it as one value, kind ``era``: the middle of the span, give or
take half of it), and a text that names an era stores its first year
(stored.StoredValues), so that "the 1100s" and "the 12th century" say the same.
A year outside the span ("the 1990s" for 1987) stays missing.  What narrows the span
("late", "mid-") is not read: "the late 1980s" passes for 1981.
"""

from __future__ import annotations

import re

_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
             "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth "
             "nineteenth twentieth").split()
# "the 12th century", "the 14th and 15th centuries", "the twelfth-century abbey"
_CENTURY = re.compile(r"\b(?:(\d{1,2})(?:st|nd|rd|th)|(twenty-first|" + "|".join(_ORDINALS)
                      + r"))\b(?=[\w\s-]{0,30}?\bcentur)", re.I)
# "the 1980s", "the 1100s" (a century's hundred years), not "the '80s" (which century?)
_DECADE = re.compile(r"(?<!['’\d.,])\b(\d{2,3}0)s\b")


def eras(text: str) -> list[tuple[int, int, int, int]]:
    """Every century and decade ``text`` names: (start, end, first year, last year)."""
    found = []
    for m in _CENTURY.finditer(text):
        c = int(m[1]) if m[1] else (21 if m[2].lower() == "twenty-first"
                                    else _ORDINALS.index(m[2].lower()) + 1)
        if 1 < c <= 21:  # "the 1st century" starts at the year 1, no year anyone stores
            found.append((m.start(), m.end(), (c - 1) * 100, (c - 1) * 100 + 99))
    for m in _DECADE.finditer(text):
        y = int(m[1])
        found.append((m.start(), m.end(), y, y + (99 if y % 100 == 0 else 9)))
    return found
