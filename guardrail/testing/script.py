"""The fake upstream's script and what it records: rules (which answer for which
question), the calls it received, and pieces of an answer as an LLM streams them."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator

import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse

__all__ = ["FakeCall", "FakeScript", "Rule", "ScriptedCut", "chat_events", "hang_until_gone",
           "raw_events", "scripted_error", "split_pieces"]

_PIECE = re.compile(r"\s*\S+|\s+$")


class ScriptedCut(ConnectionAbortedError):
    """Raised inside the response to make the server drop the connection."""


@dataclass(frozen=True)
class Rule:
    match: str            # substring of the last user message; "" matches everything
    reply: str = ""
    tool_calls: tuple[dict, ...] = ()  # ({"name": ..., "arguments": "..."}, ...)


@dataclass
class FakeCall:
    """One request the fake upstream received."""

    body: dict
    headers: dict
    stream: bool
    pieces_sent: int = 0
    finished: bool = False
    cancelled: bool = False


@dataclass
class FakeScript:
    rules: list[Rule] = field(default_factory=list)
    model: str = "fake-llm"
    token_delay_s: float = 0.0
    default_reply: str = "I have no scripted answer for that."

    @classmethod
    def from_dict(cls, data: dict) -> "FakeScript":
        rules = [Rule(match=r.get("match", ""), reply=r.get("reply", ""),
                      tool_calls=tuple(r.get("tool_calls", ())))
                 for r in data.get("rules", [])]
        return cls(rules=rules, model=data.get("model", "fake-llm"),
                   token_delay_s=float(data.get("token_delay_s", 0.0)),
                   default_reply=data.get("default_reply", cls.default_reply))

    @classmethod
    def from_yaml(cls, path: str | Path) -> "FakeScript":
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        return cls.from_dict(data.get("upstream", data))

    def rule_for(self, body: dict) -> Rule:
        question = ""
        for m in body.get("messages", []):
            if isinstance(m, dict) and m.get("role") == "user":
                c = m.get("content")
                question = c if isinstance(c, str) else json.dumps(c)
        for rule in self.rules:
            if rule.match in question:
                return rule
        return Rule(match="", reply=self.default_reply)


def split_pieces(text: str) -> list[str]:
    """Word pieces with their leading whitespace, like LLM tokens."""
    return _PIECE.findall(text) or ([text] if text else [])


def chat_events(answer: str, model: str = "fake-llm") -> list[str]:
    """``answer`` as the ``data:`` payloads of a streamed chat completion, word piece by
    word piece, for ``"fake": {"mode": "raw", "events": ...}``."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
            "model": model}

    def event(delta: dict, finish=None) -> str:
        return json.dumps({**base, "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": finish}]})
    return [event({"role": "assistant"}), *(event({"content": p}) for p in split_pieces(answer)),
            event({}, "stop"), "[DONE]"]


async def raw_events(fake: dict, call: FakeCall) -> AsyncIterator[bytes]:
    """A hostile upstream: each of ``fake["events"]`` as one ``data:`` event, as is."""
    for payload in fake.get("events", []):
        if fake.get("delay"):
            await asyncio.sleep(float(fake["delay"]))
        yield b"data: " + payload.encode("utf-8", "surrogatepass") + b"\n\n"
    call.finished = True


def scripted_error(fake: dict) -> JSONResponse:
    """``"fake": {"mode": "error", ...}``: an OpenAI-style error body at that status."""
    return JSONResponse({"error": {"message": fake.get("message", "scripted failure"),
                                   "type": "server_error", "code": "fake_error"}},
                        status_code=int(fake.get("status", 500)), headers=fake.get("headers"))


async def hang_until_gone(request: Request, call: FakeCall) -> None:
    """Send nothing more until the client goes away; mark the call cancelled."""
    while not await request.is_disconnected():
        await asyncio.sleep(0.01)
    call.cancelled = True
