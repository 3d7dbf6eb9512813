"""Tool-grounded chat turns with sentence labels (issue #12).

    guardrail data toolctx --family train|dev|calib|holdout --n N --seed S --out PATH.jsonl

A turn is a tool result (the context, exactly as the tool message carries it), a user
question and an answer of 1-5 sentences paraphrasing the result as chat assistants do:
units spelled out, amounts with currency symbols, "March 1, 2024", booleans as words,
lists summarised, keys paraphrased, plus sentences that claim nothing ("Here's what I
found:").  Sentences are cut where the proxy's segmenter cuts them, and labelled

    supported     every value in it is in the context (paraphrased)
    contradicted  one value changed: a number, date, time, name, flipped boolean, wrong
                  unit or currency, a list item, a count; the span is that value
    unverifiable  a fact the context does not hold (a field left out of this context, or
                  a claim no context makes); the span is the sentence after its subject
    no_claim      intros and sign-offs

About 70 % of turns are fully supported.  A context lays out the records of one schema instance
in one of seven ``FORMATS``, each field left out at random, so one field's sentence is supported
in one turn and unverifiable in another.  The families ``train``, ``dev``, ``calib`` (for the
sentence judge) and ``holdout`` (an evaluation set nobody tunes on) share no template, field or
vocabulary.  A turn draws from ``random.Random`` seeded with its id alone.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

from guardrail.train.data import Example, example_row, merge_spans
from guardrail.train.external import EXAMPLE_FIELDS
from guardrail.train.toolctx_context import FORMATS, Format, draw, make_records, render_context
from guardrail.train.toolctx_render import (NUMBER_WORDS, Style, alter_value, expand, fields_of,
                                            fill, join_list, pick_styles, template_keys,
                                            template_slots)
from guardrail.train.toolctx_calib import CALIB
from guardrail.train.toolctx_dev import DEV
from guardrail.train.toolctx_holdout import HOLDOUT
from guardrail.train.toolctx_schemas import TRAIN, Fact, Family, Schema

__all__ = ["FAMILIES", "FORMATS", "SentenceLabel", "Turn", "generate", "load_toolctx",
           "load_toolctx_sentences", "stats", "write_jsonl"]

Label = Literal["supported", "contradicted", "unverifiable", "no_claim"]
LABELS: tuple[Label, ...] = ("supported", "contradicted", "unverifiable", "no_claim")
P_HALLUCINATED = 0.3
FAMILIES: dict[str, Family] = {"train": TRAIN, "dev": DEV, "calib": CALIB, "holdout": HOLDOUT}


@dataclass(frozen=True)
class SentenceLabel:
    """One sentence of a response: ``response[start:end]``, its label and why."""

    start: int
    end: int
    label: Label
    spans: tuple[tuple[int, int], ...] = ()  # unsupported characters, offsets in the response
    field: str = ""                        # the changed / missing field ("" for none)
    value: object = None                   # contradicted: the field's value in the context
    original: str = ""                     # contradicted: the sentence before the change


@dataclass(frozen=True)
class Turn:
    example: Example
    format: Format
    schema: str
    sentences: tuple[SentenceLabel, ...]


# -- one turn --------------------------------------------------------------------------------

@dataclass
class _Item:
    """A planned sentence: a claim about record ``rec``, an aggregate, or an unverifiable one."""

    kind: str  # claim | agg | unverifiable
    rec: int
    tpl: str
    fact: Optional[Fact] = None
    label: Label = "supported"


@dataclass(frozen=True)
class _Said:
    text: str
    label: Label
    spans: tuple[tuple[int, int], ...] = ()  # relative to text
    field: str = ""
    value: object = None
    original: str = ""


def _subject_keys(schema: Schema) -> set[str]:
    return template_keys(expand(schema, "{S}", True)) | {schema.ident}


def _supported(schema: Schema, rec: dict, shown: set[str], multi: bool) -> list[tuple[Fact, str]]:
    """``(fact, template)`` that the context supports for ``rec``: every field in it shown."""
    out = []
    for fact in schema.facts:
        keys = template_keys(expand(schema, fact.text, True)) | set(fact.needs)
        if not keys <= shown or (multi and schema.ident not in keys):
            continue  # in a list of records, a sentence must name the one it is about
        if fact.when is not None and not fact.when(rec):
            continue
        if all(rec[k] is not None for k in keys):
            out.append((fact, fact.text))
        elif fact.null and all(rec[k] is not None
                               for k in template_keys(expand(schema, fact.null, True))):
            out.append((fact, fact.null))
    return out


def _in_context(value: object, context: str) -> bool:
    """Does a (text or list) value appear in the context anyway, under another field?"""
    items = value if isinstance(value, list) else [value]
    return any(isinstance(x, str) and len(x) >= 3
               and re.search(rf"(?<!\w){re.escape(x)}(?!\w)", context, re.I) for x in items)


def _unverifiable(schema: Schema, rec: dict, shown: set[str], multi: bool,
                  context: str) -> tuple[list[str], list[str]]:
    """Templates that say something about ``rec`` the context does not hold: ``(facts whose
    fields other than the subject are all left out, the schema's extras)``."""
    subject = _subject_keys(schema)
    implied = {f.key for f in schema.fields if f.implied_by and set(f.implied_by) <= shown}
    out = []
    for fact in schema.facts:
        keys = template_keys(expand(schema, fact.text, True)) | set(fact.needs)
        claim = keys - subject
        if not claim or claim & (shown | implied) or not keys & subject <= shown:
            continue
        if (multi and schema.ident not in keys) or (fact.when and not fact.when(rec)):
            continue
        if all(rec[k] is not None and not _in_context(rec[k], context) for k in claim):
            out.append(fact.text)
    extras = [t for t in schema.extras if (ks := template_keys(expand(schema, t, True))) <= shown
              and (not multi or schema.ident in ks)]
    return out, extras


def _contradict(fam: Family, schema: Schema, it: _Item, tpl: str, rec: dict, recs: list[dict],
                styles: list[Style], first: bool, text: str, named: set[object],
                rng: random.Random) -> Optional[_Said]:
    """``text`` with one value changed so that it is true of no record it could be about;
    the subject may become another record, one the answer does not talk about (``named``)."""
    fields = fields_of(schema)
    if it.fact is not None and it.fact.null and it.tpl == it.fact.null:
        main = expand(schema, it.fact.text, first)  # the context says null; claim a value
        rec2 = dict(rec)
        missing = sorted(k for k in template_keys(main) if rec[k] is None)
        for k in missing:
            rec2[k] = draw(fam, fields[k], dict(rec), rng)
        if any(rec2[k] is None for k in missing):
            return None
        text2, slots2 = fill(fam, schema, main, rec2, pick_styles(fam, schema, main, rec2, rng))
        _, a, b = next(s for s in slots2 if s[0] == missing[0])
        return _Said(text2, "contradicted", ((a, b),), missing[0], None, text)
    protected = _subject_keys(schema) - ({schema.ident} if len(recs) > 1 else set())
    slots = template_slots(tpl)
    # a random order, names less often first: numbers, dates, flags and units matter as much
    weight = {j: 1.0 if fields[k].kind == "text" else 2.5 for j, (k, _) in enumerate(slots)}
    order = sorted((j for j, (k, _) in enumerate(slots) if k not in protected),
                   key=lambda j: -rng.random() ** (1 / weight[j]))
    for j in order * 2:
        k = slots[j][0]
        got = alter_value(fam, schema, fields[k], rec, styles[j], rng, recs)
        if got is None or (k == schema.ident and got[0] in named):
            continue
        rec2 = {**rec, k: got[0]}
        styles2 = styles[:j] + [got[1]] + styles[j + 1:]
        if it.fact is not None and it.fact.when is not None and not it.fact.when(rec2):
            continue
        text2, slots2 = fill(fam, schema, tpl, rec2, styles2)
        keys = template_keys(tpl)
        if any(text2 == fill(fam, schema, tpl, r, styles)[0] for r in (recs if first else [rec])
               if all(r[x] is not None for x in keys)):
            continue  # still true of some record (said in the right units)
        _, a, b = slots2[j]
        if fields[k].kind == "list" and got[1][0] == "all":
            d = next(x for x in range(len(rec2[k])) if rec2[k][x] != rec[k][x])
            a += join_list(rec2[k])[1][d]
            b = a + len(rec2[k][d])
        return _Said(text2, "contradicted", ((a, b),), k, rec[k], text)
    return None


def _claim_part(fam: Family, schema: Schema, raw: str, first: bool, rec: dict, text: str,
                slots: list, styles: list[Style]) -> tuple[int, int]:
    """An unverifiable sentence's span: all of it but a leading subject and the final stop."""
    start = 0
    if raw.startswith("{S}"):
        lead = expand(schema, "{S}", first)
        start = len(fill(fam, schema, lead, rec, styles[:len(template_slots(lead))])[0])
    elif slots and slots[0][1] == 0:
        start = slots[0][2]
    while start < len(text) and text[start] in " ,":
        start += 1
    return start, len(text) - 1 if text[-1] in ".!?" else len(text)


def _aggregate(schema: Schema, it: _Item, n: int, rng: random.Random) -> _Said:
    """"I found three flights.", or with another count when it is to be contradicted."""
    count = n if it.label != "contradicted" else n + 1 if n == 2 or rng.random() < 0.5 else n - 1
    tpl = it.tpl.replace("{plural}", schema.plural)
    text, right = (tpl.replace("{n}", NUMBER_WORDS[c]).replace("{N}", NUMBER_WORDS[c].title())
                   for c in (count, n))
    if count == n:
        return _Said(text, "supported")
    a = text.lower().index(NUMBER_WORDS[count])
    return _Said(text, "contradicted", ((a, a + len(NUMBER_WORDS[count])),), "_count", n, right)


def _plan(fam: Family, schema: Schema, recs: list[dict], cands: list, shown: set[str],
          context: str, rng: random.Random) -> list[_Item]:
    """Which claims to make, in order, and which of them to get wrong."""
    bad = []
    if rng.random() < P_HALLUCINATED:
        bad = ["contradicted" if rng.random() < 0.6 else "unverifiable"
               for _ in range(1 if rng.random() < 0.75 else 2)]
    multi = len(recs) > 1
    items = [_Item("agg", -1, rng.choice(fam.aggregates))] if multi and rng.random() < 0.4 else []
    most = min(4, 5 - len(items) - bad.count("unverifiable"))  # at most 5 sentences with claims
    able = [i for i in range(len(recs)) if cands[i]]
    focus = sorted(rng.sample(able, rng.randint(1, min(3, len(able), most))))
    n_claims = rng.randint(len(focus), most)
    subject = _subject_keys(schema)
    pools = {i: rng.sample(cands[i], len(cands[i])) for i in focus}
    picked: dict[int, list[_Item]] = {i: [] for i in focus}
    used: dict[int, set[str]] = {i: set() for i in focus}
    for j in range(n_claims):
        i = focus[j % len(focus)]
        for fact, tpl in pools[i]:
            keys = template_keys(expand(schema, fact.text, True)) - subject | set(fact.needs)
            if not keys & used[i]:
                used[i] |= keys
                picked[i].append(_Item("claim", i, tpl, fact))
                pools[i].remove((fact, tpl))
                break
    items += [it for i in focus for it in picked[i]]
    for kind in bad:
        claims = [it for it in items if it.label == "supported"]
        if kind == "contradicted" and claims:
            rng.choice(claims).label = "contradicted"
            continue
        i = rng.choice(focus)
        left_out, extras = _unverifiable(schema, recs[i], shown, multi, context)
        options = left_out if left_out and (not extras or rng.random() < 0.65) else extras
        if options:
            about = [k for k, it in enumerate(items) if it.rec == i]
            at = len(items) if not about else about[-1] + 1 if rng.random() < 0.8 else about[0]
            items.insert(at, _Item("unverifiable", i, rng.choice(options), label="unverifiable"))
    return items


def _layout(fam: Family, said: list[_Said], counts_first: bool,
            rng: random.Random) -> tuple[str, list[SentenceLabel]]:
    """The response: an intro, the sentences as prose or (after a colon) a list, a sign-off."""
    intro = rng.choice(fam.intros) if len(said) < 5 and rng.random() < 0.45 else ""
    outro = rng.choice(fam.outros) if len(said) + bool(intro) < 5 and rng.random() < 0.35 else ""
    # never a count as a list item ("- I found two flights.")
    bullets = intro.endswith(":") and len(said) >= 2 and not counts_first and rng.random() < 0.5
    parts = [_Said(intro, "no_claim")] * bool(intro) + said
    parts += [_Said(outro, "no_claim")] * bool(outro)
    response, labels = "", []
    for j, s in enumerate(parts):
        claim = bool(intro) <= j < bool(intro) + len(said)
        if j:  # a blank line after "Here's what I found:" and around a list
            blank = (j == 1 and intro.endswith(":")) or (bullets and not claim)
            response += "\n\n" if blank else "\n" if bullets else " "
        response += "- " if bullets and claim else ""
        start = len(response)
        response += s.text
        labels.append(SentenceLabel(start, len(response), s.label,
                                    tuple((start + a, start + b) for a, b in s.spans),
                                    s.field, s.value, s.original))
    return response, labels


def _turn(fam: Family, schema: Schema, fmt: Format, rng: random.Random, uid: str) -> Turn:
    sizes = {"json-object": (1,), "json-array": (2, 3, 4, 5), "markdown-table": (1, 2, 3, 4)}
    recs = make_records(fam, schema, rng.choice(sizes.get(fmt, (1, 1, 2, 3))), rng)
    multi = len(recs) > 1
    public = [f for f in schema.fields if not f.key.startswith("_")]
    for _ in range(20):  # each field is left out of the context with probability 0.28
        shown = {f.key for f in public if f.core or rng.random() < 0.72}
        cands = [_supported(schema, r, shown, multi) for r in recs]
        if all(cands):
            break
    else:
        shown = {f.key for f in public}
        cands = [_supported(schema, r, shown, multi) for r in recs]
    context = render_context(fam, schema, fmt, recs, shown, rng)
    if multi:
        question = rng.choice(schema.ask_many)
    else:
        ask = rng.choice(schema.ask_one)
        question = fill(fam, schema, ask, recs[0], pick_styles(fam, schema, ask, recs[0], rng))[0]
    said: list[_Said] = []
    prev = None
    items = _plan(fam, schema, recs, cands, shown, context, rng)
    for it in items:
        first, prev = it.rec != prev, it.rec
        if it.kind == "agg":
            said.append(_aggregate(schema, it, len(recs), rng))
            continue
        rec = recs[it.rec]
        tpl = expand(schema, it.tpl, first)
        styles = pick_styles(fam, schema, tpl, rec, rng)
        text, slots = fill(fam, schema, tpl, rec, styles)
        if it.label == "unverifiable":
            span = _claim_part(fam, schema, it.tpl, first, rec, text, slots, styles)
            needs = next((f.needs for f in schema.facts if f.text == it.tpl), ())
            missing = sorted((template_keys(tpl) | set(needs)) - shown)
            said.append(_Said(text, "unverifiable", (span,), ",".join(missing)))
            continue
        wrong = None
        if it.label == "contradicted":
            named = {recs[i.rec][schema.ident] for i in items if i.rec >= 0}
            wrong = _contradict(fam, schema, it, tpl, rec, recs, styles, first, text, named, rng)
            if wrong is not None and wrong.field in _subject_keys(schema):
                prev = None  # it named another record: no "it" for this one next
        said.append(wrong or _Said(text, "supported"))  # a change that fails stays supported
    response, labels = _layout(fam, said, items[0].kind == "agg", rng)
    spans = merge_spans([sp for lab in labels for sp in lab.spans], len(response))
    return Turn(Example(id=uid, context=context, question=question, response=response, spans=spans,
                        hallucinated=bool(spans), has_spans=True, source_id=uid,
                        dataset=f"toolctx/{fam.name}/{fmt}"), fmt, schema.name, tuple(labels))


def generate(family: str, n: int, seed: int) -> list[Turn]:
    """``n`` turns of ``family``; every (schema, format) pair comes up once per cycle."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family!r}")
    fam = FAMILIES[family]
    order = random.Random(f"toolctx/{family}/{seed}")
    pairs = [(s, f) for s in fam.schemas for f in FORMATS]
    queue: list[tuple[Schema, Format]] = []
    out = []
    for i in range(n):
        if not queue:
            queue = pairs[:]
            order.shuffle(queue)
        schema, fmt = queue.pop()
        uid = f"toolctx/{family}/{seed}/{i}"
        out.append(_turn(fam, schema, fmt, random.Random(uid), uid))
    return out


# -- on disk ---------------------------------------------------------------------------------

def write_jsonl(path: str | Path, turns: list[Turn]) -> Path:
    """One JSON object a line: the Example fields plus ``format``, ``schema``, ``sentences``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for t in turns:
            row = {**example_row(t.example), "format": t.format, "schema": t.schema,
                   "sentences": [{**vars(s), "spans": [list(p) for p in s.spans]}
                                 for s in t.sentences]}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def load_toolctx_sentences(path: str | Path) -> list[Turn]:
    """The turns of a file written by :func:`write_jsonl`, with their sentence labels."""
    out = []
    with Path(path).open(encoding="utf-8") as f:
        for line in filter(str.strip, f):
            r = json.loads(line)
            ex = Example(**{k: r[k] for k in EXAMPLE_FIELDS if k != "spans"}, spans=tuple(
                (a, b) for a, b in r["spans"]), documents=tuple(r.get("documents", ())))
            sents = tuple(SentenceLabel(**{**s, "spans": tuple((a, b) for a, b in s["spans"])})
                          for s in r["sentences"])
            out.append(Turn(ex, r["format"], r["schema"], sents))
    return out


def load_toolctx(path: str | Path) -> list[Example]:
    """The examples of a ``guardrail data toolctx`` file (span-labelled, ``has_spans=True``)."""
    return [t.example for t in load_toolctx_sentences(path)]


def stats(turns: list[Turn]) -> dict:
    """Sentences per label, overall and per format; examples and how many are hallucinated."""
    by_format: dict[str, Counter] = {f: Counter() for f in FORMATS}
    for t in turns:
        by_format[t.format].update(s.label for s in t.sentences)
    total = sum(by_format.values(), Counter())
    return {"examples": len(turns), "hallucinated": sum(t.example.hallucinated for t in turns),
            "sentences": {lab: total[lab] for lab in LABELS},
            "by_format": {f: {"examples": sum(t.format == f for t in turns),
                              **{lab: c[lab] for lab in LABELS}}
                          for f, c in by_format.items()}}
