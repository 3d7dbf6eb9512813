"""What a line of Markdown is, judged by how it starts (``segmenter.py`` cuts on it):
a heading, a list item, a quote, a table row, a rule, a code fence, or plain text; and
whether a table row is the table's header (a separator row follows it)."""

from __future__ import annotations

import enum
import re
from typing import Optional

LOOKAHEAD = 64  # characters of a line that classify it as a Markdown block (or not)


class Kind(enum.Enum):
    """What a line is, judged by how it starts."""

    PLAIN = "plain"      # prose, or the continuation of a paragraph
    HEADING = "heading"
    BULLET = "bullet"
    ORDERED = "ordered"
    QUOTE = "quote"
    TABLE = "table"
    RULE = "rule"
    FENCE = "fence"


HARD_LINES = frozenset({Kind.HEADING, Kind.TABLE, Kind.RULE})  # end at their newline
_RE_BLOCK = [
    (re.compile(r"(`{3,}|~{3,})"), Kind.FENCE),
    (re.compile(r"#{1,6}(?:[ \t]|$)"), Kind.HEADING),
    (re.compile(r"[-*+][ \t]|\u2022"), Kind.BULLET),
    (re.compile(r"\d{1,9}[.)](?:[ \t]|$)"), Kind.ORDERED),
    (re.compile(r">"), Kind.QUOTE),
    (re.compile(r"\|"), Kind.TABLE),
    (re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$"), Kind.RULE),
]
# A line start that could still become a block once more characters arrive.
_RE_UNDECIDED = re.compile(r"`+|~+|#{1,6}|[-*+]|\d{1,9}[.)]?|([-*_])(?:[ \t]*\1)*[ \t]*")


def classify(text: str, i: int, final: bool) -> Optional[tuple[Kind, str]]:
    """The kind of the line whose first non-space character is ``text[i]``.

    Reads at most ``LOOKAHEAD`` characters; ``None`` means "cannot tell yet".
    For a fence, the second item is the fence run (``"```"``, ``"~~~~"``).
    """
    window, complete = _line(text, i, final)
    if not complete and _RE_UNDECIDED.fullmatch(window):
        return None
    for pattern, kind in _RE_BLOCK:
        m = pattern.match(window)
        if m:
            return kind, (m.group(1) if kind is Kind.FENCE else "")
    return Kind.PLAIN, ""


_SEPARATOR = re.compile(r"\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?")


def separator_follows(text: str, i: int, final: bool) -> Optional[bool]:
    """Is the line starting at ``text[i]`` a table's separator row (``|---|:--:|``), so
    that the row before it is the header, which names columns and claims nothing?
    ``None``: cannot tell yet."""
    line, complete = _line(text, i, final)
    return bool(_SEPARATOR.fullmatch(line.strip())) if complete else None


def _line(text: str, i: int, final: bool) -> tuple[str, bool]:
    """The line starting at ``text[i]``, as much of it as ``LOOKAHEAD`` reads, and
    whether that is all it will be read as (its end came, or the text's, or the limit)."""
    window = text[i:i + LOOKAHEAD]
    nl = window.find("\n")
    complete = final or nl >= 0 or len(window) == LOOKAHEAD
    return (window[:nl] if nl >= 0 else window).rstrip("\r"), complete
