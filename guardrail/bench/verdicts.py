"""What reaches the client: labelled answers streamed through the real proxy.

For every labelled example, a scripted upstream streams the answer word piece by word
piece (``fake: {"mode": "raw"}``) to a real proxy on loopback with the shipped
defaults, the grounding as a ``tool`` message (the copilot/agent case) and the question
as the user turn.  The report on the finish chunk says what the client received for
each sentence; a sentence is *stopped* when what was released differs from what the
upstream said (redacted, regenerated, blocked), *kept* when it is verbatim.  Gold: a
sentence is unsupported when it overlaps a labelled span.

    supported_kept        share of supported sentences released verbatim (trust first)
    unsupported_stopped   share of unsupported sentences stopped (recall)
    stop_f1               F1 of "stopped" against "unsupported"

and what the end-of-stream full-depth pass says of the same sentences (it annotates
the report; nothing it says changes what the client got): ``final``, with
``supported_clear`` (share of supported sentences it does not flag),
``unsupported_flagged`` and ``f1``; per data set and overall, in JSON.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import httpx

from guardrail.testing.script import chat_events


@dataclass(frozen=True)
class Outcome:
    dataset: str
    gold: bool        # overlaps a gold span
    stopped: bool     # released differently from what the upstream said
    claim: bool
    example: str = ""
    original: str = ""
    released: str = ""
    explanation: Optional[dict] = None
    final: Optional[bool] = None  # the final pass flagged it (None: it gave no verdict)
    exit_layer: Optional[int] = None  # of its in-flight check (None: none ran)
    checked: bool = True  # False: released without a verdict (code, a failed check)

    def to_json(self) -> dict:
        return {"example": self.example, "dataset": self.dataset, "gold": self.gold,
                "stopped": self.stopped, "claim": self.claim, "original": self.original,
                "released": self.released, "explanation": self.explanation,
                "final": self.final, "exit_layer": self.exit_layer, "checked": self.checked}


def _report(text: str) -> Optional[dict]:
    for line in text.splitlines():
        if line.startswith("data:") and '"guardrail"' in line:
            event = json.loads(line[5:].strip())
            if "guardrail" in event:
                return event["guardrail"]
    return None


def messages(ex: Any) -> list[dict]:
    """The chat an agent sends: the question, a tool call per tool result and each
    result in its own ``tool`` message (one, the context, when the example has no
    separate ``documents``)."""
    results = list(getattr(ex, "documents", ())) or [ex.context]
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": "lookup", "arguments": "{}"}}
             for i in range(1, len(results) + 1)]
    return [{"role": "user", "content": ex.question or "Answer from the tool."},
            {"role": "assistant", "content": None, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": c["id"], "content": r}
              for c, r in zip(calls, results))]


def as_json(response: str) -> tuple[str, list[int]]:
    """``response`` as the JSON answer ``{"answer": response}`` (a structured-output
    client's), and for each of its characters the offset in ``response`` it spells
    (-1: the document's syntax)."""
    text, where = '{"answer": "', [-1] * len('{"answer": "')
    for i, ch in enumerate(response):
        enc = json.dumps(ch, ensure_ascii=False)[1:-1]
        text += enc
        where += [i] * len(enc)
    return text + '"}', where + [-1, -1]


def stream_one(client: httpx.Client, ex: Any, answer: str = "text") -> list[Outcome]:
    """Stream one example through the proxy; an outcome per sentence of its report.
    ``answer="json"``: the upstream answers ``{"answer": ...}`` to a request for a
    JSON object (``response_format``), and each sentence is placed back in the
    response by the characters of its value."""
    sent, where = as_json(ex.response) if answer == "json" else \
        (ex.response, list(range(len(ex.response))))
    body = {"model": "fake-llm", "stream": True, "messages": messages(ex),
            "fake": {"mode": "raw", "events": chat_events(sent)}}
    if answer == "json":
        body["response_format"] = {"type": "json_object"}
    for attempt in range(30):
        r = client.post("/v1/chat/completions", json=body)
        if r.status_code != 503:
            break
        time.sleep(float(r.headers.get("retry-after", "1")))
    r.raise_for_status()
    report = _report(r.text)
    if report is None:
        raise RuntimeError(f"{ex.id}: no report in the stream")
    out, pos = [], 0
    for s in report["sentences"]:
        at = sent.find(s["original"], pos)
        at = pos if at < 0 else at
        pos = at + len(s["original"])
        chars = [i for i in where[at:pos] if i >= 0]
        start, end = (chars[0], chars[-1] + 1) if chars else (0, 0)
        gold = any(a < end and b > start for a, b in ex.spans)
        stopped = s["released"] != s["original"] or s["action"] == "block"
        if ex.response[start:end].strip():
            out.append(Outcome(ex.dataset, gold, stopped, s.get("claim", True),
                               str(ex.id), s["original"], s["released"],
                               s.get("explanation"),
                               s["final"]["hallucinated"] if s.get("final") else None,
                               s.get("exit_layer"), s.get("checked", True)))
    return out


def summarise(outcomes: Sequence[Outcome]) -> dict:
    kept, stopped, p, f1 = _rates(outcomes, [o.stopped for o in outcomes])
    return {"sentences": len(outcomes), "unsupported": sum(o.gold for o in outcomes),
            "supported_kept": kept, "unsupported_stopped": stopped,
            "stop_precision": round(p, 4), "stop_f1": f1,
            # claims released with no model call: the grounding settled them
            "settled": sum(o.claim and o.checked and o.exit_layer is None for o in outcomes),
            "final": _final([o for o in outcomes if o.final is not None])}


def _rates(outcomes: Sequence[Outcome], flags: Sequence[bool]) -> tuple:
    """Against the labels, of ``flags`` (one per outcome): the share of supported
    sentences not flagged, of unsupported ones flagged (None without any), the
    precision and F1."""
    sup = [f for o, f in zip(outcomes, flags) if not o.gold]
    uns = [f for o, f in zip(outcomes, flags) if o.gold]
    tp, fp = sum(uns), sum(sup)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / len(uns) if uns else 0.0
    return (round(1 - fp / len(sup), 4) if sup else None, round(r, 4) if uns else None, p,
            round(2 * p * r / (p + r), 4) if p + r else 0.0)


def _final(outcomes: Sequence[Outcome]) -> Optional[dict]:
    """The final pass's flags on the sentences it judged, against the labels."""
    if not outcomes:
        return None
    clear, flagged, _, f1 = _rates(outcomes, [bool(o.final) for o in outcomes])
    return {"sentences": len(outcomes), "supported_clear": clear,
            "unsupported_flagged": flagged, "f1": f1}


def run(examples: Sequence[Any], *, config: Any = None, progress: bool = False,
        sentences: Optional[list] = None, answer: str = "text") -> dict:
    """Stream every example through a real proxy: shipped defaults, or ``config(url)``
    (a GuardrailConfig for the upstream at ``url``).  Each sentence's outcome is
    appended to ``sentences`` when given; ``answer``: as ``stream_one``."""
    from guardrail.config import GuardrailConfig
    from guardrail.proxy.app import create_app
    from guardrail.testing.fake_upstream import ServerThread, create_fake_upstream

    outcomes: list[Outcome] = []
    t0 = time.perf_counter()
    with ServerThread(create_fake_upstream()) as up:
        cfg = config(up.url + "/v1") if config else GuardrailConfig.model_validate(
            {"upstream": {"base_url": up.url + "/v1", "api_key": "sk-bench"}})
        with ServerThread(create_app(cfg)) as proxy, \
                httpx.Client(base_url=proxy.url, timeout=300) as client:
            for i, ex in enumerate(examples):
                outcomes += stream_one(client, ex, answer)
                if progress and (i + 1) % 25 == 0:
                    print(f"  {i + 1}/{len(examples)} answers streamed", flush=True)
            engine = _engine_counts(client.get("/metrics").text)
    from guardrail.train.judge import source

    if sentences is not None:
        sentences += [o.to_json() for o in outcomes]
    by = {"all": summarise(outcomes)}
    names = {o.dataset for o in outcomes}
    families = {source(n) for n in names if n.count("/") >= 2}
    for name in sorted(names | families):  # toolctx/dev/json-array, and toolctx/dev
        by[name] = summarise([o for o in outcomes if o.dataset == name
                              or o.dataset.startswith(name + "/")])
    return {"kind": "verdicts", "answers": len(examples), "answer": answer,
            "seconds": round(time.perf_counter() - t0, 1), "engine": engine, "by_dataset": by}


def _engine_counts(metrics: str) -> dict:
    """From the proxy's /metrics: the checks its engine ran and how many of them joined
    a waiting check of their stream (``engine.coalesce``)."""
    from prometheus_client.parser import text_string_to_metric_families

    out = {"checks_done": 0, "coalesced_checks": 0}
    for family in text_string_to_metric_families(metrics):
        for s in family.samples:
            if s.name == "guardrail_scheduler_checks_total" and s.labels.get("outcome") == "done":
                out["checks_done"] = int(s.value)
            elif s.name == "guardrail_scheduler_coalesced_checks_total":
                out["coalesced_checks"] = int(s.value)
    return out
