"""guardrail.train.compare and `guardrail judge compare`: two models on the same sentences,
their difference and its paired bootstrap interval; on hand-made rows and decisions, and
end to end with the real shipped models."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest

from guardrail.train.compare import _weighted_auroc, compare, pair
from guardrail.evidence.judge import FEATURES
from guardrail.train.judge import Row, decisions, measure
from guardrail.train.scores import auroc


def _answers(n: int, dataset: str = "toolctx/dev/json", seed: int = 0) -> list[Row]:
    """``n`` answers of 3 sentences; about one answer in three holds one unsupported."""
    rng, rows = random.Random(seed), []
    for a in range(n):
        bad = rng.randrange(3) if rng.random() < 0.35 else -1
        for s in range(3):
            rows.append(Row(dataset, f"{dataset}/{a}", f"s{s}.", s == bad, True, (), 4))
    return rows


def _decide(stops_unsupported: float, stops_supported: float, seed: int):
    """Decisions that stop the given shares, at random; scores follow the decisions."""
    def run(rows):
        rng = random.Random(seed)
        flags = [rng.random() < (stops_unsupported if r.gold else stops_supported)
                 for r in rows]
        return flags, [0.5 * f + 0.5 * rng.random() for f in flags]
    return run


def test_the_weighted_auroc_counts_each_item_as_often_as_it_weighs():
    rng = np.random.default_rng(1)
    gold = rng.random(200) < 0.3
    scores = np.round(rng.random(200) + 0.4 * gold, 1)  # many ties
    w = rng.integers(0, 4, size=200).astype(float)
    assert _weighted_auroc(gold, scores, np.ones(200)) == pytest.approx(auroc(gold, scores))
    rep = np.repeat(np.arange(200), w.astype(int))
    assert _weighted_auroc(gold, scores, w) == pytest.approx(auroc(gold[rep], scores[rep]))
    assert _weighted_auroc(np.zeros(5, bool), np.ones(5), np.ones(5)) is None


def test_each_models_figures_are_what_judge_eval_reports():
    """At the whole set (no resampling) A's figures equal `measure`'s, which `guardrail
    judge eval` prints, for the same rule (here the token rule over the rows' p_max)."""
    rng, p = random.Random(3), FEATURES.index("p_max")
    rows = []
    for r in _answers(120):
        x = [0.0] * len(FEATURES)
        x[p] = min(1.0, max(0.0, (0.7 if r.gold else 0.3) + rng.gauss(0, 0.25)))
        rows.append(Row(r.dataset, r.example_id, r.sentence, r.gold, True, tuple(x), 4))
    want = measure(rows, None, threshold=0.5)["all"]
    got = compare(pair(rows, rows), lambda rs: decisions(rs, None, 0.5), _decide(0.3, 0.0, 4),
                  resamples=100)[4]["all"]
    for m in ("supported_kept", "unsupported_stopped", "stop_f1", "auroc", "example_f1",
              "example_auroc"):
        assert got[m]["a"] == pytest.approx(want[m], abs=1e-4), m
    assert got["answers"] == want["answers"] and got["unsupported"] == want["unsupported"]


def test_a_model_against_itself_differs_by_nothing():
    rows = _answers(80)
    same = _decide(0.5, 0.05, 7)
    result = compare(pair(rows, rows), same, same, resamples=200)[4]["all"]
    for m in ("supported_kept", "unsupported_stopped", "stop_f1", "example_f1", "auroc"):
        assert result[m]["diff"] == 0 and result[m]["interval"] == [0, 0], m


def test_a_real_difference_shows_on_many_answers_and_not_on_few():
    """A stops 90 % of the unsupported sentences, B 50 %, both the same supported ones:
    over 600 answers the interval of the difference leaves out zero; over 12 answers the
    same models cannot be told apart as surely (a wider interval)."""
    a, b = _decide(0.9, 0.03, 11), _decide(0.5, 0.03, 11)

    def stopped(n):
        rows = _answers(n, seed=n)
        return compare(pair(rows, rows), a, b, resamples=500)[4]["all"]["unsupported_stopped"]

    many, few = stopped(600), stopped(12)
    assert many["diff"] > 0.3 and many["interval"][0] > 0.2
    assert few["interval"][1] - few["interval"][0] > 3 * (many["interval"][1]
                                                           - many["interval"][0])


def test_answers_not_sentences_are_resampled():
    """An answer's sentences are drawn together: with every sentence of an answer decided
    alike, an answer-level bootstrap is wider than one that treated its 3 sentences as
    independent would be (about 1/sqrt(3) as wide)."""
    rows = [Row("d", f"d/{a}", f"s{s}.", a % 2 == 0, True, (), 4)
            for a in range(60) for s in range(3)]

    def per_answer(seed):
        def run(rs):
            rng = random.Random(seed)
            by = {}
            flags = [by.setdefault(r.example_id, rng.random() < 0.5) for r in rs]
            return flags, [float(f) for f in flags]
        return run

    iv = compare(pair(rows, rows), per_answer(1), per_answer(2),
                 resamples=1000)[4]["all"]["unsupported_stopped"]["interval"]
    # 30 answers hold the unsupported sentences: the sd of a difference of two
    # independent shares over 30 items is about 0.13, so the 95 % interval spans ~0.5
    assert iv[1] - iv[0] > 0.35


def test_rows_are_paired_by_sentence_whatever_their_order_and_must_match():
    rows = _answers(10, seed=2)
    shuffled = rows[:]
    random.Random(0).shuffle(shuffled)
    paired = pair(rows, shuffled)
    assert [(r.example_id, r.sentence) for r in paired.a] == \
        [(r.example_id, r.sentence) for r in paired.b]
    with pytest.raises(ValueError, match="different sentences"):
        pair(rows, rows[3:])
    other = [Row(r.dataset, r.example_id, r.sentence, not r.gold, True, (), 4) for r in rows]
    with pytest.raises(ValueError, match="labelled otherwise"):
        pair(rows, other)


def test_groups_are_compared_per_data_set_and_family():
    rows = _answers(30, "toolctx/dev/json", 1) + _answers(30, "ragtruth", 2)
    result = compare(pair(rows, rows), _decide(0.7, 0.02, 5), _decide(0.4, 0.02, 6),
                     resamples=100)[4]
    assert {"all", "toolctx", "toolctx/dev/json", "ragtruth"} <= set(result)
    assert result["ragtruth"]["answers"] == 30 and result["all"]["answers"] == 60


def test_the_command_compares_two_real_models_on_the_same_sentences(tmp_path):
    """`guardrail judge compare` with the shipped default against a copy of itself (no
    difference; the rows cache is keyed by the weights, so one entry serves both) and against the shipped `pcw` (each
    model's own decisions, the JSON written); a model without a judge and layers B lacks
    are usage errors."""
    from typer.testing import CliRunner

    from guardrail.cli import app
    from guardrail.model import DEFAULT_MODEL
    from guardrail.train import toolctx

    data, cache = tmp_path / "turns.jsonl", tmp_path / "rows.json"
    toolctx.write_jsonl(data, toolctx.generate("dev", 4, 1))
    copy = tmp_path / "copy"
    shutil.copytree(DEFAULT_MODEL, copy)

    def run(*args: str):
        return CliRunner().invoke(app, ["judge", "compare", "--data", str(data),
                                        "--resamples", "200", *args])

    same = run("--against", str(copy), "--layers", "4", "--rows-cache", str(cache),
               "--out", str(tmp_path / "same.json"))
    assert same.exit_code == 0, same.output
    layer = json.loads((tmp_path / "same.json").read_text())["layers"]["4"]["all"]
    assert layer["sentences"] > 10
    # the copy's weights are the default's: one cached entry served both
    assert len(json.loads(cache.read_text())["entries"]) == 1
    assert all(layer[m]["diff"] == 0 for m in ("supported_kept", "auroc", "example_auroc"))

    vs_pcw = run("--against", "guardrail/models/pcw", "--layers", "4", "--out",
                 str(tmp_path / "pcw.json"))
    assert vs_pcw.exit_code == 0, vs_pcw.output
    out = json.loads((tmp_path / "pcw.json").read_text())
    assert out["b"] != out["a"] and out["layers"]["4"]["all"]["sentences"] == layer["sentences"]
    assert "A - B" in vs_pcw.output

    meta = json.loads((copy / "guardrail.json").read_text())
    del meta["judge"]
    (copy / "guardrail.json").write_text(json.dumps(meta))
    no_judge = run("--against", str(copy), "--layers", "4")
    said = " ".join(no_judge.output.replace("│", " ").split())  # rich's box
    assert no_judge.exit_code == 2 and "has no sentence judge" in said
    assert run("--against", str(copy), "--layers", "4", "--tokens").exit_code == 0
    deep = run("--against", "guardrail/models/pcw", "--layers", "5")
    assert deep.exit_code == 2 and "--layers" in deep.output


def _run(folder, stops: dict[str, bool]) -> str:
    """A `bench verdicts` --out folder: each answer's sentences, stopped as given."""
    folder.mkdir()
    lines = []
    for key, stopped in stops.items():
        example, sentence, gold = key.split("|")
        lines.append(json.dumps({"example": example, "dataset": example.split("/")[0],
                                 "gold": gold == "bad", "stopped": stopped, "claim": True,
                                 "original": sentence, "released": sentence}))
    (folder / "sentences.jsonl").write_text("\n".join(lines) + "\n")
    return str(folder)


def test_bench_compare_pairs_two_streamed_runs_answer_by_answer(tmp_path):
    """`guardrail bench compare`: runs of the same answers (one folder per set, any
    order), what each stopped and A - B; no AUROC without scores; runs over other
    answers, or a folder that is no run, are usage errors."""
    from typer.testing import CliRunner

    from guardrail.cli import app

    keys = [f"s/{a}|Sentence {k}.|{'bad' if k == 0 and a % 2 else 'ok'}"
            for a in range(40) for k in range(3)]
    a1 = _run(tmp_path / "a1", {k: k.endswith("bad") for k in keys[:60]})
    a2 = _run(tmp_path / "a2", {k: k.endswith("bad") for k in keys[60:]})
    b = _run(tmp_path / "b", {k: k.endswith("bad") and "/1|" in k for k in reversed(keys)})
    res = CliRunner().invoke(app, ["bench", "compare", "--run", a1, "--run", a2, "--against",
                                   b, "--out", str(tmp_path / "c.json")])
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "c.json").read_text())["groups"]["all"]
    assert got["answers"] == 40 and got["unsupported"] == 20
    assert got["unsupported_stopped"]["a"] == 1.0 and got["unsupported_stopped"]["b"] == 0.05
    assert got["unsupported_stopped"]["interval"][0] > 0.8  # every resample: A stops more
    assert got["supported_kept"]["diff"] == 0 and got["auroc"]["diff"] is None
    assert "auroc" not in res.output

    short = CliRunner().invoke(app, ["bench", "compare", "--run", a1, "--against", b])
    said = " ".join(short.output.replace("│", " ").split())
    assert short.exit_code == 2 and "different sentences" in said
    none = CliRunner().invoke(app, ["bench", "compare", "--run", str(tmp_path), "--against", b])
    said = " ".join(none.output.replace("│", " ").split())
    assert none.exit_code == 2 and "no sentences.jsonl" in said
