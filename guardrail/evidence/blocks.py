"""A tool result inside text, found: a fenced code block (```json ... ```), a JSON value
after a label line ("Tool output:", "Result of get_order: {...}"), delimited rows between
a label and a footer ("Query returned 5 rows:", "(5 rows in set)").  Each finder takes the
reader of a whole text (render.py's) and gives the lines to check against, as ``(text,
(start, end) in the text or None)``, the form of the block(s) and which lines stand
around them, or None where the text is not such a tool result (render.py keeps it as it
reads it whole)."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional

from guardrail.evidence.literals import python_literal

Piece = tuple[str, Optional[tuple[int, int]]]
Found = tuple[list[Piece], str, frozenset[int]]
Reader = Callable[[str], Any]  # text -> render.Rendered, read as one whole
_LABELLED = re.compile(r"(?:[ \t]*|[^{}\[\]\n]{1,80}?:[ \t]*)[{\[]")  # a value opens the line
FENCED = re.compile(r"(?m)^[ \t]*(?:```|~~~)")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*[\w+.-]*[ \t]*")
BLOCK_SHARE = 0.5
"""Share of a text's characters (less white space and fences) that its structured
blocks must hold for the text to be read as a tool result: a JSON value after a
label line, or in a fenced block, is a tool result; a JSON example in a page of prose
is not."""


def _shifted(inner: Any, offset: int) -> list[Piece]:
    return [(x.text, (x.source[0] + offset, x.source[1] + offset) if x.source else None)
            for x in inner.lines]


def between_labels(text: str, read: Reader) -> Optional[Found]:
    """A table of delimited rows with a line or two of its own before or after it
    ("Query returned 5 rows:", "5 rows in set"), read as the rows and those lines."""
    raw = text.split("\n")
    kept = [i for i, x in enumerate(raw) if x.strip()]
    rows = [i for i in kept if "," in raw[i] or "\t" in raw[i]]
    if len(rows) < 3 or len(kept) - len(rows) > 4:
        return None
    starts = [0]
    for x in raw:
        starts.append(starts[-1] + len(x) + 1)
    for lead, trail in ((1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 1), (1, 2), (2, 2)):
        if lead + trail >= len(kept) - 2:
            continue
        body = kept[lead:len(kept) - trail]
        a, b = starts[body[0]], starts[body[-1]] + len(raw[body[-1]])
        inner = read(text[a:b])
        if inner.structured:
            def label(i: int) -> Piece:
                return raw[i].strip(), (starts[i], starts[i] + len(raw[i]))

            out = [label(i) for i in kept[:lead]] + _shifted(inner, a) + \
                [label(i) for i in kept[len(kept) - trail:]]
            labels = set(range(lead)) | set(range(len(out) - trail, len(out)))
            return out, inner.format, frozenset(labels)
    return None


def _blocks(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, body_start, body_end)`` of each fenced code block (fences
    included; the body runs to the end of the text if the closing fence is missing)
    and of each JSON object or array of records that opens a line outside them (or a
    dict or list as Python prints it, running to the end of the text)."""
    out, i, starts = [], 0, [0]
    lines = text.split("\n")
    for x in lines:
        starts.append(starts[-1] + len(x) + 1)
    while i < len(lines):
        m = _FENCE.fullmatch(lines[i])
        if m:
            fence = m[1]
            j = next((k for k in range(i + 1, len(lines)) if lines[k].strip()
                      and set(lines[k].strip()) == {fence[0]}
                      and len(lines[k].strip()) >= len(fence)), len(lines))
            out.append((starts[i], min(starts[j + 1] - 1, len(text)) if j < len(lines)
                        else len(text), starts[i + 1], starts[j] - 1 if j < len(lines)
                        else len(text)))
            i = j + 1
            continue
        lead = _LABELLED.match(lines[i])
        if lead:
            a = starts[i] + lead.end() - 1
            try:
                value, end = json.JSONDecoder().raw_decode(text, a)
            except (ValueError, RecursionError):  # or a Python literal up to the end
                value, end = python_literal(text[a:].rstrip()), len(text.rstrip())
            if isinstance(value, dict) or isinstance(value, list) and any(
                    isinstance(v, (dict, list)) for v in value):
                out.append((a, end, a, end))
                while i + 1 < len(lines) and starts[i + 1] < end:
                    i += 1  # to the line the value ends on; the rest of it is text
        i += 1
    return out


def embedded(text: str, read: Reader) -> Optional[Found]:
    """``text`` read as the structured blocks it holds and the lines around them, when
    those blocks hold ``BLOCK_SHARE`` of it; else None."""
    blocks = _blocks(text)
    if not blocks:
        return None
    out: list[Piece] = []
    form, inside, outside, pos, kept = None, 0, 0, 0, set()

    def around(a: int, b: int) -> None:
        nonlocal outside
        for m in re.finditer(r"[^\n]*\S[^\n]*", text[a:b]):
            lead = len(m[0]) - len(m[0].lstrip())
            outside += len("".join(m[0].split()))
            kept.add(len(out))
            out.append((m[0].strip(), (a + m.start() + lead,
                                       a + m.start() + len(m[0].rstrip()))))

    for start, end, a, b in blocks:
        around(pos, start)
        body = text[a:b]
        inner = read(body)
        if inner.structured:
            form = form or inner.format
            inside += len("".join(body.split()))
            out += _shifted(inner, a)
        else:
            around(a, b)
        pos = end
    around(pos, len(text))  # the fences themselves count on neither side
    if form is None or inside < BLOCK_SHARE * max(inside + outside, 1):
        return None
    return out, form, frozenset(kept)


def unfenced(text: str) -> str:
    """``text`` without the fences of the one fenced block it holds, where no more than
    two short lines stand around it (a label, a closing remark): ``key: value`` lines, a
    list or search results in a fence then read as they do bare.  Else ``text``."""
    if not FENCED.search(text):
        return text
    lines = text.split("\n")
    fences = [i for i, x in enumerate(lines) if _FENCE.fullmatch(x)]
    if len(fences) not in (1, 2):
        return text
    a, b = fences[0], fences[-1] if len(fences) == 2 else len(lines)
    outside = [x for i, x in enumerate(lines) if (i < a or i > b) and x.strip()]
    if len(outside) > 2 or any(len(x) > 120 for x in outside):
        return text
    return "\n".join(x for i, x in enumerate(lines) if i not in (a, b))
