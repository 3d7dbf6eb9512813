"""What a guarded stream sends, in the client's API: the ``Wire`` of one stream.

The pipeline (``stream.pipeline``) is the same for every API: deltas in, sentences
checked and released in order, a report at the end.  A ``Wire`` is the part that knows
the API's events: it decodes the upstream into ``Delta``s, and encodes released text,
passed-through events, the final events with the report, a block and an error.

``ChatWire``: chat completions chunks.  ``stream.responses.ResponsesWire``: the
Responses API's typed events.
"""

from __future__ import annotations

from typing import AsyncIterator, Optional, Protocol

from guardrail.errors import GuardrailError
from guardrail.stream.chunks import content_chunk, deltas, meta_of
from guardrail.stream.sse import encode_event
from guardrail.types import Delta

__all__ = ["ChatWire", "Wire"]


class Wire(Protocol):
    def deltas(self, raw: AsyncIterator[bytes]) -> AsyncIterator[Delta]:
        """The upstream's events as ``Delta``s: text to check, the rest to pass on."""

    def note(self, d: Delta) -> None:
        """See every delta before anything derived from it is sent."""

    def text(self, released: str, sentence: Optional[dict]) -> bytes:
        """Released text of the answer (b"" for none), with its sentence event if asked."""

    def passed(self, event: dict) -> bytes:
        """An upstream event passed on, in order after the text released before it."""

    def final(self, tail: list[dict], report: dict) -> bytes:
        """The finishing event(s) held for the final pass, with the report."""

    def blocked(self, tail: list[dict], report: dict) -> bytes:
        """The end of an answer the policy blocked, as the API says content was filtered."""

    def error(self, err: GuardrailError, report: dict) -> bytes:
        """An error event carrying the report so far."""


class ChatWire:
    """``/v1/chat/completions``: choice 0's text, the report on the finish chunk."""

    def __init__(self) -> None:
        self.meta: dict = {"object": "chat.completion.chunk"}

    def deltas(self, raw: AsyncIterator[bytes]) -> AsyncIterator[Delta]:
        return deltas(raw)

    def note(self, d: Delta) -> None:
        self.meta.update(meta_of(d.chunk))

    def text(self, released: str, sentence: Optional[dict]) -> bytes:
        if sentence is not None:
            return encode_event({**content_chunk(self.meta, released),
                                 "guardrail": {"sentence": sentence}})
        return encode_event(content_chunk(self.meta, released)) if released else b""

    def passed(self, event: dict) -> bytes:
        return encode_event(event)

    def final(self, tail: list[dict], report: dict) -> bytes:
        """The finish chunk with the report on it, then whatever followed it (usage).
        Every client tolerates a chunk with a choice; ``choices: []`` only with usage."""
        if not tail:  # no finish_reason came ([DONE] after the text, or other choices
            # only): choice 0 with an empty delta, so a loop reading choices[0] reads on
            return encode_event({**meta_of(self.meta), "choices": [
                {"index": 0, "delta": {}, "logprobs": None, "finish_reason": None}],
                "guardrail": report})
        first, *rest = tail
        return b"".join([encode_event({**first, "guardrail": report}),
                         *(encode_event(c) for c in rest)])

    def blocked(self, tail: list[dict], report: dict) -> bytes:
        """A block ends the answer the way clients know a filter stops one
        (``finish_reason: "content_filter"``), not as an error a router would retry."""
        usage = [c for c in tail if c.get("usage") is not None]  # asked for: kept
        return b"".join([encode_event({**meta_of(self.meta), "choices": [
            {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "content_filter"}],
            "guardrail": report}), *(encode_event({**c, "choices": []}) for c in usage)])

    def error(self, err: GuardrailError, report: dict) -> bytes:
        return encode_event({**err.to_json(), "guardrail": report})
