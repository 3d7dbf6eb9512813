"""A small extractive OpenAI-compatible LLM server: it answers from the documents it is
given, and guesses when they lack the answer.

    python -m examples.flare.upstream --port 8101

Documents are the ``<document>`` bodies of the system message and the content of tool
messages.  It stands in for an LLM that reads its documents well and guesses when they
lack the answer: the question set (questions.jsonl) gives each question its gold answer
and a scripted ``guess``.  An answer is the first document's opening sentence, then the
answering sentence (the document sentence holding the gold answer; the ``guess``, a
plausible unsupported claim, when no document holds it), then the sentence that best
matches the question.  A rewrite request (``data.rewrite_prompt``) is answered with the
answering sentence when the documents now hold it, else with the sentence that best
matches the question and the blanked sentence (words the answer so far has count half);
never with a sentence already said or rejected.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import time
import uuid
from typing import AsyncIterator, Optional, Sequence

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from examples.flare.data import (Question, RewritePrompt, documents_in, load_questions,
                                 parse_rewrite_prompt, sentences, words)

_PIECE = re.compile(r"\s*\S+")
MODEL = "flare-extractive"


def _text(content: object) -> str:
    """A message's text (a string, or the text parts of a content list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def read_documents(messages: Sequence[dict]) -> list[str]:
    docs: list[str] = []
    for m in messages:
        if m.get("role") == "system":
            docs += documents_in(_text(m.get("content")))
        elif m.get("role") in ("tool", "function"):
            docs.append(_text(m.get("content")).strip())
    return [d for d in docs if d]


_SUFFIX = re.compile(r"(?:ing|ed|er)$")


def _stems(text: str) -> set[str]:
    """Crude stems: a suffix cut, then five letters ("landed" ~ "land")."""
    return {_SUFFIX.sub("", w)[:5] if len(w) > 5 else w for w in words(text)}


def best(candidates: Sequence[str], query: str, known: str = "") -> Optional[str]:
    """The candidate whose shared words with ``query`` weigh most (the first on a tie),
    a word weighing its inverse frequency among the candidates, half as much when
    ``known`` (the answer so far) has it already; None when none shares a word."""
    cands = [(c, _stems(c)) for c in candidates]
    df: dict[str, int] = {}
    for _, stems in cands:
        for w in stems:
            df[w] = df.get(w, 0) + 1
    q, said = _stems(query), _stems(known)
    top, top_score = None, 0.0
    for c, stems in cands:
        score = sum(math.log(1 + len(cands) / df[w]) * (0.5 if w in said else 1.0)
                    for w in q & stems)
        if score > top_score:
            top, top_score = c, score
    return top


class Extractor:
    """The server's "model": pure functions of the request's documents."""

    def __init__(self, questions: Sequence[Question]):
        self.by_text = {q.question.strip(): q for q in questions}

    def answering(self, question: str, pool: Sequence[str]) -> Optional[str]:
        """The sentence of ``pool`` holding the question's gold answer (the best-matching
        one), None when none does or the question is not from the question set."""
        item = self.by_text.get(question.strip())
        holding = [s for s in pool if item and item.answer.lower() in s.lower()]
        return best(holding, question) or (holding[0] if holding else None)

    def answer(self, question: str, documents: Sequence[str]) -> str:
        pool = [s for d in documents for s in sentences(d)]
        lead = pool[0] if pool else None  # the first document's opening sentence
        item = self.by_text.get(question.strip())
        core = self.answering(question, pool) or (item.guess if item else best(pool, question))
        said = [s for s in (lead, core) if s]
        tail = best([s for s in pool if s not in said], question)
        return " ".join(dict.fromkeys(said + ([tail] if tail else []))) \
            or "The documents do not say."

    def rewrite(self, p: RewritePrompt, documents: Sequence[str]) -> str:
        """The answering sentence, else the best-matching one, neither said already nor
        rejected ('' when none matches: guardrail then redacts)."""
        used = {s.strip() for s in sentences(p.answer_so_far)} | set(p.rejected)
        pool = [s for d in documents for s in sentences(d) if s not in used]
        return self.answering(p.question, pool) \
            or best(pool, f"{p.question} {p.sentence}", p.answer_so_far) or ""

    def reply(self, body: dict) -> str:
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
        last = users[-1] if users else ""
        documents = read_documents(messages)
        prompt = parse_rewrite_prompt(last)
        return self.rewrite(prompt, documents) if prompt else self.answer(last, documents)


def _chunk(cid: str, created: int, delta: dict, finish: Optional[str] = None) -> bytes:
    body = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


async def _stream(reply: str, delay: float, usage: Optional[dict]) -> AsyncIterator[bytes]:
    cid, created = "chatcmpl-" + uuid.uuid4().hex[:12], int(time.time())
    yield _chunk(cid, created, {"role": "assistant", "content": ""})
    for piece in _PIECE.findall(reply):
        await asyncio.sleep(delay)
        yield _chunk(cid, created, {"content": piece})
    yield _chunk(cid, created, {}, "stop")
    if usage is not None:
        body = {"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": MODEL, "choices": [], "usage": usage}
        yield b"data: " + json.dumps(body).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


def create_app(questions: Sequence[Question], delay: float) -> Starlette:
    model = Extractor(questions)

    async def chat(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": {"message": "body is not JSON"}}, 400)
        reply = model.reply(body)
        n = len(_PIECE.findall(reply))
        usage = {"prompt_tokens": 0, "completion_tokens": n, "total_tokens": n}
        if body.get("stream"):
            want = (body.get("stream_options") or {}).get("include_usage")
            return StreamingResponse(_stream(reply, delay, usage if want else None),
                                     media_type="text/event-stream")
        return JSONResponse({
            "id": "chatcmpl-" + uuid.uuid4().hex[:12], "object": "chat.completion",
            "created": int(time.time()), "model": MODEL, "usage": usage,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}]})

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/v1/models", models)])


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8101)
    parser.add_argument("--delay", type=float, default=0.02,
                        help="seconds between streamed word pieces")
    args = parser.parse_args(argv)
    uvicorn.run(create_app(load_questions(), args.delay), host=args.host, port=args.port,
                log_level="warning")


if __name__ == "__main__":
    main()
