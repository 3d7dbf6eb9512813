"""``guardrail bench``: each ``--quick`` variant through the CLI, and the pure helpers.

The benchmarks themselves are timed on whatever machine runs the tests, so nothing
here asserts a timing: only that the JSON is well formed (keys, numeric types,
positive counts) and that every ratio is the one computed from the measured numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.bench import Target, Timing, interleaved, percentile, ratio
from guardrail.bench.report import render_page
from guardrail.bench.stream_delays import (REDACT_MARKER, align, diff, fell_behind, lag_slope,
                                           sentence_ends)
from guardrail.bench.stream_proxy import VARIANTS, variant_config, variant_overrides
from guardrail.cli import app

runner = CliRunner()


def invoke(*args: str) -> None:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output + repr(result.exception)


def num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-3 * max(1.0, abs(a), abs(b))


def check_timing(t: dict) -> None:
    assert set(t) == {"n", "median_ms", "p90_ms", "mean_ms", "min_ms", "max_ms"}
    assert t["n"] > 0 and all(num(v) and v >= 0 for v in t.values())
    assert t["min_ms"] <= t["median_ms"] <= t["p90_ms"] <= t["max_ms"]


def check_targets(result: dict) -> None:
    for t in result["targets"]:
        assert {"name", "value", "limit", "direction", "reached", "by", "note"} <= set(t)
        if t["value"] is not None:
            ok = t["value"] >= t["limit"] if t["direction"] == ">=" else t["value"] <= t["limit"]
            assert t["reached"] is ok
        if t["by"] is not None:
            assert close(t["by"], t["value"] / t["limit"])


def check_machine(m: dict) -> None:
    assert m["logical_cores"] >= 1 and m["torch_threads"] >= 1
    assert m["date"] and m["torch"] and m["device"] in ("cpu", "cuda", "cuda:0")


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench") / "results"


# -- the commands ---------------------------------------------------------------------------

def test_bench_model_quick(out: Path):
    invoke("bench", "model", "--quick", "--out", str(out))
    r = json.loads((out / "model.json").read_text())
    assert r["kind"] == "model" and r["command"].startswith("guardrail bench model")
    check_machine(r["machine"])
    n = r["settings"]["n_layers"]
    exits = r["settings"]["exits"]
    assert n in exits and len(exits) >= 2
    rows = r["throughput"]
    assert {(x["seq_len"], x["batch_size"]) for x in rows} == {(64, 1), (64, 2), (128, 1), (128, 2)}
    for x in rows:
        check_timing(x["batch"])
        assert close(x["ms_per_check"], x["batch"]["median_ms"] / x["batch_size"])
        assert close(x["checks_per_s"], 1000 * x["batch_size"] / x["batch"]["median_ms"])
        full = next(y for y in rows if (y["seq_len"], y["batch_size"], y["exit_layer"]) ==
                    (x["seq_len"], x["batch_size"], n))
        assert close(x["speedup_vs_full"], full["batch"]["median_ms"] / x["batch"]["median_ms"])
    h = r["headline"]
    assert h["tokens"] == 128 and h["sequences"] == 1
    for t in h["timings"].values():
        check_timing(t)
    t = {k: v["median_ms"] for k, v in h["timings"].items()}
    assert close(h["full_check_over_raw"], t[f"check@{n}"] / t["raw_forward"])
    for e in exits:
        assert close(h["check_speedup_vs_full"][str(e)], t[f"check@{n}"] / t[f"check@{e}"])
    mem = r["memory"]
    assert 0 < mem["rss_mib_loaded"] <= mem["peak_rss_mib_loaded"] <= mem["peak_rss_mib_after_check"]
    (c,) = r["context_cache"]
    assert c["context_tokens"] == 256 and c["speedup_redis"] is None
    assert close(c["speedup_local"], c["cold"]["median_ms"] / c["local_hit"]["median_ms"])
    assert {t["name"].split(" ")[0] for t in r["targets"]} >= {"full-depth", "peak", "repeated"}
    check_targets(r)
    assert (out / "model_throughput.png").stat().st_size > 0
    assert (out / "model_headline.png").stat().st_size > 0


def test_bench_stream_quick_without_data(out: Path, tmp_path: Path):
    invoke("bench", "stream", "--quick", "--out", str(out), "--data-dir", str(tmp_path / "none"))
    r = json.loads((out / "stream.json").read_text())
    assert r["kind"] == "stream" and r["settings"]["documents"] == "synthetic filler"
    s = r["settings"]  # how checks ran: the shipped scheduler section
    assert (s["windows"], s["final_windows"]) == ("blocks", "own") and s["top_k"] >= 1
    assert s["scheduler"]["in_flight_windows"] == "blocks"
    assert s["variant_overrides"]["guarded"] == {}
    assert s["settle_restated"] is False  # its answers copy their contexts: all checked
    check_machine(r["machine"])
    variants = {(c["variant"], c["streams"], c["throttled"]) for c in r["configs"]}
    for n in (1, 2):
        assert {("direct", n, True), ("passthrough", n, True), ("guarded", n, True),
                ("direct", n, False), ("passthrough", n, False)} <= variants
    assert ("naive", 1, True) in variants and ("no_batching", 2, True) in variants
    shallow = r["shallow_check_ms"]["256"]
    assert num(shallow) and shallow > 0
    gate = {t["name"]: t for t in r["targets"]}
    for name in ("release delay p50 / one stream's p50", "release delay p99 / upstream time "
                 "per sentence", "[DONE] after the upstream's, p99 (end-of-stream pass)"):
        assert num(gate[name]["value"]), name
    for c in r["configs"]:
        assert c["streams_ok"] == c["streams"] and c["streams_failed"] == 0, c["errors"]
        assert c["chunks"] > 0 and num(c["chunks_per_s"]) and c["chunks_per_s"] > 0
        assert c["ttft_ms"]["n"] == c["streams"]
        assert num(c["proxy_cpu_percent"]) and c["proxy_peak_rss_mib"] > 0
        if c["variant"] in ("direct", "passthrough"):
            assert c["release_delay_ms"] is None and c["transport_delay_ms"]["n"] > 0
            continue
        d = c["release_delay_ms"]
        assert d["n"] == c["sentences_released"] > 0
        assert d["p50"] <= d["p95"] <= d["p99"] <= d["max"]
        done = c["done_delay_ms"]  # every stream's [DONE] after its upstream's
        assert done["n"] == c["streams"] and 0 < done["p50"] <= done["max"]
        assert close(c["delay_over_shallow_check"]["p50"], d["p50"] / shallow)
        chk = c["checks"]
        assert chk["in_flight"] >= d["n"] // 2 and chk["failed"] == 0
        assert close(chk["sentences_checked_per_s"], chk["in_flight"] / c["wall_s"])
        assert sum(chk["exits"]["in_flight"].values()) == chk["in_flight"]
        if c["variant"] == "naive":
            assert set(chk["exits"]["in_flight"]) == {str(r["settings"]["n_layers"])}
        else:
            b = chk["batches"]
            assert b["count"] > 0 and b["mean_size"] >= 1
            assert sum(b["sizes"].values()) == b["count"]
            for k in ("mean_queue_wait_ms", "mean_model_ms", "in_flight_mean_queue_wait_ms",
                      "in_flight_mean_model_ms"):
                assert num(b[k]) and b[k] >= 0, k
            assert b["mean_model_ms"] > 0
    mech = {m["variant"]: m for m in r["mechanisms"]}
    assert set(mech) == {"naive", "no_batching"}
    g = next(c for c in r["configs"] if c["variant"] == "guarded" and c["streams"] == 1)
    assert close(mech["naive"]["p50_vs_guarded"],
                 mech["naive"]["p50_ms"] / g["release_delay_ms"]["p50"])
    check_targets(r)
    assert len(r["targets"]) == 6 + 4  # and engine v2's gate at the one context size
    assert (out / "stream_delay.png").stat().st_size > 0


def test_bench_quality_quick(out: Path):
    invoke("bench", "quality", "--quick", "--out", str(out))
    r = json.loads((out / "quality.json").read_text())
    assert r["kind"] == "quality" and len(r["rows"]) == 1
    (row,) = r["rows"]
    exits = r["settings"]["exits"]
    assert 0 < row["n_examples"] <= 6 and row["n_available"] >= row["n_examples"]
    assert set(row["exits"]) == {str(e) for e in exits}
    for e in exits:
        cell, m = row["exits"][str(e)], row["metrics"][str(e)]
        assert cell["example_f1"] == m["example"]["f1"] and m["exit_layer"] == e
        assert num(cell["examples_per_s"]) and cell["examples_per_s"] > 0


def test_bench_quality_quick_without_data_uses_a_synthetic_set(tmp_path: Path):
    invoke("bench", "quality", "--quick", "--out", str(tmp_path), "--exits", "2",
           "--data-dir", str(tmp_path / "none"))
    r = json.loads((tmp_path / "quality.json").read_text())
    assert [row["dataset"] for row in r["rows"]] == ["synthetic"]
    assert r["rows"][0]["exits"]["2"]["token_f1"] is not None  # span-labelled


def test_bench_report_renders_the_page_from_the_json(out: Path):
    if not (out / "stream.json").exists():
        pytest.skip("needs the three quick runs above")
    invoke("bench", "report", "--out", str(out))
    page = (out.parent / f"{out.name}.md").read_text()
    for heading in ("## Machine", "## Targets", "## Model", "## Stream", "## Quality",
                    "## Reproduce"):
        assert heading in page
    assert "guardrail bench stream --out" in page and f"({out.name}/stream_delay.png)" in page
    n_targets = sum(len(json.loads((out / f"{k}.json").read_text())["targets"])
                    for k in ("model", "stream", "quality"))
    assert page.count("| reached |") + page.count("| **missed** |") == n_targets


@pytest.mark.redis
def test_context_cache_measures_a_redis_hit_and_cleans_up():
    import redis

    from guardrail.bench import filler_documents
    from guardrail.bench.model import ModelBenchConfig, context_cache
    from guardrail.model import Detector

    url = "redis://127.0.0.1:6379/0"
    det = Detector.from_pretrained(None, device="cpu")
    (row,) = context_cache(det, ModelBenchConfig.quick(redis_url=url), filler_documents(4))
    check_timing(row["redis_hit"])
    assert close(row["speedup_redis"], row["cold"]["median_ms"] / row["redis_hit"]["median_ms"])
    assert "redis_errors" not in row
    client = redis.Redis.from_url(url)
    try:
        assert not [k for k in client.scan_iter("guardrail-bench:*") if b":prep:" in k
                    and not k.endswith((b"~index", b"~sizes"))]
    finally:
        client.close()


def test_report_without_json_is_an_error(tmp_path: Path):
    result = runner.invoke(app, ["bench", "report", "--out", str(tmp_path)])
    assert result.exit_code != 0
    with pytest.raises(FileNotFoundError):
        render_page(tmp_path)


# -- helpers ------------------------------------------------------------------------------------

def test_percentile_and_timing():
    assert percentile([3, 1, 2], 50) == 2 and percentile([0, 10], 90) == 9
    assert math.isnan(percentile([], 50))
    t = Timing.of([0.001, 0.002, 0.003, 0.010])
    assert t.n == 4 and t.median_ms == 2.5 and t.min_ms == 1 and t.max_ms == 10
    timings = interleaved({"a": lambda: None, "b": lambda: None}, warmup=1, repeats=3)
    assert {k: v.n for k, v in timings.items()} == {"a": 3, "b": 3}


def test_target_reached_and_by():
    assert Target("x", 3.0, 2.5, ">=").reached is True
    assert Target("x", 3.0, 2.0, "<=").reached is False
    assert Target("x", 3.0, 2.0, "<=").by == 1.5
    assert Target("x", None, 2.0, "<=").reached is None
    assert ratio(1.0, 0.0) is None and ratio(None, 1.0) is None and ratio(3.0, 2.0) == 1.5


def test_align_matches_released_sentences_around_redactions():
    answer = "The bridge opened in 1932. It cost 4 million. It is red."
    released = ["The bridge opened in 1932.", f" It cost {REDACT_MARKER} million.", " It is red."]
    assert align(answer, released) == [26, 45, len(answer)]
    assert align(answer, ["The bridge opened in 1932. "]) == [26]  # trailing space excluded


def test_sentence_ends_prefer_the_guardrail_report():
    answer = "A b. C d. E f."
    report = {"sentences": [                                   # as the segmenter cuts them
        {"index": 0, "original": "A b. ", "released": "A b. "},
        {"index": 1, "original": "C d. ", "released": ""},     # nothing released: no chunk
        {"index": 2, "original": "E f.", "released": "[x]"}]}
    assert sentence_ends(answer, ["A b. ", "[x]"], report) == [4, 14]
    assert sentence_ends(answer, ["A b. ", "C d. "], None) == [4, 9]


def test_falling_behind_needs_a_growing_delay():
    steady = [(t, 0.2 + 0.01 * (t % 2)) for t in range(10)]
    growing = [(t, 0.2 + 0.3 * t) for t in range(10)]
    assert abs(lag_slope(growing) - 0.3) < 1e-9
    assert fell_behind(steady)[0] is False and fell_behind(growing)[0] is True
    assert fell_behind(growing[:3])[0] is False  # too few sentences to tell


def test_diff_keeps_counters_that_grew():
    before = {"exits": {"in_flight@4": 2}, "failed": 0, "info": {"model": "m"}}
    after = {"exits": {"in_flight@4": 5, "end_of_stream@6": 1}, "failed": 1,
             "info": {"model": "m"}}
    assert diff(after, before) == {"exits": {"in_flight@4": 3, "end_of_stream@6": 1},
                                    "failed": 1, "info": {}}


def test_variants_are_the_shipped_config_with_one_change():
    from guardrail.config import GuardrailConfig

    spec = {"upstream": "http://127.0.0.1:9/v1", "final_pass": True, "check_timeout_s": 60,
            "admission": True}
    shipped = GuardrailConfig()
    guarded = variant_config(spec, "guarded", 6)
    assert guarded.scheduler == shipped.scheduler.model_copy(update={"check_timeout_s": 60})
    # every sentence is checked: the benchmark's answers copy their contexts
    assert guarded.cache == shipped.cache and guarded.verification == \
        shipped.verification.model_copy(update={"settle_restated": False})
    for name in set(VARIANTS) - {"guarded", "naive", "no_early_exit"}:
        assert len(variant_overrides(name, 6)) == 1, name
        assert variant_config(spec, name, 6) != guarded
    naive = variant_config(spec, "naive", 6)
    assert naive.verification.engine == "local" and naive.scheduler.in_flight_exit == 6
    assert (naive.scheduler.in_flight_windows, naive.scheduler.final_windows) == ("all", "all")
    no_admission = variant_config({**spec, "admission": False, "windows": "all", "top_k": 2},
                                  "guarded", 6).scheduler
    assert no_admission.latency_budget_s == 1e9 and no_admission.in_flight_windows == "all"
    assert no_admission.in_flight_top_k == 2



@pytest.mark.redis
def test_bench_context_quick(tmp_path: Path):
    result = runner.invoke(app, ["bench", "context", "--quick", "--out", str(tmp_path),
                                      "--redis-url", "redis://127.0.0.1:6379/0"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    r = json.loads((tmp_path / "context.json").read_text())
    assert (tmp_path / "context.png").stat().st_size > 10_000
    check_machine(r["machine"])
    check_targets(r)
    assert [row["context_tokens"] for row in r["rows"]] == [256, 1024]
    for row in r["rows"]:
        check_timing(row["encode"])
        assert set(row["checks"]) == {"cached_exit2", "cached_full", "cached_bf16_exit2",
                                      "cached_bf16_full", "reencode_top2_exit2",
                                      "reencode_top2_full", "reencode_all_exit2",
                                      "reencode_all_full", "kept_exit2", "kept_full"}
        assert row["kept_checks_reused"] == 2 * 2  # every timed kept check found its prefix
        for t in row["checks"].values():
            check_timing(t)
        # 6 layers x (keys + values) x 384 numbers x 4 bytes per cached position
        assert row["state_bytes_per_token"] == 6 * 2 * 384 * 4
        assert row["state_bytes_per_token_bf16"] == 6 * 2 * 384 * 2
        assert row["redis_fp16"]["bytes"] == row["state_bytes"] // 2
        check_timing(row["redis_fp16"]["get_and_decode"])
    assert r["rows"][1]["windows"] > r["rows"][0]["windows"]
    assert "encode" in result.output and "cached_full" in result.output
    assert r["settings"]["batch"] == 0 and r["published"] is None  # off on CPU by default
    assert "throughput" not in r["rows"][0]


def test_bench_context_weights_follow_dtype_and_states_stay_float32(tmp_path: Path):
    """``--dtype``: the weights as ``detector.dtype`` would load them; the ``cached`` and
    ``kept`` rows still read float32 states, so their bytes per token do not move."""
    invoke("bench", "context", "--quick", "--dtype", "bfloat16", "--context-tokens", "256",
           "--out", str(tmp_path))
    r = json.loads((tmp_path / "context.json").read_text())
    assert r["settings"]["dtype"] == "torch.bfloat16"
    (row,) = r["rows"]
    assert row["state_bytes_per_token"] == 6 * 2 * 384 * 4
    assert row["kept_checks_reused"] == 2 * 2
    bad = runner.invoke(app, ["bench", "context", "--quick", "--dtype", "float16",
                              "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "--dtype" in bad.output


def test_bench_context_batched_throughput(tmp_path: Path):
    """``--batch``: N checks on N different contexts per batch, full depth; checks per
    second cached and with the encoding paid, beside the published figures."""
    invoke("bench", "context", "--quick", "--batch", "3", "--context-tokens", "256",
           "--out", str(tmp_path))
    r = json.loads((tmp_path / "context.json").read_text())
    assert r["settings"]["batch"] == 3 and r["settings"]["device"] == "cpu"
    assert r["published"]["per_s"] == {"512": 487.0, "24576": 15.0}
    assert r["settings"]["attention"].startswith("per-part")
    (row,) = r["rows"]
    t = row["throughput"]
    check_timing(t["check_batch"])
    check_timing(t["encode_one"])
    assert t["batch"] == 3 and 0 < t["cold_per_s"] < t["cached_per_s"]
    assert t["cached_per_s"] == pytest.approx(3000 / t["check_batch"]["median_ms"], rel=0.01)


def test_bench_stream_warm_contexts_with_the_pcw_model(tmp_path: Path):
    """``--warm-contexts``: each stream's documents are stored (and encoded by the
    cached-context model) before it starts, so no check prepares or encodes one."""
    invoke("bench", "stream", "--quick", "--model", "pcw", "--warm-contexts", "--streams", "2",
           "--naive-streams", "", "--ablations", "", "--out", str(tmp_path),
           "--data-dir", str(tmp_path / "none"))
    r = json.loads((tmp_path / "stream.json").read_text())
    assert r["settings"]["warm_contexts"] is True
    guarded = [c for c in r["configs"] if c["variant"] == "guarded"]
    assert guarded and all(c["streams_ok"] == c["streams"] for c in guarded)
    for c in guarded:
        assert c["checks"]["context_cache"]["misses"] == 0 < c["checks"]["context_cache"]["hits"]


def test_bench_stream_runs_the_proxy_with_a_config_file(tmp_path: Path):
    """``--config``: the proxy's settings come from the file under the benchmark's own
    (here a smaller end-of-stream batch); a bad file exits 2 before anything starts."""
    from typer.testing import CliRunner

    from guardrail.cli import app

    conf = tmp_path / "eos.yaml"
    conf.write_text("scheduler:\n  eos_batch_tokens: 512\n  in_flight_windows: all\n")
    invoke("bench", "stream", "--quick", "--streams", "1", "--naive-streams", "",
           "--ablations", "", "--config", str(conf), "--out", str(tmp_path / "out"),
           "--data-dir", str(tmp_path / "none"))
    s = json.loads((tmp_path / "out" / "stream.json").read_text())["settings"]
    assert s["config"] == str(conf.resolve()) and s["scheduler"]["eos_batch_tokens"] == 512
    assert s["scheduler"]["in_flight_windows"] == "all"
    bad = tmp_path / "bad.yaml"
    bad.write_text("scheduler:\n  eos_batch_tokens: 0\n")
    r = CliRunner().invoke(app, ["bench", "stream", "--quick", "--config", str(bad),
                                 "--out", str(tmp_path / "out2")])
    assert r.exit_code == 2 and "eos_batch_tokens" in r.output
    assert not (tmp_path / "out2").exists()
