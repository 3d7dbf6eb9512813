"""The FLARE-style regenerate hook, an HTTP service guardrail calls for a flagged sentence.

    python -m examples.flare.hook --port 8102 --upstream http://127.0.0.1:8101/v1

guardrail POSTs ``RegenerateRequest.to_json()`` to ``/rewrite``.  The hook blanks the
sentence's unsupported spans (as FLARE masks its low-confidence tokens), searches the
corpus with BM25 for the question plus the blanked sentence, asks the upstream (one
non-streaming chat call) to rewrite the sentence from the grounding plus the passages it
found, and answers ``{"text": rewrite, "documents": passages}``: guardrail adds the
passages to the answer's grounding and checks the rewrite, and the rest of the answer,
against it.  ``GET /stats`` lists every call (query, passages, timings).
``--withhold-documents`` (an ablation) rewrites from the passages but returns none.
"""

from __future__ import annotations

import argparse
import time
from collections import deque
from contextlib import asynccontextmanager
from typing import AsyncIterator, Collection, Optional, Sequence

import httpx
import uvicorn
from rank_bm25 import BM25Okapi
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from examples.flare.data import (BLANK, Passage, RewritePrompt, load_corpus,
                                 rewrite_prompt, system_message, words)


def mask(sentence: str, spans: Sequence[dict]) -> str:
    """``sentence`` with each unsupported span blanked.  Spans are character offsets
    into it; one whose offsets do not hold its text is found by its text instead."""
    cuts: list[tuple[int, int]] = []
    for sp in spans:
        start, end, text = int(sp["start"]), int(sp["end"]), str(sp.get("text", ""))
        if text and sentence[start:end] != text:
            start = sentence.find(text)
            end = start + len(text)
        if 0 <= start < end <= len(sentence):
            cuts.append((start, end))
    out, pos = [], 0
    for start, end in sorted(cuts):
        if start >= pos:
            out += [sentence[pos:start], BLANK]
            pos = end
    return "".join(out) + sentence[pos:]


class Retriever:
    """BM25 (Okapi) over the corpus passages, with the example's word tokens."""

    def __init__(self, passages: Sequence[Passage]):
        self.passages = list(passages)
        self.bm25 = BM25Okapi([words(p.text) for p in self.passages])

    def ranked(self, query: str) -> list[tuple[Passage, float]]:
        scores = self.bm25.get_scores(words(query))
        order = sorted(range(len(self.passages)), key=lambda i: -scores[i])
        return [(self.passages[i], float(scores[i])) for i in order]

    def search(self, query: str, k: int, exclude: Collection[str] = ()) -> list[Passage]:
        """The top ``k`` passages with a positive score whose text is not in ``exclude``."""
        skip = {e.strip() for e in exclude}
        hits = [p for p, s in self.ranked(query) if s > 0 and p.text.strip() not in skip]
        return hits[:k]


def query_for(question: str, masked: str) -> str:
    """FLARE's implicit query (the masked sentence), with the question for its topic."""
    return f"{question} {masked.replace(BLANK, ' ')}"


class FlareHook:
    """Search, then one rewrite call to the upstream; every call logged (the last 10,000)."""

    def __init__(self, retriever: Retriever, upstream: str, client: httpx.AsyncClient,
                 k: int = 3, timeout_s: float = 10.0, withhold: bool = False):
        self.retriever, self.upstream, self.client = retriever, upstream.rstrip("/"), client
        self.k, self.timeout_s, self.withhold = k, timeout_s, withhold
        self.calls: deque[dict] = deque(maxlen=10_000)

    async def rewrite(self, req: dict) -> dict:
        t0 = time.perf_counter()
        context = [str(d) for d in req.get("context", [])]
        question, sentence = str(req.get("question", "")), str(req.get("sentence", ""))
        masked = mask(sentence, req.get("spans", []))
        query = query_for(question, masked)
        found = self.retriever.search(query, self.k, exclude=context)
        present = {c.strip() for c in context}
        had = [p.id for p in self.retriever.passages if p.text.strip() in present]
        t1 = time.perf_counter()
        prompt = RewritePrompt(question, masked, tuple(req.get("previous", [])),
                               str(req.get("answer_so_far", "")))
        body = {"model": req.get("model") or "flare-extractive", "stream": False,
                "temperature": 0.0, "max_tokens": 200, "messages": [
                    {"role": "system",
                     "content": system_message(context + [p.text for p in found])},
                    {"role": "user", "content": rewrite_prompt(prompt)}]}
        r = await self.client.post(self.upstream + "/chat/completions", json=body,
                                   timeout=self.timeout_s)
        r.raise_for_status()
        text = str(r.json()["choices"][0]["message"].get("content") or "")
        t2 = time.perf_counter()
        self.calls.append({
            "question": question, "sentence": sentence, "masked": masked, "query": query,
            "attempt": req.get("attempt"), "in_context": had,
            "retrieved": [p.id for p in found], "text": text,
            "retrieval_ms": round((t1 - t0) * 1e3, 2), "upstream_ms": round((t2 - t1) * 1e3, 2),
            "total_ms": round((t2 - t0) * 1e3, 2)})
        return {"text": text, "documents": [] if self.withhold else [p.text for p in found]}


def create_app(upstream: str, k: int = 3, withhold: bool = False) -> Starlette:
    retriever = Retriever(list(load_corpus().values()))
    state: dict[str, FlareHook] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient() as client:
            state["hook"] = FlareHook(retriever, upstream, client, k, withhold=withhold)
            yield

    async def rewrite(request: Request) -> Response:
        req = await request.json()
        if not isinstance(req, dict) or not isinstance(req.get("sentence"), str):
            return JSONResponse({"error": "expected a RegenerateRequest as JSON"}, 400)
        return JSONResponse(await state["hook"].rewrite(req))

    async def stats(request: Request) -> Response:
        return JSONResponse({"k": k, "corpus": len(retriever.passages), "withhold": withhold,
                             "calls": list(state["hook"].calls)})

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/rewrite", rewrite, methods=["POST"]),
                             Route("/stats", stats), Route("/healthz", healthz)],
                     lifespan=lifespan)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8102)
    parser.add_argument("--upstream", default="http://127.0.0.1:8101/v1",
                        help="the LLM server's base URL (the rewrite call goes there)")
    parser.add_argument("--k", type=int, default=3, help="passages retrieved per call")
    parser.add_argument("--withhold-documents", action="store_true",
                        help="ablation: rewrite from the passages but return no documents")
    args = parser.parse_args(argv)
    uvicorn.run(create_app(args.upstream, args.k, args.withhold_documents),
                host=args.host, port=args.port,
                log_level="warning")


if __name__ == "__main__":
    main()
