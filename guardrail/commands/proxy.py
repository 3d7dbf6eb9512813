"""Commands: `guardrail serve`, `guardrail check`, `guardrail demo`.

Heavy imports (uvicorn, the detector, torch) happen inside the commands.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer

from guardrail.commands.startup import config_or_exit, model_or_exit, port_or_exit

ACTIONS = ("release", "redact", "regenerate", "block", "annotate")


def _action(value: Optional[str]) -> Optional[str]:
    if value is not None and value not in ACTIONS:
        raise typer.BadParameter(f"must be one of {', '.join(ACTIONS)}")
    return value


def serve(
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="YAML config file."),
    upstream: Optional[str] = typer.Option(
        None, help="Upstream base URL, e.g. http://llm:8000/v1 (its key: set "
        "GUARDRAIL_UPSTREAM__API_KEY or upstream.api_key in the YAML)."),
    host: Optional[str] = typer.Option(None, help="Interface to bind."),
    port: Optional[int] = typer.Option(None, help="Port to listen on."),
    model: Optional[str] = typer.Option(None, help="Detector weights (path or HF id)."),
    device: Optional[str] = typer.Option(None, help="Torch device for the detector."),
    action: Optional[str] = typer.Option(None, callback=_action,
                                         help=f"Default action: {', '.join(ACTIONS)}."),
    threshold: Optional[float] = typer.Option(None, help="Default flagging threshold."),
    redis_url: Optional[str] = typer.Option(
        None, "--redis-url", help="Redis for the context cache and store, e.g. "
        "redis://127.0.0.1:6379/0 (env GUARDRAIL_CACHE__REDIS_URL); unset: in-process only."),
    log_level: Optional[str] = typer.Option(None, help="debug, info, warning or error."),
    ui: bool = typer.Option(False, "--ui", help="Also serve the copilot chat page at /ui/ "
                            "(same origin as /v1)."),
) -> None:
    """Run the proxy: point your OpenAI client's base_url at it."""
    import logging

    import uvicorn

    from guardrail.proxy.app import create_app

    cfg = config_or_exit(config, {"upstream.base_url": upstream, "server.host": host,
                           "server.port": port, "detector.model": model,
                           "detector.device": device,
                           "policy.action": action, "policy.threshold": threshold,
                           "cache.redis_url": redis_url, "server.log_level": log_level})
    model_or_exit(cfg)
    port_or_exit(cfg.server.host, cfg.server.port)
    ours = logging.getLogger("guardrail")  # start-up facts, Redis failures: next to uvicorn's
    if not ours.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        ours.addHandler(handler)
    ours.setLevel(cfg.server.log_level.upper())
    from guardrail.config import redact_url

    where = f"http://{cfg.server.host}:{cfg.server.port}" if cfg.server.port else \
        f"a free port of {cfg.server.host} (uvicorn's log names it)"
    typer.echo(f"guardrail: proxying {redact_url(cfg.upstream.base_url)} on {where}"
               f"{'/v1' if cfg.server.port else ''} (loading the detector...)", err=True)
    if ui:
        typer.echo(f"guardrail: chat page at {where}{'/ui/' if cfg.server.port else ''}",
                   err=True)
    _fixed_mmap_threshold()
    app = create_app(cfg, chat_page=ui)
    server = _DrainingServer(uvicorn.Config(
        app, host=cfg.server.host, port=cfg.server.port, log_level=cfg.server.log_level,
        timeout_graceful_shutdown=cfg.server.drain_grace_s + 10))
    server.run()




def _draining_server():
    import asyncio

    import uvicorn

    from sse_starlette.sse import AppStatus

    # sse-starlette ends every SSE response the moment uvicorn sees a signal (no [DONE]);
    # the app's own drain ends them instead, and sse-starlette's is the backstop
    AppStatus.disable_automatic_graceful_drain()

    class DrainingServer(uvicorn.Server):
        """uvicorn, plus: SIGTERM/SIGINT start the app's drain (see proxy.state.Drain),
        and uvicorn stops accepting only once the requests in flight have ended (the
        drain cuts them at its grace period), so a request that arrives meanwhile gets
        the drain's 503, not a refused connection; a second signal stops at once."""

        def handle_exit(self, sig, frame) -> None:
            state = getattr(self.config.app.state, "guardrail", None)
            if state is None or self._loop is None or self._draining:
                AppStatus.should_exit = True
                return super().handle_exit(sig, frame)
            self._draining = True
            self._loop.call_soon_threadsafe(state.drain.begin)
            asyncio.run_coroutine_threadsafe(self._stop_after(state, sig, frame), self._loop)

        async def _stop_after(self, state, sig, frame) -> None:
            deadline = self._loop.time() + state.drain.grace_s + 5  # sse-starlette's backstop
            while state.in_flight and self._loop.time() < deadline:
                await asyncio.sleep(0.05)
            AppStatus.should_exit = True
            super().handle_exit(sig, frame)

        async def serve(self, sockets=None) -> None:
            self._loop = asyncio.get_running_loop()
            await super().serve(sockets)

        _loop = None
        _draining = False

    return DrainingServer


def _fixed_mmap_threshold(threshold: int = 128 * 1024) -> bool:
    """glibc raises its mmap threshold each time a large block is freed, so the model's
    big, short-lived buffers end up in the heap, where freed memory is seldom returned:
    RSS grew from 561 MB to 1.46 GB under 32 streams, and stayed flat with
    ``MALLOC_MMAP_THRESHOLD_`` set (issue #14).  The same, at start-up, unless the
    operator set it; False where there is no glibc."""
    import ctypes
    import os

    if "MALLOC_MMAP_THRESHOLD_" in os.environ or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-3, threshold))  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        return False


def _DrainingServer(config):  # noqa: N802 - a class, built lazily (uvicorn import)
    return _draining_server()(config)


def _read(text: str) -> str:
    return sys.stdin.read() if text == "-" else text


def check(
    answer: str = typer.Option(..., "--answer", "-a", help="The answer to check ('-': stdin)."),
    context: list[str] = typer.Option([], "--context", help="A grounding document, or "
                                      "the path of a file holding one (repeatable)."),
    context_file: list[Path] = typer.Option([], "--context-file", help="A file holding a "
                                            "grounding document (repeatable)."),
    question: str = typer.Option("", "--question", "-q", help="The user's question."),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="YAML config file."),
    model: Optional[str] = typer.Option(None, help="Detector weights (path or HF id)."),
    threshold: Optional[float] = typer.Option(None, help="Flagging threshold."),
    as_json: bool = typer.Option(False, "--json", help="Print the guardrail object as JSON."),
) -> None:
    """Check one (context, question, answer) triple. Exit status 1 if it is flagged."""
    import asyncio
    import json

    from guardrail.errors import GuardrailError

    docs = [_document(c) for c in context] + [p.read_text(encoding="utf-8")
                                              for p in context_file]
    if not any(d.strip() for d in docs):
        raise typer.BadParameter("give at least one --context or --context-file")
    cfg = config_or_exit(config, {"detector.model": model, "policy.threshold": threshold})
    try:
        result = asyncio.run(_check(cfg, docs, question, _read(answer)))
    except GuardrailError as e:
        typer.echo(f"error: {e.message}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(result.report.to_json(), indent=2, ensure_ascii=False))
    else:
        from rich.console import Console

        console = Console()
        console.print(verdict_table(result.report.to_json()))
        console.print("released:", result.body['choices'][0]['message']['content'], markup=False)
    raise typer.Exit(1 if result.detected else 0)


def _document(value: str) -> str:
    """``--context``: the text, or the file it names (as README's FILE_OR_TEXT)."""
    if "\n" not in value and len(value) < 4096:
        try:
            if Path(value).is_file():
                return Path(value).read_text(encoding="utf-8")
        except OSError:  # a text too long or odd for a path is the text
            pass
    return value


async def _check(cfg, docs: list[str], question: str, answer: str):
    from guardrail.engine.build import load_local_verifier

    if not answer.strip():
        raise typer.BadParameter("the answer is empty")
    verifier = load_local_verifier(cfg)
    try:
        return await guard(cfg, verifier, docs, question, answer)
    finally:
        await verifier.aclose()


async def guard(cfg, verifier, docs: list[str], question: str, answer: str):
    """One whole answer guarded as the proxy guards it with ``cfg``, by ``verifier``
    (`guardrail check`, `guardrail data label --prefill`)."""
    from guardrail.stream.pipeline import guarded_completion

    completion = {"choices": [{"index": 0, "message": {"role": "assistant",
                                                       "content": answer}}]}
    return await guarded_completion(completion, _settings(cfg, verifier, docs, question),
                                    verifier)


def _settings(cfg, verifier, docs: list[str], question: str):
    """How one answer is guarded, as the proxy guards it with ``cfg``."""
    from guardrail.evidence.judge import SentenceJudge
    from guardrail.stream.answer import GuardSettings
    from guardrail.stream.policy import resolve_policy
    from guardrail.types import Grounding

    params = verifier.info().judge if cfg.verification.sentence_judge else None
    keeps = verifier.info().keeps_answer
    budget, step = cfg.scheduler.left_context(keeps)
    return GuardSettings(Grounding(tuple(docs), question), resolve_policy(cfg),
                         cfg.verification, stream_id="check",
                         judge=SentenceJudge.from_json(params) if params else None,
                         left_context_chars=budget, left_context_step_chars=step,
                         final_by_sentence=keeps)


def verdict_table(report: dict):
    """A rich table of the guardrail object's sentences."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="guardrail verdicts", show_lines=True)
    for col in ("#", "LLM said", "verdict", "score", "exit", "client received", "full depth"):
        table.add_column(col, overflow="fold")
    styles = {"release": "green", "annotate": "yellow", "redact": "red",
              "regenerate": "magenta", "block": "bold red"}
    for s in report["sentences"]:
        final = s.get("final") or {}
        depth = "-" if not final else (
            f"{final['score']:.2f}" + (" flagged" if final["hallucinated"] else "")
            + (" (missed by shallow)" if final.get("missed_by_shallow") else ""))
        spans = escape(", ".join(repr(sp["text"]) for sp in s["spans"]))
        why = s.get("explanation")
        if why:  # contradicted / unverifiable, with its severity and what it rests on
            basis = f", {why['basis'].replace('_', ' ')}" if why.get("basis") else ""
            spans = (spans + "\n" if spans else "") + f"{why['kind']} ({why['severity']}{basis})"
        elif s.get("claim") is False:
            spans = "no claim"
        elif s.get("skipped") == "language":
            spans = "unchecked: a language the detector does not read"
        elif s.get("checked") and s["exit_layer"] is None:
            spans = "said by the grounding"  # settled without a model call
        action = s["action"] + (f" x{s['attempts']}" if s["attempts"] else "")
        table.add_row(str(s["index"]), escape(s["original"].strip()),
                      f"[{styles.get(s['action'], '')}]{action}[/]" + (f"\n{spans}" if spans
                                                                       else ""),
                      f"{s['score']:.2f}", str(s["exit_layer"] or "-"),
                      escape(s["released"].strip()), depth)
    return table


def demo(
    action: str = typer.Option("redact", callback=_action, help=f"{', '.join(ACTIONS)}."),
    script: Optional[Path] = typer.Option(None, help="A demo YAML (default: the built-in "
                                          "Eiffel Tower conversation, examples/demo.yaml)."),
    delay: Optional[float] = typer.Option(None, help="Seconds between streamed tokens."),
    model: Optional[str] = typer.Option(None, help="Detector weights (path or HF id)."),
) -> None:
    """Stream a scripted hallucination through guardrail, on loopback, and show verdicts."""
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel

    from guardrail.config import GuardrailConfig
    from guardrail.engine.build import load_local_verifier
    from guardrail.proxy.app import create_app
    from guardrail.testing.fake_upstream import ServerThread, create_fake_upstream, read_demo

    console = Console()
    try:
        messages, fake = read_demo(script)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--script") from None
    if delay is not None:
        fake.token_delay_s = delay
    model_or_exit(GuardrailConfig.model_validate({"detector": {"model": model}}))
    for m in messages:
        if m["role"] == "tool":
            console.print(Panel(escape(m["content"]), title="tool result (the grounding context)"))
    console.print(f"[bold]user:[/] {escape([m for m in messages if m['role'] == 'user'][-1]['content'])}")
    with console.status("loading the detector..."):
        cfg = GuardrailConfig.model_validate({"detector": {"model": model},
                                              "policy": {"action": action}})
        verifier = load_local_verifier(cfg)
    if verifier.detector.meta.get("placeholder"):
        console.print("[yellow]note: the default detector is an untrained placeholder; "
                      "its verdicts are arbitrary until the trained model ships.[/]")
    with ServerThread(create_fake_upstream(fake)) as up:
        cfg = GuardrailConfig.model_validate({
            "upstream": {"base_url": up.url + "/v1"}, "detector": {"model": model},
            "policy": {"action": action}})
        with ServerThread(create_app(cfg, verifier=verifier)) as proxy:
            _show_direct(console, up.url, messages, fake.model)
            report = _show_guarded(console, proxy.url, messages, fake.model)
    console.print(verdict_table(report))
    console.print(f"hallucination detected: [bold]{report['hallucination_detected']}[/]  "
                  f"action: [bold]{report['action']}[/]  spans: {report['span_count']}")


def _stream_chunks(url: str, messages: list, model: str):
    """Chat chunks from an OpenAI-compatible stream (httpx + our SSE decoder, so the demo
    needs no client SDK); an error event is yielded like a chunk and ends the stream."""
    import httpx

    from guardrail.stream.chunks import parse_chat_chunk
    from guardrail.stream.sse import SSEDecoder

    decoder = SSEDecoder()
    with httpx.stream("POST", url + "/v1/chat/completions", timeout=120,
                      json={"model": model, "messages": messages, "stream": True}) as r:
        r.raise_for_status()
        for data in r.iter_bytes():
            for event in decoder.feed(data):
                chunk = parse_chat_chunk(event)
                if chunk is None:
                    return
                yield chunk


def _content(chunk: dict) -> str:
    choices = chunk.get("choices") or [{}]
    return (choices[0].get("delta") or {}).get("content") or ""


def _show_direct(console, url: str, messages: list, model: str) -> None:
    console.rule("the LLM, direct (unchecked)")
    for chunk in _stream_chunks(url, messages, model):
        console.print(_content(chunk), end="", style="dim", markup=False)
    console.print()


def _show_guarded(console, url: str, messages: list, model: str) -> dict:
    from rich.markup import escape

    console.rule("through guardrail (what the client receives, sentence by sentence)")
    report: dict = {}
    t0 = time.perf_counter()
    for chunk in _stream_chunks(url, messages, model):
        text = _content(chunk)
        if text:
            style = "red" if "[unsupported]" in text else "green"
            console.print(f"[dim]+{time.perf_counter() - t0:5.2f}s[/] [{style}]{escape(text)}[/]")
        if "error" in chunk:
            console.print(f"[bold red]stream stopped: {escape(chunk['error']['message'])}[/]")
        report = chunk.get("guardrail", report)
    return report


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(check)
    app.command()(demo)
