"""Upstream bytes -> chat chunks -> (choice 0's text, what passes through), and back.

``chat_chunks`` decodes an OpenAI chat stream; ``split_chunk`` separates the text to
check from what is forwarded as is; ``content_chunk`` builds a downstream chunk of
released text; ``passthrough_stream`` forwards an unchecked stream event-aligned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator, Optional

from guardrail.errors import UpstreamProtocolError
from guardrail.stream.sse import (DONE, ChatStreamDecoder, SSEDecoder, error_event,
                                  parse_chat_chunk)

META_KEYS = ("id", "object", "created", "model", "system_fingerprint", "service_tier")


# -- stage: bytes -> chunks -------------------------------------------------------------

async def chat_chunks(raw: AsyncIterator[bytes]) -> AsyncIterator[dict]:
    """Decode an OpenAI chat stream; a stream that stops before ``[DONE]`` (and before
    choice 0 finished) or mid-event raises ``UpstreamProtocolError``."""
    decoder = ChatStreamDecoder()
    finished = False
    async for data in raw:
        for chunk in decoder.feed(data):
            finished = finished or _finish_reason(chunk) is not None
            yield chunk
        if decoder.done:
            return
    decoder.flush()
    if not finished:
        raise UpstreamProtocolError("upstream closed the stream before the answer finished")


async def passthrough_stream(raw: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Forward upstream bytes unchanged, event-aligned, after validating each event."""
    decoder = SSEDecoder()
    pending = bytearray()
    try:
        async for data in raw:
            done = any(parse_chat_chunk(e) is None for e in decoder.feed(data))
            pending += data  # appended after validation: bad bytes are never forwarded
            cut = _last_boundary(pending) if decoder.has_pending else len(pending)
            if cut:
                yield bytes(pending[:cut])
                del pending[:cut]
            if done:
                return
        raise UpstreamProtocolError("upstream closed the stream without [DONE]")
    except UpstreamProtocolError as e:
        yield error_event(e) + DONE


def _last_boundary(buf: bytearray) -> int:
    ends = [buf.rfind(sep) + len(sep) for sep in (b"\n\n", b"\r\n\r\n", b"\r\r")
            if buf.rfind(sep) >= 0]
    return max(ends, default=0)


# -- stage: chunk -> (choice-0 text, everything else) -----------------------------------

def _finish_reason(chunk: dict) -> Optional[str]:
    for c in chunk.get("choices") or ():
        if isinstance(c, dict) and c.get("index", 0) == 0:
            return c.get("finish_reason")
    return None


@dataclass(frozen=True)
class SplitChunk:
    text: str                # choice 0's new content ("" if none)
    rest: Optional[dict]     # the chunk without that content, None if nothing is left
    finished: bool           # choice 0 has its finish_reason
    other_choices: tuple[int, ...] = ()


def split_chunk(chunk: dict) -> SplitChunk:
    """Separate choice 0's content (to be checked) from what passes through as is:
    role, tool calls, finish_reason, other choices, usage."""
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        raise UpstreamProtocolError("upstream chunk has no 'choices' array")
    text, keep, others, finished = "", [], [], False
    for c in choices:
        if not isinstance(c, dict) or not isinstance(c.get("delta", {}), dict):
            raise UpstreamProtocolError("upstream chunk has a malformed choice")
        if c.get("index", 0) != 0:
            keep.append(c)
            others.append(c.get("index"))
            continue
        delta = dict(c.get("delta") or {})
        content = delta.get("content")
        if isinstance(content, str) and content:
            text = content
            delta.pop("content")
        finished = c.get("finish_reason") is not None
        if finished or any(v is not None for k, v in delta.items() if k != "content"):
            keep.append({**c, "delta": delta, "logprobs": None})
    extra = chunk.get("usage") is not None or not choices
    rest = {**chunk, "choices": keep} if keep or extra else None
    return SplitChunk(text, rest, finished, tuple(others))


def content_chunk(meta: dict, text: str) -> dict:
    """A downstream chunk carrying released text for choice 0."""
    return {**{k: meta[k] for k in META_KEYS if k in meta},
            "choices": [{"index": 0, "delta": {"content": text}, "logprobs": None,
                         "finish_reason": None}]}
