"""Values as answers write them and as tool results store them: numbers, times, dates,
durations, counts (how a text lists things and its records: listing.py).

    numbers(text)     every value, each one unit: times, dates and durations first, then
                      numbers (``1,200``, ``about 1.2 million``, ``25%``; not "out of 10")
    (what a tool result stores, normalised for matching these: stored.py)
    times(text)       "1 PM", "6:30 a.m.", "16:45", "noon"      -> minutes after midnight
    dates(text)       "March 1, 2024", "1 March", "Oct. 18"      -> (year or 0, month, day or 0)
    durations(text)   "1 hour 33 minutes", "2 hours"             -> minutes

A sentence's "1 PM" is one value, 13:00, not the number 1: read as a number it is
missing from a context that stores ``13:00`` and the sentence looks changed.  Counts are
matched only by counts written in words ("four events"): the small integers they add
would otherwise let any fabricated digit pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guardrail.evidence.currency import code_sign
from guardrail.evidence.eras import eras

MONTHS = {name[:3]: i for i, name in enumerate(
    "january february march april may june july august september october november december"
    .split(), 1)}
_MONTH = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|" \
         r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_DATE_MD = re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!:\d){_YEAR}", re.I)  # "May 2:" is a date
_DATE_DM = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}\b", re.I)
_DAY_RANGE_END = re.compile(r"\s*(?:-|–|to|through|thru)\s*(\d{1,2})(?:st|nd|rd|th)?\b"
                            r"(?![:.,]\d|\s*(?:[AaPp]\.?[Mm]\b|%))(?:,?\s+(?P<year>\d{4})\b)?")
# a second day of the month after "and": "the nights of July 18 and 19", "April 26 and
# 27, about" (a few days on, and no noun after it: "July 18 and 19 guests" is a count)
_DAY_AND_END = re.compile(r"\s*(?:and|or|&)\s*(\d{1,2})(?:st|nd|rd|th)?(?=\s*(?:[,.;:)!?]|$)|"
                          r"\s+(?:at|in|on|when|for|with|from|and|but|before|after|only|that|"
                          r"which|is|are|was|were|will|so|to|while)\b)"
                          r"(?:,?\s+(?P<year>\d{4})\b)?")
# more days of the month in a list: "May 1, 8, 15, 22, and 30" (ending "and"/"or" a day)
_DAY_LIST = re.compile(r"(?:,\s*\d{1,2}(?:st|nd|rd|th)?\b){1,12},?\s*(?:and|or|&)\s*\d{1,2}"
                       r"(?:st|nd|rd|th)?\b(?![:.,]\d|\s*(?:[AaPp]\.?[Mm]\b|%))")
# a day of the month by its ordinal alone, month 0 (any): "on the 23rd", "Wednesday the
# 17th", "by the 6th, 13th and 20th" (a stored day number matches it too, stored.py)
_TH = r"(?:st|nd|rd|th)\b"
_ORDINAL_DAY = re.compile(rf"\b(?:(?:on|by|until|till|from|through|before|after|since) the|(?:mon|"
                          rf"tues|wednes|thurs|fri|satur|sun)day,?(?: the)?)\s+(\d{{1,2}}){_TH}"
                          rf"((?:,?\s+(?:and\s+|or\s+)?(?:the\s+)?\d{{1,2}}{_TH})*)"
                          r"(?!\s+(?:floor|row|place|level|hole|round|lap|seed|tier|stage|"
                          r"step|gate|platform|inning|period|game|leg|shelf|aisle|deck|day|"
                          r"week|month|year|time|try|attempt|percentile)s?\b)",  # "3rd floor"
                          re.I)
_DATE_MY = re.compile(rf"\b{_MONTH}\s+(?P<year>\d{{4}})\b", re.I)
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?")
# a web server's log line (Common Log Format): "12/Mar/2024:14:02:11 +0000"
LOG_DATE = re.compile(rf"\b(?P<day>[0-3]?\d)/{_MONTH}/(?P<year>\d{{4}})"
                       r"(?::(?P<h>[01]\d|2[0-3]):(?P<mi>[0-5]\d)(?::[0-5]\d)?)?", re.I)
_TIME_12 = re.compile(r"(?<![:\d])\b(1[0-2]|0?[1-9])(?:[:.]([0-5]\d)(?::([0-5]\d))?)?"
                      r"\s*([ap])\.?\s?m\b\.?", re.I)  # "10:19:05 AM" whole, not "05 AM"
_TIME_24 = re.compile(r"(?<![\d:.\-+])([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?![\d:])")
# minutes and seconds past any hour of a day ("52:06" for a run): one value, as "3:10" is
_CLOCK_SPAN = re.compile(r"(?<![\d:.\-+])(2[4-9]|[3-9]\d|1\d\d):([0-5]\d)(?![\d:]|\.\d)")
_TIME_WORD = re.compile(r"\b(noon|midday|midnight)\b", re.I)
# the start of a range whose end carries the meridiem: "from 2:30 to 4:25 PM", "1-3 pm"
_RANGE_START = re.compile(r"\b(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*(?:to|until|till|and|or|-|–|—)\s*$",
                          re.I)
_LIST_START = re.compile(r"\b(1[0-2]|0?[1-9]):([0-5]\d),\s*$")  # "2:45, 3:00 and 3:30 PM"
_MONTH_BEFORE = re.compile(rf"\b{_MONTH}\s+$", re.I)
_WORD_NUMBERS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split()) if i >= 2}
_TENS = {w: 10.0 * i for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_WORD_NUMBERS.update(_TENS, zero=0.0, hundred=100.0, dozen=12.0)
_ONES = "one two three four five six seven eight nine".split()
# hours and minutes in words, as digits are read: "two hours and fifteen minutes" (1-59)
_SAID = ["one"] + [w for w, v in _WORD_NUMBERS.items()
                 if w != "dozen" and (2 <= v <= 20 or v in (30, 40, 50))]
_SAID_N = rf"(?:(?:twenty|thirty|forty|fifty)[- ](?:{'|'.join(_ONES)})|{'|'.join(_SAID)})"
_DURATION = re.compile(  # hours in words only with their minutes: "eight hours" is a count
    rf"\b(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|{_SAID_N}(?=\s+hours?,?\s+(?:and\s+)?"
    rf"(?:\d+|{_SAID_N})\s+minutes?\b))\s*(?:hours?|hrs?|h)\b"
    rf"(?:,?\s*(?:and\s+)?(\d+|{_SAID_N})\s*(?:minutes?|mins?)\b"
    r"(?:,?\s*(?:and\s+)?(\d{1,2})\s*(?:seconds?|secs?)\b)?)?", re.I)
_RANGE_24 = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)\s?[-–]\s?(?P<end>([01]?\d|2[0-3]):"
                       r"([0-5]\d))(?![\d:])")
# minutes with their seconds, one span: "17 minutes and 36 seconds", "4 min 8 s", "2m 05s"
_MIN_SEC = re.compile(r"\b(\d{1,4})\s*(?:minutes?|mins?|m)\b,?\s*(?:and\s+)?(\d{1,2})\s*"
                      r"(?:seconds?|secs?|s)\b", re.I)
# "an hour" alone is often a rate ("$3 an hour"): only with its minutes, or halved
_HOUR_WORDS = re.compile(
    rf"\b(half an hour)\b|\ban hour and (?:(a half)|(\d+|{_SAID_N}) minutes?)\b", re.I)
Span = tuple[int, int]


def times(text: str) -> list[tuple[int, int, float]]:
    """(start, end, minutes after midnight) for each time of day in ``text``."""
    out: list[tuple[int, int, float]] = []
    for m in _TIME_12.finditer(text):
        h = int(m[1]) % 12 + (12 if m[4].lower() == "p" else 0)
        end = h * 60 + int(m[2] or 0) + int(m[3] or 0) / 60
        out.append((m.start(), m.end(), end))
        if r := _RANGE_START.search(text, max(0, m.start() - 16), m.start()):
            if r.start() and text[r.start() - 1] in ":." or _MONTH_BEFORE.search(
                    text, 0, r.start()):
                continue  # a decimal ("2.5 to 3 pm") or a day ("December 6 until 9 AM")
            start = int(r[1]) % 12 * 60 + int(r[2] or 0)
            # the range's meridiem, unless that puts the start after the end ("11 to 1 PM")
            start += 720 if m[4].lower() == "p" and start + 720 <= end else 0
            out.append((r.start(1), r.end(2) if r[2] else r.end(1), start))
            while r[2] and (r := _LIST_START.search(text, max(0, r.start() - 8), r.start())):
                earlier = int(r[1]) % 12 * 60 + int(r[2])  # a list's earlier times, each
                earlier += 720 if m[4].lower() == "p" and earlier + 720 <= start else 0
                if earlier >= start:  # before the next
                    break
                out.append((r.start(1), r.end(2), earlier))
                start = earlier
    taken = [(s, e) for s, e, _ in out]
    for m in _TIME_24.finditer(text):  # with its seconds, if written: "3:17:14"
        if not _inside(m.start(), taken):
            out.append((m.start(), m.end(), int(m[1]) * 60 + int(m[2]) + int(m[3] or 0) / 60))
    out += [(m.start(), m.end(), int(m[1]) * 60 + int(m[2])) for m in _CLOCK_SPAN.finditer(text)]
    for m in _RANGE_24.finditer(text):  # "10:00-18:00", "05:15-05:45": its end, if later
        end = int(m[4]) * 60 + int(m[5])  # (no zone: "+05:00")
        if end > int(m[1]) * 60 + int(m[2]) and not _inside(
                m.start("end"), [(s, e) for s, e, _ in out]):
            out.append((m.start("end"), m.end("end"), end))
    for m in _TIME_WORD.finditer(text):
        out.append((m.start(), m.end(), 0 if m[1].lower() == "midnight" else 720))
    return sorted(out)


def dates(text: str) -> list[tuple[int, int, tuple[int, int, int]]]:
    """(start, end, (year or 0, month, day or 0)) for each date in ``text``."""
    out: list[tuple[int, int, tuple[int, int, int]]] = []
    for m in ISO_DATE.finditer(text):
        out.append((m.start(), m.start() + 10, (int(m[1]), int(m[2]), int(m[3]))))
    for m in LOG_DATE.finditer(text):  # its time of day: ``stored.stored_times``
        if (mon := MONTHS.get(m["mon"].lower()[:3])) and 1 <= int(m["day"]) <= 31:
            out.append((m.start(), m.end(), (int(m["year"]), mon, int(m["day"]))))
    for rx in (_DATE_MD, _DATE_DM, _DATE_MY):
        for m in rx.finditer(text):
            if _inside(m.start(), [(s, e) for s, e, _ in out]):
                continue
            mon = MONTHS.get(m["mon"].lower()[:3])
            day = int(m.groupdict().get("day") or 0)
            if mon is None or day > 31 or (m["mon"].lower() == "may" and m.start() > 0
                                           and rx is _DATE_MD and not m["year"]
                                           and text[m.start()].islower()):
                continue  # "it may 3 ..." is not a date
            out.append((m.start(), m.end(), (int(m["year"] or 0), mon, day)))
            if rx is _DATE_MD and day and not m["year"] and (day < int(
                    (r := _DAY_RANGE_END.match(text, m.end())) and r[1] or 0) <= 31 or day < int(
                    (r := _DAY_AND_END.match(text, m.end())) and r[1] or 0) <= min(31, day + 7)):
                out.append((r.start(1), r.end(), (int(r["year"] or 0), mon, int(r[1]))))
                #            "November 8-9", "April 1 through 15", "July 18 and 19"
            if rx is _DATE_MD and day and not m["year"] and (r := _DAY_LIST.match(text, m.end())):
                listed = [(d.start() + r.start(), d.end() + r.start(), int(d[0]))
                          for d in re.finditer(r"\d{1,2}", r[0])]
                if all(a[2] < b[2] for a, b in zip([(0, 0, day)] + listed, listed)) \
                        and listed[-1][2] <= 31:
                    out += [(a, b, (0, mon, d)) for a, b, d in listed]
    for m in _ORDINAL_DAY.finditer(text):
        days = [(m.start(1), m.end(1), int(m[1]))] + [
            (d.start() + m.start(2), d.end() + m.start(2), int(d[0]))
            for d in re.finditer(r"\d{1,2}", m[2] or "")]
        out += [(a, b, (0, 0, d)) for a, b, d in days if 1 <= d <= 31
                and not _inside(a, [(s, e) for s, e, _ in out])]
    return sorted(out)


def durations(text: str) -> list[tuple[int, int, float]]:
    """(start, end, minutes) for "1 hour 33 minutes", "2 hours", "1.5 h", "an hour and 15
    minutes", "an hour and a half", "half an hour"."""
    out = [(m.start(), m.end(), _said(m[1]) * 60 + _said(m[2] or "0") + int(m[3] or 0) / 60)
           for m in _DURATION.finditer(text)]
    out += [(m.start(), m.end(), int(m[1]) + int(m[2]) / 60) for m in _MIN_SEC.finditer(text)
            if not _inside(m.start(), [(a, b) for a, b, _ in out])]  # "2 hours 17 minutes"
    return sorted(out + [(m.start(), m.end(),
                          30.0 if m[1] else 90.0 if m[2] else 60.0 + _said(m[3]))
                         for m in _HOUR_WORDS.finditer(text)])


def _said(value: str) -> float:
    """A number of hours or minutes, in digits or words ("1,5", "forty-five")."""
    if value[0].isdigit():
        return float(value.replace(",", ""))
    *tens, last = re.split(r"[- ]", value.lower())
    return sum(_TENS[t] for t in tens) + (1.0 if last == "one" else _WORD_NUMBERS[last])


def _inside(pos: int, spans: list[Span]) -> bool:
    return any(s <= pos < e for s, e in spans)


def masked(text: str, spans: list[Span]) -> str:
    """``text`` with ``spans`` blanked out (same length, so offsets still hold)."""
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


_NUMBER = re.compile(  # both sides of a size: "4x14 ft", "1920x1080" (not hex: "0x7ff3")
    r"(?:(?<![\w.])|(?<=\d[xX])(?=\d+(?:\.\d+)?(?:[xX]\d|(?!\w))))"
    r"(?P<sign>[-−])?[$€£¥]?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s*(?P<scale>thousand|million|billion|trillion)\b|(?P<abbr>k|bn|mn)\b"
    r"|(?P<cap>(?-i:[MB]))\b)?"  # "$1.2B", "3.4M users": capitals only ("400m" is metres)
    r"(?P<pct>\s*%| percent| per cent)?",
    re.I)
_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9,
           "bn": 1e9, "b": 1e9, "trillion": 1e12}
_FRACTION = re.compile(r"\s+(halves|thirds|quarters|fifths)\b", re.I)  # "three quarters"
_AND_A_PART = re.compile(r"\s+and\s+a\s+(half|quarter)\b", re.I)
_OF_YOU = re.compile(r" of (?:you|us)\b", re.I)  # "the five of you": a party's size
_SPANNED = re.compile(r"-(?:second|minute|hour|day|night|week|month|year)s?\b", re.I)
_HALVES = {"half": 0.5, "quarter": 0.25}
_PARTS = {"halves": 2.0, "thirds": 3.0, "quarters": 4.0, "fifths": 5.0}
# "thirty-five" is 35, not the count five
_NUMBER_WORD = re.compile(r"\b(?:(" + "|".join(_TENS) + r")[- ](" + "|".join(_ONES) + r")|("
                          + "|".join(_WORD_NUMBERS) + r"))\b", re.I)
ANY_VALUE = re.compile(r"\d|noon|midday|midnight|" + "|".join(_WORD_NUMBERS), re.I)
PARTS = re.compile(r";\s+|\s+·\s+")
"""Between the parts of one rendered line: a table row's cells, a search snippet's fields."""
_TZ_OFFSET = re.compile(  # a time's zone: "14:00:00+02:00", "14:00 +02:00", "UTC+2"
    r"(?:(?<=\d:\d\d)|(?<=\d:\d\d ))[+\-−]\d{2}:\d{2}\b"
    r"|\b(?:UTC|GMT)[+\-−]\d{1,2}(?::\d{2})?\b(?!\.\d)")
_DOTTED = re.compile(r"\.\d")
_CENTS = re.compile(r"\s?(?:cents?\b|¢)", re.I)
_NAME_SUFFIX = re.compile(r"\([a-z]\)")  # 401(k), 403(b)
_VAGUE = re.compile(r"\b(?:a couple(?: of)?|a few|several|many)\s+$", re.I)
_PER_BASE = re.compile(r"\bper\s+$", re.I)
_SCALE_OF = re.compile(r"(\bout of\s+|\d\s*/\s*)$", re.I)
# a span said roughly either way ("just over 11 hours" is no 10.2 hours)
_ABOUT = re.compile(r"\b(about|around|approximately|roughly|~)\s*$", re.I)
# said roughly, as opposed to a bound ("over $25,000"): the trailing zeros are rounding
_ROUNDING = re.compile(r"\b(about|around|approximately|roughly|nearly|almost|some|close to|"
                       r"~)\s*$", re.I)


def _round_unit(v: float) -> float:
    """The unit a whole number said roughly is rounded to: its last digit that is not
    zero (1,700 -> 100; 30,000 -> 10,000; 1,718 -> 1)."""
    whole, unit = int(abs(v)), 1
    while whole and whole % (unit * 10) == 0:
        unit *= 10
    return float(unit)


HEDGES = re.compile(r"\b(about|around|approximately|roughly|nearly|almost|over|under|just after|"
                     r"just before|shortly after|shortly before|"
                     r"more than|less than|some|close to|just over|just under|~)\s*$", re.I)


@dataclass(frozen=True)
class Number:
    value: float
    start: int
    end: int
    precision: float   # half a unit of the last written digit, scaled
    hedged: bool       # "about 1.2 million"
    percent: bool
    kind: str = "number"   # "number" | "time" (minutes) | "date" (y*10000+m*100+d) |
    #                        "duration" (minutes) | "count" (a number written as a word) |
    #                        "era" (years: a century or a decade, eras.py)


def numbers(text: str) -> list[Number]:
    """Every value ``text`` writes: times, dates and durations as one value each, then
    the numbers left (``1,200``, ``about 1.2 million``, ``25%``)."""
    out = []
    for s, e, minutes in times(text):  # "around 2:29 AM" is an estimate, and so is "midday"
        out.append(Number(float(minutes), s, e, 0.5, bool(HEDGES.search(text[max(0, s - 16):s]))
                          or text[s:e].lower() == "midday", False, "time"))
    spans = eras(text)  # "the 1980s": 1980 to 1989; "by the 14th century" is no day
    for s, e, first, last in spans:
        out.append(Number((first + last) / 2, s, e, (last - first) / 2, False, False, "era"))
    for s, e, (y, mo, d) in dates(text):
        if any(s < b and a < e for a, b, _, _ in spans):
            continue
        out.append(Number(float(y * 10000 + mo * 100 + d), s, e, 0.5, False, False, "date"))
    for s, e, minutes in durations(text):
        # "1.2 hours" is 72 minutes give or take 3: half its last written digit
        hours = _DURATION.match(text, s)
        digits = hours[1].partition(".")[2] if hours and not hours[2] else ""
        seconds = _MIN_SEC.match(text, s) is not None or bool(hours and hours[3])  # to 1/2 s
        out.append(Number(minutes, s, e, 30 * 10.0 ** -len(digits) if digits else
                          1 / 120 if seconds else 0.5,
                          bool(_ABOUT.search(text[max(0, s - 16):s])), False, "duration"))
    offsets = [m.span() for m in _TZ_OFFSET.finditer(text)]  # "+02:00" is no value
    written, text = text, masked(text, [(n.start, n.end) for n in out] + offsets)
    for m in _NUMBER.finditer(text):
        if _SCALE_OF.search(text[max(0, m.start() - 8):m.start()]):
            continue  # "4.2 out of 5": the scale is no claim
        if _DOTTED.match(text, m.end()) or _NAME_SUFFIX.match(text, m.end()):
            continue  # a version, an address ("2.14.0", "104.18.22.140"), a "401(k)": names
        if _PER_BASE.search(text[max(0, m.start() - 5):m.start()]):
            continue  # "11 L per 100 km": the base of a rate
        raw = m["num"].replace(",", "")
        try:
            v = float(raw)
        except ValueError:
            continue
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        unit = 10.0 ** -decimals
        scale = m["scale"] or m["abbr"] or m["cap"]
        if scale:
            f = _SCALES[scale.lower()]
            v, unit = v * f, unit * f
        if m["sign"] and not written[max(0, m.start() - 1):m.start()].isdigit():
            v = -v  # "November 8-9" is a range, not -9
        if _CENTS.match(text, m.end()):  # "48 cents" is the 0.48 a price field holds
            v, unit = v / 100, unit / 100
        hedged = bool(HEDGES.search(text[max(0, m.start() - 16):m.start()]))
        if not decimals and not scale and v and _ROUNDING.search(
                text[max(0, m.start() - 16):m.start()]):
            unit = _round_unit(v)  # "about 1,700 miles": to the hundred, so 1,718 is it
        if (h := _AND_A_PART.match(text, m.end())) and not decimals and not scale:
            out.append(Number(v + _HALVES[h[1].lower()], m.start(), h.end(), 0.05, hedged,
                              False))  # "26 and a half minutes"
            continue
        out.append(Number(v, m.start(), m.end(), unit / 2, hedged, bool(m["pct"])))
    for m in _NUMBER_WORD.finditer(text):  # "four events", "a four-hour block" (not "one of
        #                                    the ...", "two-factor")
        if m[1]:
            value = _WORD_NUMBERS[m[1].lower()] + _ONES.index(m[2].lower()) + 1
        elif text[m.end():m.end() + 3].startswith((" of", "-")) and not _SPANNED.match(
                text, m.end()) and not _OF_YOU.match(text, m.end()) or m[3] and _VAGUE.search(
                text[max(0, m.start() - 12):m.start()]):
            continue  # "one of the ..."; "a couple hundred messages", "a few dozen"
        elif h := _AND_A_PART.match(text, m.end()):  # "four and a half days"
            value = _WORD_NUMBERS[m[3].lower()] + _HALVES[h[1].lower()]
            out.append(Number(value, m.start(), h.end(), 0.05, False, False))
            continue
        elif f := _FRACTION.match(text, m.end()):  # a share, said roughly
            value = _WORD_NUMBERS[m[3].lower()] / _PARTS[f[1].lower()]
            out.append(Number(value, m.start(), f.end(), 0.01, True, False))
            continue
        else:
            value = _WORD_NUMBERS[m[3].lower()]
        out.append(Number(value, m.start(), m.end(), 0.0, False, False, "count"))  # exact
    return sorted(out, key=lambda n: n.start)


_PARTITIVE = re.compile(r"\b(\d+|" + "|".join(w for w, v in _WORD_NUMBERS.items() if 2 <= v <= 20)
                        + r")\s+of\b", re.I)


_SMALL = r"(\d+|" + "|".join(w for w, v in _WORD_NUMBERS.items() if 1 <= v <= 20) + r")"
_PART_OF = re.compile(rf"\b{_SMALL}\s+of\s+(?:(?:the|its|their|your|his|her|our|these|"
                      rf"those|all)\s+)?(?:(?:[A-Za-z-]+\s+)?[A-Za-z-]+['’]s\s+)?"
                      rf"{_SMALL}\b", re.I)


def partitive(text: str, before: int) -> list[int]:
    """The sizes of the parts ``text`` counts before ``before`` ("Three of your six
    claims", "2 of the invoices"), which ``numbers`` leaves out: a part is no count of a
    thing the grounding would hold."""
    return [_count(m[1]) for m in _PARTITIVE.finditer(text, 0, before)]


def parts_of(text: str) -> list[tuple[int, int, int]]:
    """Each part of a whole that ``text`` counts, in digits or words ("2 of 3 replicas",
    "Five of the six towers", "two of last week's nine"): (part, whole, its end)."""
    return [(_count(m[1]), _count(m[2]), m.end()) for m in _PART_OF.finditer(text)]


def _count(word: str) -> int:
    return int(word) if word.isdigit() else int(_WORD_NUMBERS[word.lower()])


def word_after(text: str, n: Number) -> str:
    """The word right after a value, lower case: its unit or what it counts ("330
    metres", "12 stores", "144 kWh"); "" for none."""
    m = _WORD_AFTER.match(text, n.end)
    return m[1].lower() if m else ""


CURRENCY_SIGNS = frozenset("$€£¥¤")  # "¤": a currency written by its code ("CHF 152.00")


def sort_of(sentence: str, n: Number) -> str:
    """What a value is of: the currency sign (or code) before it, or the word after it."""
    if n.kind != "number":
        return n.kind
    sign = next((c for c in sentence[max(0, n.start - 1):n.start + 1] if c in CURRENCY_SIGNS), "")
    return sign or code_sign(sentence[max(0, n.start - 4):n.start], word_after(sentence, n))


_WORD_AFTER = re.compile(r"\s*([A-Za-z]+)")
