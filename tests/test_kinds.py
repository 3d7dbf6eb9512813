"""What a flag is called: the data's own kinds (RAGTruth's label types, the labelled
JSONL files) and the explanation's kind against a grounding (evidence.judge.explain)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.judge import explain
from guardrail.train.data import load_any
from guardrail.train.kinds import kinds_of, ragtruth_kind

PASSAGE = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. "
           "It was designed and built by the company of Gustave Eiffel from 1887 to 1889. "
           "The tower is 330 metres tall and is not open at night.")
ANSWER = ("The tower was built from 1887 to 1889. It welcomes 7 million visitors a year. "
          "It was completed in 1950. The tower is open at night.")


def _ragtruth(tmp_path: Path) -> Path:
    (tmp_path / "source_info.jsonl").write_text(json.dumps(
        {"source_id": "1", "task_type": "QA", "source_info": {
            "question": "Tell me about the Eiffel Tower", "passages": PASSAGE}}) + "\n")
    seven, fifty = ANSWER.index("It welcomes"), ANSWER.index("1950")
    night = ANSWER.index("open at night")
    rows = [{"id": "a", "source_id": "1", "response": ANSWER, "labels": [
        {"start": seven, "end": seven + 30, "text": ANSWER[seven:seven + 30],
         "label_type": "Evident Baseless Info"},
        {"start": fifty, "end": fifty + 4, "text": "1950", "label_type": "Evident Conflict"},
        {"start": night, "end": night + 13, "text": "open at night",
         "label_type": "Subtle Conflict"},
        {"start": night, "end": night + 4, "text": "open", "label_type": "Subtle Baseless Info"}]},
        {"id": "b", "source_id": "1", "response": "It is in Paris.", "labels": []}]
    (tmp_path / "response.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_ragtruths_label_types_are_the_kinds_a_flag_is_measured_against(tmp_path):
    """A conflict is contradicted and baseless info unverifiable, on the spans as the
    loader places them; a sentence holding both is contradicted; a sentence without a
    label has no kind, nor does data that names none."""
    kind_of = kinds_of(str(_ragtruth(tmp_path)) + "@dev")
    a = next(ex for ex in load_any(tmp_path) if ex.id == "ragtruth/a")
    at = {s: ANSWER.index(s) for s in ("It welcomes", "It was completed", "The tower is open",
                                        "The tower was built")}
    assert kind_of(a, at["It welcomes"], at["It was completed"]) == "unverifiable"
    assert kind_of(a, at["It was completed"], at["The tower is open"]) == "contradicted"
    assert kind_of(a, at["The tower is open"], len(ANSWER)) == "contradicted"
    assert kind_of(a, 0, at["It welcomes"]) is None
    assert ragtruth_kind("Evident Baseless Info") == "unverifiable"
    assert ragtruth_kind("Subtle Conflict") == "contradicted" and ragtruth_kind("x") is None
    assert kinds_of(str(tmp_path / "missing")) is None
    (tmp_path / "faith").mkdir()
    (tmp_path / "faith" / "batch_1.json").write_text("[]")
    assert kinds_of(str(tmp_path / "faith")) is None


def test_guardrail_eval_says_how_often_the_kind_of_a_flag_agrees_with_ragtruths(tmp_path):
    """``guardrail eval`` on a RAGTruth directory measures the explanations too: the
    judge's table has a "kind ok" column and the JSON its explanation_accuracy."""
    out, data = tmp_path / "eval.json", tmp_path / "rt"
    data.mkdir()
    r = CliRunner().invoke(app, ["eval", "--data", str(_ragtruth(data)), "--no-progress",
                                 "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "kind ok" in r.output
    judge = json.loads(out.read_text())["judge"]["all"]
    flagged = judge["explained_flags"]
    assert flagged >= 1 and 0.0 <= judge["explanation_accuracy"] <= 1.0


def _kind(grounding: list[str], question: str, sentence: str, before: str = "") -> str:
    ev = ContextEvidence.build(grounding, question)
    return explain(ev.features(sentence, before), 0.9, ev.structured, ev.asks_value).kind


def test_a_value_or_a_negation_no_line_speaks_of_is_unverifiable():
    """RAGTruth calls a figure the passages never give, or a negated detail they never
    mention, baseless: unverifiable.  The same value answering what was asked, or said
    of the line the sentence stands in, is the grounding said otherwise."""
    q = "Tell me about the Eiffel Tower."
    assert _kind([PASSAGE], q, "It welcomes 7 million visitors a year.") == "unverifiable"
    assert _kind([PASSAGE], q, "Visitors can't bring large bags inside.") == "unverifiable"
    assert _kind([PASSAGE], "When was the Eiffel Tower built?",
                 "It was completed in 1950.", "The Eiffel Tower is in Paris. ") == \
        "contradicted"
    assert _kind([PASSAGE], "What happens when the tower closes?",
                 "It was completed in 1950.", "The Eiffel Tower is in Paris. ") == \
        "unverifiable"  # a "when" clause asks for no value
    assert _kind([PASSAGE], q, "The tower is 300 metres tall.") == "contradicted"
    assert _kind([PASSAGE], q, "The tower is open at night.") == "contradicted"


def test_a_passage_line_sharing_half_of_an_added_details_words_is_not_what_it_speaks_of():
    """A passage's line is a sentence: sharing half of an added detail's content words
    does not make the detail that line's claim (``ABOUT_LINE``), where a tool result's
    line, one field, does."""
    passage = ("The Champ de Mars park hosts concerts in summer and a market on Sundays, "
               "near the river.")
    added = "The park hosts a flower show in summer."
    ev = ContextEvidence.build([passage], "")
    got = ev.features(added, "")
    assert 0.5 <= got.best_line_recall < 0.75 and got.word_precision >= 0.6
    assert explain(got, 0.9, False).kind == "unverifiable"
    assert explain(got, 0.9, True).kind == "contradicted"  # read as a tool result's line
