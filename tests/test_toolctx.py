"""Tool-grounded turns (issue #12): deterministic, every supported sentence's numbers, dates,
times, amounts and names read off its context by a normaliser of this file's own, every
contradicted span the changed value, every unverifiable fact absent, sentences exactly the
proxy segmenter's, and the train / dev / calib / holdout families disjoint."""

from __future__ import annotations

import json
import random
import re
from datetime import date

import pytest
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.stream.segmenter import SentenceSegmenter
from guardrail.train import toolctx
from guardrail.train.toolctx import FAMILIES
from guardrail.train.toolctx_context import field_label
from guardrail.train.toolctx_schemas import Family

N = 7 * 7 * 12  # every (schema, format) pair a dozen times
WORDS = "zero one two three four five six seven eight nine ten".split()
JSON_FORMATS = {"json-object", "json-array", "nested-json", "search-results"}


@pytest.fixture(scope="module", params=["train", "dev", "calib", "holdout"])
def turns(request):
    return toolctx.generate(request.param, N, seed=5)


def sentences(turns, *labels):
    for t in turns:
        for s in t.sentences:
            if s.label in labels:
                yield t, s, t.example.response[s.start:s.end]


# -- a normaliser: what a sentence claims, and whether a context says it ------------------------

MONTHS = {m: i + 1 for i, m in enumerate("January February March April May June July August "
                                         "September October November December".split())}
_M = "|".join(MONTHS)
DATE = re.compile(rf"\b(?:({_M}) (\d{{1,2}})(?:, (\d{{4}}))?|(\d{{1,2}}) ({_M}) (\d{{4}}))\b")
TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))? ?(AM|PM)\b|\b(\d{2}):(\d{2})\b")
DURATION = re.compile(r"\b(\d+) hours?(?: (\d+) minutes)?")
CURRENCY = [("Canadian dollars", "CAD"), ("Australian dollars", "AUD"),
            ("Singapore dollars", "SGD"), ("Swiss francs", "CHF"), ("CA$", "CAD"), ("A$", "AUD"),
            ("Brazilian reais", "BRL"), ("Mexican pesos", "MXN"), ("South Korean won", "KRW"),
            ("MX$", "MXN"), ("R$", "BRL"), ("S$", "SGD"), ("€", "EUR"), ("£", "GBP"), ("¥", "JPY"),
            ("₹", "INR"), ("₩", "KRW"), ("$", "USD"), ("yen", "JPY"), ("euros", "EUR"),
            ("pounds", "GBP"), ("dollars", "USD"), ("rupees", "INR"), ("rand", "ZAR"),
            ("Turkish lira", "TRY"), ("Norwegian kroner", "NOK"), ("฿", "THB"), ("₺", "TRY"),
            ("₪", "ILS"), ("₫", "VND"), ("baht", "THB"), ("shekels", "ILS"), ("dong", "VND")]
CURRENCY += [(c, c) for c in ("CHF", "EUR", "GBP", "USD", "JPY", "CAD", "AUD", "SGD", "INR",
                              "BRL", "MXN", "ZAR", "KRW", "THB", "TRY", "ILS", "NOK", "VND")]
NUMBER = re.compile(r"(?:((?i:about|roughly|around)) )?(-?\d[\d,]*(?:\.\d+)?)"
                    r"(?: (million|billion|trillion))?")
DIRECTION = re.compile(r"\b(up|down|rose|fell) (\d+(?:\.\d+)?)")
STAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::\d{2})?(?:Z|[+-]\d{2}:\d{2})?)?")
CLOCK = re.compile(r"\b(\d{2}):(\d{2})\b")
SCALE = {None: 1, "million": 1e6, "billion": 1e9, "trillion": 1e12}
WRONG_UNITS = re.compile(r"\d (feet|inches|mph|ounces|miles|days|square feet|kilojoules|ppm"
                         r"|milligrams per cubic meter|mcg)\b|\d°F")


class Context:
    """What a context states, read off its text: numbers, dates, times, currency codes, words."""

    def __init__(self, text: str):
        self.text = text
        self.lower = text.lower()
        stamps = STAMP.findall(text)
        self.dates = {date(int(y), int(m), int(d)) for y, m, d, _, _ in stamps}
        self.times = {(int(h), int(mi)) for *_, h, mi in stamps if h}
        undated = STAMP.sub(" ", text)  # a date's "03" is no count of three, "+09:00" no time
        self.times |= {(int(h), int(mi)) for h, mi in CLOCK.findall(undated)}
        bare = CLOCK.sub(" ", undated)
        self.numbers = [float(x) for x in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)", bare)]
        self.numbers += [float(x) for x in re.findall(r"[A-Za-z#](\d+)\b", bare)]  # #4821, v2

    def has_number(self, v: float, approx: bool = False, signed: bool = False) -> bool:
        tol = 0.06 if approx else 1e-9
        return any(abs((c if signed else abs(c)) - (v if signed else abs(v)))
                   <= tol * max(abs(c), 1e-9) for c in self.numbers)

    def has_word(self, word: str) -> bool:
        return re.search(rf"(?<![\w]){re.escape(word.lower())}(?![\w])", self.lower) is not None


def template_words() -> set[str]:
    """Capitalised words that templates themselves bring (not values)."""
    text = []
    for fam in FAMILIES.values():
        text += [*fam.intros, *fam.outros, *fam.aggregates]
        for s in fam.schemas:
            text += [s.subject[0], *s.extras, *s.ask_one, *s.ask_many]
            text += [x for f in s.facts for x in (f.text, f.null)]
            text += [w for f in s.fields for w in (*f.words, *f.unit, *f.wrong)]
    words = set(re.findall(r"[\w'’/-]+", re.sub(r"\{[^}]*\}", " ", " ".join(text)).lower()))
    return words | {m.lower() for m in MONTHS} | {"am", "pm", "utc", "he", "she", "about",
                                                  "roughly", "around", *WORDS}


TEMPLATE_WORDS = template_words()


def unsupported_parts(sentence: str, ctx: Context) -> list[str]:
    """The values of ``sentence`` that ``ctx`` does not give (empty when all are derivable)."""
    missing, rest = [], sentence
    for m in DATE.finditer(sentence):
        month, day, year = (m[1], m[2], m[3]) if m[1] else (m[5], m[4], m[6])
        if not any(d.month == MONTHS[month] and d.day == int(day)
                   and (not year or d.year == int(year)) for d in ctx.dates):
            missing.append(m[0])
        rest = rest.replace(m[0], " ")
    for m in TIME.finditer(rest):
        if m[3]:
            h, mi = int(m[1]) % 12 + (12 if m[3] == "PM" else 0), int(m[2] or 0)
        else:
            h, mi = int(m[4]), int(m[5])
        if (h, mi) not in ctx.times:
            missing.append(m[0])
    rest = TIME.sub(" ", rest)
    for m in DURATION.finditer(rest):  # "2 hours 15 minutes" of a duration, or "8 hours" as such
        minutes = int(m[1]) * 60 + int(m[2] or 0)
        if not ctx.has_number(minutes) and (m[2] or not ctx.has_number(int(m[1]))):
            missing.append(m[0])
    rest = DURATION.sub(" ", rest)
    for m in DIRECTION.finditer(rest):  # "down 1.52%" says -1.52
        if not ctx.has_number(float(m[2]) * (-1 if m[1] in ("down", "fell") else 1), signed=True):
            missing.append(m[0])
    rest = DIRECTION.sub(" ", rest)
    for word, code in CURRENCY:
        pattern = rf"\b{word}\b" if word.isalpha() else re.escape(word)
        if re.search(pattern, rest):
            if code not in ctx.text:
                missing.append(word)
            rest = re.sub(pattern, " ", rest)
    for token in re.findall(r"[\w#@./-]*\d[\w#@./-]*", rest):  # codes: ORD-470153, SK361, v2.4
        token = token.strip(".")
        if re.search(r"[A-Za-z]", token) and re.search(r"\d", token):
            if token.lstrip("#").lower() not in ctx.lower:
                missing.append(token)
            rest = rest.replace(token, " ")
    for m in NUMBER.finditer(re.sub(r"out of (5|10)\b", " ", rest)):  # a rating's scale
        if not ctx.has_number(float(m[2].replace(",", "")) * SCALE[m[3]], bool(m[1] or m[3])):
            missing.append(m[0])
    for word in re.findall(r"\b[A-Z][\w'’/-]*", rest):
        if word.lower() not in TEMPLATE_WORDS and not ctx.has_word(word):
            missing.append(word)
    return missing


# -- the tests ---------------------------------------------------------------------------------

def test_same_seed_same_bytes_and_another_seed_differs(tmp_path):
    a = toolctx.write_jsonl(tmp_path / "a.jsonl", toolctx.generate("train", 120, 3))
    b = toolctx.write_jsonl(tmp_path / "b.jsonl", toolctx.generate("train", 120, 3))
    c = toolctx.write_jsonl(tmp_path / "c.jsonl", toolctx.generate("train", 120, 4))
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_every_format_and_schema_appears_and_json_contexts_parse(turns):
    assert {t.format for t in turns} == set(toolctx.FORMATS)
    family = turns[0].example.dataset.split("/")[1]
    assert {t.schema for t in turns} == {s.name for s in FAMILIES[family].schemas}
    for t in turns:
        assert t.example.dataset == f"toolctx/{family}/{t.format}"
        if t.format in JSON_FORMATS:
            data = json.loads(t.example.context)
            if t.format == "search-results":
                results = data["results"] if isinstance(data, dict) else data
                assert results and all(set(r) == {"title", "snippet", "url"} for r in results)
        else:
            with pytest.raises(json.JSONDecodeError):
                json.loads(t.example.context)


def test_labels_spans_and_mix(turns):
    hallucinated = 0
    for t in turns:
        ex, sents = t.example, t.sentences
        assert 1 <= len(sents) <= 5 and any(s.label != "no_claim" for s in sents)
        assert [s.start for s in sents] == sorted(s.start for s in sents)
        for s in sents:
            assert ex.response[s.start:s.end].strip() == ex.response[s.start:s.end]
            assert bool(s.spans) == (s.label in ("contradicted", "unverifiable"))
            assert all(s.start <= a < b <= s.end for a, b in s.spans)
        assert list(ex.spans) == sorted(p for s in sents for p in s.spans)
        assert ex.hallucinated == bool(ex.spans) and ex.has_spans
        assert sum(s.label in ("contradicted", "unverifiable") for s in sents) <= 2
        hallucinated += ex.hallucinated
    assert 0.22 <= hallucinated / len(turns) <= 0.38
    labels = {s.label for t in turns for s in t.sentences}
    assert labels == {"supported", "contradicted", "unverifiable", "no_claim"}


def test_sentences_are_the_proxy_segmenters(turns):
    seg = SentenceSegmenter()
    for t in turns:
        r = t.example.response
        got = []
        for piece in seg.feed(r) + seg.flush():
            text = piece.text.strip()
            if piece.checkable:
                text = text.removeprefix("- ")
                got.append((r.index(text, piece.start), r.index(text, piece.start) + len(text)))
        assert got == [(s.start, s.end) for s in t.sentences], r


def test_supported_sentences_are_read_off_the_context(turns):
    checked = 0
    for t, s, text in sentences(turns, "supported"):
        ctx = Context(t.example.context)
        assert unsupported_parts(text, ctx) == [], (text, t.example.context)
        assert not WRONG_UNITS.search(text), text
        checked += 1
    assert checked > 1000


def test_the_normaliser_catches_what_it_should():
    ctx = Context('{"name": "Ostberg Tower", "height_m": 330, "completed": "2024-03-01T14:30:00Z",'
                  ' "visitors": 1234567, "fee": {"amount": 12.5, "currency": "EUR"},'
                  ' "id": "ORD-12", "change_pct": -1.5}')
    ok = ("Ostberg Tower was completed on March 1, 2024 at 2:30 PM UTC. It is 330 meters tall, "
          "draws about 1.2 million visitors, costs €12.50 (order ORD-12) and is down 1.5% today.")
    assert unsupported_parts(ok, ctx) == []
    for wrong in ("It was completed on March 2, 2024.", "It is 331 meters tall.",
                  "It costs £12.50.", "Kessel Tower is tall.", "It opened at 3:30 PM.",
                  "It draws about 2.4 million visitors.", "See order ORD-13.", "It is up 1.5%.",
                  "It has 3 floors."):  # the date's "03" is no 3
        assert unsupported_parts(wrong, ctx), wrong
    local = Context('{"starts_at": "2024-03-01T14:30:00+09:00"}')
    assert unsupported_parts("It starts at 2:30 PM on March 1.", local) == []
    assert unsupported_parts("It starts at 09:00.", local)  # the offset is no time of day


def _value_matches(span: str, value: object) -> bool:
    """Does ``span`` say ``value`` (a value of the context), up to paraphrase?"""
    if isinstance(value, bool) or value is None:
        return False  # a phrase ("in stock"): the original sentence shows it changed
    if span.lower() in WORDS:  # a count
        n = WORDS.index(span.lower())
        return n == (len(value) if isinstance(value, list) else value)
    if isinstance(value, list):
        return span in value
    if WRONG_UNITS.search(span):
        return False
    if isinstance(value, dict):  # money: the currency and the amount
        amount, cur = value.values()
        codes = [c for w, c in CURRENCY
                 if (re.search(rf"\b{w}\b", span) if w.isalpha() else w in span)]
        return ((not codes or codes[0] == cur)
                and not unsupported_parts(span, Context(f"{amount} {cur}")))
    if isinstance(value, (int, float)):
        if re.search(r"\d pounds?$", span):  # a weight in pounds, not kilograms
            return False
        return not unsupported_parts(span, Context(f"{value} USD"))
    if re.fullmatch(r"[\dT:Z+-]{5,}", str(value)):  # a date, time or timestamp
        return not unsupported_parts(span, Context(str(value)))
    return span.lower() == str(value).lower()


def test_contradicted_spans_are_the_changed_value(turns):
    n = 0
    for t, s, text in sentences(turns, "contradicted"):
        (a, b), = s.spans
        span, orig = t.example.response[a:b], s.original
        assert span.strip() == span and span and text != orig
        if s.value is None:  # the context says null; the sentence gives a value
            assert "null" in t.example.context or "n/a" in t.example.context
            continue
        head, tail = t.example.response[s.start:a], t.example.response[b:s.end]
        assert orig.startswith(head) and orig.endswith(tail), (text, orig)
        assert orig[len(head):len(orig) - len(tail)] != span
        assert not _value_matches(span, s.value), (span, s.value, text)
        n += 1
    assert n > 100


def _keys(node) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def test_unverifiable_facts_are_absent_from_the_context(turns):
    family = FAMILIES[turns[0].example.dataset.split("/")[1]]
    fields = {f.key: f for s in family.schemas for f in s.fields}
    n = 0
    for t, s, text in sentences(turns, "unverifiable"):
        ctx = t.example.context
        for key in filter(None, s.field.split(",")):
            n += 1
            if t.format in ("json-object", "json-array", "nested-json"):
                assert key not in _keys(json.loads(ctx)), (key, text)
            else:
                assert f"{key}:" not in ctx and field_label(key) not in ctx, (key, text)
            if t.format in ("json-object", "json-array") and fields[key].implied_by:
                # departure + duration give the arrival away: saying it is not unverifiable
                assert not set(fields[key].implied_by) <= _keys(json.loads(ctx)), (key, text)
    assert n > 30


def _strings(fam: Family) -> set[str]:
    out = [*fam.intros, *fam.outros, *fam.aggregates]
    for s in fam.schemas:
        out += [s.subject[0], *s.extras, *s.ask_one, *s.ask_many]
        out += [x for f in s.facts for x in (f.text, f.null)]
        out += [w for f in s.fields for w in f.words]
    return set(out) - {""}


def _fields(fam: Family) -> set[str]:
    names = set(fam.money_keys) | _keys(fam.envelope(random.Random(0), {}))
    for s in fam.schemas:
        names |= {s.name, s.plural}
        names |= {p for f in s.fields if not f.key.startswith("_") for p in (f.key, *f.path)}
    return names


def _vocab(fam: Family) -> set[str]:
    words = {v for s in fam.schemas for f in s.fields for v in f.vocab}
    return words | set(fam.currencies) | set(fam.sites)


def test_train_and_dev_share_no_template_field_or_vocabulary():
    train, dev = FAMILIES["train"], FAMILIES["dev"]
    assert not _strings(train) & _strings(dev)
    assert not _fields(train) & _fields(dev)
    assert not _vocab(train) & _vocab(dev)
    # and what the generator produced agrees: no dev context carries a train key
    train_keys = _fields(train)
    for t in toolctx.generate("dev", 70, 0):
        if t.format in JSON_FORMATS - {"search-results"}:
            assert not _keys(json.loads(t.example.context)) & train_keys


@pytest.mark.parametrize("name, other", [("calib", "train"), ("calib", "dev"),
                                         ("holdout", "train"), ("holdout", "dev"),
                                         ("holdout", "calib")])
def test_later_families_share_nothing_with_earlier_ones(name, other):
    """calib shares nothing with train or dev; holdout nothing with any of the three."""
    held, fam = FAMILIES[name], FAMILIES[other]
    assert not _strings(held) & _strings(fam)
    assert not _fields(held) & _fields(fam)
    assert not _vocab(held) & _vocab(fam)
    assert not set(held.tz) & set(fam.tz)
    assert not {w for c in held.currencies.values() for w in c[:2]} & {
        w for c in fam.currencies.values() for w in c[:2]}
    keys = _fields(fam)
    for t in toolctx.generate(name, 70, 0):
        if t.format in JSON_FORMATS - {"search-results"}:
            assert not _keys(json.loads(t.example.context)) & keys


@pytest.mark.parametrize("name", ["calib", "holdout"])
def test_later_families_cover_every_schema_and_format_with_labelled_sentences(name):
    fam = FAMILIES[name]
    turns = toolctx.generate(name, 2 * len(fam.schemas) * len(toolctx.FORMATS), seed=2)
    assert {(t.schema, t.format) for t in turns} == {
        (s.name, f) for s in fam.schemas for f in toolctx.FORMATS}
    for t in turns:
        assert t.example.dataset == f"toolctx/{name}/{t.format}" and t.sentences
        assert any(s.label != "no_claim" for s in t.sentences)
        assert all(t.example.response[s.start:s.end].strip() for s in t.sentences)
    assert {s.label for t in turns for s in t.sentences} == set(toolctx.LABELS)


def test_loader_round_trips(tmp_path, turns):
    path = toolctx.write_jsonl(tmp_path / "set.jsonl", turns[:200])
    again = toolctx.load_toolctx_sentences(path)
    assert again == turns[:200]
    assert toolctx.load_toolctx(path) == [t.example for t in turns[:200]]
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert {"id", "context", "question", "response", "spans", "hallucinated", "has_spans",
            "source_id", "dataset", "format", "sentences"} <= set(row)
    assert set(row["sentences"][0]) >= {"start", "end", "label"}


def test_cli_writes_the_set(tmp_path):
    out = tmp_path / "dev.jsonl"
    result = CliRunner().invoke(app, ["data", "toolctx", "--family", "dev", "--n", "30",
                                      "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    turns = toolctx.load_toolctx_sentences(out)
    assert report["examples"] == 30 == len(turns) == len(toolctx.load_toolctx(out))
    assert sum(report["sentences"].values()) == sum(len(t.sentences) for t in turns)
    bad = CliRunner().invoke(app, ["data", "toolctx", "--family", "test", "--out", str(out)])
    assert bad.exit_code != 0
