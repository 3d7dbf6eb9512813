"""`guardrail data longtool`: a tool-grounded turn's result among many other tool results,
each its own tool message; labels kept, the evidence where asked, every reader given the
results one by one."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from guardrail.bench import verdicts
from guardrail.cli import app
from guardrail.train import longtool
from guardrail.train.data import Example, grounding, load_any
from guardrail.train.toolctx import FAMILIES


@pytest.fixture(scope="module")
def built(detector):
    return longtool.build("dev", detector.tokenizer, lengths=[1500], depths=[0, 0.5, 1],
                          n_per_cell=4, seed=3)


def test_every_cell_holds_the_same_turns_with_their_labels_and_the_evidence_where_asked(
        built, detector):
    short = {lt.turn.example.id.rsplit("/", 1)[0]: lt for lt in built if lt.length == 0}
    assert len(short) == 4 and sum(s.turn.example.hallucinated for s in short.values()) == 2
    assert all(not s.turn.example.documents for s in short.values())
    long_ = [lt for lt in built if lt.length]
    assert len(long_) == 12
    others = {}
    for lt in long_:
        ex, base = lt.turn.example, short[lt.turn.example.id.rsplit("/", 2)[0]].turn
        assert (ex.response, ex.spans, ex.question, lt.turn.sentences) == \
            (base.example.response, base.example.spans, base.example.question, base.sentences)
        docs = ex.documents
        assert docs[lt.evidence_index] == base.example.context
        assert lt.evidence_index == round(lt.depth * (len(docs) - 1))
        assert ex.context == "\n\n".join(docs) and len(docs) <= longtool.MAX_DOCUMENTS
        count = sum(len(detector.tokenizer(d, add_special_tokens=False)["input_ids"])
                    for d in docs)
        assert count == lt.n_tokens >= 1500
        rest = docs[:lt.evidence_index] + docs[lt.evidence_index + 1:]
        others.setdefault(ex.id.rsplit("/", 2)[0], set()).add(rest)
        assert ex.dataset == longtool.cell_name("dev", 1500, lt.depth)
    assert all(len(v) == 1 for v in others.values())  # the same other results at every depth


def test_the_other_results_come_from_the_familys_other_schemas(built):
    dev = {s.name for s in FAMILIES["dev"].schemas}
    for lt in built:
        assert len(lt.other_schemas) == len(lt.turn.example.documents) - (lt.length > 0)
        assert set(lt.other_schemas) <= dev - {lt.turn.schema}
    assert len({s for lt in built for s in lt.other_schemas}) >= 3


def test_the_file_loads_with_its_documents_and_the_bench_sends_one_tool_message_each(
        built, tmp_path):
    path = longtool.write_jsonl(tmp_path / "lt.jsonl", built)
    loaded = load_any(path)
    assert [e.id for e in loaded] == [lt.turn.example.id for lt in built]
    assert [e.documents for e in loaded] == [lt.turn.example.documents for lt in built]
    ex = next(e for e in loaded if e.documents)
    assert grounding(ex) == list(ex.documents)
    msgs = verdicts.messages(ex)
    tools = [m for m in msgs if m["role"] == "tool"]
    calls = next(m for m in msgs if m["role"] == "assistant")["tool_calls"]
    assert [m["content"] for m in tools] == list(ex.documents)
    assert [m["tool_call_id"] for m in tools] == [c["id"] for c in calls]
    alone = next(e for e in loaded if not e.documents)
    assert grounding(alone) == alone.context
    assert [m["content"] for m in verdicts.messages(alone) if m["role"] == "tool"] == \
        [alone.context]


def test_the_command_writes_the_cells_and_refuses_bad_depths(tmp_path):
    out = tmp_path / "lt.jsonl"
    r = CliRunner().invoke(app, ["data", "longtool", "--out", str(out), "--lengths", "1200",
                                 "--depths", "0,1", "--n-per-cell", "2"])
    assert r.exit_code == 0, r.output
    cells = json.loads(r.output)["cells"]
    assert set(cells) == {"longtool/dev/short", "longtool/dev/1200/d0", "longtool/dev/1200/d1"}
    assert len(out.read_text().splitlines()) == 6
    bad = CliRunner().invoke(app, ["data", "longtool", "--out", str(out), "--depths", "2"])
    assert bad.exit_code != 0 and "depths" in bad.output


def test_a_turn_among_other_tool_results_is_judged_by_the_proxy_on_its_own_result():
    """Through the real proxy: the Eiffel facts in the middle one of three tool messages."""
    from conftest import EIFFEL_TOOL

    others = ('{"flight": "BA117", "from": "LHR", "to": "JFK", "departs": "2024-05-02T09:15"}',
              "| Hotel | City | Stars |\n|---|---|---|\n| Corso | Rome | 4 |")
    response = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. "
                "It was completed in 1950 by a team of Italian architects.")
    bad = "completed in 1950 by a team of Italian architects"
    start = response.find(bad)
    ex = Example("lt0", "\n\n".join((others[0], EIFFEL_TOOL, others[1])), "When was it built?",
                 response, ((start, start + len(bad)),), True, True, "lt0", "longtool/t/x",
                 documents=(others[0], EIFFEL_TOOL, others[1]))
    all_ = verdicts.run([ex])["by_dataset"]["all"]
    assert all_["sentences"] == 2 and all_["unsupported_stopped"] == 1.0
    assert all_["supported_kept"] == 1.0


def test_a_joined_answer_speaks_of_two_results_and_keeps_every_label(detector):
    built = longtool.build("dev", detector.tokenizer, lengths=[1500], depths=[0.5],
                           n_per_cell=4, seed=3, joined=True)
    alone = {lt.turn.example.id.rsplit("/", 1)[0]: lt.turn for lt in built if not lt.length}
    joined = [lt for lt in built if lt.turn.example.dataset == "longtool/dev/1500/joined"]
    assert len(joined) == 4
    for lt in joined:
        ex = lt.turn.example
        own = alone[ex.id.rsplit("/", 2)[0]]
        first_schema, own_schema = lt.turn.schema.split("+")
        assert own_schema == own.schema != first_schema
        first = next(t for t in alone.values() if t.example.context == ex.documents[0])
        assert ex.documents[lt.evidence_index] == own.example.context
        assert ex.response == f"{first.example.response} {own.example.response}"
        assert first_schema not in lt.other_schemas[1:] and own_schema not in lt.other_schemas
        texts = [(ex.response[s.start:s.end], s.label) for s in lt.turn.sentences]
        assert texts == [(t.example.response[s.start:s.end], s.label)
                         for t in (first, own) for s in t.sentences]
        assert [ex.response[a:b] for a, b in ex.spans] == \
            [t.example.response[a:b] for t in (first, own) for a, b in t.example.spans]
