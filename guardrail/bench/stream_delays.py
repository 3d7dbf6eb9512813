"""The stream benchmark's analysis: what each client saw, against what the upstream sent.

Per stream: the release delay of every sentence (its last token leaves the upstream ->
the released sentence reaches the client), whether the stream fell behind its
upstream, TTFT and chunk counts; per configuration: the verifier's counters that grew
during it (checks by exit, batches, queueing vs model time, cache hits).  Pure
functions of recorded timestamps and bytes.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from guardrail.bench import percentile

REDACT_MARKER = "[unsupported]"


@dataclass
class Trace:
    """What one client saw."""

    key: tuple[str, str, int]
    start: float
    reads: list[tuple[float, bytes]] = field(default_factory=list)
    status: int = 0
    error: Optional[str] = None
    cut: bool = False


def _events(reads: list[tuple[float, bytes]]) -> list[tuple[float, Any]]:
    """(time, parsed data) of every SSE event; data is a dict, or "[DONE]"."""
    from guardrail.stream.sse import SSEDecoder

    dec, out = SSEDecoder(), []
    for t, b in reads:
        for ev in dec.feed(b):
            if ev.data.strip() == "[DONE]":
                out.append((t, "[DONE]"))
            elif ev.data.strip():
                try:
                    out.append((t, json.loads(ev.data)))
                except ValueError:
                    out.append((t, {"error": {"message": "unparseable event"}}))
    return out


def _content(chunk: Any) -> str:
    if not isinstance(chunk, dict):
        return ""
    return "".join((c.get("delta") or {}).get("content") or "" for c in chunk.get("choices") or ()
                   if isinstance(c, dict) and c.get("index", 0) == 0)


def content_timeline(reads) -> tuple[list[float], list[int], str, list[Any]]:
    """Times and cumulative characters of choice 0's content, the text, and all events."""
    events = _events(reads)
    times, cum, parts, n = [], [], [], 0
    for t, ev in events:
        text = _content(ev)
        if text:
            n += len(text)
            times.append(t)
            cum.append(n)
            parts.append(text)
    return times, cum, "".join(parts), events


def time_at(times: list[float], cum: list[int], offset: int) -> Optional[float]:
    i = bisect.bisect_left(cum, offset)
    return times[i] if i < len(times) else None


def align(answer: str, released: list[str], marker: str = REDACT_MARKER) -> list[int]:
    """End offset in ``answer`` of the last visible character of each released piece
    (redactions matched around)."""
    ends, pos, end = [], 0, 0
    for text in released:
        for piece in (p for p in text.split(marker) if p.strip()):
            j = answer.find(piece, pos)
            if j >= 0:
                pos = j + len(piece)
                end = j + len(piece.rstrip())
        ends.append(end)
    return ends


def sentence_ends(answer: str, released: list[str], report: Optional[dict]) -> list[int]:
    """Where each sentence behind the released chunks ends in the upstream answer: its
    last visible character (the sentence is complete when its last token is sent)."""
    if report:
        verdicts = [v for v in report.get("sentences", []) if v.get("released")]
        originals = [v.get("original", "") for v in report.get("sentences", [])]
        if len(verdicts) == len(released) and "".join(originals) == answer:
            ends, pos = {}, 0
            for v in report["sentences"]:
                ends[v["index"]] = pos + len(v.get("original", "").rstrip())
                pos += len(v.get("original", ""))
            return [ends[v["index"]] for v in verdicts]
    return align(answer, released)


def lag_slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of release delay over upstream time (s of delay per s)."""
    if len(points) < 3:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return 0.0 if var <= 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var


def _dist(ms: list[float]) -> dict:
    if not ms:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None}
    return {"n": len(ms), "p50": round(percentile(ms, 50), 3), "p95": round(percentile(ms, 95), 3),
            "p99": round(percentile(ms, 99), 3), "max": round(max(ms), 3)}


# A stream has fallen behind its upstream when it was cut at the deadline, or when its
# release delay keeps growing: least-squares slope over >= 5 sentences above 0.1 s per s
# of upstream time AND a total growth over the stream above 0.5 s (so jitter on a short
# stream does not count).
BEHIND_SLOPE = 0.1
BEHIND_GROWTH_S = 0.5


def fell_behind(points: list[tuple[float, float]]) -> tuple[bool, float]:
    slope = lag_slope(points)
    span = points[-1][0] - points[0][0] if points else 0.0
    return len(points) >= 5 and slope > BEHIND_SLOPE and slope * span > BEHIND_GROWTH_S, slope


def analyse(traces: list[Trace], upstream: dict, *, checked: bool) -> dict:
    delays, transport, ttft, behind, errors, slopes, done = [], [], [], 0, [], [], []
    chunks, flagged, sentences, ok = 0, 0, 0, 0
    first = min((t.start for t in traces), default=0.0)
    last = first
    for tr in traces:
        up_t, up_cum, answer, up_events = content_timeline(upstream.get(tr.key, []))
        down_t, down_cum, _text, events = content_timeline(tr.reads)
        ends = [next((t for t, e in evs if e == "[DONE]"), None) for evs in (up_events, events)]
        if None not in ends:  # the end-of-stream pass runs between the two
            done.append((ends[1] - ends[0]) * 1000)
        last = max([last] + [t for t, _ in tr.reads])
        report = next((e["guardrail"] for _, e in events
                       if isinstance(e, dict) and isinstance(e.get("guardrail"), dict)), None)
        err = next((e["error"] for _, e in events if isinstance(e, dict) and e.get("error")),
                   None)
        if tr.error or err or tr.status != 200:
            errors.append(tr.error or (err or {}).get("message") or f"HTTP {tr.status}")
        elif not tr.cut:
            ok += 1
        chunks += len(down_t)
        if down_t:
            ttft.append((down_t[0] - tr.start) * 1000)
        if report:
            flagged += sum(v.get("action") != "release" for v in report.get("sentences", []))
        if checked:
            released = [_content(e) for _, e in events if _content(e)]
            ends = sentence_ends(answer, released, report)
            points = []
            for t_down, end in zip(down_t, ends):
                t_up = time_at(up_t, up_cum, end)
                if t_up is not None:
                    delays.append((t_down - t_up) * 1000)
                    points.append((t_up, t_down - t_up))
            sentences += len(points)
            late, slope = fell_behind(points)
            slopes.append(slope)
            behind += tr.cut or late
        else:
            for m in re.finditer(r"[.!?](?=\s|$)", answer):
                a, b = time_at(up_t, up_cum, m.end()), time_at(down_t, down_cum, m.end())
                if a is not None and b is not None:
                    transport.append((b - a) * 1000)
    wall = max(1e-9, last - first)
    return {
        "streams_ok": ok, "streams_cut": sum(t.cut for t in traces),
        "streams_failed": len(errors), "errors": sorted(set(errors))[:5],
        "wall_s": round(wall, 3), "chunks": chunks,
        # all streams together, first request sent to last byte read: reads coalesce
        # events, so spacing between content events would overstate a burst
        "chunks_per_s": round(chunks / wall, 2),
        "ttft_ms": _dist(ttft),
        "release_delay_ms": _dist(delays) if checked else None,
        # the client's [DONE] after the upstream's: the end-of-stream pass and the report
        "done_delay_ms": _dist(done) if checked else None,
        "transport_delay_ms": None if checked else _dist(transport),
        "sentences_released": sentences if checked else None,
        "sentences_acted_on": flagged if checked else None,
        "streams_behind": behind if checked else None,
        "max_lag_slope": round(max(slopes, default=0.0), 4) if checked else None,
    }


# -- a configuration's verifier counters ------------------------------------------------------

def diff(after: dict, before: dict) -> dict:
    """Counters that grew during a configuration (nested dicts of numbers)."""
    out = {}
    for k, v in after.items():
        b = before.get(k)
        if isinstance(v, dict):
            out[k] = diff(v, b if isinstance(b, dict) else {})
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v - (b if isinstance(b, (int, float)) else 0)
    return out


def check_stats(stats: dict, wall: float) -> dict:
    exits: dict[str, dict[str, int]] = {"in_flight": {}, "end_of_stream": {}}
    for k, n in (stats.get("exits") or {}).items():
        prio, _, layer = k.partition("@")
        if n:
            exits.setdefault(prio, {})[layer] = n
    in_flight = sum(exits["in_flight"].values())
    out: dict = {"in_flight": in_flight, "end_of_stream": sum(exits["end_of_stream"].values()),
                 "failed": stats.get("failed", 0), "rejected": stats.get("rejected", 0),
                 "exits": exits,
                 "sentences_checked_per_s": round(in_flight / wall, 3)}
    sch = stats.get("scheduler")
    if sch:
        sizes = {int(k): v for k, v in (sch.get("batch_sizes") or {}).items() if v}
        out["batches"] = {
            "count": sch.get("batches", 0),
            "mean_size": round(sch["sequences"] / sch["batches"], 2) if sch.get("batches") else 0,
            "sizes": dict(sorted(sizes.items())),
            "padding_ratio": round(sch["padded_tokens"] / sch["real_tokens"], 3)
            if sch.get("real_tokens") else None,
            "shallower_exits": sch.get("shallower_exits", 0),
            "coalesced_checks": sch.get("checks_coalesced", 0),
            # release delay split: a batch's sequences waited (queued -> forward starts)
            # and the forward took, mean per batch, all batches and in-flight ones
            "mean_queue_wait_ms": _per(sch.get("queue_wait_s"), sch.get("batches")),
            "mean_model_ms": _per(sch.get("model_s"), sch.get("batches")),
            "in_flight_mean_queue_wait_ms": _per(sch.get("in_flight_queue_wait_s"),
                                                 sch.get("in_flight_batches")),
            "in_flight_mean_model_ms": _per(sch.get("in_flight_model_s"),
                                            sch.get("in_flight_batches"))}
        ctx = sch.get("contexts") or {}
        out["context_cache"] = {"hits": ctx.get("local_hits", 0) + ctx.get("redis_hits", 0),
                                "misses": ctx.get("misses", 0)}
        if ans := sch.get("answer_states"):  # answer blocks: checks that read a kept prefix
            out["answer_states"] = {"kept": ans.get("builds", 0), "reused": ans.get("hits", 0),
                                    "resumed": ans.get("resumed", 0)}
    return out


def _per(seconds: Optional[float], batches: Optional[int]) -> Optional[float]:
    return round(1000 * seconds / batches, 3) if batches and seconds is not None else None


def upstream_rate(traces: list[Trace], upstream: dict) -> Optional[float]:
    rates = []
    for tr in traces:
        events = upstream.get(tr.key, [])
        times, _cum, _text, _ = content_timeline(events)
        if len(times) > 2 and times[-1] > times[0]:
            rates.append((len(times) - 1) / (times[-1] - times[0]))
    return round(percentile(rates, 50), 2) if rates else None
