"""Incremental sentence segmentation of a streamed answer, built on nltk's Punkt.

``SentenceSegmenter.feed(text)`` returns the sentences that the text seen so far
has finished; ``flush()`` returns the rest at the end of the stream.  Like httpx's
``LineDecoder`` it keeps only the unfinished text between calls and does no I/O.

The pieces it returns *partition* the answer: their texts, joined in order, are
the answer exactly.  A piece is one sentence plus the whitespace after it; it is
released as soon as the first non-space character after that whitespace shows
where the next sentence starts (or at ``flush()``).  Where that happens does not
depend on how the text was chunked: every decision reads only the pending text up
to and including that first character (plus, for Markdown, a few characters of
the next line), never "what has arrived so far".

Boundaries
  * inside a line: Punkt decides, with the shipped abbreviation list and no other
    trained statistics, over the pending text only and only when a ``.?!…``
    followed by whitespace and a character appears; a few rules on top fix what
    Punkt gets wrong without statistics (``etc. The``, ``Denver, CO. The``, ``Wait... Then``,
    ``"Stop." he said``, the ``1.`` of a numbered list item);
  * ``。！？`` always end a sentence, with or without a space after them;
  * a line break ends a sentence when a blank line or a Markdown block (list
    item, heading, quote, table row, rule, code fence) follows it, when it ends
    a heading, table row or rule, or when the next line begins with a capital
    letter and the line before does not end in a word that leads on (``by``,
    ``and``, ``the``) or a comma: chat answers put one statement per line
    without a full stop ("330 metres tall" / "It was built in 1950"); other line
    breaks are spaces, as in Markdown ("built by" / "Gustave Eiffel").

Code
  Fenced code blocks are never split into sentences: each fence line and each code
  line (through its ``\\n``) is its own ``checkable=False`` piece, released as soon
  as the line is complete.  Inline code (`` `like. this` ``) never splits.

Pieces with no letter or digit (whitespace, ``---``, a table's ``|---|``) are
``checkable=False`` too, and so is a table's header row (a separator row follows it:
it names columns and claims nothing).  A sentence that runs past ``max_chars`` is cut at the
next whitespace, and at ``2 * max_chars`` even without one, so one runaway
"sentence" cannot hold the buffer (or the proxy's stream) without bound.
"""

from __future__ import annotations

import enum
import re
from typing import Iterable, Optional

from guardrail.stream.blocks import HARD_LINES, Kind, classify, separator_follows
from guardrail.stream.punkt import (build_punkt, final_abbreviations, line_ends,
                                    load_abbreviations)
from guardrail.types import Sentence

__all__ = ["SentenceSegmenter", "build_punkt", "load_abbreviations"]

_TERMINALS = ".?!\u2026。！？｡"
_CJK_TERMINALS = "。！？｡"
# Closing punctuation (and Markdown emphasis) that may follow a terminal and still
# belong to the sentence it ends: `He said "stop." Then`, `(see above.) Next`, `**Note.** So`.
_CLOSERS = "\"')]}*_\u201d\u2019\u00bb」』）】〉》"
_QUOTES = "\"'\u201d\u2019\u00bb」』"
_OPENERS = "\"'([{*_\u201c\u2018\u00ab"
# Punkt's regexes know ASCII quotes best; curly ones map 1:1 so offsets stay put.
_TO_ASCII = str.maketrans("\u201c\u201d\u2018\u2019\u00ab\u00bb", "\"\"''\"\"")

_EVENT = re.compile(r"\s+|`+|[。！？｡]+[\"')\]}*_\u201d\u2019\u00bb」』）】〉》]*")
_NONSPACE = re.compile(r"\S")
_WORDY = re.compile(r"[^\W_]")
_LIST_NUMBER = re.compile(r"\d{1,9}[.)]")
_MARKUP_PREFIX = re.compile(r"(?:[#>*+\-\u2022]+[ \t]+)*")

# an address's last word: a state's code after its city ("Denver, CO."), a street's type
# after its house number ("410 N 7th St.", not "Mount St. Helens")
_STATE = re.compile(r"[A-Z]{2}")
_STREET_TYPES = frozenset({"st", "ave", "rd", "blvd", "ln", "ct", "pl", "hwy", "pkwy", "dr"})
_HOUSE_NUMBER = re.compile(r"\b\d+[A-Za-z]?\s+(?:[NSEW]\.?\s+)?(?:[A-Z0-9][\w'.-]*\s+){1,3}$")
_UNIT_LETTER = re.compile(r"[A-Za-z]")  # a unit of one letter after a number: g, m, s, l, h
_AFTER_NUMBER = re.compile(r"\d ?$")

class _Mode(enum.Enum):
    PROSE = "prose"
    FENCE_OPEN = "fence_open"  # the pending text starts with an opening fence line
    CODE = "code"              # inside a fenced block


class SentenceSegmenter:
    """Splits a streamed answer into sentences: ``feed(text) -> [Sentence]``, ``flush()``.

    ``abbreviations``: lowercase, without the final period (``"e.g"``, ``"dr"``);
    default: the shipped list.  ``max_chars``: see the module docstring.
    ``flush()`` ends the stream and resets the segmenter.
    """

    def __init__(self, abbreviations: Iterable[str] | None = None, *,
                 max_chars: int = 2000) -> None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be positive, got {max_chars}")
        abbrevs = (load_abbreviations() if abbreviations is None
                   else frozenset(a.strip().lower().rstrip(".") for a in abbreviations))
        self.tokenizer = build_punkt(abbrevs)
        self._final_abbrevs = final_abbreviations() & abbrevs
        self._max = max_chars
        self._hard = 2 * max_chars
        self._reset()

    def _reset(self) -> None:
        self._buf = ""            # pending text, not yet emitted
        self._base = 0            # offset of _buf[0] in the answer
        self._index = 0
        self._mode = _Mode.PROSE
        self._pos = 0             # offset up to which the pending text has been scanned
        # prose
        self._line_start = True   # _buf starts a line whose first character is not yet seen
        self._line_cstart = 0     # offset of the current line's first non-space character
        self._line_kind: Optional[Kind] = None  # None: not classified yet
        self._tick_len = 0        # length of an open inline-code backtick run, 0 if none
        self._tick_at = -1
        self._literal_at = -1     # a backtick run found to have no partner on its line
        self._memo = (-1, False)  # (whitespace offset, decision): Punkt runs once per candidate
        # code
        self._fence = ""
        self._mid_line = False    # the current code line was cut at max_chars

    # -- public API --------------------------------------------------------------------

    def feed(self, text: str) -> list[Sentence]:
        """Add streamed text; return the pieces it finished, in order."""
        out: list[Sentence] = []
        if text:
            self._buf += text
            self._run(out, final=False)
        return out

    def flush(self) -> list[Sentence]:
        """End of stream: return every remaining piece, then reset."""
        out: list[Sentence] = []
        self._run(out, final=True)
        if self._buf:
            code = self._mode is not _Mode.PROSE
            self._emit(out, self._base + len(self._buf), False if code else None)
        self._reset()
        return out

    # -- driver ------------------------------------------------------------------------

    def _run(self, out: list[Sentence], final: bool) -> None:
        while self._buf:
            step = self._prose_step if self._mode is _Mode.PROSE else self._code_step
            if not step(out, final):
                break

    def _emit(self, out: list[Sentence], end: int, checkable: Optional[bool] = None) -> None:
        n = end - self._base
        text, self._buf = self._buf[:n], self._buf[n:]
        if checkable is None:
            checkable = _WORDY.search(text) is not None
        out.append(Sentence(self._index, text, self._base, end, checkable))
        self._index += 1
        self._base = end

    # -- code --------------------------------------------------------------------------

    def _code_step(self, out: list[Sentence], final: bool) -> bool:
        buf, base = self._buf, self._base
        nl = buf.find("\n", max(self._pos - base, 0), self._hard)
        if nl < 0:
            self._pos = base + len(buf)
            if len(buf) >= self._hard:  # a runaway line: release it in pieces
                self._emit(out, base + self._hard, False)
                self._mid_line = True
                self._pos = self._base
                return True
            return False
        line = buf[:nl + 1]
        closing = (self._mode is _Mode.CODE and not self._mid_line
                   and _is_closing_fence(line, self._fence))
        self._emit(out, base + nl + 1, False)
        self._pos = self._base
        self._mid_line = False
        if self._mode is _Mode.FENCE_OPEN:
            self._mode = _Mode.CODE
        elif closing:
            self._mode = _Mode.PROSE
            self._line_start = True
        return True

    # -- prose -------------------------------------------------------------------------

    def _prose_step(self, out: list[Sentence], final: bool) -> bool:
        if self._line_start:
            m = _NONSPACE.search(self._buf)
            if m is None:
                return self._hard_cut(out)
            if m.start():
                self._emit(out, self._base + m.start(), False)  # leading whitespace
            self._line_start = False
            self._line_cstart = self._pos = self._base
            self._line_kind = None
            return True
        if self._line_kind is None:
            found = classify(self._buf, self._line_cstart - self._base, final)
            if found is None:
                return False
            self._line_kind, self._fence = found
            if self._line_kind is Kind.FENCE:
                # A fence always opens a piece: the line break before it was a boundary.
                self._mode = _Mode.FENCE_OPEN
                self._pos = self._base
            return True
        return self._scan(out, final)

    def _scan(self, out: list[Sentence], final: bool) -> bool:
        """Look at the next whitespace run, backtick run or CJK full stop."""
        buf, base = self._buf, self._base
        m = _EVENT.search(buf, self._pos - base)
        if m is None:
            self._pos = base + len(buf)
            if final and self._tick_len:
                return self._tick_unmatched()
            return self._hard_cut(out)
        a, b = m.span()
        if a >= self._hard:
            return self._hard_cut(out)
        if b == len(buf) and not final:
            self._pos = base + a  # the run may go on in the next chunk
            return False
        first = buf[a]
        if first == "`":
            self._on_ticks(base + a, b - a)
        elif first in _CJK_TERMINALS:
            # Followed by a character: a boundary right here.  Followed by whitespace:
            # the whitespace run that comes next decides.
            if (b < len(buf) and not buf[b].isspace() and not self._tick_len
                    and self._line_kind is not Kind.TABLE):
                self._emit(out, base + b)
                self._pos = self._base
                return True
        elif b < len(buf):
            return self._on_space(out, a, b, final)
        self._pos = base + b
        return True

    def _on_ticks(self, at: int, n: int) -> None:
        """Inline code spans: a run of n backticks up to the next run of exactly n."""
        if self._tick_len:
            if n == self._tick_len:
                self._tick_len = 0
        elif at != self._literal_at:
            self._tick_len, self._tick_at = n, at

    def _tick_unmatched(self) -> bool:
        """The open backtick run has no partner on its line: it is a literal backtick;
        rescan from it, deciding the candidates that seemed to be inside code."""
        self._literal_at = self._pos = self._tick_at
        self._tick_len = 0
        return True

    def _hard_cut(self, out: list[Sentence]) -> bool:
        if len(self._buf) < self._hard:
            return False
        self._emit(out, self._base + self._hard)
        self._pos = max(self._pos, self._base)
        self._tick_len = 0
        return True

    def _on_space(self, out: list[Sentence], a: int, q: int, final: bool) -> bool:
        """Whitespace ``_buf[a:q]`` followed by a non-space character at ``q``."""
        buf, base = self._buf, self._base
        newlines = buf.count("\n", a, q)
        if newlines and self._tick_len:
            return self._tick_unmatched()
        header: Optional[bool] = False  # a table's header row names columns: no claim
        if a >= self._max:
            boundary = True  # a runaway sentence: cut at the first whitespace
        elif newlines:
            if self._line_kind is Kind.TABLE and newlines == 1 and (
                    header := separator_follows(buf, q, final)) is None:
                self._pos = base + a
                return False
            boundary = (newlines >= 2 or self._line_kind in HARD_LINES
                        or self._ends_sentence(a, q))
            if not boundary:
                found = classify(buf, q, final)
                if found is None:
                    self._pos = base + a
                    return False
                boundary = found[0] is not Kind.PLAIN or not self._tick_len \
                    and line_ends(buf[max(0, a - 16):a], buf[q])
        else:
            # A table row is one piece whatever its cells say.
            boundary = (not self._tick_len and self._line_kind is not Kind.TABLE
                        and self._ends_sentence(a, q))
        if boundary:
            self._emit(out, base + q, False if header else None)
            self._tick_len = 0
        if newlines:
            self._line_cstart = base + q
            # After a boundary the new line is classified afresh (it may open a fence);
            # a line break that is not a boundary continues a plain paragraph.
            self._line_kind = None if boundary else Kind.PLAIN
            self._literal_at = -1
        self._pos = base + q
        return True

    def _ends_sentence(self, a: int, q: int) -> bool:
        """Does the text before the whitespace ``_buf[a:q]`` end a sentence?"""
        if self._memo[0] == self._base + a:
            return self._memo[1]
        result = self._decide(a, q)
        self._memo = (self._base + a, result)
        return result

    def _decide(self, a: int, q: int) -> bool:
        buf = self._buf
        j = a
        while j > 0 and buf[j - 1] in _CLOSERS:
            j -= 1
        k = j
        while k > 0 and buf[k - 1] in _TERMINALS:
            k -= 1
        if k == j:
            return False  # no terminal punctuation before the whitespace
        term = buf[k:j]
        if any(c in _CJK_TERMINALS for c in term):
            return True
        w = k
        while w > 0 and not buf[w - 1].isspace():
            w -= 1
        line_start = self._line_cstart - self._base
        if (line_start >= 0 and _LIST_NUMBER.fullmatch(buf, w, a)
                and _MARKUP_PREFIX.fullmatch(buf, line_start, w)):
            return False  # "1." opening a numbered list item (or a heading "## 2. Results")
        nxt = buf[q]
        if nxt.islower() and any(c in _QUOTES for c in buf[j:a]):
            return False  # '"Stop." he said', '"Why?" she asked'
        # Punkt reads the pending text through the next sentence's first character.
        # No realignment: in that truncated view an opening quote at the very end
        # would pass for a closing one; any break after the terminal counts anyway.
        view = buf[:q + 1].translate(_TO_ASCII)
        for start, _ in self.tokenizer.span_tokenize(view, realign_boundaries=False):
            if k < start <= q:
                return True
        if nxt.isupper():
            if term.endswith(("...", "\u2026")):
                return True  # "Wait... Then it happened."
            word = buf[w:k].lstrip(_OPENERS)
            if term == "." and word.lower() in self._final_abbrevs:
                return True  # "apples, pears, etc. The next one"
            if term == "." and (_STATE.fullmatch(word) and buf[max(0, w - 2):w] == ", "
                                or word.lower() in _STREET_TYPES
                                and _HOUSE_NUMBER.search(buf, max(0, w - 48), w)):
                return True  # "in Denver, CO. The", "at 410 N 7th St. You"
            if term == "." and _UNIT_LETTER.fullmatch(word) and _AFTER_NUMBER.search(
                    buf, max(0, w - 2), w):
                return True  # "Protein is 18 g. Fat is 7 g." (Punkt reads "g." as an initial)
        return False


def _is_closing_fence(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (len(stripped) >= len(fence) and stripped[0] == fence[0]
            and stripped == fence[0] * len(stripped))
