"""A tool result inside text: JSON in a fenced code block, or after a label line, read as
the tool result it is (guardrail/evidence/render.py), by the evidence and the detector."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.render import render

ORDER = {"order_id": "A-1043", "status": "shipped", "shipped_at": "2025-03-04T14:30:00",
         "items": [{"sku": "KB-2", "name": "Mechanical keyboard", "qty": 1,
                    "price_cents": 8999},
                   {"sku": "MS-9", "name": "Wireless mouse", "qty": 2, "price_cents": 2450}],
         "gift_wrap": False, "carrier": "UPS", "eta": "2025-03-07"}
RAW = json.dumps(ORDER, indent=2)
ANSWER = ("Your order A-1043 shipped on Tuesday, March 4, 2025 at 2:30 PM with UPS. It has "
          "one mechanical keyboard at $89.99 and two wireless mice at $24.50 each, $138.99 "
          "in all. Gift wrap was not added. It should arrive on Friday, March 7.")

WRAPPED = {
    "fenced": f"```json\n{RAW}\n```",
    "fenced, no language, tildes": f"~~~\n{RAW}\n~~~\n",
    "label line": f"Tool output:\n{RAW}",
    "label on the value's line": f"Result of get_order: {json.dumps(ORDER)}",
    "label, fence and a closing line": f"Here is the order.\n```json\n{RAW}\n```\nThat is all.",
    "fence never closed": f"```json\n{RAW}",
}


@pytest.mark.parametrize("name", list(WRAPPED))
def test_a_wrapped_tool_result_renders_as_the_bare_one_with_its_label_lines(name):
    text = WRAPPED[name]
    bare, r = render(RAW), render(text)
    assert r.format == "json" and r.structured, name
    values = [line.text for line in r.lines if line.text in {x.text for x in bare.lines}]
    assert values == [line.text for line in bare.lines]  # every value, in order
    labels = [line.text for line in r.lines if line.text not in values]
    assert labels == [x.strip() for x in text.replace(RAW, "\n").replace(
        json.dumps(ORDER), "\n").split("\n") if x.strip() and x.strip()[:3] not in
        ("```", "~~~")]  # the lines around it kept, the fences dropped
    for line in r.lines:  # each points back into the text the client sent
        if line.source is not None:
            s, e = line.source
            assert text[s:e] and (text[s:e] in line.text or text[s:e] in ("true", "false")
                                  or text[s:e].isdigit()), (line, text[s:e])


def test_text_that_only_mentions_a_value_stays_text():
    prose = ("The API returns the order as JSON. A typical reply looks like this, and the "
             "fields are described in the next section of this guide, with their types, "
             "their units and what each status means for delivery. ") * 3
    example = '{"order_id": "A-1", "status": "shipped"}'
    for text in (f"{prose}\n{example}", f"{prose}\n```json\n{example}\n```",
                 "[1] The tower is 330 m tall.\n[2] It opened in 1889.",
                 "Results: [1, 2, 3] and then some words about them, at some length.",
                 "```python\ndef area(r):\n    return 3.14159 * r * r\n```\nIt returns pi r^2.",
                 "```\nplain words in a fence\n```"):
        assert render(text).format == "text", text


def test_a_fenced_table_and_csv_render_as_records():
    table = "| City | Temp (C) |\n|---|---|\n| Paris | 21 |\n| Rome | 25.5 |"
    csv = "city,temp_c\nParis,21\nRome,25.5\nOslo,9"
    r = render(f"Weather:\n```\n{table}\n```")
    assert r.format == "markdown-table"
    assert [x.text for x in r.lines] == ["Weather:"] + [x.text for x in render(table).lines]
    r = render(f"```csv\n{csv}\n```")
    assert r.format == "csv"
    assert [x.text for x in r.lines] == [x.text for x in render(csv).lines]
    # a label line is no row: the rows are still counted as three
    r = render(f"Weather today:\n```csv\n{csv}\n```")
    assert r.block_lines == [x.text for x in render(csv).lines] and len(r.lines) == 4
    ev = ContextEvidence.build([f"Weather today:\n```csv\n{csv}\n```"])
    assert not ev.features("There are three cities in the list.").missing_numbers
    assert ev.features("There are four cities in the list.").missing_numbers


def test_two_fenced_results_in_one_message_both_render():
    a, b = json.dumps({"hotel": "Birch", "rooms_free": 3}), json.dumps({"flight": "BA 12",
                                                                        "gate": "B7"})
    r = render(f"get_hotel:\n```json\n{a}\n```\nget_flight:\n```json\n{b}\n```")
    assert r.format == "json"
    assert [x.text for x in r.lines] == ["get_hotel:", "hotel: Birch", "rooms free: 3",
                                         "get_flight:", "flight: BA 12", "gate: B7"]


@pytest.mark.parametrize("name", ["fenced", "label line"])
def test_the_evidence_reads_a_wrapped_tool_result_as_the_bare_one(name):
    bare, wrapped = ContextEvidence.build([RAW]), ContextEvidence.build([WRAPPED[name]])
    assert wrapped.structured and bare.structured
    for sentence in ANSWER.split(". "):
        a, b = bare.features(sentence), wrapped.features(sentence)
        assert (a.missing_numbers, a.field_changed, a.field_agreed) == \
            (b.missing_numbers, b.field_changed, b.field_agreed), sentence


def test_the_detector_reads_a_fenced_tool_result_as_the_bare_one(detector):
    if not detector.render_structured:
        pytest.skip("this model reads tool results as they come")
    bare = detector.prepare_context([RAW])
    fenced = detector.prepare_context([WRAPPED["fenced"]])
    assert fenced.text == bare.text and list(fenced.tokens.ids) == list(bare.tokens.ids)
    assert fenced.key != bare.key  # keyed by the documents as sent


def test_check_decides_a_fenced_tool_result_as_the_bare_one():
    # before: the fenced result was prose to the judge, and two correct sentences of
    # four were redacted on `words`
    runner = CliRunner()
    got = {}
    for name, context in (("bare", RAW), ("fenced", WRAPPED["fenced"])):
        r = runner.invoke(app, ["check", "--context", context, "-q", "Where is my order?",
                                "-a", ANSWER, "--json"])
        assert r.exit_code in (0, 1), r.output
        got[name] = [(s["action"], s["score"]) for s in json.loads(r.stdout)["sentences"]]
    assert got["fenced"] == got["bare"]
    assert all(action == "release" for action, _ in got["fenced"])


def test_a_python_printed_result_renders_as_its_json_with_offsets_into_it():
    # str() of a dict, as agent frameworks pass a tool's return value on
    value = {"name": "Eiffel Tower", "height_m": 330, "lit": True, "closed": None,
             "tickets": [{"kind": "adult", "price_eur": 29.4}], "pos": (48.85, 2.29)}
    as_json = {**value, "pos": [48.85, 2.29]}
    for text in (str(value), f"Tool output:\n{value}", f"```\n{value}\n```"):
        r = render(text)
        assert r.format == "json", text
        assert r.block_lines == [x.text for x in render(json.dumps(as_json)).lines]
        spelled = {line.text: text[line.source[0]:line.source[1]] for line in r.lines
                   if line.source}
        assert spelled["name: Eiffel Tower"] == "Eiffel Tower"
        assert spelled["lit: true"] == "True" and spelled["closed: null"] == "None"
    # literals only: anything else is text, never run
    for text in ("{'a': __import__('os').getcwd()}", "{1, 2}", "{'a': 1j}", "[b'x']"):
        assert render(text).format == "text", text


def test_json_lines_render_as_an_array_of_records():
    hits = [{"title": "Opening hours", "url": "https://a.example/hours"},
            {"title": "Tickets", "url": "https://a.example/tickets"}]
    text = "\n".join(json.dumps(h) for h in hits) + "\n"
    r = render(text)
    assert r.format == "json"
    assert [x.text for x in r.lines] == [x.text for x in render(json.dumps(hits)).lines]
    assert "item 2 of 2:" in [x.text for x in r.lines]
    # a line that is no object: not an array of records (the object is a block of its own)
    assert not any(x.text.startswith("item") for x in render('{"a": 1}\n[2]\n').lines)


def test_a_result_encoded_twice_renders_as_its_json():
    text = json.dumps(json.dumps(ORDER))  # a JSON string holding the JSON
    assert render(text).format == "json"
    assert [x.text for x in render(text).lines] == [x.text for x in render(RAW).lines]
    assert render(json.dumps("just words")).format == "text"


def test_delimited_rows_between_a_label_and_a_footer_render_as_records():
    csv = "id,name,qty\n1,Bolt,40\n2,Nut,55\n3,Washer,70"
    for text in (f"Query returned 3 rows:\n{csv}", f"{csv}\n(3 rows in set)",
                 f"SELECT id, name, qty FROM parts;\n{csv}\n\n3 rows in set (0.01 sec)"):
        r = render(text)
        assert r.format == "csv", text
        assert r.block_lines == [x.text for x in render(csv).lines]
        for line in r.lines:
            s, e = line.source
            assert text[s:e].strip() == line.text or line.text.endswith(text[s:e].split(",")[-1])
        ev = ContextEvidence.build([text])
        assert not ev.features("There are three parts in the list.").missing_numbers
        assert ev.features("There are four parts in the list.").missing_numbers
    prose = ("Apples, pears and plums grow here.\nFigs, dates and limes do not.\nA line.\n"
             "More, words.")
    assert render(prose).format == "text"


def test_key_value_lines_and_lists_in_a_fence_read_as_they_do_bare():
    kv = "Status: open\nOpens: 9:00 AM\nCloses: 5:30 PM\nParking: free for 2 hours"
    hits = ("1. Opening hours - https://a.example/hours\n   Open daily 9 to 5.\n"
            "2. Tickets - https://a.example/tickets\n   Adults $12, children $6.")
    for bare in (kv, hits):
        for wrapped in (f"```\n{bare}\n```", f"Result:\n```text\n{bare}\n```\n"):
            a, b = ContextEvidence.build([bare]), ContextEvidence.build([wrapped])
            assert b.structured == a.structured, wrapped
            assert [x for x in b.lines if x not in a.lines] in ([], ["Result:"]), wrapped
            assert [x for x in b.lines if x in a.lines] == a.lines, wrapped
    from guardrail.evidence.focus import is_tool_result
    from guardrail.evidence.render import render_documents
    assert is_tool_result(f"```\n{kv}\n```") and is_tool_result(kv)
    assert render_documents([f"```\n{kv}\n```"]) == render_documents([kv])
    # two fenced blocks, or a page around one, keep their fences: no lone block to open
    page = f"Intro line one.\nIntro line two.\nIntro three.\n```\n{kv}\n```"
    assert render_documents([page]) == [page]
