"""Several tool results: the detector reads the results a sentence names.

An in-flight check's packed window and a sentence's own window at the end of the
stream hold the tool results the sentence speaks of (``model.windows.focused``), not
other results' passages that share its words and values.
"""

from __future__ import annotations

import json
import random

import pytest

from conftest import cache_conf

from guardrail.evidence.focus import is_tool_result
from guardrail.model.inputs import PreparedContext, cut_windows, prepare_context
from guardrail.model.focused import focused
from guardrail.model.windows import OwnWindows, TopBlocks

CITIES = "Lisbon Porto Madrid Seville Valencia Bilbao Granada Malaga Cordoba Toledo".split()
HOTELS = ("Coral Bay Resort", "Sakura Garden Ryokan", "Harbour Light Inn", "Alder Court Hotel",
          "Maple Ridge Lodge", "Stone Bridge House", "Juniper Hall", "Copper Kettle Inn",
          "Willow Creek Suites", "Northgate Plaza", "Amber Coast Hotel", "Linden Park Hotel")


def hotel(i: int, rng: random.Random) -> str:
    return json.dumps({"hotel": HOTELS[i], "city": rng.choice(CITIES),
                       "star_rating": rng.randint(2, 5), "rooms_available": rng.randint(3, 60),
                       "nightly_rate": {"value": rng.randint(60, 400), "currency": "EUR"},
                       "amenities": rng.sample(["spa", "pool", "free Wi-Fi", "gym", "bar",
                                                "parking", "room service"], 3),
                       "reviews": [f"Guest {j} stayed {rng.randint(1, 9)} nights in "
                                   f"{rng.choice(CITIES)} and liked the "
                                   f"{rng.choice(['pool', 'bar', 'view'])}."
                                   for j in range(12)]}, indent=2)


@pytest.fixture(scope="module")
def results() -> list[str]:
    rng = random.Random(7)
    return [hotel(i, rng) for i in range(len(HOTELS))]


def prepared(tok, documents: list[str]) -> PreparedContext:
    return prepare_context(tok, documents, "minilm",
                           tools=[is_tool_result(d) for d in documents])


def read(ctx: PreparedContext, windows) -> str:
    """The context text a list of windows reads, piece by piece."""
    off = ctx.tokens.offsets
    return " ".join(ctx.text[off[a][0]:off[z - 1][1]] for w in windows
                    for a, z in (w.pieces or ((w.start, w.end),)))


def test_parts_say_where_each_document_stands_and_travel_with_the_context(tok, results):
    docs = [results[0], "  ", "Opening hours are 9 to 5.", results[1]]
    ctx = prepared(tok, docs)
    assert [ctx.text[a:b] for a, b, _ in ctx.parts] == [results[0], "Opening hours are 9 to 5.",
                                                       results[1]]
    assert [t for *_, t in ctx.parts] == [True, False, True]
    assert ctx.sources == (results[0], "Opening hours are 9 to 5.", results[1])
    again = PreparedContext.from_bytes(ctx.to_bytes())
    assert (again.parts, again.sources, again.key) == (ctx.parts, ctx.sources, ctx.key)
    assert prepared(tok, [results[0], "Opening hours are 9 to 5."]).sources == ()
    a, b = again.token_range(*again.parts[1][:2])
    assert tok.decode(again.tokens.ids[a:b].tolist()) == "opening hours are 9 to 5."


def test_the_documents_a_sentence_names_are_its_token_ranges(tok, results):
    ctx = prepared(tok, results)
    answer = "Sakura Garden Ryokan has a spa. It has 12 rooms left. Several hotels matched."
    one = focused(ctx, "Which hotels have rooms?", answer, 0, answer.index(" It"))
    assert read(ctx, [type("W", (), {"pieces": tuple(one)})]) == results[1]
    carried = focused(ctx, "", answer, answer.index("It has"), answer.index(" Several"))
    assert carried == one  # the pronoun reads what the sentence before it named
    assert focused(ctx, "", answer, answer.index("Several")) is None  # names nothing
    assert focused(ctx, "", answer, 0) is None  # checked together with a nameless one
    asked = focused(ctx, "Tell me about Juniper Hall.", answer, 0, answer.index(" It"))
    assert read(ctx, [type("W", (), {"pieces": tuple(asked)})]) == " ".join(
        (results[1], results[6]))


def test_names_are_looked_up_in_the_results_as_given_not_as_rendered(detector):
    issue = json.dumps({"issue": 6125, "repo": "tansu/api-gateway", "state": "closed"})
    event = json.dumps({"event": "Budget review", "starts": "2023-10-09T10:00:00Z"})
    ctx = detector.prepare_context([issue, event, json.dumps({"event": "Standup"})])
    assert "October 9, 2023" in ctx.text  # rendering writes the date out
    assert focused(ctx, "", "Issue 6125 was closed on October 9, 2023.") is None
    named = focused(ctx, "", "The Budget review starts at 10:00.")
    assert ctx.text[ctx.tokens.offsets[named[0][0]][0]:].startswith("event: Budget review")


def test_a_name_the_result_writes_with_a_possessive_names_it(tok, results):
    book = json.dumps({"title": "The Tinsmith's Daughter", "holds": 4})
    ctx = prepared(tok, results[:3] + [book])
    ranges = focused(ctx, "", "The Tinsmith's Daughter has 6 holds placed on it.")
    assert read(ctx, [type("W", (), {"pieces": tuple(ranges)})]) == book


def test_one_tool_result_or_prose_alone_is_read_as_before(tok, results):
    prose = ["Sakura Garden Ryokan opened in 1931. " * 40, "The Zorblat bridge opened in 1931."]
    for docs in ([results[1]], [results[1], prose[0]], prose):
        ctx = prepared(tok, docs)
        assert focused(ctx, "", "Sakura Garden Ryokan has a spa.") is None
    ctx = prepare_context(tok, results, "minilm")  # stored by an earlier version: no tools
    assert focused(ctx, "", "Sakura Garden Ryokan has a spa.") is None


def test_an_in_flight_check_packs_the_named_result_not_other_results(tok, results):
    ctx = prepared(tok, results)
    windows = cut_windows(ctx.n_tokens, 400, 64)
    assert len(windows) > 3
    answer = "Here is what I found. Sakura Garden Ryokan has 12 rooms in Lisbon."
    chosen = TopBlocks(1, whole=3).select(ctx, windows, "", answer, answer.index("Sakura"))
    assert read(ctx, chosen) == results[1]
    plain = prepare_context(tok, results, "minilm")  # as before: the passages BM25 picks
    before = TopBlocks(1, whole=3).select(plain, windows, "", answer, answer.index("Sakura"))
    assert read(plain, before) != results[1]
    nameless = "Several hotels have 12 rooms in Lisbon."
    assert read(ctx, TopBlocks(1, whole=3).select(ctx, windows, "", nameless)) == read(
        plain, TopBlocks(1, whole=3).select(plain, windows, "", nameless))


def test_sentences_checked_together_each_read_what_they_name(tok, results):
    ctx = prepared(tok, results)
    windows = cut_windows(ctx.n_tokens, 400, 64)
    answer = "Sakura Garden Ryokan has a spa. Juniper Hall is in Porto. Several are in Lisbon."
    chosen = TopBlocks(1, whole=3).select(ctx, windows, "", answer)
    assert [w.serves for w in chosen] == [((0, 31),), ((32, 57),), ((58, 80),)]
    assert [read(ctx, [w]) for w in chosen[:2]] == [results[1], results[6]]
    plain = prepare_context(tok, results, "minilm")
    assert read(ctx, chosen[2:]) == read(plain, TopBlocks(1, whole=3).select(
        plain, windows, "", answer))  # the nameless one reads as every sentence did
    assert len({w.index for w in chosen}) == 3
    two = TopBlocks(1, whole=3).select(ctx, windows, "", answer[:57])
    assert [read(ctx, [w]) for w in two] == [results[1], results[6]]


def test_named_results_longer_than_a_window_are_read_by_their_best_passages(tok, results):
    long = json.loads(results[1])
    long["reviews"] = long["reviews"] * 8
    docs = [json.dumps(long, indent=2)] + results[2:]
    ctx = prepared(tok, docs)
    a, b = ctx.token_range(*ctx.parts[0][:2])
    assert b - a > 400
    windows = cut_windows(ctx.n_tokens, 400, 64)
    chosen = TopBlocks(1, whole=3).select(ctx, windows, "", "Sakura Garden Ryokan has a gym.")
    assert 0 < sum(w.size for w in chosen) <= 400
    assert all(a <= p < q <= b for w in chosen for p, q in w.pieces)


def test_each_sentence_of_the_final_pass_reads_the_results_it_names(tok, results):
    ctx = prepared(tok, results)
    windows = cut_windows(ctx.n_tokens, 400, 64)
    answer = ("Sakura Garden Ryokan has a spa. It has 12 rooms. Juniper Hall is in Porto. "
              "Several guests liked the bar in Bilbao.")
    chosen = OwnWindows(1, 64).select(ctx, windows, "", answer)
    by_span = {s: w for w in chosen for s in w.serves}
    spans = sorted(by_span)
    assert len(spans) == 4
    assert read(ctx, [by_span[spans[0]]]) == results[1] and by_span[spans[1]] is by_span[spans[0]]
    assert read(ctx, [by_span[spans[2]]]) == results[6]
    assert not by_span[spans[3]].pieces  # names nothing: a plain window, chosen by BM25
    assert len(by_span[spans[0]].serves) == 2
    assert len({w.index for w in chosen}) == len(chosen)


def test_through_the_detector_a_check_reads_the_named_result_as_if_alone(detector, results):
    from guardrail.model.detector import DetectInput

    answer = "Here is what I found. Sakura Garden Ryokan is rated 5 stars."
    start = answer.index("Sakura")
    among = detector.prepare(DetectInput(results, "", answer, start), TopBlocks(1, whole=3))
    alone = detector.prepare(DetectInput([results[1]], "", answer, start), TopBlocks(1, whole=3))
    assert among.windows_total > 3 and len(among.sequences) == len(alone.sequences) == 1
    assert among.sequences[0].input_ids.tolist() == alone.sequences[0].input_ids.tolist()


@pytest.mark.redis
async def test_a_context_from_redis_reads_the_named_result_as_the_one_prepared_here(
        detector, results, prefix):
    """Also: rendered tool results are keyed as given, as the engine keys them, so a
    context read back from Redis is not taken for a damaged one."""
    from guardrail.engine.prepared import PreparedContextCache

    conf = cache_conf(prefix)
    here, there = PreparedContextCache(conf), PreparedContextCache(conf)

    async def prepare(documents):
        return detector.prepare_context(list(documents))

    try:
        model = detector.context_key_name
        made = await here.get_or_prepare("acme", results, prepare, model=model)
        await here.flush()
        loaded = await there.get_or_prepare("acme", results, prepare, model=model)
        assert loaded is not made and there.stats().redis_hits == 1
        assert (loaded.parts, loaded.sources) == (made.parts, made.sources)
        answer = "Here is what I found. Sakura Garden Ryokan has 12 rooms."
        a = focused(made, "", answer, answer.index("Sakura"))
        assert a is not None and focused(loaded, "", answer, answer.index("Sakura")) == a
    finally:
        await here.aclose()
        await there.aclose()


def test_through_the_proxy_an_addition_among_other_results_is_stopped_as_if_alone(tok):
    """A real proxy on loopback, a generated turn's class among three other tool
    results (one tool message each): "It meets in Studio Marlin." (the class has no
    studio field) is stopped, as with the class alone, and every supported sentence
    passes; read with BM25's passages of all results, it passed."""
    from guardrail.bench import verdicts
    from guardrail.train.longtool import build

    turns = build("holdout", tok, lengths=[1024], depths=[0.5], n_per_cell=60, seed=11)
    ex = next(t.turn.example for t in turns
              if t.turn.example.id == "toolctx/holdout/11/21/1024/d0.5")
    assert len(ex.documents) == 4
    rows: list = []
    verdicts.run([ex], sentences=rows)
    said = {r["original"].strip(): (r["gold"], r["stopped"]) for r in rows}
    assert said["It meets in Studio Marlin."] == (True, True)
    assert all(stopped == gold for gold, stopped in said.values())
