"""The long-context set: evidence at the asked depth and length, dev-only, half
hallucinated, readable by `guardrail eval`, compared across window strategies."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli import app
from guardrail.model.inputs import tokenize
from guardrail.train import longctx, longctx_eval
from guardrail.train.data import Example, in_dev, load_any

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA / "ragtruth_qa_test_subset").is_dir(),
                                reason="shared/data is not here")
SPLIT = (0.2, 13)  # dev_fraction, seed (the default model's training split)

EVIDENCE = ("passage 1: The Zorblat bridge over the Mira river was opened in 1931 by the "
            "engineer Hana Kovacs.\n\npassage 2: It carries trams between Ostrava and Velkomir.")


@pytest.fixture(scope="module")
def sources():
    return longctx.load_sources(DATA, *SPLIT)


def token_depth(tok, context: str, start: int, evidence: str) -> float:
    """Tokens before the evidence over all tokens that are not evidence."""
    before = len(tokenize(tok, context[:start]))
    return before / (len(tokenize(tok, context)) - len(tokenize(tok, evidence)))


def distractor_docs(n: int = 40) -> list[tuple[str, str]]:
    rng = random.Random(0)
    words = "harbor council railway museum orchard festival weather tunnel miner sailor".split()
    docs = []
    for i in range(n):
        sents = [f"The {rng.choice(words)} of town {i} met the {rng.choice(words)} on day {j}."
                 for j in range(rng.randint(5, 25))]
        docs.append((f"doc{i}", " ".join(sents) + "\nEnd of report."))
    return docs


def test_bury_puts_the_evidence_at_the_depth_in_the_length(tok):
    depths = [0.0, 0.3, 0.7, 1.0]
    placed, used = longctx.bury(EVIDENCE, distractor_docs(), tok, 1500, depths)
    assert used and len(used) == len(set(used))
    evidence = EVIDENCE.strip()
    for depth, (context, start) in zip(depths, placed):
        assert context[start:start + len(evidence)] == evidence
        assert context == context.strip()
        assert abs(len(tokenize(tok, context)) - 1500) <= 15
        assert token_depth(tok, context, start, evidence) == pytest.approx(depth, abs=0.02)
        assert start / (len(context) - len(evidence)) == pytest.approx(depth, abs=0.05)
    # the same distractor text at every depth: only the evidence moves
    fillers = {c[:s] + c[s + len(evidence):] for c, s in placed}
    assert len({" ".join(f.split()) for f in fillers}) == 1


def test_bury_without_enough_text_or_with_a_bad_depth(tok):
    with pytest.raises(ValueError):
        longctx.bury(EVIDENCE, distractor_docs(2), tok, 5000, [0.5])
    with pytest.raises(ValueError):
        longctx.bury(EVIDENCE, distractor_docs(), tok, 1000, [1.5])
    (context, start), = longctx.bury(EVIDENCE, distractor_docs(), tok, 10, [0.5])[0]
    assert context == EVIDENCE and start == 0  # longer than asked: the evidence alone


@needs_data
def test_sources_are_dev_only(sources):
    items, distractors = sources
    assert items and all(in_dev(ex.source_id, *SPLIT) for ex in items)
    assert all(ex.dataset == "ragtruth" for ex in items)
    assert len(distractors) > 100 and all(in_dev(sid, *SPLIT) for sid, _ in distractors)
    kinds = Counter(sid.split("/")[0].split(":")[0] for sid, _ in distractors)
    assert kinds["ragtruth"] and kinds["doc"]  # RAGTruth passages and text-id'd documents


@needs_data
def test_build_cells_half_hallucinated_same_items_at_every_depth(sources, tok):
    items, distractors = sources
    built = longctx.build(items, distractors, tok, lengths=[1024, 2048], depths=[0, 0.5, 1],
                          n_per_cell=4, seed=3)
    assert len(built) == 4 * 2 * 3
    by_id = {ex.id: ex for ex in items}
    cells = Counter((le.length, le.depth) for le in built)
    assert set(cells.values()) == {4}
    origins = {le.origin for le in built}
    assert len(origins) == 4
    for cell in cells:
        members = [le for le in built if (le.length, le.depth) == cell]
        assert sum(le.example.hallucinated for le in members) == 2
        assert {le.origin for le in members} == origins
    for le in built:
        origin = by_id[le.origin]
        ex = le.example
        assert in_dev(origin.source_id, *SPLIT)
        assert all(in_dev(sid, *SPLIT) and sid != origin.source_id for sid in le.distractors)
        s, e = le.evidence
        assert ex.context[s:e] == origin.context.strip()
        assert abs(le.n_tokens - le.length) <= 0.01 * le.length
        assert le.n_tokens == len(tokenize(tok, ex.context))
        assert token_depth(tok, ex.context, s, origin.context.strip()) == \
            pytest.approx(le.depth, abs=0.03)
        assert ex.question == origin.question and ex.hallucinated == bool(ex.spans)
        if le.kind.startswith("injected/"):
            assert not origin.hallucinated and ex.response != origin.response
            (a, b), *rest = ex.spans
            assert ex.response[:a] == origin.response[:a]  # nothing before the change moved
        else:
            assert ex.response == origin.response and ex.spans == origin.spans
            assert le.kind == ("real" if origin.hallucinated else "supported")
    assert {le.kind for le in built} >= {"supported", "real"}
    assert any(k.startswith("injected/") for k in {le.kind for le in built})


@needs_data
def test_pick_items_modes(sources):
    items, _ = sources
    real = longctx.pick_items(items, 6, random.Random(0), "real")
    assert Counter(k for _, k in real) == {"real": 3, "supported": 3}
    injected = longctx.pick_items(items, 6, random.Random(0), "injected")
    assert sum(k.startswith("injected/") for _, k in injected) == 3
    with pytest.raises(ValueError):
        longctx.pick_items(items, 1000, random.Random(0), "real")
    with pytest.raises(ValueError):
        longctx.pick_items(items, 4, random.Random(0), "fake")  # type: ignore[arg-type]


def test_written_set_reads_back_through_the_ragtruth_loader(tmp_path, tok):
    ex = Example(id="x", context="", question="When was the Zorblat bridge opened?",
                 response="It was opened in 1932 by Hana Kovacs.", spans=((17, 21),),
                 hallucinated=True, has_spans=True, source_id="ragtruth/1", dataset="ragtruth")
    placed, used = longctx.bury(EVIDENCE, distractor_docs(), tok, 800, [0.5])
    (context, start), = placed
    le = longctx.LongExample(
        example=Example(id="longctx/800/0.5/0", context=context, question=ex.question,
                        response=ex.response, spans=ex.spans, hallucinated=True, has_spans=True,
                        source_id="longctx/800/0.5/0", dataset="longctx/real"),
        depth=0.5, length=800, n_tokens=len(tokenize(tok, context)),
        evidence=(start, start + len(EVIDENCE)), origin="ragtruth/7", kind="real",
        distractors=used)
    longctx.write_ragtruth(tmp_path, [le])
    loaded, = load_any(tmp_path)
    assert loaded.context == context and loaded.question == ex.question
    assert loaded.spans == ((17, 21),) and loaded.response[17:21] == "1932"
    fields = longctx_eval.read_fields(tmp_path)
    assert fields == {loaded.id: {"depth": 0.5, "length": 800, "n_tokens": le.n_tokens,
                                  "evidence": (start, start + len(EVIDENCE))}}
    assert context[slice(*fields[loaded.id]["evidence"])] == EVIDENCE
    row = json.loads((tmp_path / "source_info.jsonl").read_text())
    assert row["distractors"] == list(used) and row["origin_id"] == "ragtruth/7"
    with pytest.raises(ValueError):
        longctx_eval.groups([loaded], {}, ["depth"])


def test_coverage_of_the_evidence():
    assert longctx_eval.coverage((10, 20), [(0, 12), (18, 30)]) == pytest.approx(0.4)
    assert longctx_eval.coverage((10, 20), [(0, 15), (12, 25)]) == 1.0
    assert longctx_eval.coverage((10, 20), [(30, 40)]) == 0.0


@needs_data
def test_cli_builds_a_set_and_evals_it_with_topk(tmp_path):
    runner = CliRunner()
    out = tmp_path / "lc"
    res = runner.invoke(app, ["data", "longctx", "--out", str(out), "--lengths", "1024",
                              "--depths", "0,1", "--n-per-cell", "2", "--seed", "1",
                              "--source-dir", str(DATA)])
    assert res.exit_code == 0, res.output
    assert (out / "response.jsonl").is_file() and (out / "source_info.jsonl").is_file()
    assert len((out / "response.jsonl").read_text().splitlines()) == 4

    report = tmp_path / "topk.json"
    res = runner.invoke(app, ["eval", "--data", str(out), "--windows", "topk", "--top-k", "2",
                              "--limit", "4", "--exit-layer", "2", "--by", "depth",
                              "--no-progress", "--out", str(report)])
    assert res.exit_code == 0, res.output
    result = json.loads(report.read_text())
    assert result["n_examples"] == 4 and result["windows"] == "topk" and result["top_k"] == [2]
    assert result["windows_scored_mean"] <= 2
    assert set(result["by_depth"]) == {"0", "1"}
    assert "depth" in res.output.splitlines()[0]

    report = tmp_path / "compare.json"
    res = runner.invoke(app, ["eval", "--data", str(out), "--compare-windows", "--top-k", "1,2",
                              "--limit", "2", "--exit-layer", "2", "--no-progress",
                              "--out", str(report)])
    assert res.exit_code == 0, res.output
    rows = json.loads(report.read_text())["rows"]
    assert {r["strategy"] for r in rows} == {"truncate", "all", "top1", "top2"}
    assert {(r["length"], r["depth"]) for r in rows} == {(1024, 0), (1024, 1), (1024, "all")}
    by = {(r["strategy"], r["depth"]): r for r in rows}
    assert by["truncate", "all"]["windows_scored"] == 1
    assert by["top2", "all"]["windows_scored"] <= 2 <= by["all", "all"]["windows_scored"]
    assert by["all", "all"]["evidence_scored"] == 1.0
    # at depth 0 the first window holds the start of the passages (maybe not all of them)
    assert by["truncate", 0]["evidence_scored"] > 0.3 and by["truncate", 1]["evidence_scored"] == 0
    assert "top2" in res.output


def test_cli_rejects_bad_window_options(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["eval", "--data", str(tmp_path), "--windows", "random"])
    assert res.exit_code != 0 and "topk" in res.output
    res = runner.invoke(app, ["eval", "--data", str(tmp_path), "--top-k", "2,4"])
    assert res.exit_code != 0
    res = runner.invoke(app, ["data", "longctx", "--out", str(tmp_path / "x"),
                              "--split", "train"])
    assert res.exit_code != 0 and "dev or calib" in res.output


def test_similar_distractors_come_first():
    ex = Example(id="x", context=EVIDENCE, question="When was the Zorblat bridge opened?",
                 response="In 1931.", spans=(), hallucinated=False, has_spans=True,
                 source_id="own", dataset="ragtruth")
    docs = distractor_docs(30) + [("tram", "Trams between Ostrava and Velkomir use the Zorblat "
                                           "bridge; the Mira river is wide there."),
                                  ("own", EVIDENCE)]
    similar = longctx.order_distractors(ex, docs, random.Random(0), "similar")
    assert similar[0][0] == "tram" and "own" not in {sid for sid, _ in similar}
    shuffled = longctx.order_distractors(ex, docs, random.Random(0), "random")
    assert sorted(shuffled) == sorted(similar)
    with pytest.raises(ValueError):
        longctx.order_distractors(ex, docs, random.Random(0), "nearest")  # type: ignore[arg-type]


@needs_data
def test_a_calibration_split_set_holds_no_dev_item_nor_dev_document(sources):
    """``--split calib`` builds sets to fit on: items of the calibration split that
    `train` carves out of the non-dev sources, among non-dev documents only."""
    from guardrail.commands.training_data import split_for_training
    from guardrail.train.data import in_calib

    items, pool = longctx.load_sources(DATA, *SPLIT, split="calib")
    dev_items, dev_pool = sources
    assert items and pool
    assert not any(in_dev(ex.source_id, *SPLIT) for ex in items)
    assert all(in_calib(ex.source_id, *SPLIT) for ex in items)
    assert {sid for sid, _ in pool}.isdisjoint(sid for sid, _ in dev_pool)
    assert {ex.id for ex in items}.isdisjoint(ex.id for ex in dev_items)
    # the very examples `train` calibrates on
    rt = load_any(DATA / "ragtruth_qa_test_subset")
    _fit, calib, _dev = split_for_training(rt, *SPLIT)
    assert {ex.id for ex in items} == {ex.id for ex in calib}


def _scored(cell: str, hallucinated: list[float], supported: list[float]):
    from guardrail.train.long_offset import Scored

    return ([Scored(f"h{i}", cell, True, s) for i, s in enumerate(hallucinated)]
            + [Scored(f"s{i}", cell, False, s) for i, s in enumerate(supported)])


def test_the_long_offset_is_the_smallest_step_that_brings_every_cell_to_the_gate():
    """Passages alone flag both hallucinated answers (threshold 0.5); beside the long
    context one scores 0.3, whose logit needs 0.85 more: the fit is 0.9.  Every cell of
    every set must reach 0.9x (issue 13's gate), so a set that needs nothing does not
    lower it; and the fit fails clearly when nothing can be fitted."""
    from guardrail.train.long_offset import cell_ratios, fit_offset

    rows = _scored("ev", [0.9, 0.6], [0.1]) + _scored("8192/0", [0.9, 0.3], [0.2])
    assert cell_ratios(rows, 0.5, 0.0) == {"8192/0": 0.5}
    assert fit_offset([rows], 0.5) == 0.9
    assert cell_ratios(rows, 0.5, 0.9) == {"8192/0": 1.0}
    easy = _scored("ev", [0.9, 0.1], []) + _scored("8192/1", [0.95, 0.7], [])
    assert cell_ratios(easy, 0.5, 0.0) == {"8192/1": 2.0} and fit_offset([easy], 0.5) == 0.0
    assert fit_offset([rows, easy], 0.5) == 0.9
    tenths = _scored("ev", [0.9] * 10, []) + _scored("8192/0", [0.9] * 9 + [0.1], [])
    assert fit_offset([tenths], 0.5) == 0.0  # 9 of 10 is the gate's 0.9
    with pytest.raises(ValueError, match="passages alone flag"):
        fit_offset([_scored("ev", [0.1], []) + _scored("8192/0", [0.9], [])], 0.5)
    with pytest.raises(ValueError, match="no offset"):
        fit_offset([_scored("ev", [0.9], []) + _scored("8192/0", [1e-9], [])], 0.5)


@needs_data
def test_calibrate_long_fits_and_writes_the_offset_a_check_then_applies(tmp_path):
    """`guardrail calibrate-long` on a set built from the calibration split: the offset
    it writes is the fit over the raw scores it reports, the model loads with it and
    its sharper read, and a check over more windows than it reads is moved by it."""
    import shutil

    from guardrail.model import Detector
    from guardrail.model.sources import SHIPPED_MODELS
    from guardrail.train.evaluate import detect_all
    from guardrail.train.long_offset import Scored, fit_offset, shifted

    runner = CliRunner()
    lc, model, report = tmp_path / "lc", tmp_path / "pcw", tmp_path / "fit.json"
    res = runner.invoke(app, ["data", "longctx", "--out", str(lc), "--lengths", "1536",
                              "--depths", "0.5", "--n-per-cell", "6", "--seed", "2",
                              "--split", "calib", "--model", "pcw", "--source-dir", str(DATA)])
    assert res.exit_code == 0, res.output
    shutil.copytree(SHIPPED_MODELS["pcw"], model)
    res = runner.invoke(app, ["calibrate-long", "--model", str(model), "--data", str(lc),
                              "--sharpen", "2", "--layers", "4", "--out", str(report)])
    assert res.exit_code == 0, res.output
    fitted = json.loads(report.read_text())["layers"]["4"]
    rows = [Scored(**r) for r in fitted["sets"][str(lc)]["scores"]]
    assert {r.cell for r in rows} == {"1536/0.5", "ev"} and len(rows) == 12
    det = Detector.from_pretrained(model, device="cpu")
    offset = fit_offset([rows], det.threshold_for(4))
    shipped = Detector.from_pretrained("pcw", device="cpu")
    assert det.sharpen == 2.0 and offset > 0  # the other layers' offsets kept, same read
    assert det.long_offset == {**shipped.long_offset, "4": offset}
    for ex in load_any(lc):
        (got,), _ = detect_all(det, [ex], exit_layer=4, progress=False, by_sentence=True)
        raw = next(r.score for r in rows if r.id == ex.id and r.cell != "ev")
        assert got.windows_total > det.top_windows
        assert max(got.token_probs) == pytest.approx(shifted(raw, offset), abs=1e-4)
    again = tmp_path / "again"  # refitted from the report's scores, no model run
    shutil.copytree(SHIPPED_MODELS["pcw"], again)
    res = runner.invoke(app, ["calibrate-long", "--model", str(again), "--sharpen", "2",
                              "--layers", "4", "--scores", str(report)])
    assert res.exit_code == 0, res.output
    assert Detector.from_pretrained(again, device="cpu").long_offset["4"] == offset
    res = runner.invoke(app, ["calibrate-long", "--model", str(again), "--layers", "4",
                              "--sharpen", "3", "--scores", str(report)])
    assert res.exit_code == 2 and "sharpen 2" in res.output
    res = runner.invoke(app, ["calibrate-long", "--model", str(SHIPPED_MODELS["default"]),
                              "--data", str(lc)])
    assert res.exit_code == 2 and "not a `pcw` model" in " ".join(re.sub("[│╭╮╰╯─]", " ",
                                                                          res.output).split())
