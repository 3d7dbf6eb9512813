"""``guardrail bench soak``: the quick variant for real (``guardrail serve`` in its own
process, the fake upstream, HTTP over loopback, the shipped model), once with the
shipped defaults through the CLI and once with a latency budget so small that most
requests are refused; and the RSS judgement on made-up samples.

Nothing here asserts a timing: only what must hold whatever the machine's speed --
every refusal carried Retry-After and was waited out, every admitted stream ended
with ``[DONE]``, the counts add up, the server counted the refusals the clients saw,
and the RSS verdict is the one its samples give.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from typer.testing import CliRunner

from guardrail.bench import soak
from guardrail.cli import app
from guardrail.config import SchedulerConfig

runner = CliRunner()


def num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_result(r: dict) -> None:
    """The invariants of every soak result."""
    s, req, adm, rss = r["settings"], r["requests"], r["admitted_streams"], r["rss"]
    assert r["kind"] == "soak" and r["machine"]["logical_cores"] >= 1
    assert req["total"] == req["admitted"] + req["refused"] + req["failed"] > 0
    assert req["failed"] == 0, req["reasons"]
    assert sum(req["statuses"].values()) == req["total"]
    assert req["statuses"].get("200", 0) == req["admitted"] >= 1
    # every refusal carried a Retry-After of at least 1 s, and the loop waited it out
    # (or the run ended first): never longer than the header said
    assert req["refused_with_retry_after"] == req["refused"]
    ra, waits = r["retry_after_s"], r["retry_wait_s"]
    assert ra["n"] == waits["n"] == req["refused"] == sum(ra["values"].values())
    if req["refused"]:
        assert ra["min"] >= 1 and all(float(v) >= 1 for v in ra["values"])
        assert 0 <= waits["min"] <= waits["max"] <= min(ra["max"], s["max_retry_wait_s"])
        assert sum(req["reasons"].values()) == req["refused"]
    # the server refused exactly what the clients saw refused
    assert r["proxy"]["final_metrics"].get("errors.overloaded", 0) == req["refused"]
    # every admitted stream ended with [DONE], none cut or ended by an error event
    assert adm["n"] == req["admitted"] == adm["done"]
    assert adm["cut"] == adm["ended_with_error"] == 0 and adm["errors"] == []
    d = r["release_delay_ms"]
    assert d["n"] == adm["sentences_released"] > 0
    assert 0 <= d["p50"] <= d["p95"] <= d["p99"] <= d["max"]
    assert adm["ttft_ms"]["n"] == adm["n"]
    # counts per stream and per 10 s add up to the totals
    for k in ("admitted", "refused"):
        assert len(r["per_stream"][k]) == s["streams"]
        assert sum(r["per_stream"][k]) == sum(b[k] for b in r["bins"]) == req[k]
    assert len(r["bins"]) == math.ceil(s["duration_s"] / soak.BIN_S)
    # RSS: sampled about every second through the run, the verdict is the samples'
    t, mib = rss["samples"]["t_s"], rss["samples"]["mib"]
    assert len(t) == len(mib) >= s["duration_s"] / 2 and t == sorted(t)
    assert all(num(m) and m > 0 for m in mib) and rss["idle_mib"] > 0
    again = soak.rss_summary(list(zip(t, mib)), s["duration_s"], s["warmup_s"],
                             s["rss_tolerance_pct"])
    assert {k: again[k] for k in again if k != "samples"} == \
        {k: rss[k] for k in again if k != "samples"}
    assert rss["min_after_warmup_mib"] <= rss["last_minute_mean_mib"] <= \
        rss["max_after_warmup_mib"]
    assert rss["flat"] is (abs(rss["drift_pct"]) <= 15 and rss["max_drift_pct"] <= 15)
    assert num(r["proxy"]["proxy_cpu_percent"]) and r["proxy"]["gauges"]["t_s"]
    for target in r["targets"]:
        if target["value"] is not None:
            assert target["reached"] is (target["value"] <= target["limit"])
    assert len(r["targets"]) == 6


def test_bench_soak_quick_with_shipped_defaults(tmp_path: Path):
    out = tmp_path / "results"
    result = runner.invoke(app, ["bench", "soak", "--quick", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    r = json.loads((out / "soak.json").read_text())
    assert r["command"] == f"guardrail bench soak --out {out} --quick"
    s = r["settings"]
    assert (s["streams"], s["duration_s"], s["warmup_s"]) == (4, 20.0, 4.0)
    assert s["settings"] == {}  # the proxy runs the shipped scheduler section
    assert s["latency_budget_s"] == SchedulerConfig().latency_budget_s
    assert s["scheduler"] == SchedulerConfig().model_dump(mode="json")
    check_result(r)
    assert (out / "soak.png").stat().st_size > 0
    assert "admitted" in result.output and "RSS" in result.output


def test_soak_refusals_carry_retry_after_and_are_waited_out():
    """A budget of 50 ms: the first streams get in, then the checks' own latency refuses
    the rest (503 + Retry-After) until the run ends."""
    cfg = soak.SoakConfig.quick(duration_s=10.0, settings=(("scheduler.latency_budget_s",
                                                            "0.05"),))
    r = soak.run(cfg)
    assert r["settings"]["latency_budget_s"] == 0.05
    assert r["settings"]["settings"] == {"scheduler.latency_budget_s": "0.05"}
    check_result(r)
    assert r["requests"]["refused"] >= 1 and r["requests"]["statuses"].get("503")
    assert any("latency budget" in why for why in r["requests"]["reasons"])


def mean(xs) -> float:
    xs = list(xs)
    return round(sum(xs) / len(xs), 1)


def test_rss_summary_judges_from_the_end_of_the_warm_up():
    ramp = [(float(t), 500.0 + 10 * t) for t in range(10)]  # growth early in the warm-up

    def judged(level):  # warm-up 40 s (its last 30 s: t = 10..40), 100 s of load
        return soak.rss_summary(ramp + [(float(t), level(t)) for t in range(10, 100)],
                                duration=99.0, warmup=40.0, tolerance_pct=15.0)

    r = judged(lambda t: 600.0 + (t - 10) % 3)
    assert r["warm_mib"] == mean(600.0 + (t - 10) % 3 for t in range(10, 41))
    assert r["flat"] is True and r["max_after_warmup_mib"] == 602.0
    # swings with the queue (a 30 s square wave, +-10 %) are not growth
    r = judged(lambda t: 630.0 if (t // 15) % 2 else 770.0)
    assert r["flat"] is True and r["max_drift_pct"] < 15 and r["min_after_warmup_mib"] == 630
    # steady growth: the last minute's mean is within 15 %, its largest sample is not
    r = judged(lambda t: 600.0 + 2 * (t - 10))
    assert r["warm_mib"] == 630.0 and r["last_minute_mean_mib"] == 719.0  # t = 40..99
    assert r["drift_pct"] == 14.13 and r["max_drift_pct"] == 23.49 and r["flat"] is False
    r = judged(lambda t: 600.0 if t < 45 else 500.0)  # a drop of a sixth: not flat either
    assert r["drift_pct"] < -15 and r["max_drift_pct"] == 0 and r["flat"] is False
    assert soak.rss_summary(ramp, duration=99.0, warmup=40.0, tolerance_pct=15.0)["flat"] \
        is None


def test_proxy_env_passes_settings_not_ours(monkeypatch):
    monkeypatch.setenv("GUARDRAIL_SCHEDULER__LATENCY_BUDGET_S", "99")
    env = soak.proxy_env((("scheduler.max_pending_checks", "7"),))
    assert "GUARDRAIL_SCHEDULER__LATENCY_BUDGET_S" not in env
    assert env["GUARDRAIL_SCHEDULER__MAX_PENDING_CHECKS"] == "7"


def test_bench_soak_refuses_a_warm_up_longer_than_the_run(tmp_path: Path):
    result = runner.invoke(app, ["bench", "soak", "--quick", "--duration", "10",
                                 "--warmup-s", "30", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "warm-up" in result.output
    assert not (tmp_path / "soak.json").exists()


def test_rewriting_the_benchmark_page_keeps_the_sections_it_does_not_generate(tmp_path):
    from guardrail.bench import kept_sections

    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\n## Machine\n\nx\n\n## Soak: 32 streams\n\nrss flat\n\n"
                    "## Quality\n\nq\n\n## Reproduce\n\n```sh\nguardrail bench all\n```\n")
    assert kept_sections(page) == ["## Soak: 32 streams\n\nrss flat"]
    assert kept_sections(tmp_path / "missing.md") == []
