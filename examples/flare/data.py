"""The example's data and the text conventions its processes share.

``corpus.jsonl`` holds the passages the hook searches; ``questions.jsonl`` the questions,
each with the passages the client sends first (they lack the answer), the gold answer
and the upstream's scripted guess.  The rewrite prompt is built by the hook and read
back by the upstream, so its format lives here, once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.jsonl"
QUESTIONS = HERE / "questions.jsonl"

STOPWORDS = frozenset(
    "a about after all an and are as at be been before but by can did do does for from "
    "had has have he her his how in into is it its last later made many more most much "
    "not of on one or our she so than that the their them then there these they this to "
    "up was were what when where which while who whom whose why will with would you".split())
_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
_DOCUMENT = re.compile(r"<document>(.*?)</document>", re.S)
BLANK = "___"
REWRITE_HEAD = "Rewrite the last sentence of the answer so that the documents support it."


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    context: tuple[str, ...]  # passage ids sent with the question; they lack the answer
    answer: str               # the gold fact, worded as in its passage
    answer_passage: str       # the corpus passage that holds it
    guess: str                # what the upstream says when no document holds the answer


@dataclass(frozen=True)
class RewritePrompt:
    question: str
    sentence: str              # the flagged sentence, unsupported spans blanked
    rejected: tuple[str, ...]  # earlier rewrites guardrail rejected
    answer_so_far: str


def load_corpus(path: Path = CORPUS) -> dict[str, Passage]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["id"]: Passage(r["id"], r["title"], r["text"]) for r in rows}


def load_questions(path: Path = QUESTIONS) -> list[Question]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Question(r["id"], r["question"], tuple(r["context"]), r["answer"],
                     r["answer_passage"], r["guess"]) for r in rows]


def words(text: str) -> list[str]:
    """Lower-cased content words, a plural ``s`` cut (``years`` = ``year``)."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in STOPWORDS:
            continue
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def system_message(documents: Sequence[str]) -> str:
    """Documents in ``<document>`` tags: guardrail reads them as grounding and forwards
    the message unchanged, so the upstream reads the same documents."""
    body = "\n".join(f"<document>{d}</document>" for d in documents)
    return "Answer the question from the documents below.\n\n" + body


def documents_in(text: str) -> list[str]:
    return [d.strip() for d in _DOCUMENT.findall(text) if d.strip()]


def rewrite_prompt(p: RewritePrompt) -> str:
    lines = [REWRITE_HEAD, f"Question: {p.question}", f"Sentence: {p.sentence}"]
    lines += [f"Rejected: {r}" for r in p.rejected]
    lines += ["Reply with the new sentence only. Answer so far:", p.answer_so_far]
    return "\n".join(lines)


def parse_rewrite_prompt(text: str) -> Optional[RewritePrompt]:
    """The fields of ``rewrite_prompt``'s text; None for any other message."""
    if not text.startswith(REWRITE_HEAD):
        return None
    head, _, so_far = text.partition("Reply with the new sentence only. Answer so far:\n")
    fields: dict[str, list[str]] = {"Question": [], "Sentence": [], "Rejected": []}
    for line in head.splitlines()[1:]:
        name, sep, value = line.partition(": ")
        if sep and name in fields:
            fields[name].append(value.strip())
    return RewritePrompt(" ".join(fields["Question"]), " ".join(fields["Sentence"]),
                         tuple(fields["Rejected"]), so_far)
