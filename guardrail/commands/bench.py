"""Commands: `guardrail bench model | stream | quality | soak | all | report`.

Each writes ``OUT/<kind>.json`` and its PNGs; ``all`` also writes the page ``OUT.md``
(``--out docs/benchmarks`` -> ``docs/benchmarks.md``).  ``--quick`` runs a small
variant in well under a minute each (the test suite runs it).  ``soak`` (minutes of
sustained load on ``guardrail serve``) is not part of ``all``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

DEFAULT_OUT = Path("guardrail-bench")
OUT_HELP = "Directory for the JSON and PNG files (the page goes next to it as DIR.md)."
WINDOWS_HELP = ("Override scheduler.in_flight_windows (all | topk) of every variant but the "
                "naive one (default: the shipped config's).")
TOP_K_HELP = "Override scheduler.in_flight_top_k (windows per in-flight check with topk)."


def _answer_kind(value: str) -> str:
    if value not in ("text", "json"):
        raise typer.BadParameter("must be one of text, json")
    return value


def _ints(text: Optional[str]) -> tuple[int, ...]:
    if not text:
        return ()
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated integers, got {text!r}") from None


def _names(text: Optional[str]) -> tuple[str, ...]:
    return tuple(x.strip() for x in (text or "").split(",") if x.strip())


def command_line(ctx: typer.Context) -> str:
    """The command as typed, rebuilt from its parameters (defaults left out)."""
    parts = ["guardrail", "bench", ctx.info_name or ""]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if value == param.default or value is None or value == () or value == []:
            continue
        flag = max(param.opts, key=len)
        if isinstance(value, bool):
            if param.secondary_opts and not value:
                flag = max(param.secondary_opts, key=len)
            parts.append(flag)
        elif isinstance(value, (list, tuple)):
            parts += [f"{flag} {v}" for v in value]
        else:
            parts.append(f"{flag} {value}")
    return " ".join(parts)


def _log(message: str) -> None:
    typer.echo(f"[bench] {message}", err=True)


def _save(out: Path, result: dict, command: str, write=None) -> None:
    from guardrail.bench import report

    result["command"] = command
    for path in (write or report.write)(out, result):
        typer.echo(str(path))


def _given(**options) -> dict:
    """The options the user set (unset ones keep the benchmark config's defaults)."""
    return {k: v for k, v in options.items() if v not in (None, ())}


def _run_and_save(module, cfg, out: Path, ctx: typer.Context, write=None) -> None:
    """Run one benchmark module, print its summary, save its JSON and plots (with
    ``write(out, result)`` where the module draws its own, else ``report.write``)."""
    try:
        result = module.run(cfg, log=_log)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    typer.echo(module.summary(result))
    _save(out, result, command_line(ctx), write)


def register(app: typer.Typer) -> None:
    bench = typer.Typer(help="Benchmarks: the model, the stream and the quality, with plots.",
                        no_args_is_help=True)
    app.add_typer(bench, name="bench")

    @bench.command("model")
    def model_cmd(
        ctx: typer.Context,
        out: Path = typer.Option(DEFAULT_OUT, "--out", help=OUT_HELP),
        quick: bool = typer.Option(False, "--quick", help="A small, fast variant."),
        model: Optional[str] = typer.Option(None, help="HF id or path (default: shipped)."),
        device: Optional[str] = typer.Option(None, help="cpu | cuda (default: cuda if present)."),
        seq_lens: Optional[str] = typer.Option(None, help="e.g. 128,256,512 (default: 128 "
                                               "... the model maximum)."),
        batch_sizes: Optional[str] = typer.Option(None, help="e.g. 1,4,16."),
        exits: Optional[str] = typer.Option(None, help="e.g. 2,4,6 (default: all + full)."),
        max_batch_tokens: Optional[int] = typer.Option(None, help="Skip batch x length above "
                                                       "this (batch 1 always runs)."),
        repeats: Optional[int] = typer.Option(None, help="Timed rounds per configuration."),
        warmup: Optional[int] = typer.Option(None, help="Untimed rounds first."),
        context_tokens: Optional[str] = typer.Option(None, help="Context sizes for the cache "
                                                     "measurement, e.g. 512,4096."),
        redis_url: Optional[str] = typer.Option(None, help="Also measure a Redis cache hit."),
        raw_model: Optional[str] = typer.Option(None, help="Backbone for the raw forward."),
        rss: bool = typer.Option(True, help="Measure a fresh process's peak RSS."),
        data_dir: Optional[str] = typer.Option(None, help="Shared data directory."),
    ) -> None:
        """Checks/s and ms per check by length x batch x exit; raw forward vs check; RSS."""
        from guardrail.bench import model as bm

        kw = _given(
            model=model, device=device, seq_lens=_ints(seq_lens), batch_sizes=_ints(batch_sizes),
            exits=_ints(exits), max_batch_tokens=max_batch_tokens, repeats=repeats, warmup=warmup,
            context_tokens=_ints(context_tokens), redis_url=redis_url, raw_model=raw_model,
            measure_rss=rss, data_dir=data_dir)
        cfg = bm.ModelBenchConfig.quick(**kw) if quick else bm.ModelBenchConfig(**kw)
        _run_and_save(bm, cfg, out, ctx)

    @bench.command("stream")
    def stream_cmd(
        ctx: typer.Context,
        out: Path = typer.Option(DEFAULT_OUT, "--out", help=OUT_HELP),
        quick: bool = typer.Option(False, "--quick", help="A small, fast variant."),
        streams: Optional[str] = typer.Option(None, help="Concurrent streams, e.g. 1,4,16,64."),
        rate: Optional[float] = typer.Option(None, help="Upstream tokens/s per stream."),
        context_tokens: Optional[str] = typer.Option(None, help="Context sizes, e.g. 512,4096."),
        answer_tokens: Optional[int] = typer.Option(None, help="Tokens per answer."),
        hallucination_rate: Optional[float] = typer.Option(None, help="Share of answer "
                                                           "sentences not in the context."),
        naive_streams: Optional[str] = typer.Option(None, help="Stream counts for the naive "
                                                    "baseline ('' to skip)."),
        ablations: Optional[str] = typer.Option(None, help="Variants to compare, of "
                                                "no_early_exit,no_batching,no_cache,"
                                                "all_windows ('' to skip)."),
        ablation_streams: Optional[str] = typer.Option(None, help="Stream counts for them."),
        windows: Optional[str] = typer.Option(None, help=WINDOWS_HELP),
        top_k: Optional[int] = typer.Option(None, help=TOP_K_HELP),
        final_pass: Optional[bool] = typer.Option(None, help="Full-depth pass at stream end."),
        admission: Optional[bool] = typer.Option(None, help="Let the scheduler refuse streams "
                                                 "(503) when its backlog exceeds its latency "
                                                 "budget (default: off, every stream runs)."),
        deadline: Optional[float] = typer.Option(None, help="Seconds before a configuration's "
                                                 "streams are cut."),
        warm_contexts: Optional[bool] = typer.Option(None, help="PUT each stream's documents "
                                                     "to /v1/contexts before it starts (a "
                                                     "tenant's cached documents)."),
        model: Optional[str] = typer.Option(None, help="HF id or path (default: shipped)."),
        device: Optional[str] = typer.Option(None),
        data_dir: Optional[str] = typer.Option(None, help="Shared data directory."),
        config_file: Optional[Path] = typer.Option(
            None, "--config", "-c", help="YAML config for the proxy under the benchmark's "
            "own settings (upstream, model, windows, ...), e.g. `scheduler: "
            "{eos_batch_tokens: 8192}`."),
    ) -> None:
        """Fake upstream + the real proxy on loopback, N streams: release delay and more."""
        from guardrail.bench import stream as bs
        from guardrail.commands.startup import config_or_exit

        if config_file is not None:  # a bad file fails here, not in the proxy process
            config_or_exit(config_file, {}, env={})

        kw = {k: v for k, v in dict(
            streams=_ints(streams) or None, rate=rate, context_tokens=_ints(context_tokens) or None,
            answer_tokens=answer_tokens, hallucination_rate=hallucination_rate,
            naive_streams=None if naive_streams is None else _ints(naive_streams),
            ablations=None if ablations is None else _names(ablations),
            ablation_streams=None if ablation_streams is None else _ints(ablation_streams),
            windows=windows, top_k=top_k, final_pass=final_pass, admission=admission,
            deadline_s=deadline, warm_contexts=warm_contexts,
            model=model, device=device, data_dir=data_dir,
            config=str(config_file.resolve()) if config_file else None).items() if v is not None}
        cfg = bs.StreamBenchConfig.quick(**kw) if quick else bs.StreamBenchConfig(**kw)
        _run_and_save(bs, cfg, out, ctx)

    @bench.command("verdicts")
    def verdicts_cmd(
        data: list[str] = typer.Option(..., "--data", help="Span-labelled data as PATH or "
                                       "PATH@SPLIT (see `guardrail judge fit --help`)."),
        model: Optional[str] = typer.Option(None, help="Detector (default: shipped)."),
        limit: Optional[int] = typer.Option(None, min=1,
                                            help="First N answers of each --data."),
        config_file: Optional[Path] = typer.Option(
            None, "--config", "-c", help="YAML config for the proxy (as `guardrail serve "
            "--config`; its upstream is the bench's own), e.g. `scheduler: {depth_ladder: "
            "[]}` for in-flight checks at one exit whatever the queue."),
        out: Path = typer.Option(DEFAULT_OUT, help=OUT_HELP),
        answer: str = typer.Option("text", callback=_answer_kind,
                                   help="How the upstream answers: text (as written) or "
                                   'json (the object {"answer": ...}, to a request for '
                                   "one: response_format json_object)."),
    ) -> None:
        """Labelled answers streamed through the real proxy: what was kept, what stopped.

        Per data set (verdicts.json): supported kept verbatim, unsupported stopped; each
        sentence's outcome with its explanation (sentences.jsonl).  The fake upstream
        sends each answer at
        once, so with the shipped adaptive depth a few checks run at a shallower exit,
        depending on timing."""
        import json

        from guardrail.bench import verdicts
        from guardrail.commands.judge import load_split
        from guardrail.commands.startup import config_or_exit

        examples = []
        meta = {}
        if model:
            mp = Path(model) / "guardrail.json"
            meta = json.loads(mp.read_text()) if mp.exists() else {}
        for spec in data:
            part = [e for e in load_split(spec, meta) if e.has_spans]
            examples += part[:limit] if limit else part
        if not examples:
            raise typer.BadParameter("no span-labelled answers in --data")
        def config(url: str):  # the shipped defaults, the file's settings, the model
            return config_or_exit(config_file, {"upstream.base_url": url, "detector.model":
                                                model, "upstream.api_key": "sk-bench"}, env={})

        config("http://127.0.0.1:9/v1")  # a bad file fails here, before any model loads
        rows: list = []
        result = verdicts.run(examples, config=config, progress=True, sentences=rows,
                              answer=answer)
        result.update(data=data, model=model or "default",
                      config=str(config_file) if config_file else None)
        out.mkdir(parents=True, exist_ok=True)
        (out / "verdicts.json").write_text(json.dumps(result, indent=2) + "\n")
        (out / "sentences.jsonl").write_text(  # what happened to each sentence
            "".join(json.dumps(r) + "\n" for r in rows))
        typer.echo(json.dumps(result["by_dataset"], indent=2))

    @bench.command("soak")
    def soak_cmd(
        ctx: typer.Context,
        out: Path = typer.Option(DEFAULT_OUT, "--out", help=OUT_HELP),
        quick: bool = typer.Option(False, "--quick", help="4 streams for 20 s."),
        streams: Optional[int] = typer.Option(None, min=1, help="Client loops, each one "
                                              "guarded stream at a time (default 32)."),
        duration: Optional[float] = typer.Option(None, min=1, help="Seconds in which new "
                                                 "requests start (default 300)."),
        context_tokens: Optional[int] = typer.Option(None, min=16, help="Grounding context "
                                                     "of every request (default 1024)."),
        rate: Optional[float] = typer.Option(None, min=0.1, help="Upstream tokens/s per "
                                             "stream (default 30)."),
        model: Optional[str] = typer.Option(None, help="HF id or path (default: shipped)."),
        warmup_s: Optional[float] = typer.Option(None, "--warmup-s", min=0, help="RSS is "
                                                 "judged from the end of this (default: 60 "
                                                 "s or 20 % of the run, the shorter)."),
    ) -> None:
        """N streams against `guardrail serve` for minutes: refusals, delay, memory.

        Refusals with Retry-After, release delay of the admitted ones vs the latency
        budget, RSS over time."""
        from guardrail.bench import soak as bk

        kw = _given(streams=streams, duration_s=duration, context_tokens=context_tokens,
                    rate=rate, model=model, warmup_s=warmup_s)
        cfg = bk.SoakConfig.quick(**kw) if quick else bk.SoakConfig(**kw)
        _run_and_save(bk, cfg, out, ctx, write=bk.write)

    @bench.command("context")
    def context_cmd(
        ctx: typer.Context,
        out: Path = typer.Option(DEFAULT_OUT, "--out", help=OUT_HELP),
        quick: bool = typer.Option(False, "--quick", help="Two short contexts."),
        model: Optional[str] = typer.Option(None, help="A PCW model (default: the shipped "
                                            "weights read as PCW; speed only)."),
        context_tokens: Optional[str] = typer.Option(None, help="e.g. 512,4096,32768."),
        repeats: Optional[int] = typer.Option(None, help="Timed rounds per configuration."),
        redis_url: Optional[str] = typer.Option(None, help="Also time the states via Redis."),
        data_dir: Optional[str] = typer.Option(None, help="Shared data directory."),
        cross_model: Optional[str] = typer.Option(None, help="The re-encoding cross-encoder "
                                                  "(default: shipped)."),
        device: Optional[str] = typer.Option(None, help="cpu (default) | cuda."),
        batch: Optional[int] = typer.Option(None, min=0, help="Checks per batch for the "
                                            "throughput rows (default: 8 on CUDA, 0 = none)."),
        dtype: Optional[str] = typer.Option(None, help="The weights: auto (default, as "
                                            "`detector.dtype` serves) | float32 | bfloat16."),
    ) -> None:
        """A check against an encoded (cached) context vs re-encoding it, 512 -> 32K tokens.

        One sentence check against an encoded (cached) context vs re-encoding the
        context with the query, 512 -> 32K tokens; encode cost; bytes per token; with
        --batch (default on CUDA) batched full-depth checks per second."""
        from guardrail.bench import context as bc

        kw = _given(model=model, context_tokens=_ints(context_tokens), repeats=repeats,
                    redis_url=redis_url, data_dir=data_dir, cross_model=cross_model,
                    device=device, batch=batch, dtype=dtype)
        if dtype not in (None, "auto", "float32", "bfloat16"):
            raise typer.BadParameter("--dtype must be auto, float32 or bfloat16")
        cfg = bc.ContextBenchConfig.quick(**kw) if quick else bc.ContextBenchConfig(**kw)
        _run_and_save(bc, cfg, out, ctx, write=bc.write)

    @bench.command("quality")
    def quality_cmd(
        ctx: typer.Context,
        out: Path = typer.Option(DEFAULT_OUT, "--out", help=OUT_HELP),
        quick: bool = typer.Option(False, "--quick", help="A few examples of one set."),
        data: list[str] = typer.Option([], "--data", help="Extra set as NAME=PATH "
                                       "(repeatable), e.g. the long-context set."),
        limit: Optional[int] = typer.Option(None, min=0, help="Examples per set (0: all)."),
        exits: Optional[str] = typer.Option(None, help="e.g. 2,4,6 (default: all + full)."),
        only: Optional[str] = typer.Option(None, help="Only these sets, e.g. ragtruth,true/frank."),
        model: Optional[str] = typer.Option(None, help="HF id or path (default: shipped)."),
        device: Optional[str] = typer.Option(None),
        data_dir: Optional[str] = typer.Option(None, help="Shared data directory."),
        seed: int = typer.Option(0, help="Seed of the per-set sample."),
    ) -> None:
        """`guardrail eval` on every shared data set at every exit, one table."""
        from guardrail.bench import quality as bq

        kw = _given(model=model, device=device, data_dir=data_dir, extra=tuple(data),
                    exits=_ints(exits), limit=limit, only=_names(only), seed=seed)
        cfg = bq.QualityBenchConfig.quick_config(**kw) if quick else bq.QualityBenchConfig(**kw)
        _run_and_save(bq, cfg, out, ctx)

    @bench.command("all")
    def all_cmd(
        ctx: typer.Context,
        out: Path = typer.Option(DEFAULT_OUT, "--out", help=OUT_HELP),
        quick: bool = typer.Option(False, "--quick", help="Small variants (a few minutes)."),
        model: Optional[str] = typer.Option(None, help="HF id or path (default: shipped)."),
        device: Optional[str] = typer.Option(None),
        data_dir: Optional[str] = typer.Option(None, help="Shared data directory."),
        redis_url: Optional[str] = typer.Option(None, help="Also measure a Redis cache hit."),
        data: list[str] = typer.Option([], "--data", help="Extra quality set NAME=PATH."),
        quality_limit: int = typer.Option(100, min=1, help="Examples per quality set."),
        windows: Optional[str] = typer.Option(None, help=WINDOWS_HELP),
        top_k: Optional[int] = typer.Option(None, help=TOP_K_HELP),
    ) -> None:
        """model + stream + quality, then the page OUT.md (about 20 minutes on 2 cores)."""
        from guardrail.bench import model as bm
        from guardrail.bench import quality as bq
        from guardrail.bench import report
        from guardrail.bench import stream as bs

        command = command_line(ctx)
        common = {k: v for k, v in dict(model=model, device=device, data_dir=data_dir).items()
                  if v is not None}
        mk = {**common, **({"redis_url": redis_url} if redis_url else {})}
        qk = {**common, "extra": tuple(data)}
        sk = {**common, **{k: v for k, v in dict(windows=windows, top_k=top_k).items()
                           if v is not None}}
        if windows not in (None, "all", "topk") or (top_k is not None and top_k < 1):
            raise typer.BadParameter(f"--windows must be all or topk and --top-k at least 1, "
                                     f"got {windows!r} and {top_k!r}")
        steps = [
            ("model", bm, bm.ModelBenchConfig.quick(**mk) if quick else bm.ModelBenchConfig(**mk)),
            ("stream", bs, bs.StreamBenchConfig.quick(**sk) if quick
             else bs.StreamBenchConfig(**sk)),
            ("quality", bq, bq.QualityBenchConfig.quick_config(**qk) if quick
             else bq.QualityBenchConfig(limit=quality_limit, **qk)),
        ]
        for name, _module, _cfg in steps:  # a stale result must not join this run's page
            (out / f"{name}.json").unlink(missing_ok=True)
        failed = []
        for name, module, cfg in steps:
            _log(f"== {name}")
            try:
                result = module.run(cfg, log=_log)
            except Exception as e:  # the other benchmarks still run; the exit status says it
                _log(f"{name} failed: {type(e).__name__}: {e}")
                failed.append(name)
                continue
            typer.echo(module.summary(result))
            _save(out, result, command)
        if len(failed) < len(steps):
            typer.echo(str(report.render_page(out, command)))
        if failed:
            raise typer.Exit(1)

    @bench.command("report")
    def report_cmd(ctx: typer.Context, out: Path = typer.Option(DEFAULT_OUT, "--out", help=OUT_HELP)) -> None:
        """Rewrite the page OUT.md from the JSON already in OUT (no measuring)."""
        from guardrail.bench import report

        if not report.load(out):
            raise typer.BadParameter(f"no benchmark JSON in {out}")
        typer.echo(str(report.render_page(out)))
