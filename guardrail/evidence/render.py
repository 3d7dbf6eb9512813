"""Structured grounding, rendered the way a reader checks it: one ``path: value`` line
per value.

Tool results arrive as JSON (objects, arrays of records, nested objects), markdown tables
or lists, CSV or TSV with a header row, ``key: value`` text and search-result lists.
``render(text)`` turns each into lines a sentence can be matched against,
deterministically and without dropping a value:

    {"name": "Eiffel Tower", "height_m": 330,      name: Eiffel Tower
     "opened": "1889-03-31", "lit": true}     ->    height m: 330
                                                    opened: 1889-03-31 (March 31, 1889)
                                                    lit: true

* keys are written as words (``height_m`` -> ``height m``, ``inStock`` -> ``in stock``);
  nested keys join with `` > ``, and the records of an array are kept together, each
  opened by its position (``results 2:``), so a value stays next to its neighbours;
* ISO dates and times keep their text and gain the written form assistants use;
* markdown table rows and CSV/TSV rows become one line each, every cell named by its
  column ("distance mi: 3.4; duration min: 22"), as a record is read;
* JSON Lines, a dict or list as Python prints it and a JSON string holding JSON are read
  as the JSON they stand for (literals.py);
* a structured block inside text (in a fenced code block, a JSON value after a line
  such as "Tool output:", CSV rows between a label and a footer) is rendered as above
  when it holds most of the text; the lines around it are kept as they are and the
  fences dropped (blocks.py);
* everything else (prose, lists, ``key: value`` text, code) is kept as it is.

Every line carries the character range of its value in the original text (``None``
where the value cannot be placed, e.g. a number written ``1.0`` and parsed as ``1.0``
twice), so an explanation can point back into the tool result as the client sent it.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import re
from dataclasses import dataclass
from typing import Any, Optional

from guardrail.evidence.blocks import FENCED, between_labels, embedded, unfenced
from guardrail.evidence.literals import parse_value

MAX_DEPTH = 64  # deeper JSON is rendered from the depth limit down as its JSON text

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
                  r"(Z|[+-]\d{2}:?\d{2})?)?$")
_YEAR_MONTH = re.compile(r"^((?:19|20)\d{2})-(0[1-9]|1[0-2])$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Line:
    """One rendered line and where its value stands in the original text."""

    text: str
    source: Optional[tuple[int, int]]


@dataclass(frozen=True)
class Rendered:
    """A document as read for checking: its lines, and the form it came in."""

    original: str
    lines: tuple[Line, ...]
    format: str  # "json" | "markdown-table" | "csv" | "text"
    around: frozenset[int] = frozenset()
    """Which lines stand around a structured block in the text (a label, a closing
    remark) rather than in it."""

    @property
    def block_lines(self) -> list[str]:
        """The lines of the structured block(s) alone."""
        return [x.text for i, x in enumerate(self.lines) if i not in self.around]

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    @property
    def structured(self) -> bool:
        return self.format != "text"


def words_of_key(key: str) -> str:
    """``height_m`` -> ``height m``; ``inStock`` -> ``in stock``; ``first-name`` -> ``first name``."""
    key = _CAMEL.sub(" ", str(key))
    return " ".join(re.split(r"[_\-\s.]+", key)).strip().lower() or str(key)


def written_date(text: str) -> Optional[str]:
    """``2024-03-01`` -> ``March 1, 2024``; with a time, ``March 1, 2024, 14:30 UTC``
    (its seconds too, unless they are none: ``14:30:15``); a month, ``2024-09`` ->
    ``September 2024``."""
    if m := _YEAR_MONTH.match(text.strip()):
        return f"{MONTHS[int(m[2]) - 1]} {m[1]}"
    m = _ISO.match(text.strip())
    if not m:
        return None
    y, mo, d = int(m[1]), int(m[2]), int(m[3])
    try:
        _dt.date(y, mo, d)
    except ValueError:
        return None
    out = f"{MONTHS[mo - 1]} {d}, {y}"
    if m[4]:
        out += f", {m[4]}:{m[5]}" + (f":{m[6]}" if m[6] and m[6] != "00" else "")
        if m[7]:
            out += " UTC" if m[7] == "Z" else f" {m[7]}"
    return out


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value)) if "e" not in repr(value) else repr(value)
    if isinstance(value, str):
        text = " ".join(value.split())
        date = written_date(text)
        return f"{text} ({date})" if date else text
    return str(value)


def _literals(value: Any) -> list[str]:
    """How a scalar may be spelled in the JSON text, most likely first."""
    if isinstance(value, str):
        return [json.dumps(value, ensure_ascii=False), json.dumps(value), repr(value)]
    if value is None:
        return ["null", "None"]
    if value is True or value is False:
        return ["true" if value else "false", repr(value)]
    return [json.dumps(value), repr(value)]


class _Locator:
    """Finds each scalar's literal in the JSON text, in document order."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def find(self, value: Any) -> Optional[tuple[int, int]]:
        for lit in _literals(value):
            i = self.text.find(lit, self.pos)
            if i >= 0:
                self.pos = i + len(lit)
                return (i + 1, i + len(lit) - 1) if lit[:1] in "\"'" else (i, i + len(lit))
        return None


def _walk(value: Any, path: list[str], out: list[Line], loc: _Locator, depth: int) -> None:
    label = " > ".join(path)
    if depth >= MAX_DEPTH:
        out.append(Line(f"{label}: {json.dumps(value, ensure_ascii=False)}", None))
        return
    if isinstance(value, dict):
        if not value:
            out.append(Line(f"{label}: (empty)" if label else "(empty)", None))
        by_column = _rows_by_column(value)
        for k, v in value.items():
            loc.find(k)  # keys come before their values in the text
            _walk(by_column if k == "rows" and by_column else v, path + [words_of_key(k)],
                  out, loc, depth + 1)
        return
    if isinstance(value, list):
        if not value:
            out.append(Line(f"{label}: (empty)" if label else "(empty)", None))
        records = any(isinstance(v, (dict, list)) for v in value)
        for i, v in enumerate(value, 1):
            if records:  # "rooms 2 of 3:", then "rooms 2 > name: Birch"
                own = f"{path[-1]} {i}" if path else f"item {i}"
                out.append(Line(f"{' > '.join(path[:-1] + [own])} of {len(value)}:", None))
                _walk(v, path[:-1] + [own], out, loc, depth + 1)
            else:
                src = loc.find(v)
                out.append(Line(f"{label}: {_scalar(v)}" if label else _scalar(v), src))
        return
    src = loc.find(value)
    out.append(Line(f"{label}: {_scalar(value)}" if label else _scalar(value), src))


def _rows_by_column(value: dict) -> Optional[list[dict]]:
    """A query result's ``rows`` (lists of values) keyed by its ``columns`` (names, or
    objects with a ``name``): each row a record whose values say what they are."""
    columns, rows = value.get("columns"), value.get("rows")
    if not isinstance(columns, list) or not isinstance(rows, list) or not rows:
        return None
    names = [c if isinstance(c, str) else c.get("name") if isinstance(c, dict) else None
             for c in columns]
    if not all(isinstance(n, str) and n for n in names) or len(set(names)) < len(names) \
            or not all(isinstance(r, list) and len(r) == len(names) for r in rows):
        return None
    return [dict(zip(names, r)) for r in rows]


def _markdown_table(text: str) -> Optional[list[Line]]:
    lines = text.split("\n")
    if not any(_TABLE_SEP.match(x) and "|" in x for x in lines):
        return None
    out: list[Line] = []
    header: Optional[list[str]] = None
    pos, starts = 0, []
    for x in lines:
        starts.append(pos)
        pos += len(x) + 1
    for i, line in enumerate(lines):
        if _TABLE_SEP.match(line) and "|" in line:
            continue
        if "|" not in line:
            header = None
            if line.strip():
                out.append(Line(line.strip(), (starts[i], starts[i] + len(line))))
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if header is None and _TABLE_SEP.match(nxt) and "|" in nxt:
            header = [words_of_key(c) if c else f"column {j + 1}" for j, c in enumerate(cells)]
            continue
        names = header or [f"column {j + 1}" for j in range(len(cells))]
        parts = [f"{names[j] if j < len(names) else f'column {j + 1}'}: {_scalar(c)}"
                 for j, c in enumerate(cells) if c]
        out.append(Line("; ".join(parts), (starts[i], starts[i] + len(line))))
    return out


_NAME = re.compile(r"[A-Za-z_][\w /().%#-]{0,39}(?<![.!?])")  # a column's name, not a value
_NUMBER = re.compile(r"[-+]?[$€£]?\d[\d,]*(?:\.\d+)?%?")
# what else a column of typed cells holds: an ISO date (and time), a clock time, a yes/no
_TYPED = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?\S*)?|\d{1,2}:\d{2}"
                    r"(?::\d{2})?|true|false|yes|no", re.I)


def _delimited(text: str) -> Optional[list[Line]]:
    """CSV or TSV: a header of names, then two rows or more, each of the header's number
    of cells (two or more), and a column of numbers (or of ISO dates, clock times or
    yes/no values: a log of bookings may hold no plain number).  Prose seldom has as many
    commas on every line, and seldom a number or a date after the same one on each."""
    raw = text.split("\n")
    starts = [0]
    for x in raw:
        starts.append(starts[-1] + len(x) + 1)
    kept = [i for i, x in enumerate(raw) if x.strip()]
    if len(kept) < 3:
        return None
    for delimiter in (",", "\t"):
        try:
            rows = [next(csv.reader([raw[i]], delimiter=delimiter)) for i in kept]
        except csv.Error:  # a bare carriage return inside a line: prose, not a table
            return None
        header = [c.strip() for c in rows[0]]
        if len(header) < 2 or any(len(r) != len(header) for r in rows) \
                or not all(_NAME.fullmatch(c) for c in header) \
                or not any(all(_NUMBER.fullmatch(r[j].strip()) for r in rows[1:])
                           or all(_TYPED.fullmatch(r[j].strip()) for r in rows[1:])
                           for j in range(len(header))):
            continue
        names = [words_of_key(c) for c in header]
        return [Line("; ".join(f"{names[j]}: {_scalar(c.strip())}"
                               for j, c in enumerate(cells) if c.strip()),
                     (starts[i], starts[i] + len(raw[i])))
                for i, cells in zip(kept[1:], rows[1:])]
    return None


def render(text: str) -> Rendered:
    """``text`` as lines to check against (see the module docstring)."""
    whole = _render_whole(text)
    if whole.structured and not FENCED.search(text):
        return whole
    found = embedded(text, _render_whole) or between_labels(text, _render_whole)
    if found is None:
        return whole
    lines, form, around = found
    return Rendered(text, tuple(Line(x, source) for x, source in lines), form, around)


def _render_whole(text: str) -> Rendered:
    """``text`` read as one JSON value, one table, or lines of text."""
    value = parse_value(text)
    if value is not None and isinstance(value, (dict, list)):
        out: list[Line] = []
        _walk(value, [], out, _Locator(text), 0)
        return Rendered(text, tuple(out), "json")
    table = _markdown_table(text)
    if table is not None:
        return Rendered(text, tuple(table), "markdown-table")
    rows = _delimited(text)
    if rows is not None:
        return Rendered(text, tuple(rows), "csv")
    lines, pos = [], 0
    for raw in text.split("\n"):
        if raw.strip():
            lines.append(Line(raw, (pos, pos + len(raw))))
        pos += len(raw) + 1
    return Rendered(text, tuple(lines), "text")


def render_documents(documents: "list[str] | tuple[str, ...]") -> list[str]:
    """Each document rendered (structured ones) or kept as it is (prose; less the fences
    of a lone fenced block, see ``unfenced``)."""
    out = []
    for d in documents:
        r = render(d)
        out.append(r.text if r.structured else unfenced(d))
    return out
