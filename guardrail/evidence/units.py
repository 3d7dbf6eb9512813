"""Units of measure: a value converted ("330 m" -> "1,083 feet") or given another unit.

    unit_after(text, number)    the unit written after a value: "330 metres", "25 °C"
    unit_written(text, number)  the unit named there, a rate's too ("45 kg per hole")
    unit_end(text, number)      where that unit ends
    key_unit(key)               the unit a tool result's key names: ``height_m``, "High (°C)"
    Quantities(lines)           once per grounding: every value with a unit, by line
    quantities.check(s, nums)   -> UnitCheck: values found converted, a unit changed

Assistants convert what a tool returns (``"height_m": 330`` -> "about 1,083 feet tall",
``"high_c": 25`` -> "77 °F"), and a value the context lacks looks made up to the value
lookups of features.py.  The reverse is a real hallucination that those lookups pass:
the number is right and the unit is not ("330 feet", "7,300 kilograms" against
``weight_tonnes: 7300``), or the number is converted and the unit is a thousand times
off ("1.8 MiB" for ``memory_mib: 1843``).  Only units of one dimension are compared; a
unit that names two things ("pounds": mass or money) converts, and counts as changed only
where it is weighed ("weighs 4.8 pounds") or a mass of a thing ("2.5 pounds of clay").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Collection, Optional, Sequence

from guardrail.evidence.values import HEDGES, PARTS, Number, numbers


@dataclass(frozen=True)
class Unit:
    name: str
    dim: str
    factor: float           # to the dimension's base unit
    offset: float = 0.0     # temperatures: base = value * factor + offset
    ambiguous: bool = False

    def to(self, value: float, other: "Unit") -> float:
        return (value * self.factor + self.offset - other.offset) / other.factor


_ROWS = (  # dimension, name, base factor, spellings (lower case; "|" between them)
    ("length", "um", 1e-6, "µm|μm|um|micron|micrometer|micrometre"),
    ("length", "mil", 2.54e-5, "mils|thousandths of an inch"),  # "mil" alone: a million
    ("length", "mm", 1e-3, "mm|millimeter|millimetre"),
    ("length", "cm", 1e-2, "cm|centimeter|centimetre"),
    ("length", "m", 1.0, "m|meter|metre"),
    ("length", "km", 1e3, "km|kilometer|kilometre"),
    ("length", "in", 0.0254, "inch|inches"),
    ("length", "ft", 0.3048, "ft|foot|feet"),
    ("length", "yd", 0.9144, "yd|yard"),
    ("length", "mi", 1609.344, "mi|mile"),
    ("length", "nmi", 1852.0, "nmi|nm|nautical mile"),  # ``distance_nm``; not nanometres
    ("mass", "mg", 1e-6, "mg|milligram"),
    ("mass", "g", 1e-3, "g|gram"),
    ("mass", "kg", 1.0, "kg|kgs|kilogram|kilo"),
    ("mass", "t", 1e3, "tonne|metric ton|metric tons"),
    ("mass", "lb", 0.45359237, "lb|lbs"),
    ("mass", "short ton", 907.18474, "short ton|short tons|us ton|us tons"),
    ("mass", "oz", 0.028349523, "oz|ounce"),
    ("volume", "ml", 1e-3, "ml|milliliter|millilitre"),
    ("volume", "l", 1.0, "l|liter|litre"),
    ("volume", "gal", 3.785411784, "gal|gallon"),
    ("speed", "km/h", 1.0, "km/h|kph|kmh|kilometer per hour|kilometre per hour"),
    ("speed", "mph", 1.609344, "mph|mile per hour"),
    ("speed", "m/s", 3.6, "m/s|meter per second|metre per second"),
    ("speed", "kn", 1.852, "knot|kt|kn"),
    ("data", "kb", 1e3, "kb|kilobyte"),
    ("data", "mb", 1e6, "mb|megabyte"),
    ("data", "gb", 1e9, "gb|gigabyte"),
    ("data", "tb", 1e12, "tb|terabyte"),
    ("data", "kib", 1024.0, "kib|kibibyte"),
    ("data", "mib", 1048576.0, "mib|mebibyte"),
    ("data", "gib", 1073741824.0, "gib|gibibyte"),
    ("data", "tib", 1099511627776.0, "tib|tebibyte"),
    ("area", "m2", 1.0, "m²|m2|sq m|sqm|square meter|square metre"),
    ("area", "km2", 1e6, "km²|km2|sq km|square kilometer|square kilometre"),
    ("area", "ft2", 0.09290304, "ft²|sq ft|sqft|square feet|square foot"),
    ("area", "ha", 1e4, "ha|hectare"),
    ("area", "acre", 4046.8564224, "acre"),
    ("concentration", "ug/m3", 1.0, "µg/m³|μg/m³|ug/m3|µg/m3|μg/m3|ug/m³|"
     "microgram per cubic meter|microgram per cubic metre"),
    ("concentration", "mg/m3", 1e3, "mg/m³|mg/m3|milligram per cubic meter|"
     "milligram per cubic metre"),
    ("power", "w", 1.0, "w|watt"),
    ("power", "kw", 1e3, "kw|kilowatt"),
    ("power", "mw", 1e6, "mw|megawatt"),
    ("power", "hp", 745.6998716, "hp|horsepower"),
    ("voltage", "mv", 1e-3, "mv|millivolt"),
    ("voltage", "v", 1.0, "v|volt"),
    ("voltage", "kv", 1e3, "kv|kilovolt"),
    ("current", "ma", 1e-3, "ma|milliamp|milliampere"),
    ("current", "a", 1.0, "amp|amps|ampere"),
    ("frequency", "hz", 1.0, "hz|hertz"),
    ("frequency", "khz", 1e3, "khz|kilohertz"),
    ("frequency", "mhz", 1e6, "mhz|megahertz"),
    ("frequency", "ghz", 1e9, "ghz|gigahertz"),
    ("pressure", "kpa", 1.0, "kpa|kilopascal"),
    ("pressure", "hpa", 0.1, "hpa|hectopascal|mbar|millibar"),
    ("pressure", "bar", 100.0, "bar"),
    ("pressure", "psi", 6.894757, "psi"),
    ("energy", "kwh", 1.0, "kwh|kilowatt-hour|kilowatt-hours|kilowatt hour"),
    ("energy", "wh", 1e-3, "wh|watt-hour|watt hour"),
    ("energy", "mwh", 1e3, "mwh|megawatt-hour|megawatt-hours|megawatt hour"),
    ("time", "ms", 1e-3, "ms|millisecond"),
    ("time", "s", 1.0, "sec|secs|second"),
    ("time", "min", 60.0, "min|mins|minute"),
    ("time", "h", 3600.0, "hr|hrs|hour"),
    ("time", "day", 86400.0, "day|days"),
    ("time", "week", 604800.0, "week"),
    ("time", "month", 2629800.0, "months|mos"),   # plural only: a key's "year" is a date's
    ("time", "year", 31557600.0, "years|yrs"),
    ("temperature", "°c", 1.0, "°c|ºc|° c|degrees c|degrees celsius|celsius|"
     "degrees centigrade"),
    ("temperature", "°f", 5 / 9, "°f|ºf|° f|degrees f|degrees fahrenheit|fahrenheit"),
    ("temperature", "k", 1.0, "kelvin"),
)
_OFFSETS = {"°f": -160 / 9, "k": -273.15}
_AMBIGUOUS = {"pound": ("lb", "mass", 0.45359237),   # mass, or money
              "ton": ("t", "mass", 1e3)}             # metric or short


def _plural(spelling: str) -> Optional[str]:
    """"mile per hour" -> "miles per hour", "kilogram" -> "kilograms"; None for a
    symbol or a word without a plural in "s" ("°c", "feet", "celsius")."""
    head, sep, rest = spelling.partition(" per ")
    words = head.split(" ")
    last = words[-1]
    if len(last) < 4 or not last.isalpha() or last.endswith(
            ("s", "ft", "feet", "foot", "celsius", "fahrenheit", "centigrade")):
        return None
    words[-1] += "es" if last.endswith("ch") else "s"
    return " ".join(words) + sep + rest


def _table() -> dict[str, Unit]:
    table: dict[str, Unit] = {}
    for dim, name, factor, spellings in _ROWS:
        unit = Unit(name, dim, factor, _OFFSETS.get(name, 0.0))
        for s in spellings.split("|"):
            table[s] = unit
            if (plural := _plural(s)) is not None:
                table[plural] = unit
    for s, (name, dim, factor) in _AMBIGUOUS.items():
        table[s] = table[s + "s"] = Unit(name, dim, factor, ambiguous=True)
    return table


UNITS = _table()
_AFTER = re.compile(r"\s?-?\s?(?:of an? )?(" + "|".join(  # "5,000-square-foot lot"
    re.escape(s).replace(r"\ ", "[ -]") for s in sorted(UNITS, key=len, reverse=True))
    + r")(?![\w²³])", re.I)
# from one value of a range to the other: "97 to 106", "185 and 296", "48-51"
_RANGE_TO = re.compile(r"\s*(?:to|and|-|–|—)\s*(?:about |roughly |around |nearly |"
                       r"approximately )?[$€£]?\d[\d,]*(?:\.\d+)?(?![\d,.]\d)")
_IN_DIGITS = re.compile(r"\s?\(\d[\d,]*(?:\.\d+)?\)|\)(?=\s)")  # "twenty-four (24) months"
_LETTER_AFTER_DIGIT = re.compile(r"\d\)?(?=\s?-?\s?[^\W\d_]|\s?[°º])")  # where a unit may start
_WORDY = re.compile(r"[a-z]{2,}")
# letters that are units only in a key ("height_m", "high_c"), never after a number in prose
_KEY_ONLY = {"c": "°c", "f": "°f", "t": "tonne", "m": "m", "l": "l", "w": "w", "g": "g",
             "s": "sec", "h": "hr", "v": "v", "a": "amp"}
_TEMPERATURE = re.compile(r"\b(temp|temperature|high|low|max|min|feels|dew|air|water|avg|mean)\b")
_NOT_METRES = re.compile(r"\b(time|duration|runtime|delay|wait|eta|age|interval)\b")
_ELECTRIC = {"v": re.compile(r"\bvolt"), "a": re.compile(r"\b(current|amps?|amperage)\b")}


def unit_after(text: str, n: Number) -> Optional[Unit]:
    """The unit written right after the value ``n`` of ``text``, if any: "330 metres",
    "330m", "25 °C", "77 degrees Fahrenheit", "60 mph", "13 µg/m³"."""
    if n.kind != "number" or n.percent:
        return None
    m = _AFTER.match(text, n.end)
    if not m:  # a range writes its unit once, after both values: "32 to about 37 °F"; a
        #        contract, the number in words and in digits: "twenty-four (24) months"
        bound = _RANGE_TO.match(text, n.end) or _IN_DIGITS.match(text, n.end)
        m = bound and _AFTER.match(text, bound.end())
        if not m:
            return None
    word = m[1].lower().replace("-", " ")
    if _OVER.match(text, m.end()):
        return None  # "9.1 mg/L", "3 kg per day": a concentration or a rate, not the mass
    if len(word) == 1 and (word not in ("m", "g") or text[m.start(1) - 1:m.start(1)] == "-") \
            and m[1] != "V":  # "230 V" is a voltage
        return None  # "5 l" or "a 3-g" are rare; "in", "t", "c" are other words in prose
    return UNITS.get(word)


def without_units(text: str, nums: Sequence[Number]) -> str:
    """``text`` with the unit written after each of its values blanked ("25 degrees
    Celsius", "18 metres"): part of the value, no word a grounding in ``water_temp_c``
    or ``max_depth_m`` must hold."""
    for n in nums:
        if unit_after(text, n) is not None and (m := _AFTER.match(text, n.end)):
            text = text[:m.start(1)] + " " * (m.end(1) - m.start(1)) + text[m.end(1):]
    return text


def unit_written(text: str, n: Number) -> Optional[Unit]:
    """The unit named right after ``n`` as written, also where it begins a rate ("45
    kilograms per hole"), which ``unit_after`` declines."""
    m = _AFTER.match(text, n.end)
    return UNITS.get(m[1].lower()) if m else None


def unit_end(text: str, n: Number) -> int:
    """Where the unit written right after ``n`` ends ("2,240 kg|, or"); ``n.end`` for none."""
    m = _AFTER.match(text, n.end)
    return m.end() if m else n.end


def key_unit(key: str) -> Optional[Unit]:
    """The unit the key of a ``key: value`` line names: the last words of its last
    segment ("height m", "forecast > high c", "weight in kg") or its brackets
    ("High (°C)", "wind (km/h)")."""
    segments = key.lower().split(" > ")
    return next((u for i, s in enumerate(reversed(segments))
                 if (u := _segment_unit(s.strip(), last=i == 0)) is not None), None)


_OVER = re.compile(r"/\s?[A-Za-zµ]|\s+per\s+(?:cubic\s+|square\s+)?[a-zµ]{1,3}\b", re.I)
# "2.5 pounds of clay": a mass, not the currency "pounds" may be
_A_MASS_OF = re.compile(r"\s*(?:pounds?|lbs?\.?)\s+of\s+(?!the\b|your\b|his\b|her\b)", re.I)
# "weighs 4.8 pounds", "a weight of about 3 lb": weighed, so a mass too
_WEIGHED = re.compile(r"\bweigh(?:s|ed|ing|t|ts)?\b(?:\s+(?:of|in\s+at|at|is|was|just|only|"
                      r"about|around|roughly|nearly|almost|some|over|under))*\s*$", re.I)
_PER_TIME = {"day", "week", "month", "year", "night", "hour", "minute", "second", "shift",
             "session", "visit", "trip", "run", "lap", "game", "round", "period"}


@functools.lru_cache(maxsize=4096)  # keys repeat in every record of a large result
def _segment_unit(segment: str, last: bool) -> Optional[Unit]:
    """The unit one segment of a key path names ("dimensions cm > height": the parent
    names it for every key under it; a unit letter counts in the last segment only)."""
    inside = re.findall(r"\(([^)]*)\)", segment)
    if inside:
        return UNITS.get(inside[-1].strip())
    words = segment.replace("_", " ").split()
    if words[-1:] == ["min"] and any(len(w) > 1 and w != "in" and w in UNITS
                                     for w in words[:-1]):
        words = words[:-1]  # "days before arrival min": a least number of days, no minutes
    if words[-1:] == ["ttl"] and last:
        return UNITS["sec"]  # a time to live is in seconds (DNS, caches, tokens)
    if "per" in words:  # a rate ("avg pace s per km", "fee usd per min") is neither unit;
        #                 an amount for each of some things ("clay kg per student") is its own
        i = words.index("per")
        each = words[i + 1] if i + 1 < len(words) else ""
        if not each or each[0].isdigit() or UNITS.get(each) is not None or each in _KEY_ONLY \
                or each.rstrip("s") in _PER_TIME or i == 0:
            return None
        words = words[:i]
    if len(words) > 2 and all(len(w) <= 3 and (w in UNITS or w in _KEY_ONLY)
                              for w in words[-2:]) and " ".join(words[-2:]) not in UNITS \
            and UNITS[_KEY_ONLY.get(words[-2], words[-2])].dim != "time":
        return None  # "dissolved oxygen mg l": milligrams per litre, neither unit
    for n in (3, 2, 1):
        if len(words) > n:
            tail = " ".join(words[-n:])
            if n == 1 and tail in _KEY_ONLY and last:
                rest = " ".join(words[:-1])
                if tail in "cf" and not _TEMPERATURE.search(rest) or \
                        tail == "m" and _NOT_METRES.search(rest) or \
                        tail in _ELECTRIC and not _ELECTRIC[tail].search(rest):
                    return None
                return UNITS[_KEY_ONLY[tail]]
            if (unit := UNITS.get(tail)) is not None and (_WORDY.search(tail) or n == 1) \
                    and (last or tail not in _KEY_ONLY):
                return unit
    return None


def close(said: Number, unit: Unit, value: float, value_unit: Unit) -> bool:
    """``value`` in ``value_unit``, converted, is what ``said`` (in ``unit``) states:
    within the written precision, 1 % (a converted value is rounded), or 10 % when
    hedged ("about 1,100 feet").  A negative value may be said as its size ("discharging
    at 2.3 kW" for ``power_kw: -2.3``), not a temperature."""
    if unit.dim != value_unit.dim:
        return False
    if value < 0 <= said.value and unit.dim != "temperature":
        value = -value
    v = value_unit.to(value, unit)
    tol = max(said.precision, 1e-9 * abs(v))
    if unit.name != value_unit.name:
        tol = max(tol, 0.01 * abs(v))
    if said.hedged:
        tol = max(tol, 0.1 * abs(v))
    return abs(v - said.value) <= tol


def _as_quantity(n: Number, text: str = "") -> Number:
    """A number written as a word, read as one in digits where a unit follows it
    ("within about three months" as "about 3 months": half a unit either way, or its
    hedge), in the grounding too ("for five years")."""
    if n.kind != "count":
        return n
    return replace(n, kind="number", precision=0.5,
                   hedged=bool(text and HEDGES.search(text[max(0, n.start - 16):n.start])))


_SCALED = (1e3, 1e-3, 1e6, 1e-6, 1024.0, 1 / 1024, 1024.0 ** 2, 1024.0 ** -2)


def _rescaled(n: Number, unit: Unit, same: Sequence[tuple[float, Unit, int]],
              written: Collection[Unit]) -> Optional[int]:
    """The line of a value that ``n`` states, to its written digits, in a unit a
    thousand (or 1,024) times larger or smaller than the one written after it, where
    the sentence writes that unit after another value: "using about 1.8 MiB against a
    2 GiB limit" for ``memory mib: 1843`` (1.8 GiB).  A worked-out value lands on a
    stored one scaled by chance too often to be read so without the unit it mixed up.
    Not temperatures, whose units have offsets."""
    if unit.dim == "temperature":
        return None
    for v, u, i in same:
        w = u.to(v, unit)
        if any(abs(w * k - n.value) <= n.precision and abs(o.factor * k / unit.factor - 1)
               < 1e-9 for k in _SCALED for o in written if o.dim == unit.dim and o != unit):
            return i
    return None


@dataclass(frozen=True)
class UnitCheck:
    converted: frozenset[int] = frozenset()   # starts of values found in another unit
    changed: Optional[str] = None             # the line stating its number in another unit
    changed_at: frozenset[int] = frozenset()  # starts of values given another unit
    # starts of values in a unit whose dimension the grounding holds, none of its values
    # close: no number merely near ("roughly 11.8 kV" for ``INV-12``) vouches for them
    unmatched: frozenset[int] = frozenset()


class Quantities:
    """Every value of a grounding that carries a unit: written after it ("330 m") or
    named by its key (``height m: 330``)."""

    def __init__(self, lines: Sequence[str]):
        self.lines = lines
        self.found: list[tuple[float, Unit, int]] = []  # value, unit, line
        for i, line in enumerate(lines):
            if not any(c.isdigit() for c in line):
                continue
            for part in PARTS.split(line):
                key, sep, value = part.rpartition(": ")
                of_key = key_unit(key) if sep else None
                if of_key is None and not any(_AFTER.match(part, m.end())
                                              for m in _LETTER_AFTER_DIGIT.finditer(part)):
                    continue  # most parts of a large result: parsing them costs more
                for n in numbers(value if sep else part):
                    n = _as_quantity(n)  # "five or more years" of service
                    unit = unit_after(value if sep else part, n) or (
                        of_key if n.kind == "number" and not n.percent else None)
                    if unit is not None:
                        self.found.append((n.value, unit, i))
        self._by_dim: dict[str, list[tuple[float, Unit, int]]] = {}
        for q in self.found:
            self._by_dim.setdefault(q[1].dim, []).append(q)

    def check(self, sentence: str, nums: Sequence[Number], stated) -> UnitCheck:
        """``stated(n)``: the context holds the number ``n`` as written (any unit).  A
        value it lacks that a value of the context converts to is found; a value it holds
        in units of the same dimension only, none of them the sentence's, is changed."""
        if not self.found:
            return UnitCheck()
        converted, changed, changed_at, unmatched = set(), None, set(), set()
        for n in nums:
            worded, n = n.kind == "count", _as_quantity(n, sentence)
            unit = unit_after(sentence, n)
            if unit is None:
                continue
            same = self._by_dim.get(unit.dim, [])
            if any(close(n, unit, v, u) for v, u, _ in same):
                if not stated(n) or not any(u.name == unit.name for _, u, _ in same):
                    converted.add(n.start)
                continue
            if worded:  # found converted, never changed: "five" in words is often a count
                continue  # the grounding also writes in words ("five or more years")
            if same:
                unmatched.add(n.start)
            equal = [(u, i) for v, u, i in self.found if abs(v - n.value) <= n.precision]
            plain = not unit.ambiguous or bool(_A_MASS_OF.match(sentence, n.end)
                                               or _WEIGHED.search(sentence, 0, n.start))
            if plain and equal and stated(n) and all(
                    u.dim == unit.dim and u.name != unit.name for u, _ in equal):
                changed = changed or self.lines[equal[0][1]]
                changed_at.add(n.start)
            elif plain and not stated(replace(n, hedged=False)) and (at := _rescaled(
                    n, unit, same, [u for m in nums if (u := unit_after(sentence, m))])
                    ) is not None:
                changed = changed or self.lines[at]
                changed_at.add(n.start)
        return UnitCheck(frozenset(converted), changed, frozenset(changed_at),
                         frozenset(unmatched))
