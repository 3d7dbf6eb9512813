"""Benchmark output: ``<out>/<kind>.json``, PNG plots, and the markdown page.

``write(out, result)`` stores one benchmark's JSON and draws its plots;
``render_page(out)`` reads whatever JSON is in ``out`` and writes ``<out>.md`` next to
the directory (``docs/benchmarks`` -> ``docs/benchmarks.md``), so the page is always
generated from measured numbers, never edited by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

from guardrail.bench import kept_sections

KINDS = ("model", "stream", "quality")


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, allow_nan=False, default=str) + "\n")


def load(out: Path) -> dict[str, dict]:
    return {k: json.loads((out / f"{k}.json").read_text()) for k in KINDS
            if (out / f"{k}.json").exists()}


def write(out: Path, result: dict) -> list[Path]:
    """The JSON and the PNGs of one benchmark result; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{result['kind']}.json"
    write_json(path, result)
    return [path, *PLOTS[result["kind"]](out, result)]


# -- plots ----------------------------------------------------------------------------------

def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plain_log(ax, xs: Optional[list] = None) -> None:
    """Log axes labelled with plain numbers (and ticks at ``xs`` on x)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "log":
            axis.set_major_formatter(plain)
            axis.set_minor_formatter(NullFormatter())
    if xs:
        ax.set_xticks(sorted(set(xs)))


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _plt().close(fig)
    return path


def plot_model(out: Path, r: dict) -> list[Path]:
    plt = _plt()
    rows, n_layers = r["throughput"], r["settings"]["n_layers"]
    if not rows:
        return []
    exits = sorted({x["exit_layer"] for x in rows})
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for e in exits:
        pts = sorted((x["seq_len"], x["ms_per_check"]) for x in rows
                     if x["exit_layer"] == e and x["batch_size"] == min(x["batch_size"] for x in rows))
        a.plot(*zip(*pts), marker="o", label=_exit_name(e, n_layers))
        longest = max(x["seq_len"] for x in rows)
        pts = sorted((x["batch_size"], x["checks_per_s"]) for x in rows
                     if x["exit_layer"] == e and x["seq_len"] == longest)
        b.plot(*zip(*pts), marker="o", label=_exit_name(e, n_layers))
    a.set(xlabel="sequence length (tokens)", ylabel="ms per check (batch 1)",
          title="Latency of one check")
    b.set(xlabel="batch size", ylabel="checks/s", xscale="log",
          title=f"Throughput at {max(x['seq_len'] for x in rows)} tokens")
    _plain_log(b, [x["batch_size"] for x in rows])
    for ax in (a, b):
        ax.grid(alpha=.3)
        ax.legend()
    paths = [_save(fig, out / "model_throughput.png")]
    h = r["headline"]["timings"]
    names = ["raw_forward", *[f"check@{e}" for e in exits], "check_cold@full"]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    med = [h[k]["median_ms"] for k in names]
    err = [h[k]["p90_ms"] - h[k]["median_ms"] for k in names]
    ax.bar(range(len(names)), med, yerr=[[0] * len(err), err], capsize=3,
           color=["#888"] + ["#4c72b0"] * len(exits) + ["#dd8452"])
    ax.set_xticks(range(len(names)), [_label(k, n_layers) for k in names], fontsize=8)
    ax.set(ylabel="ms (median, bar to p90)",
           title=f"{r['headline']['tokens']}-token input: raw forward vs our check")
    ax.grid(axis="y", alpha=.3)
    paths.append(_save(fig, out / "model_headline.png"))
    return paths


def plot_stream(out: Path, r: dict) -> list[Path]:
    plt = _plt()
    paths = []
    cs = r["configs"]
    sizes = sorted({c["context_tokens"] for c in cs if c["variant"] == "guarded"
                    and c["release_delay_ms"]["p50"] is not None})
    if not sizes:
        return paths
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        g = sorted((c for c in cs if c["variant"] == "guarded" and c["context_tokens"] == size
                    and c["release_delay_ms"]["p50"] is not None), key=lambda c: c["streams"])
        xs = [c["streams"] for c in g]
        for q, style in (("p50", "-o"), ("p95", "--s"), ("p99", ":^")):
            ax.plot(xs, [c["release_delay_ms"][q] or math.nan for c in g], style, label=q)
        positive = all((c["release_delay_ms"][q] or 0) > 0 for c in g for q in ("p50", "p99"))
        shallow = r["shallow_check_ms"].get(str(size))
        if shallow:
            for k, ls in ((1, "-"), (2, "--"), (6, ":")):
                ax.axhline(k * shallow, color="grey", ls=ls, lw=.8)
            ax.text(xs[0], shallow, " 1x / 2x / 6x one shallow check", va="bottom", fontsize=7)
        ax.set(xlabel="concurrent streams", ylabel="release delay (ms)", xscale="log",
               yscale="log" if positive else "linear",
               title=f"{size}-token contexts, {r['settings']['rate']:g} tok/s")
        _plain_log(ax, xs)
        ax.grid(alpha=.3)
        ax.legend(fontsize=8)
    paths.append(_save(fig, out / "stream_delay.png"))
    mech = r.get("mechanisms") or []
    if mech:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        labels = [f"{m['variant']}\n{m['streams']}x{m['context_tokens']}" for m in mech]
        ax.bar(range(len(mech)), [m["p50_vs_guarded"] or math.nan for m in mech],
               label="p50 / guarded")
        ax.plot(range(len(mech)), [m["p99_vs_guarded"] or math.nan for m in mech], "k^",
                label="p99 / guarded")
        ax.axhline(1.0, color="grey", lw=.8)
        ax.set_xticks(range(len(mech)), labels, fontsize=7)
        ax.set(ylabel="release delay / shipped proxy's",
               title="What each mechanism is worth (streams x context tokens)")
        ax.grid(axis="y", alpha=.3)
        ax.legend(fontsize=8)
        paths.append(_save(fig, out / "stream_mechanisms.png"))
    return paths


def plot_quality(out: Path, r: dict) -> list[Path]:
    plt = _plt()
    rows, exits = r["rows"], r["settings"]["exits"]
    if not rows:
        return []
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(rows) * len(exits) / 2), 4))
    width = 0.8 / len(exits)
    for i, e in enumerate(exits):
        ax.bar([j + i * width for j in range(len(rows))],
               [row["exits"][str(e)]["example_f1"] or 0 for row in rows], width,
               label=_exit_name(e, r["settings"]["n_layers"]))
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))],
                  [row["dataset"] for row in rows], rotation=45, ha="right", fontsize=8)
    ax.set(ylabel="example F1", ylim=(0, 1), title="Example-level F1 by exit")
    ax.grid(axis="y", alpha=.3)
    ax.legend(fontsize=8)
    return [_save(fig, out / "quality.png")]


PLOTS = {"model": plot_model, "stream": plot_stream, "quality": plot_quality}


def _exit_name(e: int, n_layers: int) -> str:
    return f"full depth ({e})" if e >= n_layers else f"exit {e}"


def _label(key: str, n_layers: int) -> str:
    if key == "raw_forward":
        return "raw HF forward"
    if key == "check_cold@full":
        return "check, cold context"
    return "check " + _exit_name(int(key.split("@")[1]), n_layers)


# -- the page ---------------------------------------------------------------------------------

def _f(x: Optional[float], digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:,.{digits}f}"


def _table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _targets(results: dict[str, dict]) -> str:
    rows = []
    for kind in KINDS:
        for t in (results.get(kind) or {}).get("targets", []):
            state = {True: "reached", False: "**missed**", None: "not measured"}[t["reached"]]
            unit = f" {t['unit']}" if t["unit"] not in ("", "x") else ("×" if t["unit"] else "")
            rows.append([kind, t["name"], f"{t['direction']} {_f(t['limit'])}{unit}",
                         f"{_f(t['value'])}{unit}", state, _by(t), t["note"]])
    return _table(["bench", "claim", "target", "measured", "", "by", "how / why"], rows)


def _by(t: dict) -> str:
    """How far from the limit: a factor when reached, the shortfall when missed."""
    by = t["by"]
    if by is None:
        return "–"
    if t["reached"] is not False:
        return f"{_f(by)}× the limit"
    if t["direction"] == ">=":
        return f"{(1 - by) * 100:.0f}% short"
    return f"{(by - 1) * 100:.0f}% over" if by < 2 else f"{_f(by, 1)}× the limit"


def _machine(results: dict[str, dict]) -> str:
    any_r = next(iter(results.values()))
    m = any_r["machine"]
    rows = [["CPU", m["cpu"]], ["cores", f"{m['logical_cores']} logical, "
                                          f"{m['physical_cores']} physical"],
            ["memory", f"{m['memory_gib']} GiB"], ["device", m["device"] +
                                                    (f" ({m['gpu']})" if m.get("gpu") else "")],
            ["torch / transformers", f"{m['torch']} / {m['transformers']}"],
            ["torch threads", m["torch_threads"]], ["python", m["python"]],
            ["platform", m["platform"]], ["guardrail", f"{m['guardrail']} ({m['commit']})"]]
    for kind, r in results.items():
        rows.append([f"{kind}: date, load average at start",
                     f"{r['machine']['date']}, {r['machine']['load_average']}"])
    return _table(["", ""], rows)


def _model_section(r: dict, rel: str) -> str:
    s, h = r["settings"], r["headline"]
    n = s["n_layers"]
    exits = s["exits"]
    by_key: dict[tuple, dict] = {(x["seq_len"], x["batch_size"], x["exit_layer"]): x
                                 for x in r["throughput"]}
    rows = []
    for (seq, batch) in sorted({(k[0], k[1]) for k in by_key}):
        row = [seq, batch]
        for e in exits:
            x = by_key.get((seq, batch, e))
            row += ["–"] * 3 if x is None else [_f(x["ms_per_check"]), _f(x["checks_per_s"], 1),
                                                _f(x["speedup_vs_full"])]
        rows.append(row)
    head = ["tokens", "batch"]
    for e in exits:
        name = "full" if e >= n else f"exit {e}"
        head += [f"{name} ms/check", f"{name} checks/s", f"{name} ×full"]
    t = h["timings"]
    hl = [[_label(k, n), _f(v["median_ms"]), _f(v["p90_ms"])] for k, v in t.items()
          if not k.startswith("forward@")]
    hl += [[f"model forward only, {_exit_name(int(k.split('@')[1]), n)}",
            _f(v["median_ms"]), _f(v["p90_ms"])] for k, v in t.items() if k.startswith("forward@")]
    mem = r.get("memory", {})
    cache = [[c["context_tokens"], _f(c["cold"]["median_ms"], 3),
              _f(c["local_hit"]["median_ms"], 4), _f(c["speedup_local"], 1),
              _f((c.get("redis_hit") or {}).get("median_ms"), 3), _f(c.get("speedup_redis"), 1)]
             for c in r.get("context_cache", [])]
    return "\n\n".join([
        f"Model `{s['model']}` on {s['device']} ({s['dtype']}, attention `{s['attention']}`), "
        f"{n} layers, exits {exits}; {s['warmup']} warm-up rounds, then {s['repeats']} "
        "rounds with the exits interleaved; median per call.",
        "### Throughput\n\n" + _table(head, rows),
        f"![throughput]({rel}/model_throughput.png)",
        f"### A {h['tokens']}-token input: raw forward vs our check\n\n"
        f"Raw model: `{h['raw_model']}`. Full-depth check / raw forward = "
        f"**{_f(h['full_check_over_raw'])}×** (cold context: {_f(h['cold_check_over_raw'])}×); "
        "check speed-up over full depth: " + ", ".join(
            f"exit {k}: **{_f(v)}×**" for k, v in h["check_speedup_vs_full"].items()
            if int(k) < n) + "; forward only: " + ", ".join(
            f"exit {k}: {_f(v)}×" for k, v in h["forward_speedup_vs_full"].items() if int(k) < n)
        + ".\n\n" + _table(["what", "median ms", "p90 ms"], hl),
        f"![headline]({rel}/model_headline.png)",
        "### Memory and the context cache\n\n"
        f"Peak RSS of a fresh process that loads the detector: "
        f"{_f(mem.get('peak_rss_mib_loaded'), 0)} MiB, after one check "
        f"{_f(mem.get('peak_rss_mib_after_check'), 0)} MiB.\n\n" +
        _table(["context tokens", "cold prepare ms", "LRU hit ms", "× faster", "Redis hit ms",
                "× faster"], cache)])


def _stream_section(r: dict, rel: str) -> str:
    s = r["settings"]
    rows = []
    for c in r["configs"]:
        d = c.get("release_delay_ms") or c.get("transport_delay_ms") or {}
        chk = c.get("checks") or {}
        b = chk.get("batches") or {}
        exits = ", ".join(f"{k}:{v}" for k, v in (chk.get("exits") or {}).get("in_flight", {})
                          .items())
        rows.append([c["variant"] + ("" if c["throttled"] else " (unthrottled)"), c["streams"],
                     c["context_tokens"] or "–", _f(d.get("p50"), 1), _f(d.get("p95"), 1),
                     _f(d.get("p99"), 1), _f(d.get("max"), 1),
                     _f((c.get("delay_over_shallow_check") or {}).get("p50")),
                     _f(c["ttft_ms"]["p50"], 1), _f(c["chunks_per_s"], 1),
                     _f(chk.get("sentences_checked_per_s")), _f(b.get("mean_size"), 1),
                     f"{_f(b.get('in_flight_mean_queue_wait_ms'), 1)} / "
                     f"{_f(b.get('in_flight_mean_model_ms'), 1)}" if b else "–",
                     exits or "–", c["queue_depth"]["max"] if chk else "–",
                     _f(c["proxy_cpu_percent"], 0), _f(c["proxy_peak_rss_mib"], 0),
                     "–" if c.get("streams_behind") is None else c["streams_behind"],
                     c["streams_failed"]])
    head = ["variant", "streams", "ctx tokens", "p50 ms", "p95 ms", "p99 ms", "max ms",
            "p50 / shallow check", "TTFT p50 ms", "chunks/s", "sentences checked/s",
            "mean batch", "in-flight batch: queued / model ms", "in-flight exits", "max queue", "proxy CPU %", "proxy RSS MiB",
            "behind", "failed"]
    mech = [[m["variant"], m["what"], f"{m['streams']} × {m['context_tokens']}",
             _f(m["p50_ms"], 1), _f(m["p99_ms"], 1), _f(m["p50_vs_guarded"]),
             _f(m["p99_vs_guarded"]), _f(m["guarded_throughput_gain"]), m["streams_behind"]]
            for m in r.get("mechanisms", [])]
    shallow = ", ".join(f"{k} tokens: {_f(v, 1)} ms" for k, v in r["shallow_check_ms"].items())
    return "\n\n".join([
        f"{s['rate']:g} tokens/s per stream ({s['tokens']}), answers of {s['answer_tokens']} "
        f"tokens, {s['hallucination_rate']:.0%} of their sentences from outside the context, "
        f"contexts from {s['documents']}; context windows in flight `{s['windows']}`"
        + (f" (k={s['top_k']})" if s["windows"] == "topk" else "") +
        (f", at the end of the stream `{s['final_windows']}`" if "final_windows" in s else "")
        + (f" (k={s['final_top_k']})" if s.get("final_windows") == "topk" else "") +
        f", final full-depth pass {'on' if s['final_pass'] else 'off'}, in-flight exit "
        f"{s['shallow_exit_layer']}. One shallow check alone, measured in the proxy process "
        f"at the start and the end of the run: {shallow}.",
        "Release delay: the upstream sends a sentence's last token -> the released sentence "
        "reaches the client. For direct and pass-through rows the delay column is the "
        "transport delay of the same sentence ends. The proxy runs in its own process; CPU % "
        "is of that process (200 % = both cores).",
        _table(head, rows),
        f"![release delay]({rel}/stream_delay.png)",
        "### The value of each mechanism\n\nEach variant against the shipped proxy at the same "
        "load (ratios > 1: the variant is slower / checks fewer sentences per second).",
        _table(["variant", "what", "streams × ctx", "p50 ms", "p99 ms", "p50 ÷ guarded",
                "p99 ÷ guarded", "guarded checks/s ÷ variant", "behind"], mech),
        f"![mechanisms]({rel}/stream_mechanisms.png)" if mech else ""])


def _quality_section(r: dict, rel: str) -> str:
    s = r["settings"]
    exits, n = s["exits"], s["n_layers"]
    head = ["data set", "split", "n"]
    for e in exits:
        name = "full" if e >= n else f"exit {e}"
        head += [f"{name} ex F1", f"{name} tok F1", f"{name} AUROC", f"{name} ex/s"]
    rows = []
    for row in r["rows"]:
        cells = [row["dataset"], row["split"], f"{row['n_examples']} of {row['n_available']}"]
        for e in exits:
            c = row["exits"][str(e)]
            cells += [_f(c["example_f1"], 3), _f(c["token_f1"], 3), _f(c["auroc"], 3),
                      _f(c["examples_per_s"], 1)]
        rows.append(cells)
    note = ("**The model evaluated is a placeholder (untrained weights): these numbers say "
            "nothing about quality yet.**\n\n") if s.get("placeholder_model") else ""
    return note + "\n\n".join([
        f"`evaluate` at every exit; span-labelled sets on the dev split by source "
        f"(dev fraction {s['split']['dev_fraction']}, seed {s['split']['seed']}), binary sets "
        f"whole; at most {s['limit'] or 'all'} examples per set (seeded sample, seed "
        f"{s['seed']}).", _table(head, rows), f"![quality]({rel}/quality.png)"])


def render_page(out: Path, command: Optional[str] = None) -> Path:
    """Write ``<out>.md`` from the JSON files in ``out``; ``command`` is the one that
    measured them (default: the commands recorded in the JSON)."""
    results = load(out)
    if not results:
        raise FileNotFoundError(f"no benchmark JSON in {out}")
    page = out.parent / f"{out.name}.md"
    rel = out.name
    commands = [c for c in dict.fromkeys(r.get("command", "") for r in results.values()) if c] \
        if command is None else [command]
    made_by = "`, `".join(commands) or "guardrail bench"
    kept = kept_sections(page)  # sections this page does not generate (the soak)
    parts = ["# Benchmarks", "<!-- generated by `guardrail bench`; sections it does not "
             "generate (e.g. the soak's) are kept -->",
             f"Generated by `{made_by}`. Every number below comes from the JSON files in "
             f"[`{rel}/`]({rel}/), measured on this machine in that run; each target says "
             "whether it was reached and by how much it was missed.",
             "## Machine\n\n" + _machine(results),
             "## Targets\n\n" + _targets(results)]
    sections = {"model": ("## Model", _model_section), "stream": ("## Stream", _stream_section),
                "quality": ("## Quality", _quality_section)}
    for kind, (title, fn) in sections.items():
        if kind in results:
            parts.append(f"{title}\n\n" + fn(results[kind], rel))
    parts += kept
    parts.append("## Reproduce\n\n```sh\n" + "\n".join(commands) + "\n```")
    page.write_text("\n\n".join(p for p in parts if p) + "\n")
    return page


__all__ = ["load", "render_page", "write", "write_json"]
