"""How a text lists things: how many (counts), and its records (a key-value text).

    counts(text)        how many: rows of a markdown table, blank-line separated records,
                        items of a markdown list or of a comma-separated value
    listed(line)        the item counts of one line's comma-separated values
    rendered_counts(doc, format, lines)   the same for a structured document as rendered
    record_blocks(t)    a key-value text's records (blank-line separated blocks or nested
                        list items), or None
    is_key_value(t)     most lines ``key: value`` (a tool result written as text)
    enumerated(s, n)    a sentence's count ``n`` is how many items it lists after a colon
"""

from __future__ import annotations

import re
from typing import Optional

from guardrail.evidence.values import Number

_KEY_VALUE = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?\**[\w][\w ()/#.\-]{0,40}"
                        r"(?::\*\*|\*\*:|:)\s+\S.{0,160}$")  # short: not a passage
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _items(value: str) -> int:
    parts = [p for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+and\s+", value) if p.strip()]
    return len(parts)


_ITEM_BREAK = re.compile(r",\s*(?:and\s+|or\s+|followed by\s+|then\s+)?|\s+and\s+|;\s*")


def enumerated(sentence: str, n: Number) -> bool:
    """``n`` (a count in words) is how many items the sentence lists
    after a colon that follows it ("Two entries are missing receipts: the $87.43 Staples
    purchase on February 7 and the Uber ride on February 19."), split at commas, "and"
    and "followed by".  Each item is a claim of its own; the count only says how many
    there are.  An item with a comma in it splits in two: such a list reads longer than
    it is."""
    if n.kind != "count" or not 2 <= n.value <= 9 or not n.value.is_integer():
        return False
    colon = sentence.find(":", n.end)
    rest = sentence[colon + 1:].strip().rstrip(".!?").strip() if colon >= 0 else ""
    if not rest or re.search(r"(?<!\d):|:(?!\d)", rest) or re.search(
            r"\d:\d", sentence[n.end:colon + 2]):
        return False  # no list after it, a second one, or the colon of a time of day
    return len([p for p in _ITEM_BREAK.split(rest) if p.strip()]) == n.value


def rendered_counts(doc: str, format: str, lines: list[str]) -> set[int]:
    """How many of something a structured document lists: its rows (CSV), its table's
    rows and its lists (a markdown table), the items each rendered line lists (JSON)."""
    if format == "csv":
        return {len(lines)}
    if format == "markdown-table":
        return counts(doc)
    return {n for x in lines for n in listed(x) if n >= 2}


def listed(line: str) -> set[int]:
    """How many items each comma-separated value of ``line`` lists ("attendees: A, B, C",
    "Cast: A, B · Critic score: 5.2", a table cell "x, y")."""
    found = set()
    for segment in re.split(r"[·;|—]", line):
        value = segment.rsplit(":", 1)[-1]
        if "," in value:
            found.add(_items(value))
    return found


def counts(text: str) -> set[int]:
    """How many of something the text lists (see the module docstring)."""
    found: set[int] = set()
    lines = text.split("\n")
    rows = 0
    for i, line in enumerate(lines + [""]):
        if "|" in line and not _TABLE_SEP.match(line):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            rows += 0 if (_TABLE_SEP.match(nxt) and "|" in nxt) else 1
        elif rows:
            found.add(rows)
            rows = 0
        found |= listed(line)
    found |= {len(run) for run in _list_runs(lines)  # not the fields of one record
              if sum(_KEY_VALUE.match(lines[i]) is not None for i in run) < 0.6 * len(run)}
    blocks = record_blocks(text)
    if blocks is not None:
        found.add(len(blocks))
    return {n for n in found if n >= 2}


def _list_runs(lines: list[str]) -> list[list[int]]:
    """Runs of markdown list items at one indent: the line numbers of each top-level
    item (a deeper item or a wrapped line belongs to the item above it)."""
    runs: list[list[int]] = []
    current: list[int] = []
    indent: Optional[int] = None
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if _LIST_ITEM.match(line) and (indent is None or depth <= indent):
            if indent is not None and depth < indent:
                current = []
                runs.append(current)
            indent = depth
            if not current:
                runs.append(current)
            current.append(i)
        elif indent is None or depth <= indent:
            current, indent = [], None
    return [r for r in runs if len(r) >= 2]


def record_blocks(text: str) -> Optional[list[str]]:
    """The records of a ``key: value`` text, when it is one: blank-line separated
    blocks (most lines ``key: value``), or the items of a markdown list whose items
    hold nested ``key: value`` items; else None."""
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    if len(blocks) >= 2:
        lines = [x for b in blocks for x in b.split("\n") if x.strip()]
        kv = sum(1 for x in lines if _KEY_VALUE.match(x))
        return blocks if kv >= 0.6 * len(lines) else None
    lines = text.split("\n")
    runs = _list_runs(lines)
    if len(runs) != 1 or len(runs[0]) < 2:
        return None
    starts = runs[0] + [len(lines)]
    items = ["\n".join(lines[a:b]) for a, b in zip(starts, starts[1:])]
    nested = sum(1 for it in items if it.count("\n") >= 1)
    return items if nested == len(items) else None


def is_key_value(text: str) -> bool:
    """Most lines ``key: value`` (a tool result written as text)."""
    lines = [x for x in text.split("\n") if x.strip()]
    return len(lines) >= 3 and sum(1 for x in lines if _KEY_VALUE.match(x)) >= 0.6 * len(lines)
