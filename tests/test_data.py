"""Loaders on the real shared data (skipped without it) and on small hand-made files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from guardrail.train.data import (Example, load_any, load_binary, load_faithbench,
                                  load_ragtruth, merge_spans, source_ids, split_by_source,
                                  text_id)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared(name: str) -> Path:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"shared data {path} not present")
    return path


def assert_well_formed(examples: list[Example]) -> None:
    ids = [ex.id for ex in examples]
    assert len(set(ids)) == len(ids)
    for ex in examples:
        assert ex.response.strip() and ex.context.strip()
        assert ex.hallucinated == bool(ex.spans) or not ex.has_spans
        assert list(ex.spans) == sorted(ex.spans)
        for (s, e), nxt in zip(ex.spans, ex.spans[1:] + ((len(ex.response) + 1, 0),)):
            assert 0 <= s < e <= len(ex.response) and e < nxt[0]


@pytest.fixture(scope="module")
def ragtruth() -> list[Example]:
    return load_ragtruth(shared("ragtruth_qa_test_subset") / "derived_ragtruth_format")


def test_ragtruth_counts_and_spans(ragtruth):
    assert len(ragtruth) == 663
    assert sum(ex.hallucinated for ex in ragtruth) == 126
    assert len(source_ids(ragtruth)) == 148
    assert_well_formed(ragtruth)
    assert all(ex.has_spans and ex.dataset == "ragtruth" and ex.question for ex in ragtruth)
    assert all(ex.context.startswith("passage 1:") for ex in ragtruth)
    # every labelled text is covered by a merged span
    rows = [json.loads(line) for line in
            (DATA / "ragtruth_qa_test_subset/derived_ragtruth_format/response.jsonl").open()]
    by_id = {ex.id: ex for ex in ragtruth}
    n_labels = 0
    for row in rows:
        ex = by_id[f"ragtruth/{row['id']}"]
        for lab in row["labels"]:
            n_labels += 1
            assert any(s <= lab["start"] and lab["end"] <= e for s, e in ex.spans)
            assert ex.response[lab["start"]:lab["end"]] == lab["text"]
    assert n_labels == 182


def test_faithbench_counts_and_label_policy():
    examples = load_faithbench(shared("faithbench"))
    assert len(examples) == 750
    assert_well_formed(examples)
    raw = [s for p in sorted((DATA / "faithbench/data_for_release").glob("batch_*.json"))
           for s in json.loads(p.read_text())["samples"]]
    assert sum(len(s["annotations"]) for s in raw) == 2189
    by_id = {ex.id: ex for ex in examples}
    n_benign_only = 0
    for path in sorted((DATA / "faithbench/data_for_release").glob("batch_*.json")):
        for s in json.loads(path.read_text())["samples"]:
            ex = by_id[f"faithbench/{path.stem}/{s['sample_id']}"]
            unwanted = [a for a in s["annotations"] if any(l.startswith("Unwanted") for l in a["label"])]
            assert ex.hallucinated == bool(unwanted)
            for a in unwanted:
                assert any(sp <= a["summary_start"] and a["summary_end"] <= e for sp, e in ex.spans)
            n_benign_only += bool(s["annotations"]) and not unwanted
    assert n_benign_only > 0  # benign/questionable-only summaries exist and are negatives
    # one source, several summarizers: same source_id
    assert len(source_ids(examples)) < len(examples) / 5


def test_binary_sets_match_their_label_counts():
    true = load_any(shared("true_benchmark_subsets"))
    assert len(true) == 13358
    begin = [ex for ex in true if ex.dataset == "true/begin"]
    assert len(begin) == 836 and sum(ex.hallucinated for ex in begin) == 554
    assert all(ex.question for ex in begin)  # the previous turn
    summedits = load_binary(shared("summedits") / "summedits_news.json")
    assert len(summedits) == 819 and sum(ex.hallucinated for ex in summedits) == 498
    for ex in true[::500] + summedits[::100]:
        assert not ex.has_spans and ex.spans == () and ex.source_id == text_id(ex.context)


@pytest.mark.parametrize("text, says", [
    ('{"doc": "D", "summary": "S", "label": 1}\n{"doc": "E"}\n', "Extra data"),
    ('{"doc": "D", "summary": "S", "label": 1}', "JSON array"),
    ('[1, 2]', "JSON array"),
])
def test_a_json_file_of_another_shape_is_an_error_naming_the_shape_read(tmp_path, text, says):
    path = tmp_path / "general_data.json"  # HaluEval general: JSON lines, no grounding
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_any(path)
    assert "general_data.json is not a JSON array of {doc, summary, label}" in str(err.value)
    assert says in str(err.value)


def test_ragtruth_repairs_shifted_offsets_and_skips_broken_rows(tmp_path, caplog):
    (tmp_path / "source_info.jsonl").write_text(
        json.dumps({"source_id": "1", "task_type": "Summary", "source_info": "A doc."}) + "\n"
        + json.dumps({"source_id": "2", "task_type": "Data2txt",
                      "source_info": {"name": "Cafe", "hours": {"Mon": "9-5"}}}) + "\n")
    rows = [
        {"id": "a", "source_id": "1", "response": "It says X. Then Y.",
         "labels": [{"start": 0, "end": 4, "text": "Then Y"},            # wrong offsets: search
                    {"start": 3, "end": 7, "text": "not in response"},   # unplaceable: dropped
                    {"start": 12, "end": 18, "text": "hen Y."}]},        # overlaps: merged
        {"id": "b", "source_id": "1", "response": "", "labels": []},
        {"id": "c", "source_id": "2", "response": "Cafe opens at 9.", "labels": []},
    ]
    (tmp_path / "response.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with caplog.at_level(logging.WARNING):
        examples = load_any(tmp_path)
    assert [ex.id for ex in examples] == ["ragtruth/a", "ragtruth/c"]
    a, c = examples
    assert a.spans == ((11, 18),) and a.response[11:18] == "Then Y."
    assert a.question == "Summarize the document."
    assert "hours:\n  Mon: 9-5" in c.context and not c.hallucinated
    assert "empty response skipped: 1" in caplog.text and "dropped: 1" in caplog.text


def test_merge_spans():
    assert merge_spans([(5, 9), (0, 2), (2, 3), (7, 12), (20, 30), (4, 4)], 25) == \
        ((0, 3), (5, 12), (20, 25))


def test_split_is_by_source_deterministic_and_stable():
    examples = [Example(f"e{i}", "c", "", "r", (), False, False, f"src{i % 37}", "x")
                for i in range(400)]
    train, dev = split_by_source(examples, dev_fraction=0.25, seed=7)
    assert not source_ids(train) & source_ids(dev)
    assert len(train) + len(dev) == 400 and 0.1 < len(dev) / 400 < 0.4
    assert (train, dev) == split_by_source(list(examples), dev_fraction=0.25, seed=7)
    # a source's side does not depend on what else is split with it
    _, dev_alone = split_by_source(examples[:50], dev_fraction=0.25, seed=7)
    assert source_ids(dev_alone) == source_ids(dev) & source_ids(examples[:50])
    # pinned: hashlib, not hash(), so this holds on every run and Python version
    assert sorted(source_ids(dev))[:3] == PINNED_DEV
    assert split_by_source(examples, dev_fraction=0.25, seed=8)[1] != dev
    assert split_by_source(examples, 0.0)[1] == [] and split_by_source(examples, 1.0)[0] == []


PINNED_DEV = ["src10", "src11", "src15"]
