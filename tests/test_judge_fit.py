"""guardrail.train.judge: fitting the sentence judge and measuring it, on rows made by
hand (the detector's part of a row is its token probabilities), and the rows cache of
`guardrail judge`, with the real shipped model."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from guardrail.evidence.judge import FEATURES, SentenceJudge
from guardrail.train.judge import Row, f1_interval, fit, fit_logistic, keep_threshold, measure


def _rows(n: int, dataset: str, seed: int, noise: float = 0.3) -> list[Row]:
    """Unsupported sentences have a high token probability and a missing number."""
    rng, out = random.Random(seed), []
    for i in range(n):
        gold = rng.random() < 0.3
        x = [0.0] * len(FEATURES)
        x[FEATURES.index("p_max")] = min(1, max(0, (0.8 if gold else 0.2) + rng.gauss(0, noise)))
        x[FEATURES.index("number_missing")] = float(gold and rng.random() < 0.6)
        x[FEATURES.index("word_precision")] = rng.random()
        out.append(Row(dataset, f"{dataset}/{i}", "s.", gold, True, tuple(x), 4,
                       "contradicted" if gold else None, "contradicted" if gold else None))
    return out


def test_logistic_regression_finds_the_separating_direction():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(float)
    w, b = fit_logistic(X, y, l2=0.1)
    assert w[0] > 2 and abs(w[1]) < 0.5 * w[0] and abs(b) < 1


def test_keep_threshold_passes_the_share_of_supported_sentences_asked_for():
    probs = np.linspace(0, 1, 101)
    gold = np.zeros(101, dtype=bool)
    t = keep_threshold(probs, gold, 0.95)
    assert np.mean(probs < t) >= 0.95 and np.mean(probs < t) <= 0.97
    weights = np.where(probs < 0.5, 3.0, 1.0)  # the low half counts three times
    tw = keep_threshold(probs, gold, 0.95, weights)
    assert np.sum(weights[probs < tw]) / weights.sum() >= 0.95 and tw < t


def test_the_fitted_judge_keeps_supported_text_and_stops_most_of_the_rest():
    rows = _rows(600, "toolctx/train/json-array", 0) + _rows(300, "ragtruth", 1, noise=0.45)
    head = fit(rows, keep=0.95)
    result = measure(rows, SentenceJudge({4: head}))
    kept = [result[family]["supported_kept"] for family in ("ragtruth", "toolctx")]
    assert sum(kept) / 2 >= 0.95 and min(kept) >= 0.9  # each family weighs the same
    assert result["all"]["unsupported_stopped"] > 0.5 and result["all"]["auroc"] > 0.9
    assert result["all"]["explanation_accuracy"] == 1.0
    unseen = measure(_rows(400, "ragtruth", 2, noise=0.45), SentenceJudge({4: head}))
    assert unseen["all"]["supported_kept"] >= 0.9  # holds on rows it was not fitted on
    tokens = measure(rows, None, threshold=0.5)  # the old rule, for comparison
    assert tokens["all"]["sentences"] == result["all"]["sentences"]


def test_a_sentence_without_a_claim_is_never_flagged_by_the_judge():
    rows = _rows(200, "d", 0)
    no_claim = Row("d", "x", "Here is what I found:", False, False,
                   tuple([1.0] * len(FEATURES)), 4)
    judge = SentenceJudge({4: fit(rows)})
    assert measure([no_claim], judge)["all"]["supported_kept"] == 1.0


def test_fitting_needs_both_labels():
    with pytest.raises(ValueError, match="supported and unsupported"):
        fit([r for r in _rows(50, "d", 0) if not r.gold])


def test_the_rows_cache_keeps_each_data_set_apart(tmp_path, monkeypatch):
    """A second `judge eval` reads the detector's scores it has; one more data set runs
    the model on that set alone; a file rewritten in place is scored again (the real
    shipped detector; the scorer is only counted)."""
    from typer.testing import CliRunner

    from guardrail.cli import app
    from guardrail.train import judge as judge_train
    from guardrail.train import toolctx

    a, b, cache = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "rows.json"
    toolctx.write_jsonl(a, toolctx.generate("dev", 3, 0))
    toolctx.write_jsonl(b, toolctx.generate("dev", 3, 1))
    first_ids = {str(p): json.loads(p.read_text().splitlines()[0])["id"] for p in (a, b)}
    seen: list[list[str]] = []
    real = judge_train.score

    def counted(det, examples, *args, **kw):
        seen.append([p for p, i in first_ids.items() if examples[0].id == i])
        return real(det, examples, *args, **kw)

    monkeypatch.setattr(judge_train, "score", counted)

    def run(*data: Path) -> str:
        args = ["judge", "eval", "--tokens", "--layers", "4", "--rows-cache", str(cache)]
        for d in data:
            args += ["--data", str(d)]
        result = CliRunner().invoke(app, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output[result.output.index("layer 4"):]  # the table, no progress

    first = run(a)
    assert seen == [[str(a)]]
    assert run(a) == first and seen == [[str(a)]]          # read back, no model run
    run(a, b)
    assert seen == [[str(a)], [str(b)]]                    # only the new set ran
    toolctx.write_jsonl(a, toolctx.generate("dev", 3, 2))  # rewritten in place
    run(a)
    assert len(seen) == 3                                  # its new examples were scored
    b.rename(tmp_path / "moved.jsonl")
    run(tmp_path / "moved.jsonl")
    assert len(seen) == 3                                  # the same examples, read back


def test_served_windows_score_each_check_as_the_proxy_reads_it(tmp_path, monkeypatch):
    """`--windows served` scores in-flight layers with the shipped in-flight selector
    (one packed window) and full depth with the end-of-stream one (each sentence's own
    window), under their own rows-cache key; `all` (the default) reads every window;
    anything else is refused."""
    from typer.testing import CliRunner

    from guardrail.cli import app
    from guardrail.train import judge as judge_train
    from guardrail.train import toolctx

    data, cache = tmp_path / "a.jsonl", tmp_path / "rows.json"
    toolctx.write_jsonl(data, toolctx.generate("dev", 2, 0))
    seen: list[tuple] = []
    real = judge_train.score

    def counted(det, examples, layer=None, **kw):
        seen.append((layer, getattr(kw.get("selector"), "name", None)))
        return real(det, examples, layer, **kw)

    monkeypatch.setattr(judge_train, "score", counted)

    def run(*extra: str) -> CliRunner:
        return CliRunner().invoke(app, ["judge", "eval", "--layers", "4,6", "--data",
                                        str(data), "--rows-cache", str(cache), *extra])

    assert run("--windows", "served").exit_code == 0
    assert seen == [(4, "blocks"), (None, "own")]
    assert run().exit_code == 0                      # every window: not the served rows
    assert seen[2:] == [(4, None), (None, None)]
    assert run("--windows", "served").exit_code == 0 and len(seen) == 4  # cached
    bad = run("--windows", "some")
    assert bad.exit_code == 2 and "all or served" in bad.output


def _structured(rows: list[Row], on: bool, key: str) -> list[Row]:
    """The rows grounded in a structured context (``on``), where ``key`` gives the
    unsupported ones away instead of the token probability; in prose it is noise."""
    s, k, p = FEATURES.index("structured"), FEATURES.index(key), FEATURES.index("p_max")
    rng, out = random.Random(len(rows)), []
    for r in rows:
        x = list(r.x)
        x[s] = float(on)
        x[k] = rng.random()
        if on:
            x[p], x[k] = 0.5, float(r.gold)
        out.append(Row(r.dataset, r.example_id, r.sentence, r.gold, r.claim, tuple(x), r.layer))
    return out


def test_tool_results_and_prose_get_heads_of_their_own():
    """Where tool turns are told apart by a feature that is noise in prose, the split
    judge's tool head stops them all and keeps every supported one; the heads survive
    JSON; with too few unsupported tool sentences there is one set of heads."""
    from guardrail.train.judge import fit_judge

    prose = _structured(_rows(600, "ragtruth", 3), False, "record_gap")
    tools = _structured(_rows(600, "toolctx/train/json-array", 4), True, "record_gap")
    judge = fit_judge(prose + tools, keep=0.95)
    assert set(judge.structured_heads) == {4} and set(judge.heads) == {4}
    on_tools = measure(_structured(_rows(400, "toolctx/dev/json-array", 5), True,
                                   "record_gap"), judge)["all"]
    assert on_tools["supported_kept"] == 1.0 and on_tools["unsupported_stopped"] == 1.0
    assert not fit_judge(prose + tools, keep=0.95, split=False).structured_heads
    again = SentenceJudge.from_json(json.loads(json.dumps(judge.to_json())))
    assert again.structured_heads == judge.structured_heads and again.heads == judge.heads
    assert again.head(4, structured=True) is again.structured_heads[4]
    assert again.head(4) is again.heads[4]
    few = [r for r in tools if not r.gold][:300] + [r for r in tools if r.gold][:5]
    assert not fit_judge(prose + few).structured_heads


def test_tool_heads_keep_the_share_asked_for_in_every_family_of_tool_turns():
    """A family of schemas the detector reads less surely (noisier probabilities) keeps
    95 % of its supported sentences too, not only the families together."""
    easy = _rows(900, "toolctx/train/json-array", 6, noise=0.15)
    hard = _rows(300, "toolctx/calib/json-array", 7, noise=0.45)
    tools = fit([*easy, *hard], keep=0.95, every_source=True)
    together = fit([*easy, *hard], keep=0.95)
    assert tools.threshold > together.threshold
    for rows in (easy, hard):
        assert measure(rows, SentenceJudge({4: tools}))["all"]["supported_kept"] >= 0.95
    assert measure(hard, SentenceJudge({4: together}))["all"]["supported_kept"] < 0.95


def test_hand_written_sets_too_small_to_count_alone_count_as_one():
    """Ten sets of two dozen hand-written turns beside a generated family: each alone
    would weigh as much as the family and set a threshold of its own from some thirty
    supported sentences (so the strictest few would decide); pooled, they weigh as one
    and keep 95 % of their supported sentences together, not each."""
    from guardrail.train.judge import SMALL, pooled

    big = _rows(900, "toolctx/calib/json-array", 8, noise=0.15)
    small = [r for k in range(10) for r in _rows(40, f"paraphrases-{k}/supported", 20 + k,
                                                  noise=0.45)]
    assert pooled(["a"] * 250 + ["b"] * 30 + ["c"] * 30) == ["a"] * 250 + [SMALL] * 60
    assert pooled(["a"] * 250, [False] * 60 + [True] * 190) == [SMALL] * 250
    head = fit([*big, *small], keep=0.95, every_source=True)
    each = [measure([r for r in small if r.dataset == f"paraphrases-{k}/supported"],
                    SentenceJudge({4: head}))["all"]["supported_kept"] for k in range(10)]
    together = measure(small, SentenceJudge({4: head}))["all"]
    assert together["supported_kept"] >= 0.95
    assert min(each) < 0.95 < max(each)   # not the strictest set's threshold


def test_tool_heads_alone_are_refitted_and_the_prose_heads_kept():
    """``--tool-heads-only``: an operator's own tool turns refit the heads for
    structured contexts; the prose heads (and their thresholds) stay as they were; too
    few unsupported tool sentences, or prose heads on older features, are refused."""
    from guardrail.evidence.judge import FIRST_FEATURES, Head
    from guardrail.train.judge import fit_judge, fit_tool_heads

    prose = _structured(_rows(600, "ragtruth", 3), False, "record_gap")
    tools = _structured(_rows(600, "toolctx/train/json-array", 4), True, "record_gap")
    judge = fit_judge(prose + tools, keep=0.95)
    own = _structured(_rows(400, "their-tools/orders", 9, noise=0.45), True, "word_precision")
    again = fit_tool_heads(judge, prose + own, keep=0.95)
    assert again.heads == judge.heads
    assert again.structured_heads[4] != judge.structured_heads[4]
    on_own = measure(own, again)["all"]
    assert on_own["supported_kept"] >= 0.95 and on_own["unsupported_stopped"] == 1.0
    assert measure(own, judge)["all"]["unsupported_stopped"] < 0.9
    with pytest.raises(ValueError, match="unsupported sentences"):
        fit_tool_heads(judge, prose + [r for r in own if not r.gold])
    old = SentenceJudge({4: Head((0.0,) * 17, (1.0,) * 17, (0.0,) * 17, 0.0, 0.5,
                                 FIRST_FEATURES)})
    with pytest.raises(ValueError, match="older features"):
        fit_tool_heads(old, own)


def test_the_cli_refits_tool_heads_alone_into_the_models_json(tmp_path):
    """`guardrail judge fit --tool-heads-only` on a copy of the shipped model (real
    detector, generated tool turns): the prose heads and their record stay; the tool
    heads are new and say what they were fitted on."""
    import shutil

    from typer.testing import CliRunner

    from guardrail.cli import app
    from guardrail.model import DEFAULT_MODEL
    from guardrail.train import toolctx

    model, data = tmp_path / "model", tmp_path / "turns.jsonl"
    shutil.copytree(DEFAULT_MODEL, model)
    toolctx.write_jsonl(data, toolctx.generate("dev", 60, 4))
    before = json.loads((model / "guardrail.json").read_text())["judge"]
    result = CliRunner().invoke(app, ["judge", "fit", "--tool-heads-only", "--model",
                                      str(model), "--layers", "4", "--data", str(data)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    after = json.loads((model / "guardrail.json").read_text())["judge"]
    assert after["heads"] == before["heads"] and after["fitted_on"] == before["fitted_on"]
    assert after["structured_heads"]["4"] != before["structured_heads"]["4"]
    assert {k: h for k, h in after["structured_heads"].items() if k != "4"} == \
        {k: h for k, h in before["structured_heads"].items() if k != "4"}
    assert after["tool_heads"]["fitted_on"] == [str(data)]


def test_example_f1_comes_with_how_far_a_set_of_its_size_can_tell():
    """Answers flagged alike at two sizes: the point is the same, the interval around it
    narrows as the set grows, and a set without both labels has none."""
    def answers(n: int) -> tuple[list[bool], list[bool]]:
        gold = [i % 6 == 0 for i in range(n)]            # 1 answer in 6 hallucinated
        flagged = [(i % 6 == 0 and i % 12 == 0) or i % 30 == 5 for i in range(n)]
        return gold, flagged

    small, large = f1_interval(*answers(120)), f1_interval(*answers(1200))
    point = 2 * 10 / (2 * 10 + 4 + 10)  # 120 answers: 10 caught, 4 false alarms, 10 missed
    assert small[0] < point < small[1] and large[0] < point < large[1]
    assert large[1] - large[0] < 0.5 * (small[1] - small[0])
    assert f1_interval(*answers(120)) == small  # seeded: the same report twice
    assert f1_interval([False] * 10, [True] * 10) is None

    rows = [Row("d", f"a{i // 2}", "s.", g, True, tuple([0.0] * len(FEATURES)), 4)
            for i, g in enumerate(answers(240)[0])]
    m = measure(rows, None, threshold=0.5)["all"]  # nothing flagged: F1 0 with no spread
    assert m["example_f1"] == 0.0 and m["example_f1_interval"] == [0.0, 0.0]
