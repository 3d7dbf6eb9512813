"""Currencies as answers name them and as tool results code them.

    mentioned("It was for 869.30 rand.")  -> {"ZAR"}
    mentioned("charged: amt: 869.3; ccy: BRL") -> {"BRL"}
    coded("BRL", "ccy") -> {"BRL"}          what a tool result's value codes
    minor_units(fields)                          amounts a tool writes in cents (Stripe)

A tool result codes a currency (``"ccy": "BRL"``, ``R$ 12.50``); an answer names it
("Brazilian reais", "rand", "₹"). A name may stand for several codes ("peso", "dollar",
"$"): it is read as all of them, so a sentence is said to change the currency only when
none of its currencies is one the record holds.
"""

from __future__ import annotations

import re
from typing import Collection, Optional, Sequence

_NAMES = {
    "USD": "us dollar|us dollars|american dollar|american dollars|usd|us$",
    "EUR": "euro|euros|eur|€",
    "GBP": "pound|pounds|pound sterling|sterling|gbp|£",
    "JPY": "yen|japanese yen|jpy",
    "CNY": "yuan|renminbi|rmb|cny",
    "INR": "rupee|rupees|indian rupee|indian rupees|inr|₹",
    "BRL": "real|reais|brazilian real|brazilian reais|brl|r$",
    "ZAR": "rand|south african rand|zar",
    "MXN": "mexican peso|mexican pesos|mxn",
    "COP": "colombian peso|colombian pesos|cop",
    "ARS": "argentine peso|argentine pesos|ars",
    "CLP": "chilean peso|chilean pesos|clp",
    "CAD": "canadian dollar|canadian dollars|cad|c$",
    "AUD": "australian dollar|australian dollars|aud|a$",
    "NZD": "new zealand dollar|new zealand dollars|nzd",
    "CHF": "swiss franc|swiss francs|franc|francs|chf",
    "SEK": "swedish krona|swedish kronor|sek",
    "NOK": "norwegian krone|norwegian kroner|nok",
    "DKK": "danish krone|danish kroner|dkk",
    "KRW": "won|korean won|south korean won|krw|₩",
    "NGN": "naira|nigerian naira|ngn|₦",
    "KES": "kenyan shilling|kenyan shillings|kes",
    "TRY": "lira|turkish lira|try|₺",
    "RUB": "ruble|rubles|rouble|roubles|rub|₽",
    "PLN": "zloty|zlotys|polish zloty|pln|zł",
}
# names shared by several currencies: read as all of them
_SHARED = {"peso": {"MXN", "COP", "ARS", "CLP"}, "pesos": {"MXN", "COP", "ARS", "CLP"},
           "dollar": {"USD", "CAD", "AUD", "NZD"}, "dollars": {"USD", "CAD", "AUD", "NZD"},
           "$": {"USD", "CAD", "AUD", "NZD", "MXN", "COP", "ARS", "CLP"},
           "krona": {"SEK"}, "krone": {"NOK", "DKK"}, "kroner": {"NOK", "DKK"}}
CODES: dict[str, set[str]] = dict(_SHARED)
for _code, _names in _NAMES.items():
    for _name in _names.split("|"):
        CODES.setdefault(_name, set()).add(_code)
_SYMBOLS = sorted((n for n in CODES if not n[0].isalpha()), key=len, reverse=True)
_WORDED = sorted((n for n in CODES if n[0].isalpha()), key=len, reverse=True)
_FIND = re.compile(r"(?<![A-Za-z])(?:" + "|".join(re.escape(n) for n in _WORDED)
                   + r")(?![A-Za-z'’])|" + "|".join(re.escape(s) for s in _SYMBOLS), re.I)
# a three-letter code counts only in capitals ("try", "cop", "won" are words too)
_CODE = re.compile(r"^[A-Z]{3}$")
_CURRENCY_KEY = re.compile(r"curr|ccy|money|denominat", re.I)


_AMOUNT_BEFORE = re.compile(r"\d(?:\s?(?:million|billion|thousand|bn|m|k))?\s+$", re.I)
# "weighing about 26 pounds": a mass, not sterling
_WEIGHED = re.compile(r"\b(?:weigh\w*|weight|heav\w*|light(?:er|est)?|mass)\b[^.;,]{0,25}$"
                      r"|\b(?:kilo(?:gram)?s?|kgs?|grams?|ounces?|oz|stones?|tonnes?)\b[,(]?\s*"
                      r"(?:or|about|roughly|around|approximately|nearly|some|\s)*[\d.,]+\s*$",
                      re.I)  # "... 41 kilograms, about 90 pounds": a weight said again


def mentioned(text: str) -> set[str]:
    """The ISO codes of every currency ``text`` names, codes or symbols."""
    found: set[str] = set()
    for m in _FIND.finditer(text):
        word = m.group(0)
        if len(word) == 3 and word.isalpha() and word.upper() in _NAMES and \
                not _CODE.match(word):
            continue
        if word.lower() in ("real", "won", "franc", "francs", "lira", "pound", "pounds") and \
                not _AMOUNT_BEFORE.search(text, 0, m.start()):
            continue  # "a real problem", "won the award", "23 minutes, and you won't":
            #           a currency only right after an amount ("869.30 rand")
        if word.lower() in ("pound", "pounds") and _WEIGHED.search(text, 0, m.start()):
            continue
        found |= CODES[word.lower()] if word.lower() in CODES else CODES.get(word, set())
    return found


def coded(value: str, key: str = "") -> set[str]:
    """The currencies a tool result's value codes: a code or symbol alone (``GBP``, ``€``),
    a name alone under a currency key (``currency: pound sterling``), or one beside an
    amount (``R$ 12.50``, ``869.3 rand``); a name among other words or under another key
    ("parts for a Smith-Corona Sterling", ``compatible: Sterling``) codes none; a number
    under a key that is a code, its rate (``rates > usd: 1.2695``), codes that currency."""
    alone = value.strip()
    if (code := keyed_code(key)) and _RATE.fullmatch(alone):
        return {code}  # a rate keyed by its currency: ``rates > usd: 1.2695``
    if _FIND.fullmatch(alone) and (_CODE.match(alone) or not alone[0].isalpha()
                                   or _CURRENCY_KEY.search(key)):
        return mentioned(alone)
    return set().union(*(mentioned(m[0]) for m in _FIND.finditer(value) if re.match(
        r"\s?\d", value[m.end():]) or re.search(r"\d\s?$", value[:m.start()])))


_RATE = re.compile(r"\d+(?:\.\d+)?")


def keyed_code(key: str) -> Optional[str]:
    """The currency code a key path ends in (``rates > usd``: "USD"), None for none."""
    code = key.rsplit(" > ", 1)[-1].strip().upper()
    return code if code in _NAMES else None

# an amount under these keys is in minor units where its record's currency is a
# lower-case code, as Stripe writes them; an upper-case code ("USD") keeps major units
_WHOLE_UNITS = {"JPY", "KRW", "CLP", "VND", "ISK", "UGX", "PYG"}  # no minor unit
_MINOR_KEY = re.compile(r"(?:^|[\s_])(?:amount|total|subtotal|balance|fee|net|price|tax)"
                        r"(?:$|[\s_])", re.I)


def minor_units(found: Sequence[tuple[str, str, int]]) -> set[tuple[str, int]]:
    """The ``(key path, record)`` of amounts written in minor units: whole numbers under
    an amount key (``amount: 482315``) in a record whose ``currency`` is a lower-case ISO
    code (``usd``).  ``found``: ``(path, value, record)`` of every field."""
    coded = {r for path, v, r in found if path.rsplit(" > ", 1)[-1].lower() == "currency"
             and v.islower() and v.upper() in _NAMES and v.upper() not in _WHOLE_UNITS}
    return {(path, r) for path, v, r in found if r in coded and v.isdigit()
            and _MINOR_KEY.search(path.rsplit(" > ", 1)[-1])}


def other_currency(sentence: str, currencies: Sequence[tuple[int, int, set[str]]],
                   about: Optional[Collection[int]]) -> tuple[int, ...]:
    """The line of the currency of the record the sentence is about (None: of the
    context), where the sentence names only other currencies ("It was for 869.30 rand."
    where the record's `ccy` is BRL); ``currencies``: (line, record, codes) of the
    grounding's fields that code one."""
    said = mentioned(sentence)
    of = [(i, c) for i, r, c in currencies if about is None or r in about or r == -1]
    return (of[0][0],) if said and of and not said & set().union(*(c for _, c in of)) else ()


# a currency's code beside an amount, as the sign it has; "¤" for one without its own
_CODE_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", **dict.fromkeys((
    "CHF", "CAD", "AUD", "NZD", "SEK", "NOK", "DKK", "INR", "ZAR", "BRL", "MXN", "HKD", "SGD",
    "PLN", "CZK", "HUF", "TRY", "THB", "KRW", "ISK"), "¤")}
_CODE_BEFORE = re.compile(r"\b([A-Z]{3})\s?$")


def code_sign(before: str, after: str) -> str:
    """What an amount is of where a currency's code stands right before it (``before``,
    "CHF ") or is the word after it (``after``, "chf"): the code's sign; else ``after``."""
    code = _CODE_BEFORE.search(before)
    return _CODE_SIGNS.get(code[1] if code else after.upper(), after)
