"""The stream benchmark's workloads and the timed fake upstream that plays them.

Each stream gets a context of an exact token count and a scripted answer built from
that context's sentences (a share replaced by sentences from outside it).  The fake
upstream (``guardrail.fake_upstream``) plays the answers; ``TimedUpstream`` records
when each SSE event leaves it, keyed by the tag in the request (``[c<config>:<size>-s<i>]``).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass

_TAG = re.compile(rb"\[(c\d+):(\w+)-s(\d+)\]")


@dataclass(frozen=True)
class Workload:
    """One stream's request: its documents, the scripted answer and its tag."""

    key: str                      # "<context size>-s<i>": selects the scripted answer
    documents: tuple[str, ...]
    answer: str
    hallucinated: int             # sentences replaced by one from outside the context

    def body(self, config_id: str, delay: float, *, checked: bool) -> dict:
        size, _, i = self.key.partition("-s")
        docs = [f"(document set {config_id})"] + list(self.documents)
        body: dict = {"model": "fake-llm", "stream": True,
                      "messages": [{"role": "user", "content":
                                    f"[{config_id}:{size}-s{i}] What do the documents say?"}],
                      "fake": {"delay": delay}}
        if checked:
            body["guardrail"] = {"context": docs}
        return body


def _cut_to_tokens(tokenizer, parts: list[str], n_tokens: int) -> list[str]:
    out, total = [], 0
    for p in parts:
        enc = tokenizer(p, add_special_tokens=False, return_offsets_mapping=True)
        n = len(enc["input_ids"])
        if total + n > n_tokens:
            keep = n_tokens - total
            if keep > 0:
                out.append(p[:enc["offset_mapping"][keep - 1][1]])
            return out
        out.append(p)
        total += n
    return out


def build_workloads(tokenizer, docs: list[str], n: int, context_tokens: int, answer_tokens: int,
                    hallucination_rate: float, seed: int) -> list[Workload]:
    """``n`` streams: each a context of exactly ``context_tokens`` tokens (documents taken
    in turn from ``docs``) and an answer of its sentences, a ``hallucination_rate``
    share of them replaced by sentences of documents outside the context."""
    from guardrail.testing.fake_upstream import split_pieces
    from guardrail.train.perturb import split_sentences, usable

    rng = random.Random(seed * 1000 + context_tokens)
    out = []
    for i in range(n):
        start = (i * 3) % len(docs)
        parts, j = [], start
        while sum(len(p) for p in parts) < context_tokens * 8:  # chars >> tokens
            parts.append(docs[j % len(docs)])
            j += 1
        parts = _cut_to_tokens(tokenizer, parts, context_tokens)
        inside = [s for p in parts for s in split_sentences(p) if usable(s)] or \
            [s for p in parts for s in split_sentences(p)] or parts
        text = "\n".join(parts)
        outside = [s for d in (docs[(start + len(docs) // 2 + k) % len(docs)] for k in range(3))
                   for s in split_sentences(d) if usable(s) and s not in text]
        sentences, pieces, bad, k = [], 0, 0, 0
        while pieces < answer_tokens:
            s = inside[k % len(inside)]
            k += 1
            if outside and rng.random() < hallucination_rate:
                s, bad = rng.choice(outside), bad + 1
            sentences.append(s)
            pieces += len(split_pieces(s))
        out.append(Workload(f"{context_tokens}-s{i}", _grouped(parts), " ".join(sentences),
                            bad))
    return out


def _grouped(parts: list[str], most: int = 32) -> tuple[str, ...]:
    """At most ``most`` documents (a 32K context is ~100 passages, past the default
    ``context.max_documents``): consecutive passages joined as the detector joins
    documents, so the context the model reads is the same."""
    size = -(-len(parts) // most)
    return tuple("\n\n".join(p.strip() for p in parts[i:i + size])
                 for i in range(0, len(parts), size))


# -- the timed fake upstream ----------------------------------------------------------------

class TimedUpstream:
    """ASGI wrapper recording when each response body chunk of a tagged request leaves."""

    def __init__(self, app):
        self.app = app
        self.sent: dict[tuple[str, str, int], list[tuple[float, bytes]]] = {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        msgs, body = [], b""
        while True:
            m = await receive()
            msgs.append(m)
            body += m.get("body", b"")
            if m["type"] != "http.request" or not m.get("more_body"):
                break
        found = _TAG.search(body)
        log = None
        if found:
            key = (found.group(1).decode(), found.group(2).decode(), int(found.group(3)))
            log = self.sent.setdefault(key, [])

        async def replay():
            return msgs.pop(0) if msgs else await receive()

        async def timed(message):
            await send(message)
            if log is not None and message["type"] == "http.response.body" and \
                    message.get("body"):
                log.append((time.perf_counter(), message["body"]))

        await self.app(scope, replay, timed)


def probe_body(w: Workload, exits: list[int], repeats: int, left_context_chars: int) -> dict:
    """The check a scheduler runs for one mid-answer sentence: its left context trimmed
    as the scheduler trims it, against the stream's whole context."""
    from guardrail.stream.textlog import trim_left

    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", w.answer)] or [len(w.answer)]
    k = min(3, len(ends) - 1)
    start, end = (ends[k - 1] + 1 if k else 0), ends[k]
    cut = trim_left(w.answer, start, left_context_chars)
    return {"documents": list(w.documents), "question": "What do the documents say?",
            "response": w.answer[cut:end], "exits": exits, "repeats": repeats}


def fake_script(workloads: dict[str, list[Workload]]):
    from guardrail.testing.fake_upstream import FakeScript, Rule

    rules = [Rule(match=f":{w.key}]", reply=w.answer) for ws in workloads.values() for w in ws]
    return FakeScript(rules=rules, model="fake-llm")
