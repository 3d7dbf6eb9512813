"""An amount converted at a rate that a tool result gives per currency.

    Rates.of(fields)                      the rates a result keys by currency code
                                          (``rates > usd: 1.2695``), None for none
    rates.converts(sentence, n, before)   ``n``, said in one of those currencies, is an
                                          amount of the sentence or the one before at its
                                          rate

An exchange-rate tool answers with one number per currency (``{"base": "GBP", "rates":
{"EUR": 1.1712, "USD": 1.2695}}``) and the assistant converts: "£500 gets you about
€585.60", then "the same amount would be about $634.75 in US dollars".  Neither result
is in the tool result.  Here a value said in a currency the rates name is found where an
amount of the sentence, or of the sentence before it, times that currency's rate gives
it (or divided by it, back into the base), to the written digits; so few products are
tried that chance seldom gives one (``totals.rarely``).  A wrong conversion ("$643.75")
stays missing.
"""

from __future__ import annotations

from typing import Optional, Sequence

from guardrail.evidence.currency import keyed_code, mentioned
from guardrail.evidence.referred import last_sentence
from guardrail.evidence.totals import rarely
from guardrail.evidence.values import Number, numbers

class Rates:
    """The rates of a tool result, by the currency code that keys each."""

    def __init__(self, rates: dict[str, float]):
        self.rates = rates

    @classmethod
    def of(cls, fields: Sequence) -> Optional["Rates"]:
        """The rates of ``fields`` (fields.py's ``Field``s) whose key is a currency code
        and whose value one positive number; None where fewer than one."""
        found = {}
        for f in fields:
            code = keyed_code(f.path)
            if code and len(f.values.numbers) == 1 and f.values.numbers[0] > 0:
                found[code] = f.values.numbers[0]
        return cls(found) if found else None

    def converts(self, sentence: str, n: Number, before: str = "") -> bool:
        """``n`` is an amount of ``sentence`` or of the sentence before it times the rate
        of a currency the sentence names, or divided by one (back into the base)."""
        if n.kind != "number" or n.percent or n.value <= 0:
            return False
        named = [self.rates[c] for c in mentioned(sentence) if c in self.rates]
        if not named:
            return False
        amounts = {m.value for m in numbers(sentence) + numbers(last_sentence(before))
                   if m.kind == "number" and not m.percent and m.value > 0
                   and m.value != n.value and m.value not in self.rates.values()}
        results = {a * r for a in amounts for r in named} | {
            a / r for a in amounts for r in self.rates.values()}
        return rarely(n, results)
