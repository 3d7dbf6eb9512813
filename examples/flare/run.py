"""Run the FLARE example end to end and report what happened.

    .venv/bin/python -m examples.flare [--questions ID,ID] [--limit N] [--out PATH]

Starts the extractive upstream, the FLARE hook and ``guardrail serve`` (real processes on
loopback), then streams every question three times: straight to the upstream, through
guardrail with ``policy.action: annotate`` (checked, no hook), and through guardrail with
the config's ``regenerate`` + hook.  Prints the counts and latencies and writes them,
with every answer and its ``guardrail`` object, as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

import httpx

from examples.flare.data import HERE, Question, load_corpus, load_questions, system_message
from examples.flare.report import render, summarize
from examples.flare.services import Services, StreamResult, stream_chat

WARMUP = "What is the Eiffel Tower?"


def request(q: Question, documents: Sequence[str], action: Optional[str]) -> dict:
    body: dict = {"model": "flare-extractive", "stream": True, "messages": [
        {"role": "system", "content": system_message(documents)},
        {"role": "user", "content": q.question}]}
    if action is not None:
        body["guardrail"] = {"policy": {"action": action}}
    return body


def as_json(r: StreamResult) -> dict:
    return {"text": r.text, "status": r.status, "first_content_s": r.first_content_s,
            "done_s": r.done_s, "errors": r.errors, "report": r.report}


def run_all(svc: Services, questions: Sequence[Question], docs: dict[str, str]) -> list[dict]:
    """Each question straight, annotated and regenerated; the two guardrail runs
    alternate in order, so neither always meets a context guardrail already prepared."""
    results = []
    with httpx.Client() as client:
        warm = Question("warmup", WARMUP, ("eiffel-overview",), "", "", "")
        stream_chat(client, svc.proxy, request(warm, [docs["eiffel-overview"]], "annotate"))
        for i, q in enumerate(questions):
            documents = [docs[c] for c in q.context]
            runs = {"direct": stream_chat(client, svc.upstream, request(q, documents, None))}
            order = ("annotate", None) if i % 2 == 0 else (None, "annotate")
            for action in order:
                r = stream_chat(client, svc.proxy, request(q, documents, action))
                runs["annotate" if action else "regenerate"] = r
            results.append({"id": q.id, "question": q.question, "answer": q.answer,
                            "answer_passage": q.answer_passage, "guess": q.guess,
                            "runs": {k: as_json(v) for k, v in runs.items()}})
            print(f"  {q.id}: {runs['regenerate'].text}", flush=True)
    return results


def pick(questions: list[Question], ids: Optional[str], limit: Optional[int]) -> list[Question]:
    if ids:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        known = {q.id: q for q in questions}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise SystemExit(f"unknown question ids: {', '.join(missing)}")
        questions = [known[i] for i in wanted]
    return questions[:limit] if limit else questions


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", help="comma-separated question ids (default: all)")
    parser.add_argument("--limit", type=int, help="the first N questions")
    parser.add_argument("--delay", type=float, default=0.02,
                        help="the upstream's seconds between streamed word pieces")
    parser.add_argument("--k", type=int, default=3, help="passages retrieved per hook call")
    parser.add_argument("--withhold-documents", action="store_true",
                        help="ablation: the hook returns its rewrite without its passages")
    parser.add_argument("--out", type=Path, default=HERE / "results.json",
                        help="where the JSON goes")
    args = parser.parse_args(argv)
    corpus = load_corpus()
    questions = pick(load_questions(), args.questions, args.limit)
    print("starting the upstream, the hook and guardrail serve ...", flush=True)
    with Services(args.delay, args.k, args.withhold_documents) as svc:
        print(f"streaming {len(questions)} questions (the answers after guardrail):",
              flush=True)
        results = run_all(svc, questions, {p.id: p.text for p in corpus.values()})
        hook = svc.hook_stats()
    summary = summarize(results, questions, hook, corpus)
    print()
    print(render(summary))
    args.out.write_text(json.dumps({"summary": summary, "hook_calls": hook["calls"],
                                    "results": results}, indent=1))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
