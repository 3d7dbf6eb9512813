"""Server-Sent Events: an incremental decoder for the upstream side, an encoder for ours.

The decoder follows the WHATWG "event stream" interpretation rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
and, like httpx's ``LineDecoder``, keeps whatever it cannot finish yet between calls:
``feed(bytes)`` returns the events completed by those bytes, ``flush()`` ends the
stream.  It does no I/O, so a test can cut the same bytes anywhere and expect the
same events.

The OpenAI chat stream that rides on top is parsed in ``stream.chunks``.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Any, Optional

from guardrail.errors import GuardrailError, UpstreamProtocolError

__all__ = ["DONE", "DEFAULT_MAX_LINE", "SSEDecoder", "SSEEvent", "encode_event", "error_event",
           "json_bytes"]

DEFAULT_MAX_LINE = 1 << 20  # characters; an upstream line longer than this is an error
DEFAULT_MAX_EVENT = 4 << 20  # characters of data in one event

_LINE_END = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event.

    ``id`` is the stream's *last event id* at dispatch time (the spec keeps it across
    events); ``retry`` is the reconnection time given since the previous event, if any.
    """

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: Optional[int] = None


class SSEDecoder:
    """Incremental ``text/event-stream`` parser: ``feed(bytes) -> [SSEEvent]``, ``flush()``.

    Bytes are decoded as UTF-8 incrementally (a character split across chunks is
    fine; invalid bytes become U+FFFD, as the spec says).  Lines may end in
    ``\\r\\n``, ``\\n`` or ``\\r``; a ``\\r`` ending one chunk and a ``\\n`` starting the
    next are one line end.  A line longer than ``max_line`` characters raises
    :class:`UpstreamProtocolError` instead of growing the buffer without bound, and
    so does an event whose data lines add up to more than ``max_event`` characters.
    """

    def __init__(self, max_line: int = DEFAULT_MAX_LINE,
                 max_event: int = DEFAULT_MAX_EVENT) -> None:
        if max_line < 1 or max_event < 1:
            raise ValueError(
                f"max_line and max_event must be positive, got {max_line} and {max_event}")
        self.max_line = max_line
        self.max_event = max_event
        self.last_event_id = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._started = False       # the optional leading BOM has been dealt with
        self._skip_lf = False       # the last line ended in "\r"; a leading "\n" is its tail
        self._partial: list[str] = []  # pieces of the current, unterminated line
        self._partial_len = 0
        # The event being built (WHATWG "data buffer", "event type buffer").
        self._data: list[str] = []
        self._data_len = 0
        self._event = ""
        self._retry: Optional[int] = None
        self._fields_seen = False

    @property
    def has_pending(self) -> bool:
        """True if a ``flush()`` now would discard an unfinished line or event."""
        return bool(self._partial_len or self._fields_seen)

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Consume ``data`` and return the events it completed, in order."""
        return self._feed_text(self._decoder.decode(data, final=False))

    def flush(self) -> list[SSEEvent]:
        """End of stream.

        Per the spec, an event not terminated by a blank line is incomplete and is
        discarded, so this returns ``[]``; check :attr:`has_pending` first to learn
        whether the upstream cut an event short.  The decoder is reset.
        """
        events = self._feed_text(self._decoder.decode(b"", final=True))
        self._partial.clear()
        self._partial_len = 0
        self._reset_event()
        self._skip_lf = False
        return events

    # -- internals -----------------------------------------------------------------

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if not text:
            return []
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = False
        events: list[SSEEvent] = []
        pos = 0
        for m in _LINE_END.finditer(text):
            if m.end() == len(text) and m.group() == "\r":
                self._skip_lf = True  # the "\n" of a "\r\n" may open the next chunk
            self._append_partial(text, pos, m.start())
            line = "".join(self._partial)
            self._partial.clear()
            self._partial_len = 0
            event = self._process_line(line)
            if event is not None:
                events.append(event)
            pos = m.end()
        self._append_partial(text, pos, len(text))
        return events

    def _append_partial(self, text: str, start: int, end: int) -> None:
        if start == end:
            return
        self._partial_len += end - start
        if self._partial_len > self.max_line:
            raise UpstreamProtocolError(
                f"upstream SSE line exceeds {self.max_line} characters "
                "without a line break; refusing to buffer more")
        self._partial.append(text[start:end])

    def _process_line(self, line: str) -> Optional[SSEEvent]:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment (keep-alive)
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_len += len(value) + 1
            if self._data_len > self.max_event:
                raise UpstreamProtocolError(
                    f"upstream SSE event exceeds {self.max_event} characters of data "
                    "without a blank line; refusing to buffer more")
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        else:
            return None  # unknown field: ignored
        self._fields_seen = True
        return None

    def _dispatch(self) -> Optional[SSEEvent]:
        data, event, retry = self._data, self._event, self._retry
        self._reset_event()
        if not data:
            return None  # the spec dispatches nothing when the data buffer is empty
        return SSEEvent(event=event or "message", data="\n".join(data),
                        id=self.last_event_id, retry=retry)

    def _reset_event(self) -> None:
        self._data = []
        self._data_len = 0
        self._event = ""
        self._retry = None
        self._fields_seen = False


# -- encoder ---------------------------------------------------------------------------

DONE = b"data: [DONE]\n\n"


def encode_event(data: dict[str, Any] | str, event: Optional[str] = None) -> bytes:
    """One SSE event: ``data: {compact json}\\n\\n`` (a ``str`` is sent as is).

    A string spanning several lines becomes several ``data:`` lines, which a
    decoder joins back with ``\\n``.
    """
    text = data if isinstance(data, str) else json_bytes(data).decode()
    parts = []
    if event is not None:
        if _LINE_END.search(event):
            raise ValueError(f"an SSE event name cannot contain a line break: {event!r}")
        parts.append(f"event: {event}\n")
    for line in _LINE_END.split(text):
        parts.append(f"data: {line}\n")
    parts.append("\n")
    return "".join(parts).encode("utf-8", "replace")  # a str with a lone surrogate: "?"


def json_bytes(value: Any) -> bytes:
    """Compact JSON in UTF-8.  A lone UTF-16 surrogate (an upstream's, in a part nobody
    checks), which UTF-8 cannot carry, makes it ASCII-escaped instead: any JSON reader
    reads that back as it was written."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode()


def error_event(err: GuardrailError) -> bytes:
    """An OpenAI-style ``data: {"error": {...}}`` event for ``err``."""
    return encode_event(err.to_json())
