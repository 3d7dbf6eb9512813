"""One schema instance: its records, and the tool message that carries them.

``make_records`` draws the records of an instance (distinct in their ``ident``);
``render_context`` lays the fields of them that are shown out in one of ``FORMATS``,
the way tools hand results to an assistant: a JSON object or array (indented or not),
an API envelope around nested objects, search results ``{title, snippet, url}``, a
Markdown table or bullet list, or ``key: value`` lines.  Values stay raw (ISO dates,
``330`` under ``height_m``, ``true``); ``toolctx_render`` words them for answers.
"""

from __future__ import annotations

import json
import random
import re
from typing import Literal

from guardrail.train.toolctx_render import fields_of, money_parts
from guardrail.train.toolctx_schemas import Family, Field, Schema

Format = Literal["json-object", "json-array", "nested-json", "search-results", "markdown-table",
                 "markdown-list", "key-value"]
FORMATS: tuple[Format, ...] = ("json-object", "json-array", "nested-json", "search-results",
                               "markdown-table", "markdown-list", "key-value")


def draw(fam: Family, f: Field, rec: dict, rng: random.Random) -> object:
    """A value of ``f`` for the record drawn so far: its ``gen``'s, else from its vocabulary
    or range."""
    if f.gen is not None:
        return f.gen(rng, rec)
    k = f.kind
    if k == "text":
        return rng.choice(f.vocab)
    if k in ("int", "year"):
        return rng.randint(int(f.lo), int(f.hi))
    if k in ("float", "pct"):
        return round(rng.uniform(f.lo, f.hi), f.places)
    if k == "bool":
        return rng.random() < 0.5
    if k == "list":
        return rng.sample(f.vocab, rng.randint(2, min(4, len(f.vocab))))
    if k == "money":
        if f.cur:
            x = rng.uniform(f.lo, f.hi)
            return int(x) if x >= 1e6 else round(x, 2)
        cur = rng.choice(sorted(fam.currencies))
        dec = fam.currencies[cur][2]
        x = rng.uniform(f.lo, f.hi) * (150 if dec == 0 else 1)
        amount = int(round(x, -4)) if x >= 1e6 else round(x, dec) if dec else int(round(x, -1))
        return {fam.money_keys[0]: amount, fam.money_keys[1]: cur}
    raise ValueError(f"field {f.key} of kind {k} needs a gen")


def make_records(fam: Family, schema: Schema, n: int, rng: random.Random) -> list[dict]:
    """``n`` records (fewer if the vocabulary runs out) with distinct ``ident`` values."""
    shared: dict[str, object] = {}
    recs: list[dict] = []
    for _ in range(10 * n):
        rec: dict = {}
        for f in schema.fields:
            v = shared[f.key] if f.key in shared else draw(fam, f, rec, rng)
            rec[f.key] = None if f.null and not f.core and rng.random() < f.null else v
            if f.shared:
                shared[f.key] = v
        if all(r[schema.ident] != rec[schema.ident] for r in recs):
            recs.append(rec)
        if len(recs) == n:
            break
    return recs


_UNITS = {"m": "m", "c": "°C", "kph": "km/h", "mm": "mm", "pct": "%", "min": "min", "g": "g",
          "hours": "h", "km": "km", "kg": "kg", "months": "months"}


def field_label(key: str) -> str:
    """``height_m`` -> ``Height (m)``: the header a table or list shows for a key."""
    *words, last = key.split("_")
    unit = _UNITS.get(last) if words else None
    text = " ".join(words if unit else words + [last]).replace("pe ratio", "P/E ratio")
    return text[:1].upper() + text[1:] + (f" ({unit})" if unit else "")


def _cell(fam: Family, f: Field, v: object, yes: tuple[str, str] = ("yes", "no")) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return yes[0] if v else yes[1]
    if isinstance(v, dict):
        amount, cur = money_parts(fam, f, v)
        return f"{amount:.{fam.currencies[cur][2] if amount < 1e6 else 0}f} {cur}"
    if isinstance(v, list):
        return ", ".join(v)
    return str(v)


def _nested(schema: Schema, rec: dict, shown: set[str]) -> dict:
    out: dict = {}
    for f in schema.fields:
        if f.key in shown:
            *parents, leaf = f.path or (f.key,)
            node = out
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = rec[f.key]
    return out


def _search(fam: Family, schema: Schema, recs: list[dict], shown: set[str],
            rng: random.Random) -> object:
    """Search results: one per record, or one record's fields spread over 1-3 results."""
    ident = fields_of(schema)[schema.ident]
    rest = [f for f in schema.fields if f.key in shown and f.key != schema.ident]
    if len(recs) == 1:
        k = max(1, min(len(rest), rng.randint(1, 3)))
        cuts = sorted(rng.sample(range(1, len(rest)), k - 1)) if k > 1 else []
        groups = [(recs[0], rest[a:b]) for a, b in zip([0] + cuts, cuts + [len(rest)])]
    else:
        groups = [(r, rest) for r in recs]
    out = []
    for (rec, chunk), site in zip(groups, rng.sample(fam.sites, len(groups))):
        name = _cell(fam, ident, rec[schema.ident])
        facts = " · ".join(f"{field_label(f.key)}: {_cell(fam, f, rec[f.key])}" for f in chunk)
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        out.append({"title": f"{name} | {site.split('.')[0].capitalize()}",
                    "snippet": f"{name} — {facts}" if facts else name,
                    "url": f"https://{site}/{slug}"})
    return out if rng.random() < 0.5 else {"results": out}


def _table(rows: list[list[str]]) -> str:
    head, *body = rows
    return "\n".join("| " + " | ".join(row) + " |" for row in [head, ["---"] * len(head)] + body)


def render_context(fam: Family, schema: Schema, fmt: Format, recs: list[dict], shown: set[str],
                   rng: random.Random) -> str:
    """The tool result, as the tool message carries it, of the ``shown`` fields of ``recs``."""
    fields = [f for f in schema.fields if f.key in shown]
    if fmt in ("json-object", "json-array"):
        flat = [{f.key: r[f.key] for f in fields} for r in recs]
        data: object = flat[0] if fmt == "json-object" else flat
    elif fmt == "nested-json":
        inner = [_nested(schema, r, shown) for r in recs]
        data = fam.envelope(rng, {schema.name: inner[0]} if len(recs) == 1
                            else {schema.plural: inner})
    elif fmt == "search-results":
        data = _search(fam, schema, recs, shown, rng)
    elif fmt == "markdown-table" and len(recs) == 1:
        return _table([["Field", "Value"]] + [[field_label(f.key), _cell(fam, f, recs[0][f.key])]
                                              for f in fields])
    elif fmt == "markdown-table":
        return _table([[field_label(f.key) for f in fields]]
                      + [[_cell(fam, f, r[f.key]) for f in fields] for r in recs])
    elif fmt == "markdown-list" and len(recs) == 1:
        return "\n".join(f"- **{field_label(f.key)}:** {_cell(fam, f, recs[0][f.key])}"
                         for f in fields)
    elif fmt == "markdown-list":
        ident = fields_of(schema)[schema.ident]
        return "\n".join(f"- **{_cell(fam, ident, r[schema.ident])}**\n" + "\n".join(
            f"  - {field_label(f.key)}: {_cell(fam, f, r[f.key])}"
            for f in fields if f.key != schema.ident) for r in recs)
    else:  # key-value
        return "\n\n".join("\n".join(f"{f.key}: {_cell(fam, f, r[f.key], ('true', 'false'))}"
                                      for f in fields) for r in recs)
    return json.dumps(data, ensure_ascii=False, indent=rng.choice((None, 2)))
