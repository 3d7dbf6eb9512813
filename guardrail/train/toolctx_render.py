"""How ``toolctx`` answers word values, get one wrong, and fill templates.

``fmt_value(family, field, value, style)`` writes a value as an assistant would; the style
(drawn by ``pick_style``, or forced by a template's ``{key:form}``) picks the wording:

    int       330 | 1,234,567 | about 1.2 million      (+ unit: "330 meters", "18°C")
    float     12.5 | about 13
    money     €12.50 | 12.50 euros | 12.50 EUR | $1.2 billion
    pct       up 1.52% | fell 1.52 percent
    date      March 1, 2024 | 1 March 2024 | March 1
    datetime  2:30 PM UTC on March 1 | March 1 at 14:30 | 2:30 PM | March 1, 2024
    time      3 PM | 15:00
    minutes   2 hours 15 minutes | 135 minutes
    bool      the field's own phrases ("in stock")
    list      a, b, and c | three

``alter_value`` draws a wrong value (or unit, or currency) for a slot; ``fill`` renders a
template and reports where each value landed, so a changed value's span is exact.
"""

from __future__ import annotations

import math
import random
import re
from datetime import date, datetime, timedelta
from typing import Optional, Sequence

from guardrail.train.toolctx_schemas import Family, Field, Schema

# -- paraphrasing values ---------------------------------------------------------------------

SLOT = re.compile(r"\{(\w+)(?::(\w+))?\}")
NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()
_MONTHS = ("January February March April May June July August September October November "
           "December").split()
_ABOUT = ("about", "roughly", "around")
_SINGULAR = {"feet": "foot", "inches": "inch", "people": "person",
             "degrees Celsius": "degree Celsius", "kilometers per hour": "kilometer per hour"}
Style = tuple[str, str]  # (form, unit or clock)


def _short(x: float) -> str:
    return f"{x:.1f}".removesuffix(".0")


def _large(v: float) -> str:
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(v) >= size:
            return f"{_short(v / size)} {word}"
    return f"{round(v / 1000) * 1000:,}"


def _with_unit(text: str, unit: str) -> str:
    if not unit:
        return text
    if text == "1" and unit[0].isalpha():
        unit = _SINGULAR.get(unit, unit.removesuffix("s"))
    return f"{text} {unit}" if unit[0].isalpha() else text + unit


def join_list(items: Sequence[str]) -> tuple[str, list[int]]:
    """``a``, ``a and b``, ``a, b, and c``, and where each item starts."""
    seps = [""] + ([" and "] if len(items) == 2 else [", "] * (len(items) - 2) + [", and "])
    text, starts = "", []
    for sep, item in zip(seps, items):
        text += sep
        starts.append(len(text))
        text += item
    return text, starts


def _clock(at: datetime, clock: str) -> str:
    if clock.startswith("24"):
        text = at.strftime("%H:%M")
    else:
        h = at.hour % 12 or 12
        text = f"{h}" if at.minute == 0 else f"{h}:{at.minute:02d}"
        text += " AM" if at.hour < 12 else " PM"
    return text + (" UTC" if clock.endswith("u") else "")


def _day(d: date, form: str) -> str:
    month = _MONTHS[d.month - 1]
    if form == "dmy":
        return f"{d.day} {month} {d.year}"
    return f"{month} {d.day}" if form == "md" else f"{month} {d.day}, {d.year}"


def money_parts(fam: Family, f: Field, v: object) -> tuple[float, str]:
    if isinstance(v, dict):
        return v[fam.money_keys[0]], v[fam.money_keys[1]]
    return float(v), f.cur


def fmt_value(fam: Family, f: Field, v: object, style: Style) -> str:
    """How an assistant words value ``v`` of field ``f``."""
    form, unit = style
    k = f.kind
    if k == "bool":
        return f.words[0] if v else f.words[1]
    if k == "list":
        return NUMBER_WORDS[len(v)] if form == "count" else join_list(v)[0]
    if k == "text":
        if form == "a":
            return ("an " if str(v)[0] in "AEIOaeio" else "a ") + str(v)
        return str(v)
    if k in ("int", "year"):
        n = int(v)
        text = (f"{form} {_large(n)}" if form in _ABOUT and n >= 10_000 else
                f"{n:,}" if form == "comma" or (form in _ABOUT and n >= 1000) else str(n))
        return _with_unit(text, unit)
    if k == "float":
        x = float(v)
        text = f"about {math.floor(x + 0.5)}" if form == "about" else f"{x:.{f.places}f}"
        return _with_unit(text, unit)
    if k == "pct":
        x = float(v)
        word = {"updown": ("up", "down"), "rosefell": ("rose", "fell")}.get(form)
        text = _with_unit(f"{abs(x) if word else x:.{f.places}f}", unit)
        return f"{word[0] if x >= 0 else word[1]} {text}" if word else text
    if k == "money":
        amount, cur = money_parts(fam, f, v)
        sym, word, dec = fam.currencies[cur]
        if amount >= 1e6:
            return {"code": f"{cur} {_large(amount)}", "about": f"about {sym}{_large(amount)}"}.get(
                form, f"{sym}{_large(amount)}")
        num = f"{amount:,.{dec}f}"
        return {"word": f"{num} {word}", "code": f"{num} {cur}"}.get(form, f"{sym}{num}")
    if k == "date":
        return _day(date.fromisoformat(str(v)), form)
    if k == "datetime":
        at = datetime.fromisoformat(str(v)[:19])
        if form == "d":
            return _day(at.date(), "mdy")
        when, day = _clock(at, unit), _day(at.date(), "md")
        return {"t": when, "d_at_t": f"{day} at {when}"}.get(form, f"{when} on {day}")
    if k == "time":
        return _clock(datetime.fromisoformat(f"2000-01-01T{v}"), form)
    if k == "minutes":
        h, m = divmod(int(v), 60)
        if form == "min" or not h:
            return f"{int(v)} minutes"
        hours = f"{h} hour" + ("s" if h > 1 else "")
        return f"{hours} {m} minutes" if m else hours
    raise ValueError(f"unknown field kind {k!r} of {f.key}")


def pick_style(fam: Family, f: Field, v: object, forced: Optional[str],
               rng: random.Random) -> Style:
    """Draw how a slot will be worded; ``forced`` is the template's ``{key:form}``."""
    k = f.kind
    unit = rng.choice(f.unit) if f.unit else ""
    if k == "int":
        n = int(v)
        forms = ("plain",) if n < 1000 else ("comma", "comma") + (_ABOUT if n >= 10_000 else ())
        return forced or rng.choice(forms), unit
    if k == "float":
        forms = ("exact",) * 3 + (("about",) if float(v) >= 10 and f.places else ())
        return forced or rng.choice(forms), unit
    if k == "money":
        big = money_parts(fam, f, v)[0] >= 1e6
        forms = ("sym", "about", "code") if big else ("sym", "sym", "word", "code")
        return forced or rng.choice(forms), ""
    if k == "date":
        return forced or rng.choice(("mdy", "mdy", "dmy", "md")), ""
    if k == "datetime":
        clock = rng.choice(("12", "12", "24"))
        clock += "u" if str(v).endswith("Z") and rng.random() < 0.6 else ""
        if forced == "at":  # "lands at 2:30 PM on March 1", never "at March 1 at 2:30 PM"
            return rng.choice(("t_on_d", "t")), clock
        return forced or rng.choice(("t_on_d", "d_at_t", "t")), clock
    if k == "time":
        return rng.choice(("12", "12", "24")), ""
    if k == "minutes":
        return rng.choice(("hm", "hm", "min")), ""
    return forced or ("plain" if k != "list" else "all"), unit


# -- a wrong value ---------------------------------------------------------------------------

def _scaled(v: float, rng: random.Random) -> float:
    if abs(v) < 12:
        return v + rng.choice((-3, -2, -1, 1, 2, 3))
    return v * (rng.uniform(0.5, 0.85) if rng.random() < 0.5 else rng.uniform(1.18, 1.9))


def alter_value(fam: Family, schema: Schema, f: Field, rec: dict, style: Style,
                rng: random.Random, recs: list[dict]) -> Optional[tuple[object, Style]]:
    """Another value for ``rec[f.key]`` (or another unit), or None when there is none."""
    v, (form, unit), k = rec[f.key], style, f.kind
    if k in ("int", "float") and f.wrong and unit and rng.random() < 0.4:
        return v, (form, rng.choice(f.wrong))
    if k == "bool":
        return not v, style
    if k in ("int", "float"):
        x = round(_scaled(v, rng), f.places) if k == "float" else int(round(_scaled(v, rng)))
        if x < 0 <= f.lo or x <= 0 < v:  # no negative counts, no zero for a positive amount
            x = v + rng.randint(1, 3)
        return x, style
    if k == "year":
        return v + rng.choice((-1, 1)) * rng.randint(1, 25), style
    if k == "pct":
        if form in ("updown", "rosefell") and rng.random() < 0.5:
            return -v, style
        factor = rng.uniform(0.3, 0.8) if rng.random() < 0.5 else rng.uniform(1.3, 2.5)
        return round(v * factor, f.places), style
    if k == "money":
        if not isinstance(v, dict):
            x = _scaled(v, rng)
            return (int(x) if x >= 1e6 else round(abs(x), 2)), style
        amount_key, cur_key = fam.money_keys
        dec = fam.currencies[v[cur_key]][2]
        others = [c for c in sorted(fam.currencies)
                  if c != v[cur_key] and fam.currencies[c][2] == dec]
        if others and rng.random() < 0.3:  # the right amount in the wrong currency
            return {**v, cur_key: rng.choice(others)}, style
        x = abs(_scaled(v[amount_key], rng))
        amount = int(round(x, -4)) if x >= 1e6 else round(x, dec) if dec else int(round(x, -1))
        return {**v, amount_key: amount}, style
    if k == "date":
        shift = timedelta(days=rng.choice((-1, 1)) * rng.randint(1, 20))
        return (date.fromisoformat(v) + shift).isoformat(), style
    if k == "datetime":
        minutes = rng.randint(1, 20) * 1440 if form == "d" else rng.randint(1, 10) * 30
        at = datetime.fromisoformat(v[:19]) + timedelta(minutes=rng.choice((-1, 1)) * minutes)
        return at.strftime("%Y-%m-%dT%H:%M:%S") + v[19:], style
    if k == "time":
        shift = timedelta(minutes=rng.choice((-1, 1)) * rng.randint(1, 6) * 30)
        at = datetime.fromisoformat(f"2000-01-01T{v}") + shift
        return at.strftime("%H:%M"), style
    if k == "minutes":
        return max(15, v + rng.choice((-1, 1)) * rng.randint(3, 24) * 5), style
    if k == "list":
        extra = [x for x in f.vocab if x not in v]
        if form == "count":
            if len(v) > 2 and (rng.random() < 0.5 or not extra):
                return v[:-1], style
            return (v + [rng.choice(extra)], style) if extra else None
        if not extra:
            return None
        j = rng.randrange(len(v))
        return v[:j] + [rng.choice(extra)] + v[j + 1:], style
    others = [r[f.key] for r in recs if r[f.key] is not None and r[f.key] != v]
    if f.key == schema.ident:
        pool = others
    elif others and rng.random() < 0.5:
        pool = others
    else:
        pool = [x for x in f.vocab if x != v and x not in rec.values()] or others
        if not pool and f.gen is not None:
            pool = [x for x in (f.gen(rng, dict(rec)),) if x not in (None, v)]
    return (rng.choice(pool), style) if pool else None


# -- templates -------------------------------------------------------------------------------

Slots = list[tuple[str, int, int]]  # (key, start, end) of each value in a sentence


def fields_of(schema: Schema) -> dict[str, Field]:
    return {f.key: f for f in schema.fields}


def expand(schema: Schema, tpl: str, first: bool) -> str:
    """``{S}`` / ``{s}`` as the subject's first mention, or as a pronoun after it."""
    full, subj, obj = schema.subject
    if first or not subj:
        return tpl.replace("{S}", full).replace("{s}", full)
    return tpl.replace("{S}", subj).replace("{s}", obj)


def template_slots(tpl: str) -> list[tuple[str, Optional[str]]]:
    return [(m[1], m[2]) for m in SLOT.finditer(tpl) if not m[1].startswith("_")]


def template_keys(tpl: str) -> set[str]:
    return {k for k, _ in template_slots(tpl)}


def pick_styles(fam: Family, schema: Schema, tpl: str, rec: dict,
                rng: random.Random) -> list[Style]:
    fields = fields_of(schema)
    out: list[Style] = []
    seen: dict[str, Style] = {}  # one wording per kind in a sentence: not "$5 to 7 dollars"
    for k, form in template_slots(tpl):
        f = fields[k]
        if f.kind in ("money", "date", "datetime", "time") and f.kind in seen:
            out.append((form or seen[f.kind][0], seen[f.kind][1]))
        else:
            out.append(pick_style(fam, f, rec[k], form, rng))
            seen.setdefault(f.kind, out[-1])
    return out


def fill(fam: Family, schema: Schema, tpl: str, rec: dict,
         styles: list[Style]) -> tuple[str, Slots]:
    """The sentence, capitalised, and the ``(key, start, end)`` of each value in it."""
    fields = fields_of(schema)
    text, slots, pos, j = "", [], 0, 0
    for m in SLOT.finditer(tpl):
        text += tpl[pos:m.start()]
        if m[1].startswith("_"):
            text += str(rec[m[1]])
        else:
            piece = fmt_value(fam, fields[m[1]], rec[m[1]], styles[j])
            slots.append((m[1], len(text), len(text) + len(piece)))
            text, j = text + piece, j + 1
        pos = m.end()
    text += tpl[pos:]
    return text[:1].upper() + text[1:], slots
