"""guardrail bench verdicts: labelled answers streamed through a real proxy (loopback,
shipped detector); what the client received is scored against the labels."""

from __future__ import annotations

import json

from conftest import EIFFEL_TOOL

from guardrail.bench import verdicts
from guardrail.train.data import Example


def _example(i: int, response: str, bad: str = "", dataset: str = "hand") -> Example:
    start = response.find(bad) if bad else -1
    spans = ((start, start + len(bad)),) if start >= 0 else ()
    return Example(f"ex{i}", EIFFEL_TOOL, "When was the Eiffel Tower built?", response, spans,
                   bool(spans), True, f"src{i}", dataset)


def test_streamed_answers_are_scored_by_what_the_client_received():
    examples = [_example(0, "The tower is in Paris. It was completed in 1950 by a team of "
                            "Italian architects.", bad="completed in 1950 by a team of "
                            "Italian architects"),
                _example(1, "The tower is in Paris.")]
    result = verdicts.run(examples)
    all_ = result["by_dataset"]["all"]
    assert result["answers"] == 2 and all_["sentences"] == 3 and all_["unsupported"] == 1
    assert all_["unsupported_stopped"] == 1.0  # the demo's hallucination never reaches it
    final = all_["final"]  # the full-depth pass judged every claim too
    assert final["sentences"] == 3 and final["unsupported_flagged"] in (0.0, 1.0)
    assert set(final) == {"sentences", "supported_clear", "unsupported_flagged", "f1"}
    assert set(result["by_dataset"]) == {"all", "hand"}
    engine = result["engine"]  # read from the proxy's /metrics
    assert engine["checks_done"] >= 3 and 0 <= engine["coalesced_checks"] <= 2


def test_answers_as_json_objects_are_scored_on_the_same_sentences():
    """``answer="json"``: the upstream answers ``{"answer": ...}`` to a request for a
    JSON object; each sentence is placed back in the response by its value's
    characters (escapes included), so the labels mean the same, and the syntax is no
    sentence of its own."""
    response = 'The tower is in Paris. It was completed in 1950 by "Italian" architects.'
    text, where = verdicts.as_json(response)
    assert json.loads(text) == {"answer": response} and len(where) == len(text)
    assert "".join(response[i] for i in dict.fromkeys(i for i in where if i >= 0)) == response
    rows: list = []
    result = verdicts.run([_example(0, response, bad="completed in 1950")], answer="json",
                          sentences=rows)
    assert result["answer"] == "json" and result["by_dataset"]["all"]["sentences"] == 2
    assert [(r["original"], r["gold"]) for r in rows] == [
        ("The tower is in Paris. ", False),
        ('It was completed in 1950 by \\"Italian\\" architects."', True)]
    assert rows[1]["stopped"] and rows[1]["released"].endswith('"')  # the value's end kept


def test_chunks_rebuild_the_answer_exactly():
    import json

    from guardrail.testing.script import chat_events

    answer = "It is 330 m tall.\n\nIt opened in 1889.  "
    events = chat_events(answer)
    assert events[-1] == "[DONE]"
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content", "")
                   for e in events[:-1])
    assert text == answer


def test_formats_of_one_family_of_tool_turns_are_also_summed():
    examples = [_example(0, "The tower is in Paris.", dataset="toolctx/dev/json-array"),
                _example(1, "The tower is in Paris. It is tall.",
                         dataset="toolctx/dev/markdown-table")]
    by = verdicts.run(examples)["by_dataset"]
    assert set(by) == {"all", "toolctx/dev", "toolctx/dev/json-array",
                       "toolctx/dev/markdown-table"}
    assert by["toolctx/dev"]["sentences"] == 3 == by["all"]["sentences"]


def test_each_sentence_outcome_is_written_with_its_explanation(tmp_path):
    """`guardrail bench verdicts` writes what happened to every sentence, so a user can
    read which supported sentences were stopped and why."""
    import json

    from typer.testing import CliRunner

    from guardrail.cli import app

    bad = "It was completed in 1950 by a team of Italian architects."
    ex = _example(0, "Here is what I found.\n\n" + bad, bad=bad)
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": ex.id, "context": ex.context, "question": ex.question,
                                "response": ex.response, "spans": [list(s) for s in ex.spans],
                                "hallucinated": True, "has_spans": True,
                                "source_id": ex.source_id, "dataset": "hand"}) + "\n")
    result = CliRunner().invoke(app, ["bench", "verdicts", "--data", str(data),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(x) for x in (tmp_path / "out" / "sentences.jsonl").read_text()
            .splitlines()]
    assert [r["original"].strip() for r in rows] == ["Here is what I found.", bad]
    kept, stopped = rows
    assert (kept["gold"], kept["stopped"], kept["claim"]) == (False, False, False)
    assert kept["released"] == kept["original"]
    assert stopped["gold"] and stopped["stopped"] and stopped["released"] != bad
    assert stopped["explanation"]["kind"] in ("contradicted", "unverifiable")
    assert stopped["example"] == "ex0" and stopped["dataset"] == "hand"
    assert stopped["checked"] and stopped["exit_layer"] in (2, 4)  # the in-flight check's
    assert kept["exit_layer"] is None  # no claim: no check


def test_claims_the_grounding_settled_are_counted():
    """A claim released with no model call (checked, no exit layer: ``stream/settle.py``)
    counts as settled; one released unchecked (a failed check) or without a claim
    does not."""
    O = verdicts.Outcome
    outcomes = [O("hand", False, False, True, exit_layer=None),            # settled
                O("hand", False, False, True, exit_layer=4),
                O("hand", False, False, False, exit_layer=None),           # no claim
                O("hand", False, False, True, exit_layer=None, checked=False)]
    assert verdicts.summarise(outcomes)["settled"] == 1


def test_a_config_file_sets_the_proxy_and_a_bad_one_is_refused(tmp_path):
    """`--config` runs the proxy with the file's settings (here a policy threshold no
    sentence reaches: nothing is stopped); an invalid file exits 2 before any model."""
    import json

    from typer.testing import CliRunner

    from guardrail.cli import app

    bad = "It was completed in 1950 by a team of Italian architects."
    ex = _example(0, bad, bad=bad)
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": ex.id, "context": ex.context, "question": ex.question,
                                "response": ex.response, "spans": [list(s) for s in ex.spans],
                                "hallucinated": True, "has_spans": True,
                                "source_id": ex.source_id, "dataset": "hand"}) + "\n")
    lax = tmp_path / "lax.yaml"
    lax.write_text("policy:\n  threshold: 0.99999\nscheduler:\n  depth_ladder: []\n")
    result = CliRunner().invoke(app, ["bench", "verdicts", "--data", str(data), "--config",
                                      str(lax), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    row = json.loads((tmp_path / "out" / "sentences.jsonl").read_text())
    assert row["gold"] and not row["stopped"] and row["released"] == bad
    assert json.loads((tmp_path / "out" / "verdicts.json").read_text())["config"] == str(lax)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("scheduler:\n  depth_ladder: [64, 6]\n")
    result = CliRunner().invoke(app, ["bench", "verdicts", "--data", str(data), "--config",
                                      str(wrong), "--out", str(tmp_path / "out2")])
    assert result.exit_code == 2 and "depth_ladder" in result.output
