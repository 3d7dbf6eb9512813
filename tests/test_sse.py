"""The SSE decoder gives the same events however the bytes are cut."""

from __future__ import annotations

import json

import pytest

from guardrail.errors import Blocked, UpstreamProtocolError
from guardrail.stream.chunks import ChatStreamDecoder, parse_chat_chunk
from guardrail.stream.sse import (DONE, SSEDecoder, SSEEvent, encode_event,
                                  error_event)


def _chunk(content: str, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


def _data(obj: dict) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode()


# A realistic OpenAI stream with every line-ending flavour, comments, a BOM, an id,
# retry, a named event, multi-line data, an emoji (4 UTF-8 bytes) and accents.
STREAM = (
    b"\xef\xbb\xbf: keep-alive comment\r\n"
    b"retry: 3000\r\n"
    b"data: " + _data(_chunk("H\u00e9llo ")) + b"\r\n\r\n"
    b"id: 7\r"
    b"data: " + _data(_chunk("w\u00f6rld \U0001F600 ")) + b"\r\r"
    b":comment without space\n"
    b"event: note\n"
    b"data:first line\n"
    b"data:  second line keeps one space\n"
    b"data\n"
    b"unknown: field\n"
    b"\n"
    b"data: " + _data(_chunk("\u00e7a va? \u2014 fin.", "stop")) + b"\n\n"
    b"id\n"
    b"\n"
    b"data: [DONE]\n\n"
)

EXPECTED = [
    SSEEvent("message", json.dumps(_chunk("H\u00e9llo "), ensure_ascii=False), "", 3000),
    SSEEvent("message", json.dumps(_chunk("w\u00f6rld \U0001F600 "), ensure_ascii=False), "7"),
    SSEEvent("note", "first line\n second line keeps one space\n", "7"),
    SSEEvent("message", json.dumps(_chunk("\u00e7a va? \u2014 fin.", "stop"),
                                   ensure_ascii=False), "7"),
    SSEEvent("message", "[DONE]", ""),  # a bare "id" line reset the last event id
]


def _decode(pieces: list[bytes], **kw) -> list[SSEEvent]:
    dec = SSEDecoder(**kw)
    out: list[SSEEvent] = []
    for piece in pieces:
        out += dec.feed(piece)
    out += dec.flush()
    return out


def test_whole_stream() -> None:
    assert _decode([STREAM]) == EXPECTED


def test_split_at_every_byte_position() -> None:
    for i in range(len(STREAM) + 1):
        assert _decode([STREAM[:i], STREAM[i:]]) == EXPECTED, f"split at byte {i}"


def test_one_byte_at_a_time() -> None:
    assert _decode([STREAM[i:i + 1] for i in range(len(STREAM))]) == EXPECTED


def test_split_at_every_pair_of_positions_near_line_ends() -> None:
    # Three pieces, cuts around each "\r" so "\r" / "\n" / rest land in different feeds.
    cuts = [i for i, b in enumerate(STREAM) if b in b"\r\n"]
    for c in cuts:
        for a in (c - 1, c, c + 1):
            for b in (c + 1, c + 2):
                if 0 <= a <= b <= len(STREAM):
                    assert _decode([STREAM[:a], STREAM[a:b], STREAM[b:]]) == EXPECTED


def test_cr_then_lf_in_next_chunk_is_one_line_end() -> None:
    # "data: a\r" + "\n" + "\r\n": the first two bytes are one line end, the last a
    # blank line.  Were "\r" and "\n" two line ends, "a" would be dispatched early.
    dec = SSEDecoder()
    assert dec.feed(b"data: a\r") == []
    assert dec.feed(b"\n") == []
    assert dec.feed(b"data: b\r\n") == []
    assert dec.feed(b"\r\n") == [SSEEvent(data="a\nb")]


def test_incomplete_event_at_eof_is_discarded() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: complete\n\ndata: cut") == [SSEEvent(data="complete")]
    assert dec.has_pending
    assert dec.flush() == []
    # The same when the last line did end, but no blank line followed.
    dec = SSEDecoder()
    assert dec.feed(b"data: no blank line after me\n") == []
    assert dec.has_pending
    assert dec.flush() == []
    assert not dec.has_pending


def test_line_too_long() -> None:
    dec = SSEDecoder(max_line=64)
    dec.feed(b"data: " + b"x" * 58 + b"\n")  # exactly 64 characters: fine
    with pytest.raises(UpstreamProtocolError, match="exceeds 64 characters"):
        for _ in range(10):
            dec.feed(b"data: " + b"y" * 20)  # one line growing across feeds


def test_event_too_large() -> None:
    dec = SSEDecoder(max_line=100, max_event=50)
    with pytest.raises(UpstreamProtocolError, match="exceeds 50 characters"):
        dec.feed(b"data: 0123456789\n" * 10)


def test_invalid_utf8_is_replaced() -> None:
    assert _decode([b"data: a\xffb\n\n"]) == [SSEEvent(data="a\ufffdb")]


def test_empty_data_dispatches_nothing() -> None:
    assert _decode([b"event: x\nretry: 5\n\n\ndata: y\n\n"]) == [SSEEvent(data="y")]


def test_retry_must_be_digits() -> None:
    assert _decode([b"retry: 1.5\ndata: y\n\n"]) == [SSEEvent(data="y")]


def test_parse_chat_chunk() -> None:
    assert parse_chat_chunk(SSEEvent(data='{"a": 1}')) == {"a": 1}
    assert parse_chat_chunk(SSEEvent(data="[DONE]")) is None
    with pytest.raises(UpstreamProtocolError, match="not valid JSON"):
        parse_chat_chunk(SSEEvent(data='{"a": '))
    with pytest.raises(UpstreamProtocolError, match="list where a JSON object"):
        parse_chat_chunk(SSEEvent(data="[1, 2]"))


def test_chat_stream_decoder() -> None:
    # The "note" event is not JSON; a chat stream never carries one.
    stream = STREAM.replace(b"data:first line\n", b"data: {}\n").replace(
        b"data:  second line keeps one space\n", b"").replace(b"data\n", b"")
    expected = [_chunk("H\u00e9llo "), _chunk("w\u00f6rld \U0001F600 "), {},
                _chunk("\u00e7a va? \u2014 fin.", "stop")]
    dec = ChatStreamDecoder()
    assert dec.feed(stream) + dec.flush() == expected
    assert dec.done
    assert dec.feed(b"data: {}\n\n") == []  # after [DONE]
    dec = ChatStreamDecoder()
    chunks = []
    for i in range(len(stream)):
        chunks += dec.feed(stream[i:i + 1])
    assert chunks + dec.flush() == expected


def test_chat_stream_decoder_rejects_bad_json_and_cut_streams() -> None:
    with pytest.raises(UpstreamProtocolError):
        ChatStreamDecoder().feed(b"data: {nope\n\n")
    dec = ChatStreamDecoder()
    dec.feed(b'data: {"a": 1}\n\ndata: {"b"')
    with pytest.raises(UpstreamProtocolError, match="middle of an event"):
        dec.flush()


def test_encode_event_round_trips() -> None:
    payload = {"text": "caf\u00e9 \U0001F600", "n": [1, 2]}
    raw = encode_event(payload)
    assert raw == 'data: {"text":"caf\u00e9 \U0001F600","n":[1,2]}\n\n'.encode()
    assert encode_event("a\nb", event="x") == b"event: x\ndata: a\ndata: b\n\n"
    events = _decode([raw, encode_event("line1\r\nline2", event="e"), DONE])
    assert events == [SSEEvent(data=json.dumps(payload, ensure_ascii=False,
                                               separators=(",", ":"))),
                      SSEEvent(event="e", data="line1\nline2"),
                      SSEEvent(data="[DONE]")]
    with pytest.raises(ValueError):
        encode_event("x", event="bad\nname")


def test_error_event() -> None:
    raw = error_event(Blocked("unsupported claim", code="hallucination"))
    assert raw.startswith(b"data: {") and raw.endswith(b"}\n\n")
    assert json.loads(raw[len(b"data: "):]) == {"error": {
        "message": "unsupported claim", "type": "guardrail_blocked", "code": "hallucination"}}
    assert DONE == b"data: [DONE]\n\n"
