"""`guardrail data label` (guardrail/train/labelling.py): answers of one's own tools cut
into the sentences the proxy checks, labelled, and read back by the commands that
measure and fit the judge, with the real detector and judge."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.train.data import load_any
from guardrail.train.labelling import cut, documents, problems, spans_of, template

runner = CliRunner()
TOWER = {"name": "Eiffel Tower", "completed": 1889, "height_m": 330}
ANSWER = "The Eiffel Tower was completed in 1889. It is 330 meters tall. It was completed in 1950."


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_template_holds_each_sentence_the_proxy_checks_labelled_supported():
    row = template({"context": TOWER, "question": "When?", "response": ANSWER}, 1, "mine")
    assert [(s["text"], s["label"]) for s in row["sentences"]] == [
        ("The Eiffel Tower was completed in 1889. ", "supported"),
        ("It is 330 meters tall. ", "supported"), ("It was completed in 1950.", "supported")]
    assert [(s["start"], s["end"]) for s in row["sentences"]] == cut(ANSWER)
    assert json.loads(row["context"]) == TOWER and row["id"] == "mine/1"
    assert row["spans"] == [] and problems(row) == []
    for bad in ({"context": TOWER}, {"context": TOWER, "response": "  "}, {"response": ANSWER},
                {"context": "", "response": ANSWER}, {"context": TOWER, "response": 3}):
        try:
            template(bad, 2, "mine")
        except ValueError as exc:
            assert "row 2" in str(exc)
        else:
            raise AssertionError(f"{bad} was accepted")


def test_labels_give_the_spans_the_loader_reads(tmp_path):
    row = template({"id": "t1", "context": TOWER, "response": ANSWER}, 1, "mine")
    row["sentences"][2]["label"] = "contradicted"
    assert spans_of(row["sentences"]) == ((63, 88),)
    path = tmp_path / "mine.jsonl"
    _write(path, [row, template({"context": TOWER, "response": "It is 330 meters tall."}, 2,
                                "mine")])
    first, second = load_any(path)
    assert first.spans == ((63, 88),) and first.hallucinated and first.has_spans
    assert ANSWER[63:88] == "It was completed in 1950."
    assert second.spans == () and not second.hallucinated


def test_a_wrong_label_or_an_edited_answer_is_reported():
    row = template({"context": TOWER, "response": ANSWER}, 1, "mine")
    row["sentences"][0]["label"] = "wrong"
    row["response"] = row["response"].replace("1889", "1887")
    found = problems(row)
    assert any("label 'wrong'" in p for p in found)
    assert any("sentence 0: the response at" in p for p in found)


def test_the_command_prefills_the_proxys_verdicts_and_the_judge_reads_them(tmp_path):
    src, out = tmp_path / "answers.jsonl", tmp_path / "to_label.jsonl"
    _write(src, [{"id": "t1", "context": TOWER, "question": "Tell me about it.",
                  "response": ANSWER}])
    r = runner.invoke(app, ["data", "label", str(src), "--out", str(out), "--prefill"])
    assert r.exit_code == 0, r.output
    row = json.loads(out.read_text())
    assert [s["label"] for s in row["sentences"]] == ["supported", "supported", "contradicted"]
    assert runner.invoke(app, ["data", "label", str(out), "--check"]).exit_code == 0
    r = runner.invoke(app, ["judge", "eval", "--layers", "4", "--data", str(out),
                            "--out", str(tmp_path / "eval.json")])
    assert r.exit_code == 0, r.output
    got = json.loads((tmp_path / "eval.json").read_text())["layers"]["4"]["mine"]
    assert (got["sentences"], got["unsupported"], got["unsupported_stopped"]) == (3, 1, 1.0)
    row["sentences"][0]["label"] = "maybe"
    _write(out, [row])
    r = runner.invoke(app, ["data", "label", str(out), "--check"])
    assert r.exit_code == 1 and "line 1: sentence 0: label 'maybe'" in r.output
    r = runner.invoke(app, ["data", "label", str(src)])  # no --out
    assert r.exit_code != 0 and "--out" in r.output


def test_a_list_of_passages_is_a_list_of_documents(tmp_path):
    passages = ["The museum opens at 9 AM.", "It closes at 5 PM on weekdays."]
    assert documents(passages) == passages
    assert documents([{"a": 1}]) == ['[{"a": 1}]'] and documents("x") == ["x"]
    row = template({"context": passages, "response": "It closes at 8 PM."}, 1, "rag")
    assert row["context"] == "The museum opens at 9 AM.\n\nIt closes at 5 PM on weekdays."
    src, out = tmp_path / "rag.jsonl", tmp_path / "rag_label.jsonl"
    _write(src, [{"context": passages, "response": "The museum opens at 9 AM. "
                  "It closes at 8 PM."}])
    r = runner.invoke(app, ["data", "label", str(src), "--out", str(out), "--prefill",
                            "--dataset", "rag"])
    assert r.exit_code == 0, r.output
    labels = [s["label"] for s in json.loads(out.read_text())["sentences"]]
    assert labels[0] == "supported" and labels[1] != "supported", labels


def test_several_tool_results_stay_several_documents_for_every_reader(tmp_path):
    """A row whose context is a list keeps it as ``documents``: the judge and the bench
    read each result on its own, as the proxy read it when prefilling."""
    from guardrail.bench.verdicts import messages
    from guardrail.train.data import grounding

    results = [json.dumps(TOWER), json.dumps({"name": "Tower Bridge", "completed": 1894})]
    row = template({"context": results, "response": ANSWER}, 1, "tools")
    assert row["documents"] == results and row["context"] == "\n\n".join(results)
    assert "documents" not in template({"context": TOWER, "response": ANSWER}, 2, "tools")
    path = tmp_path / "mine.jsonl"
    _write(path, [row])
    (ex,) = load_any(path)
    assert ex.documents == tuple(results) and grounding(ex) == results
    assert [m["content"] for m in messages(ex) if m["role"] == "tool"] == results


def test_generated_tool_turns_load_with_their_own_labels(tmp_path):
    """A generated turn's intro and sign-off are labelled ``no_claim``: a supported turn
    stays supported when read back (it was read as hallucinated, its intro a span)."""
    path = tmp_path / "dev.jsonl"
    got = runner.invoke(app, ["data", "toolctx", "--family", "dev", "--n", "40", "--seed", "1",
                              "--out", str(path)])
    assert got.exit_code == 0, got.output
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert any(s["label"] == "no_claim" for r in rows if not r["hallucinated"]
               for s in r["sentences"])
    loaded = load_any(path)
    assert [ex.hallucinated for ex in loaded] == [r["hallucinated"] for r in rows]
    assert [ex.spans for ex in loaded] == [tuple(map(tuple, r["spans"])) for r in rows]
    assert 0 < sum(ex.hallucinated for ex in loaded) < len(loaded)
    got = runner.invoke(app, ["data", "label", str(path), "--check"])
    assert got.exit_code == 0 and '"no_claim"' in got.output, got.output


def test_a_label_the_loader_does_not_know_is_an_error_not_a_span(tmp_path):
    row = template({"context": TOWER, "response": ANSWER}, 1, "mine")
    row["sentences"][1]["label"] = "contradicetd"
    path = tmp_path / "mine.jsonl"
    _write(path, [row])
    try:
        load_any(path)
    except ValueError as exc:
        assert "'contradicetd'" in str(exc) and "mine.jsonl line 1" in str(exc)
    else:
        raise AssertionError("a misspelt label was read as a span")
    got = runner.invoke(app, ["eval", "--data", str(path)])
    assert got.exit_code == 2 and "'contradicetd'" in got.output, got.output


def test_check_names_the_line_of_each_malformed_row_and_never_crashes(tmp_path):
    good = template({"context": TOWER, "response": ANSWER}, 1, "mine")
    cases = [("[1, 2]", 2, "line 3: not a JSON object"),
             ("{oops", 2, "line 3: Expecting"),
             (json.dumps({**good, "sentences": [[0, 3, "supported"]]}), 1,
              "line 3: sentence 0: not an object of start, end, label"),
             (json.dumps({**good, "sentences": "all supported"}), 1,
              "line 3: sentences: not a list"),
             (json.dumps({**good, "response": 7}), 1, "line 3: response: not a text")]
    for bad, status, says in cases:
        path = tmp_path / "mine.jsonl"
        path.write_text(json.dumps(good) + "\n\n" + bad + "\n", encoding="utf-8")
        got = runner.invoke(app, ["data", "label", str(path), "--check"])
        said = " ".join(got.output.replace("│", " ").split())
        assert got.exit_code == status and says in said, (bad, got.output)
        assert got.exception is None or isinstance(got.exception, SystemExit), bad
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    got = runner.invoke(app, ["data", "label", str(path), "--check"])
    assert got.exit_code == 0 and json.loads(got.output)["sentences"] == {"supported": 3}
