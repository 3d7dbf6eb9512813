"""An answer that is a JSON document (``response_format`` ``json_object`` or
``json_schema``): which of its characters a redaction may replace.

    JsonValues().feed(text)        read the answer piece by piece, as it streams; returns
                                   the piece as the detector reads it (below) and where
                                   string values end in it
    JsonValues.of(start, end)      per character of answer[start:end]: 1 inside a string
                                   value, 2 an escape's backslash there, 3 the rest of
                                   that escape ("\\u00e9": 2 then five 3s), 0 elsewhere
                                   (keys, quotes, numbers, punctuation, whitespace)
    redact_values(text, spans, mode, marker, values)
                                   ``policy.redact`` that replaces string-value text only

A sentence of such an answer is cut from the raw JSON ("It was delivered by J. Smith."}"
ends the document), so a redaction of the whole sentence would take the closing quote
and brace with it and hand the client JSON it cannot parse.  Here only text inside
string values is replaced, never a key, a quote, a number or the structure, so the
document stays valid JSON (a value may then fail a schema's enum or pattern; ``block``
is the policy for answers that must hold to one).

What the detector reads of such an answer is its string values' text alone, at the same
offsets: every other character (keys, quotes, numbers, punctuation) is a space, and an
escape reads as the character it stands for, after a space ("\\"" a quote, "\\n" a line
break, so lists and paragraphs are cut as in prose; "\\u00e9" reads as spaces).  Read
raw, the syntax around a sentence raises its scores, and a true sentence copied from the
grounding is flagged.  Each string value ends a sentence, so no sentence runs across
two values.  Keys, numbers and booleans are not checked: no
redaction could change them and keep the document (``block`` does not see them either).
No I/O.
"""

from __future__ import annotations

from typing import Optional, Sequence

from guardrail.types import Span

__all__ = ["JsonValues", "redact_values"]

# an escape's letter as read (its backslash reads as a space); the rest: " "
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t"}
# what may stand outside a string in JSON: structure, numbers, true, false, null
_BARE = frozenset(' \t\r\n{}[],:"0123456789+-.eEtrufalsn')


class JsonValues:
    def __init__(self) -> None:
        self._kinds = bytearray()
        self._stack: list[str] = []
        self._in_string = self._key = self._expect_key = False
        self._escape = 0  # characters of an escape still to come
        self._fresh = False  # the last one was its backslash
        self.prose = False  # a character no JSON document holds there: read as text
        self._fence = False  # on a line of "```json" before or after the document

    def feed(self, text: str) -> tuple[str, list[int]]:
        """Read ``text``; returns it as the detector reads it (module docstring) and the
        offsets in it just after each string value's closing quote.  From a character
        that cannot stand where it stands in JSON (an upstream that ignored the request
        and wrote prose) the rest is text: read as it is, and redactable as a plain
        answer is, never passed unread.  A Markdown fence line around the document
        ("```json") is syntax."""
        out, view, ends, word = self._kinds, [], [], 0  # word: where a bare word began
        for i, ch in enumerate(text):
            outside = not self.prose and not self._in_string
            if outside and not self._stack and (ch == "`" or self._fence) and \
                    (ch.isalnum() or ch in "`_-\n"):  # a fence line ("```json") around it
                self._fence = ch != "\n"
                out.append(0)
                view.append(" ")
                continue
            if outside and (ch not in _BARE or self._fence):
                self.prose, self._fence = True, False
                for j in range(word, i):  # and the bare word it ends ("True, it ...")
                    out[j - i], view[j - i] = 1, text[j]
            if self.prose:
                out.append(1)
                view.append(ch)
                continue
            if not self._in_string and (ch.isspace() or ch in '{}[],:"'):
                word = i + 1
            if self._in_string:
                value = 0 if self._key else 1
                if self._escape:
                    view.append(_ESCAPED.get(ch, " ") if self._fresh and value else " ")
                    self._escape = 4 if self._fresh and ch == "u" else self._escape - 1
                    self._fresh = False
                    out.append(3 * value)
                elif ch == "\\":
                    self._escape, self._fresh = 1, True
                    out.append(2 * value)
                    view.append(" ")
                elif ch == '"':
                    self._in_string = False
                    out.append(0)
                    view.append(" ")
                    if value:
                        ends.append(i + 1)
                else:
                    out.append(value)
                    view.append(ch if value else " ")
                continue
            out.append(0)
            view.append(" ")
            if ch == '"':
                self._in_string = True
                self._key = bool(self._stack) and self._stack[-1] == "{" and self._expect_key
            elif ch in "{[":
                self._stack.append(ch)
                self._expect_key = ch == "{"
            elif ch in "}]":
                if self._stack:
                    self._stack.pop()
                self._expect_key = False
            elif ch == ",":
                self._expect_key = bool(self._stack) and self._stack[-1] == "{"
            elif ch == ":":
                self._expect_key = False
        return "".join(view), ends

    def of(self, start: int, end: int) -> bytes:
        return bytes(self._kinds[start:end])


def redact_values(text: str, spans: Sequence[Span], mode: str, marker: str,
                  values: bytes, span: Optional[tuple[int, int]] = None) -> str:
    """``text`` with ``marker`` in place of one clean ``span`` (``policy.clean_span``, in
    ``spans`` mode) where it lies in plain string-value text, else in place of every
    run of string-value text in the sentence (its whitespace at either end kept).
    Unchanged where the sentence holds no string-value text (a number, a key)."""
    if mode == "spans" and span is not None and all(
            k == 1 for k in values[span[0]:span[1]]):
        return text[:span[0]] + marker + text[span[1]:]
    out, i = [], 0
    while i < len(text):
        if not values[i]:
            j = i
            while j < len(text) and not values[j]:
                j += 1
            out.append(text[i:j])
        else:
            j = i
            while j < len(text) and values[j]:
                j += 1
            a, b = _whole_escapes(text, values, i, j)
            run = text[a:b]
            core = run.strip()
            out.append(text[i:a] + (run if not core else run[:len(run) - len(run.lstrip())]
                                    + marker + run[len(run.rstrip()):]) + text[b:j])
        i = j
    return "".join(out)


def _whole_escapes(text: str, values: bytes, i: int, j: int) -> tuple[int, int]:
    """The part of the value run ``text[i:j]`` that holds whole escapes only: the end of
    an escape begun before the sentence, and one the sentence's end cuts, stay as sent,
    so a replacement never leaves half of one ("\\" without its quote)."""
    while i < j and values[i] == 3:
        i += 1
    last = max((p for p in range(max(i, j - 6), j) if values[p] == 2), default=None)
    if last is not None and j == len(text):
        need = 6 if last + 1 < j and text[last + 1] == "u" else 2
        if last + 1 >= j or last + need > j:
            j = last
    return i, j
