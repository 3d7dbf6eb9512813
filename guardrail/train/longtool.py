"""Long tool-grounded turns: one turn's tool result among many other tool results.

    guardrail data longtool --family dev --lengths 8192,32768 --depths 0,0.5,1 \\
        --n-per-cell 60 --seed 1 --out runs/longtool/dev.jsonl

An agent's session calls many tools, and an answer speaks of one of their results. Each
turn of :func:`guardrail.train.toolctx.generate` is kept exactly (its tool result,
question, answer and sentence labels) and its result is placed among results of the
family's *other* schemas, each a tool message of its own, until the grounding holds
``length`` tokens; the turn's own result sits at ``depth`` of them (0 first, 1 last).
Other schemas hold no record, count or name the answer speaks of, so every label
stays true: what changes is how much the check must read past. The other results are
drawn afresh (1 to ``length // 1500`` records of any of the seven formats, every field
shown), the same ones at every depth of a turn, so cells differ only in where the
evidence sits. Every turn also comes alone (``length`` 0, the ``short`` cell), the
baseline each long cell is read against, in the same run. With ``joined``, a ``joined``
cell per length holds answers about *two* results: another turn's answer (of another
schema; its result first among the documents), then the turn's own (its result in the
middle), their questions asked together, every sentence labelled as before.

Rows are ``guardrail data fetch`` rows (so every ``--data`` reads them) with the tool
results under ``documents`` and, as in ``toolctx`` files, ``sentences``, ``format`` and
``schema``, plus ``length``, ``depth``, ``n_tokens``, ``evidence_index`` and
``other_schemas``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from guardrail.train.data import example_row
from guardrail.train.toolctx import FAMILIES, Turn, generate
from guardrail.train.toolctx_context import FORMATS, make_records, render_context

__all__ = ["LongTurn", "MAX_DOCUMENTS", "build", "cell_name", "write_jsonl"]

MAX_DOCUMENTS = 63  # the proxy's `context.max_documents` (64) less one: a grounding it takes


@dataclass(frozen=True)
class LongTurn:
    turn: Turn                 # the turn, its example rewritten: documents, id, dataset
    length: int                # the cell's tokens (0: the turn alone)
    depth: float               # where its own result sits among the documents
    n_tokens: int              # the grounding's tokens, all documents together
    evidence_index: int        # the position of the turn's own result in ``documents``
    other_schemas: tuple[str, ...] = ()  # of the other results, in their order


def cell_name(family: str, length: int, depth: float) -> str:
    """``longtool/dev/short``, ``longtool/dev/8192/d0.5``: a report's data set per cell."""
    return f"longtool/{family}/short" if not length else f"longtool/{family}/{length}/d{depth:g}"


def _others(family: str, own: set[str], length: int, count: Callable[[str], int],
            rng: random.Random) -> list[tuple[str, int, str]]:
    """Tool results of the family's schemas other than ``own``, with their tokens, until
    they hold ``length`` tokens (at most :data:`MAX_DOCUMENTS`, each holding more
    records)."""
    fam = FAMILIES[family]
    schemas = [s for s in fam.schemas if s.name not in own]
    most = max(3, length // 1500)
    out: list[tuple[str, int, str]] = []
    total = 0
    while total < length:
        if len(out) >= MAX_DOCUMENTS - 1:
            raise ValueError(f"{length} tokens need more than {MAX_DOCUMENTS} tool results")
        schema, fmt = rng.choice(schemas), rng.choice(FORMATS)
        n = 1 if fmt == "json-object" else rng.randint(1, most)
        if fmt == "search-results":  # a result per record, each from another site
            n = min(n, len(fam.sites))
        recs = make_records(fam, schema, n, rng)
        shown = {f.key for f in schema.fields if not f.key.startswith("_")}
        text = render_context(fam, schema, fmt, recs, shown, rng)
        k = count(text)
        out.append((text, k, schema.name))
        total += k
    return out


def _pick(turns: Sequence[Turn], n: int, rng: random.Random) -> list[Turn]:
    """``n`` turns, half of them (as far as there are) with an unsupported sentence."""
    bad = [t for t in turns if t.example.hallucinated]
    good = [t for t in turns if not t.example.hallucinated]
    rng.shuffle(bad)
    rng.shuffle(good)
    k = min(len(bad), n // 2)
    return sorted(bad[:k] + good[:n - k], key=lambda t: t.example.id)


def build(family: str, tokenizer, *, lengths: Sequence[int], depths: Sequence[float],
          n_per_cell: int, seed: int, joined: bool = False) -> list[LongTurn]:
    """The turns of every cell: ``n_per_cell`` turns alone, then at each length and
    depth (see the module's docstring), and with ``joined`` the ``joined`` cell of each
    length (:func:`_joined`); deterministic in its arguments."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family!r}")
    if any(not 0 <= d <= 1 for d in depths) or not depths:
        raise ValueError("depths must lie in [0, 1]")
    if any(n <= 0 for n in lengths):
        raise ValueError("lengths must be positive token counts")

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    rng = random.Random(f"longtool/{family}/{seed}")
    turns = _pick(generate(family, 4 * n_per_cell, seed), n_per_cell, rng)
    out = [_placed(t, (), 0, 0.0, count(t.example.context), family) for t in turns]
    for t in turns:
        own = count(t.example.context)
        for length in lengths:
            others = _others(family, {t.schema}, length - own,
                             count, random.Random(f"{t.example.id}/{length}/{seed}"))
            for depth in depths:
                out.append(_placed(t, others, length, depth,
                                   own + sum(k for _, k, _ in others), family))
    if joined:
        for i, t in enumerate(turns):
            p = next(u for u in turns[i + 1:] + turns[:i] if u.schema != t.schema)
            both = _join(p, t)
            for length in lengths:
                mine = count(p.example.context) + count(t.example.context)
                others = _others(family, {t.schema, p.schema}, length - mine, count,
                                 random.Random(f"{t.example.id}/joined/{length}/{seed}"))
                lt = _placed(both, [(p.example.context, 0, p.schema), *others], length, 0.5,
                             mine + sum(k for _, k, _ in others), family)
                out.append(replace(lt, turn=replace(lt.turn, example=replace(
                    lt.turn.example, id=f"{t.example.id}/{length}/joined",
                    dataset=f"longtool/{family}/{length}/joined"))))
    return out


def _join(first: Turn, then: Turn) -> Turn:
    """One answer about two tool results: ``first``'s answer, then ``then``'s, their
    questions asked together; every sentence keeps its label (``then``'s context is
    the turn's own result, ``first``'s is placed first among the other results)."""
    shift = len(first.example.response) + 1
    moved = tuple(replace(s, start=s.start + shift, end=s.end + shift,
                          spans=tuple((a + shift, b + shift) for a, b in s.spans))
                  for s in then.sentences)
    ex = replace(then.example, question=f"{first.example.question} {then.example.question}",
                 response=f"{first.example.response} {then.example.response}",
                 spans=first.example.spans + tuple((a + shift, b + shift)
                                                   for a, b in then.example.spans),
                 hallucinated=first.example.hallucinated or then.example.hallucinated)
    return replace(then, example=ex, schema=f"{first.schema}+{then.schema}",
                   sentences=first.sentences + moved)


def _placed(t: Turn, others: Sequence[tuple[str, int, str]], length: int, depth: float,
            n_tokens: int, family: str) -> LongTurn:
    at = round(depth * len(others))
    docs = [d for d, _, _ in others[:at]] + [t.example.context] + [d for d, _, _ in others[at:]]
    name = cell_name(family, length, depth)
    ex = replace(t.example, id=f"{t.example.id}/{name.split('/', 2)[2]}",
                 context="\n\n".join(docs), documents=tuple(docs) if others else (),
                 dataset=name)
    return LongTurn(replace(t, example=ex), length, depth, n_tokens, at,
                    tuple(s for _, _, s in others))


def write_jsonl(path: str | Path, turns: Sequence[LongTurn]) -> Path:
    """One row a line (the module's docstring names the fields)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for lt in turns:
            t = lt.turn
            row = {**example_row(t.example), "format": t.format, "schema": t.schema,
                   "sentences": [{**vars(s), "spans": [list(p) for p in s.spans]}
                                 for s in t.sentences],
                   "length": lt.length, "depth": lt.depth, "n_tokens": lt.n_tokens,
                   "evidence_index": lt.evidence_index, "other_schemas": list(lt.other_schemas)}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
