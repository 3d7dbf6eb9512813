"""A tool result's value read from its text: JSON, JSON Lines, or a dict or list as
Python prints it.  ``parse_value(text)`` is the dict or list the text holds, or None
(prose, a table, a bare number): the caller renders it (render.py).  Literals are
parsed, never evaluated."""

from __future__ import annotations

import ast
import json
from typing import Any, Optional


def parse_value(text: str) -> Optional[Any]:
    """The JSON value (or JSON Lines, or Python literal) ``text`` holds, if it opens
    with ``{`` or ``[``, or a JSON string holding one (a result encoded twice); else
    None."""
    s = text.strip()
    if s[:1] == '"' and s[1:2] in "[{":
        try:
            inner = json.loads(s)
        except (ValueError, RecursionError):
            return None
        return parse_value(inner) if isinstance(inner, str) and inner[:1] != '"' else None
    if not s or s[0] not in "[{":
        return None
    try:
        return json.loads(s)
    except (ValueError, RecursionError):
        return _json_lines(s) or python_literal(s)


def _json_lines(s: str) -> Optional[list]:
    """JSON Lines (a log, a search tool's hits): two lines or more, each a JSON object,
    read as the array of them."""
    rows = [x for x in s.split("\n") if x.strip()]
    if len(rows) < 2 or not all(x.lstrip().startswith("{") for x in rows):
        return None
    try:
        values = [json.loads(x) for x in rows]
    except (ValueError, RecursionError):
        return None
    return values if all(isinstance(v, dict) for v in values) else None


MAX_LITERAL = 1 << 20


def python_literal(s: str) -> Optional[Any]:
    """A dict or list as Python prints it (``str()`` of what a tool returned, as agent
    frameworks send it: single quotes, ``True``, ``None``), read as its JSON would be;
    never evaluated beyond literals."""
    if len(s) > MAX_LITERAL or s[:1] not in "[{":
        return None
    try:
        value = _as_json(ast.literal_eval(s))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _as_json(value: Any) -> Any:
    if isinstance(value, dict):
        if not all(isinstance(k, (str, int, float, bool)) or k is None for k in value):
            raise TypeError("a key JSON cannot hold")
        return {k if isinstance(k, str) else json.dumps(k): _as_json(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"not a JSON value: {type(value).__name__}")
