"""The day of the week a date falls on, and a weekday said beside a date it does not
fall on ("Friday, March 6, 2025" where March 6, 2025 is a Thursday).

    weekday(year, month, day)         -> "thu" (None for no such date)
    weekday_changed(text, stored)     -> the day a date said beside another weekday falls
                                         on ("2025-03-06 is a Thursday"), None where each
                                         weekday said is its date's
"""

from __future__ import annotations

import datetime
import re
from typing import Collection, Optional

from guardrail.evidence.values import dates

_WEEKDAY = re.compile(r"\b(mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\.?,?"
                      r"\s+(?:the\s+)?", re.I)
_THAT_DAY = re.compile(r"\bthat (?:same )?(mon|tues|wednes|thurs|fri|satur|sun)day\b", re.I)
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def weekday(year: int, month: int, day: int) -> Optional[str]:
    """The day a date falls on ("wed"), None for no such date."""
    try:
        return DAYS[datetime.date(year, month, day).weekday()]
    except ValueError:
        return None


def weekday_changed(text: str, stored: Collection[tuple[int, int, int]],
                    before: str = "") -> Optional[str]:
    """A weekday said beside a date that falls on another day ("Friday, March 6, 2025";
    the year, when not written, from the one stored date with that month and day), or
    said of the last date of the answer before it ("... on Sunday, August 10. A courier
    will bring it between 3 and 9 PM that Saturday.")."""
    found = list(_WEEKDAY.finditer(text))
    said = dates(text)
    at = {s: d for s, _, d in said} if found else {}
    pairs = [(m[1], at.get(m.end(), (0, 0, 0))) for m in found]
    if not said and before and (that := _THAT_DAY.search(text)) and (last := dates(before)):
        pairs.append((that[1], last[-1][2]))
    for name, (y, mo, d) in pairs:
        years = {y} if y else {sy for sy, smo, sd in stored if (smo, sd) == (mo, d) and sy}
        if not d or len(years) != 1:
            continue
        year = years.pop()
        if (day := weekday(year, mo, d)) is not None and day != name[:3].lower():
            return f"{year:04d}-{mo:02d}-{d:02d} is a {_NAMES[DAYS.index(day)]}"
    return None
