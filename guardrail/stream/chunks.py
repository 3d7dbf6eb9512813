"""The OpenAI chat stream on top of SSE: events -> chunk objects -> typed ``Delta``s.

    chat_chunks(raw bytes)  -> chunk dicts  (``[DONE]`` ends it; a cut stream raises)
    split_chunk(chunk)      -> Delta        (choice 0's text to check, the rest to forward)
    deltas(raw bytes)       -> Delta ...    (the two joined: the pipeline's input stage)
    content_chunk(...)      -> dict         (a downstream chunk of released text)

``passthrough_stream`` forwards an unchecked stream event-aligned, validating it.
All parsing of upstream chunks lives here; ``stream.sse`` is only the codec.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, AsyncIterator, Callable, Optional

from guardrail.errors import GuardrailError, UpstreamProtocolError, UpstreamStatusError
from guardrail.stream.sse import DEFAULT_MAX_LINE, DONE, SSEDecoder, SSEEvent, error_event
from guardrail.types import Delta

META_KEYS = ("id", "object", "created", "model", "system_fingerprint", "service_tier")


# -- events -> chunks -------------------------------------------------------------

def parse_chat_chunk(event: SSEEvent) -> Optional[dict[str, Any]]:
    """The JSON object an OpenAI stream event carries; ``None`` for ``[DONE]``.

    Raises :class:`UpstreamProtocolError` if the data is not JSON or not an object.
    """
    data = event.data
    if data.strip() == "[DONE]":
        return None
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise UpstreamProtocolError(
            f"upstream sent an event that is not valid JSON ({exc.msg} at char {exc.pos}): "
            f"{_preview(data)}") from None
    if not isinstance(chunk, dict):
        raise UpstreamProtocolError(
            f"upstream sent a {type(chunk).__name__} where a JSON object was expected: "
            f"{_preview(data)}")
    return chunk


class ChatStreamDecoder:
    """Bytes of an OpenAI chat stream in, chunk objects out: ``feed(bytes) -> [dict]``.

    After ``[DONE]``, :attr:`done` is True and anything further is ignored.
    ``flush()`` raises :class:`UpstreamProtocolError` if the stream ended in the
    middle of an event (the bytes stop before the blank line that ends it).
    """

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._sse = SSEDecoder(max_line=max_line)
        self.done = False

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        if self.done:
            return []
        chunks: list[dict[str, Any]] = []
        for event in self._sse.feed(data):
            if not event.data.strip():  # an empty ``data:`` line carries nothing
                continue
            chunk = parse_chat_chunk(event)
            if chunk is None:
                self.done = True
                break
            chunks.append(chunk)
        return chunks

    def flush(self) -> list[dict[str, Any]]:
        if not self.done and self._sse.has_pending:
            raise UpstreamProtocolError("upstream stream ended in the middle of an event")
        self._sse.flush()
        return []


def _preview(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


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
    if finished:  # choice 0 finished: what is left unended ("data: [DONE]\n") is no loss
        return
    decoder.flush()
    raise UpstreamProtocolError("upstream closed the stream before the answer finished")


def chat_failure(err: GuardrailError) -> bytes:
    """How a chat stream ends on an error: the error event, then ``[DONE]``."""
    return error_event(err) + DONE


async def passthrough_stream(raw: AsyncIterator[bytes],
                             ends: Callable[[Optional[dict]], bool] = lambda e: e is None,
                             fail: Callable[[GuardrailError], bytes] = chat_failure,
                             unended: str = "upstream closed the stream without [DONE]"
                             ) -> AsyncIterator[bytes]:
    """Forward upstream bytes unchanged, event-aligned, after validating each event;
    ``ends``: whether an event (``None``: ``[DONE]``) is the stream's last.  A chat
    stream that closes after choice 0 finished (or after the upstream's own error
    event) but before ``[DONE]`` ends with one, as a checked stream does
    (``chat_chunks``).  ``fail`` writes the end of a stream that fails (another API's
    error event); ``unended``: the message for one closed before its last event."""
    decoder = SSEDecoder()
    pending = bytearray()
    finished = False
    try:
        async for data in raw:
            events = [parse_chat_chunk(e) for e in decoder.feed(data) if e.data.strip()]
            finished = finished or any(e is not None and (_finish_reason(e) is not None or
                                                          _is_error(e)) for e in events)
            pending += data  # appended after validation: bad bytes are never forwarded
            cut = _last_boundary(pending) if decoder.has_pending else len(pending)
            if cut:
                yield bytes(pending[:cut])
                del pending[:cut]
            if any(ends(e) for e in events):
                return
        if finished:  # an unended last event ("data: [DONE]\n") is dropped, not sent
            yield DONE
            return
        raise UpstreamProtocolError(unended)
    except GuardrailError as e:  # malformed, cut, or silent past read_timeout_s
        yield fail(e)


def _is_error(event: dict) -> bool:
    """The upstream's own error object, sent as an event: forwarded, then the stream
    ends (``[DONE]``), with no second error of ours."""
    return isinstance(event.get("error"), dict) and "choices" not in event


def _last_boundary(buf: bytearray) -> int:
    ends = [buf.rfind(sep) + len(sep) for sep in (b"\n\n", b"\r\n\r\n", b"\r\r")
            if buf.rfind(sep) >= 0]
    return max(ends, default=0)


# -- stage: chunk -> (choice-0 text, everything else) -----------------------------------

def _finish_reason(chunk: dict) -> Optional[str]:
    for c in chunk.get("choices") or ():
        if isinstance(c, dict) and c.get("index") in (0, None):
            return _finished(c)
    return None


def choice_index(choice: dict) -> int:
    """A choice's ``index``: none (or null) is choice 0; one that is not a whole number
    ("0", 1.5, true) is a protocol error, never a choice that passes unchecked."""
    index = choice.get("index")
    if index is None:
        return 0
    if type(index) is not int:
        raise UpstreamProtocolError(f"upstream choice has index {index!r}, not a number")
    return index


def without_other_choices(d: Delta) -> Delta:
    """``d`` as forwarded where other choices are refused (``verification.other_choices:
    reject``, so the client asked for one): an upstream's extra choice is dropped, not
    passed on unchecked."""
    if not d.other_choices or d.rest is None:
        return dataclasses.replace(d, other_choices=())
    keep = [c for c in d.rest["choices"] if choice_index(c) == 0]
    rest = {**d.rest, "choices": keep} if keep or d.rest.get("usage") is not None else None
    return dataclasses.replace(d, rest=rest, other_choices=())


def _finished(choice: dict) -> Optional[str]:
    """A choice's finish reason; an empty one (Ollama and SGLang send ``""`` on every
    chunk where OpenAI sends ``null``) is none."""
    return choice.get("finish_reason") or None


_CHOICE_KEYS = ("index", "delta", "message", "logprobs", "finish_reason")
_STRUCTURED_EXTRAS = ("content_filter_results", "content_filter_offsets")  # Azure's


def passed_choice(choice: dict, keys: tuple[str, ...]) -> dict:
    """Of a choice whose text is checked, what goes on as it came: ``keys`` of its own
    (its index, finish) and the extras that may go on unchecked: numbers and flags (a
    seed, vLLM's stop token id), and Azure's filter results.  Never a string or another
    structure: a server that repeats the text there (Together's ``text``) would pass it
    on unchecked."""
    return {**{k: choice[k] for k in keys if k in choice},
            **{k: v for k, v in choice.items() if k not in _CHOICE_KEYS and (
                isinstance(v, (int, float)) or v is None or
                k in _STRUCTURED_EXTRAS and isinstance(v, dict))}}


def split_chunk(chunk: dict) -> Delta:
    """Separate choice 0's content (to be checked) from what passes through as is:
    role, tool calls, finish_reason, other choices, usage."""
    choices = chunk.get("choices")
    if choices is None and chunk.get("usage") is not None:
        choices = chunk["choices"] = []  # a usage chunk without "choices" (Fireworks, ...)
    if not isinstance(choices, list):
        error = chunk.get("error")
        if isinstance(error, dict):  # the upstream failed mid-stream: pass its error on
            raise UpstreamStatusError(f"upstream error: {error.get('message', error)}",
                                      status=502, body={"error": error})
        raise UpstreamProtocolError("upstream chunk has no 'choices' array")
    text, keep, others, finished, calls = "", [], [], False, False
    for c in choices:
        if not isinstance(c, dict) or not isinstance(c.get("delta", {}), dict):
            raise UpstreamProtocolError("upstream chunk has a malformed choice")
        if choice_index(c) != 0:
            keep.append(c)
            others.append(c["index"])
            continue
        delta = dict(c.get("delta") or {})
        content = delta.get("content")
        text, left = content_text(content)
        if text or isinstance(content, list):  # checked: what is left goes on as it is
            if left is None:
                del delta["content"]
            else:
                delta["content"] = left
        finished = _finished(c) is not None
        # a tool call or a refusal follows the text before it: that text goes first
        calls = calls or any(delta.get(k) for k in ("tool_calls", "function_call", "refusal"))
        # what else the choice carries goes on (Azure's content_filter_results, its
        # asynchronous filter's annotation chunk), never a string (``passed_choice``)
        passed = passed_choice(c, ("index", "finish_reason"))
        if finished or isinstance(delta.get("content"), list) or \
                any(v is not None for k, v in delta.items() if k != "content") or \
                any(v is not None for k, v in passed.items() if k != "index"):
            keep.append({**passed, "delta": delta, "logprobs": None})
    # usage rides on what is forwarded; a chunk of choice 0's text alone that also
    # counts usage (vLLM's continuous_usage_stats) is not sent as an empty "choices"
    # ahead of the text it counts, held for its check
    rest = {**chunk, "choices": keep} if keep or not choices else None
    return Delta(chunk, text, rest, finished, tuple(others), calls)


def content_text(content: Any) -> tuple[str, Any]:
    """(the text to check, what stays of ``content``): a string is all text; a list of
    content parts (Mistral's reasoning models send ``[{"type": "thinking", ...},
    {"type": "text", "text": ...}]``) gives its text parts' text, joined, and keeps the
    others; anything else is kept as it is."""
    if isinstance(content, str):
        return content, None
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        texts = [p for p in content if p.get("type") == "text"
                 and isinstance(p.get("text"), str)]
        others = [p for p in content if not any(p is t for t in texts)]
        return "".join(p["text"] for p in texts), others or None
    return "", content


_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_characters(text: str) -> str:
    """Join UTF-16 surrogate pairs (an upstream may send an emoji as two JSON escapes)
    into the characters they encode; a lone surrogate becomes U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


async def deltas(raw: AsyncIterator[bytes]) -> AsyncIterator[Delta]:
    """The typed stream the pipeline reads: every upstream chunk, split."""
    async for d in whole_character_deltas(split_chunk(c) async for c in chat_chunks(raw)):
        yield d


async def whole_character_deltas(split: AsyncIterator[Delta]) -> AsyncIterator[Delta]:
    """A high surrogate that ends a delta's text waits for the low one in the next
    delta, so no character is ever cut in two (its chunk could not be encoded)."""
    held = ""
    async for d in split:
        text, held = held + d.text, ""
        if text and "\ud800" <= text[-1] <= "\udbff" and not d.finished:
            text, held = text[:-1], text[-1]
        if text != d.text or _SURROGATE.search(text):
            d = dataclasses.replace(d, text=whole_characters(text))
        yield d
    if held:
        yield Delta({}, "\ufffd")


def meta_of(chunk: dict) -> dict:
    """What a downstream chunk repeats of an upstream one (id, model, created, ...)."""
    return {k: chunk[k] for k in META_KEYS if k in chunk}


def content_chunk(meta: dict, text: str) -> dict:
    """A downstream chunk carrying released text for choice 0."""
    return {**meta_of(meta),
            "choices": [{"index": 0, "delta": {"content": text}, "logprobs": None,
                         "finish_reason": None}]}
