"""The answer's text as it grows, and the one rule for how much of it a check reads.

``TextLog`` is append-only text whose slices cost their own size, not the whole
text's: sentence checks read a bounded window, so per-token work stays O(1) amortized.
``left_context`` is where a check's text begins: at most ``budget`` characters before
the sentence, moved forward to a word boundary so the model never sees half a word.
The answer applies it once per check; the engine checks what it is given.
"""

from __future__ import annotations

import bisect
from typing import Optional


def trim_left(text: str, start: int, budget: int) -> int:
    """Where a check of ``text[start:]`` begins: at most ``budget`` characters before
    ``start``, moved forward to a word boundary."""
    cut = start - budget
    if cut <= 0:
        return 0
    while cut < start and not text[cut - 1].isspace():
        cut += 1
    return cut


class TextLog:
    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._starts: list[int] = []
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def append(self, text: str) -> None:
        if text:
            self._starts.append(self._len)
            self._pieces.append(text)
            self._len += len(text)

    def slice(self, start: int, end: Optional[int] = None) -> str:
        end = self._len if end is None else min(end, self._len)
        if start >= end:
            return ""
        i = max(0, bisect.bisect_right(self._starts, start) - 1)
        j = bisect.bisect_left(self._starts, end, lo=i)
        return "".join(self._pieces[i:j])[start - self._starts[i]:end - self._starts[i]]

    def tail(self, n: int) -> str:
        return self.slice(max(0, self._len - n))

    def left_context(self, start: int, end: int, budget: int, step: int = 0
                     ) -> tuple[int, str]:
        """``(base, text)``: the check of ``[start, end)`` reads ``text`` =
        ``self[base:end]``, with ``base`` from ``trim_left`` (reads one character
        before the budget, to see whether the cut falls between words).  With ``step``
        the cut is first rounded up to a multiple of ``step``: checks of consecutive
        sentences then begin at the same place until the budget passes the next one."""
        step = min(step, budget)  # a step past the budget would cut after the start
        if step > 0 and start > budget:
            budget = start - -(-(start - budget) // step) * step
        lo = max(0, start - budget - 1)
        window = self.slice(lo, end)
        cut = lo + trim_left(window, start - lo, budget)
        return cut, window[cut - lo:]
