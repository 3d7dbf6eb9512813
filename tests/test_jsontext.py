"""guardrail.stream.jsontext and the answer's ledger in JSON mode: a JSON answer
(``response_format`` json_object / json_schema) stays valid JSON whatever is redacted,
keys and structure untouched; through the real server in test_server.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from scripted import ScriptedVerifier
from test_pipeline import answer_stream, collect, content, events, raw, settings

from guardrail.proxy.requests import ChatRequest
from guardrail.stream.jsontext import JsonValues, redact_values
from guardrail.stream.pipeline import guarded_completion, guarded_stream
from guardrail.types import Action, Grounding, Priority, Span

DOCS = [
    {"order_id": "A-1001", "summary": "Your order shipped. It was built in 1950."},
    {"items": [{"name": "Desk \"Oak\"", "note": "Made in 1950.\nSturdy."}, 3, None, True],
     "total": 1950, "tags": ["built in 1950", "oak"], "nested": {"a": {"b": "1950 é"}}},
    ["It was built in 1950.", {"1950": "key, not value"}],
]


@pytest.mark.parametrize("doc", DOCS)
def test_values_are_string_values_only_at_every_split(doc):
    text = json.dumps(doc)
    whole = JsonValues()
    whole.feed(text)
    for cut in range(0, len(text) + 1, 3):
        parts = JsonValues()
        parts.feed(text[:cut])
        parts.feed(text[cut:])
        assert parts.of(0, len(text)) == whole.of(0, len(text))
    kinds = whole.of(0, len(text))
    inside = "".join(ch for ch, k in zip(text, kinds) if k)
    for key in ("order_id", "items", "summary", "total", "nested"):
        assert key not in inside  # keys are not values
    assert '"' not in inside.replace('\\"', "")  # no quote that closes a string


@pytest.mark.parametrize("doc", DOCS)
def test_the_detector_reads_the_values_text_at_the_same_offsets_at_every_split(doc):
    """The read is as long as the answer (spans need no mapping), holds the values'
    text and nothing else, and each value's end is reported, however it streams."""
    text = json.dumps(doc)
    view, ends = JsonValues().feed(text)
    assert len(view) == len(text)
    kinds = JsonValues()
    kinds.feed(text)
    values = kinds.of(0, len(text))
    assert all(v == ch for v, ch, k in zip(view, text, values) if k == 1)
    assert not view[:ends[0]].strip(" ").startswith("{") and "{" not in view and ":" not in view
    for key in ("order_id", "items", "summary", "total", "nested"):
        assert key not in view
    assert [text[e - 1] for e in ends] == ['"'] * len(ends) and all(values[e] == 0 for e in
                                                                  ends if e < len(text))
    for cut in range(0, len(text) + 1, 3):
        parts = JsonValues()
        (v1, e1), (v2, e2) = parts.feed(text[:cut]), parts.feed(text[cut:])
        assert v1 + v2 == view and e1 + [cut + e for e in e2] == ends


def test_an_escape_reads_as_the_character_it_stands_for():
    text = r'{"note": "A \"big\"\ntower\/\u00e9."}'
    view, ends = JsonValues().feed(text)
    assert view == '          A  "big " \ntower /      .  ' and ends == [len(text) - 1]


@pytest.mark.parametrize("doc", DOCS)
@pytest.mark.parametrize("mode", ["spans", "sentence"])
def test_any_cut_redacted_stays_valid_json_with_its_keys(doc, mode):
    """Every cut of the raw text into two "sentences", each redacted whole or on a span
    around "1950": the result parses, with the same keys and shape."""
    text = json.dumps(doc)
    values = JsonValues()
    values.feed(text)

    def shape(x):
        if isinstance(x, dict):
            return {k: shape(v) for k, v in x.items()}
        if isinstance(x, list):
            return [shape(v) for v in x]
        return type(x).__name__

    at = text.find("1950")
    for cut in range(1, len(text)):
        out = ""
        for a, b in ((0, cut), (cut, len(text))):
            spans = (Span(at - a, at - a + 4, "1950", 0.9),) if a <= at < b - 4 else ()
            span = (at - a, at - a + 4) if spans else None
            out += redact_values(text[a:b], spans, mode, "[unsupported]", values.of(a, b),
                                 span)
        assert shape(json.loads(out)) == shape(doc)


def test_a_span_in_plain_value_text_is_replaced_alone():
    text = 'It was built in 1950."}'
    kinds = bytes([1] * 21 + [0, 0])
    assert redact_values(text, (), "spans", "[x]", kinds, (16, 20)) == 'It was built in [x]."}'
    # a span that takes the quote is not plain value text: the value's text goes whole
    assert redact_values(text, (), "spans", "[x]", kinds, (16, 22)) == '[x]"}'
    assert redact_values('330}', (), "spans", "[x]", bytes(4), (0, 3)) == '330}'  # a number


GROUNDING = Grounding(("The tower in Paris was built 1887-1889. It is 330 metres tall.",),
                      "When was it built?")
ANSWER = json.dumps({"city": "Paris", "summary": "The tower is in Paris. It was built "
                     "in 1950.", "height_m": 330})


@pytest.mark.parametrize("action", [Action.REDACT, Action.REGENERATE])
async def test_a_json_answer_stays_json_streamed(action):
    s = replace(settings(action), json_answer=True, grounding=GROUNDING)
    pieces = [ANSWER[i:i + 5] for i in range(0, len(ANSWER), 5)]
    evs = events(await collect(guarded_stream(raw(answer_stream(pieces)), s,
                                              ScriptedVerifier())))
    out = json.loads(content(evs))
    assert out["summary"] == "The tower is in Paris. It was built in [unsupported]."
    assert out["height_m"] == 330
    assert evs[-2]["guardrail"]["action"] == "redact"  # a rewrite cannot go in: redacted


async def test_without_json_mode_the_same_answer_breaks_and_with_it_not():
    s = replace(settings(), grounding=GROUNDING)
    s = replace(s, policy=replace(s.policy, redact_mode="sentence"))
    body = {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": ANSWER},
         "finish_reason": "stop"}]}
    plain = await guarded_completion(body, s, ScriptedVerifier())
    with pytest.raises(ValueError):
        json.loads(plain.body["choices"][0]["message"]["content"])
    kept = await guarded_completion(body, replace(s, json_answer=True), ScriptedVerifier())
    out = json.loads(kept.body["choices"][0]["message"]["content"])
    assert out == {"city": "Paris", "summary": "The tower is in Paris. [unsupported]",
                   "height_m": 330}


async def test_checks_read_the_values_text_and_each_value_is_a_sentence():
    """No check reads a key, a quote or a brace; two array items are two sentences even
    without a full stop, so a flag in one never redacts the other; the syntax between
    values is not checked at all."""
    answer = json.dumps({"year": 1889, "items": ["It was completed in 1950 by Italians",
                                                 "The tower is in Paris"]})
    s = replace(settings(), json_answer=True, grounding=GROUNDING)
    s = replace(s, policy=replace(s.policy, redact_mode="sentence"))
    v = ScriptedVerifier()
    pieces = [answer[i:i + 4] for i in range(0, len(answer), 4)]
    evs = events(await collect(guarded_stream(raw(answer_stream(pieces)), s, v)))
    assert json.loads(content(evs)) == {"year": 1889,
                                        "items": ["[unsupported]", "The tower is in Paris"]}
    targets = [r.response[r.target_start:r.target_end].strip() for r in v.requests
               if r.priority == Priority.IN_FLIGHT]
    assert targets == ["It was completed in 1950 by Italians", "The tower is in Paris"]
    assert not any(ch in r.response for r in v.requests for ch in '{}[]":') and \
        not any("year" in r.response or "items" in r.response for r in v.requests)
    checked = [x["original"] for x in evs[-2]["guardrail"]["sentences"] if x["checked"]]
    assert checked == ['It was completed in 1950 by Italians"', 'The tower is in Paris"']


@pytest.mark.parametrize("answer, released", [
    ("The tower is in Paris. It was built in 1950.",  # asked for JSON, wrote prose
     "The tower is in Paris. It was built in [unsupported]."),
    ('```json\n{"summary": "It was built in 1950."}\n```',  # fenced in Markdown
     '```json\n{"summary": "It was built in [unsupported]."}\n```'),
    ("True, it was built in 1950.", "True, it was built in [unsupported]."),
    ("`Tower` was built in 1950.", "`Tower` was built in [unsupported]."),  # no fence
])
async def test_an_answer_that_is_no_json_is_read_and_redacted_as_text(answer, released):
    """An upstream that ignores ``response_format``: nothing of its answer passes
    unread (read as values, prose would be all blank), and a flag redacts as in prose."""
    s = replace(settings(), json_answer=True, grounding=GROUNDING)
    v = ScriptedVerifier()
    pieces = [answer[i:i + 3] for i in range(0, len(answer), 3)]
    evs = events(await collect(guarded_stream(raw(answer_stream(pieces)), s, v)))
    assert content(evs) == released
    assert any("1950" in r.response[r.target_start:r.target_end] for r in v.requests)


async def test_a_true_sentence_in_a_json_answer_passes_as_it_would_in_prose(detector):
    """The shipped model, as the proxy runs it: a sentence copied from the grounding is
    released beside a number field (read raw, the syntax around it got it redacted),
    and an unsupported array item is redacted without its supported neighbour."""
    if detector.meta.get("placeholder"):
        pytest.skip("the default model is still the untrained placeholder")
    from guardrail.commands.proxy import _settings
    from guardrail.config import GuardrailConfig
    from guardrail.engine.local import LocalVerifier

    docs = ["The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. "
            "It was built from 1887 to 1889 by the company of Gustave Eiffel as the entrance "
            "to the 1889 World's Fair. It is 330 metres tall."]
    answers = {"true": {"year": 1889, "summary": "The tower is 330 metres tall."},
               "mixed": {"items": ["It was completed in 1950 by a team of Italian architects.",
                                   "The tower is in Paris."]}}
    v = LocalVerifier(detector)
    try:
        s = replace(_settings(GuardrailConfig(), v, docs, "Answer in JSON."), json_answer=True)
        out = {}
        for name, doc in answers.items():
            body = {"choices": [{"index": 0, "message": {"role": "assistant",
                                                         "content": json.dumps(doc)}}]}
            r = await guarded_completion(body, s, v)
            out[name] = json.loads(r.body["choices"][0]["message"]["content"])
    finally:
        await v.aclose()
    assert out["true"] == answers["true"]
    assert out["mixed"]["items"][1] == "The tower is in Paris."
    assert "1950" not in out["mixed"]["items"][0]


@pytest.mark.parametrize("body, expected", [
    ({"response_format": {"type": "json_object"}}, True),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}, True),
    ({"response_format": {"type": "text"}}, False),
    ({"text": {"format": {"type": "json_schema"}}}, True),  # the Responses API
    ({}, False),
])
def test_a_request_asks_for_a_json_answer(body, expected):
    req = ChatRequest(body=body, forward_bytes=b"", model="m", stream=True, n=1,
                      grounding=GROUNDING, policy=None)
    assert req.json_answer is expected
