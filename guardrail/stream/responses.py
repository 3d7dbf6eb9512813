"""The Responses API (``/v1/responses``) on the same pipeline as chat completions.

An upstream Responses stream is a sequence of typed events (``response.created``,
``response.output_text.delta``, ..., ``response.completed``), each an SSE event whose
name is its ``type``.  ``ResponsesWire`` maps them onto the pipeline:

* ``response.output_text.delta`` is the text to check; the client gets released text
  as deltas of the same output part, never the upstream's own.
* The events that repeat the text (``response.output_text.done``,
  ``response.content_part.done``, ``response.output_item.done`` and the final
  ``response``) pass in order after the part's sentences and carry the *released* text
  (in hold mode); each ends the part's last sentence first, as a tool call does.
* ``response.completed`` / ``.incomplete`` / ``.failed`` end the answer: held for the
  final pass, they carry the ``guardrail`` report; a block ends as OpenAI ends a
  filtered answer (``response.incomplete``, reason ``content_filter``); an upstream
  ``error`` event's message is passed on.  Every event is renumbered
  (``sequence_number``): the guarded stream has its own events.

``guarded_response`` checks a non-streaming response object the same way.
"""

from __future__ import annotations

import copy
from typing import Any, AsyncIterator, Optional

from guardrail.engine.seam import Verifier
from guardrail.errors import GuardrailError, UpstreamProtocolError, UpstreamStatusError
from guardrail.stream.annotations import moved, part_pieces
from guardrail.stream.chunks import parse_chat_chunk, whole_character_deltas
from guardrail.stream.pipeline import CompletionResult, check_parts
from guardrail.stream.settings import GuardSettings
from guardrail.stream.sse import DONE, SSEDecoder, encode_event
from guardrail.types import Delta

__all__ = ["TERMINAL", "ResponsesWire", "guarded_response", "response_events",
           "responses_failure"]

TERMINAL = ("response.completed", "response.incomplete", "response.failed")
_TEXT = "response.output_text.delta"
_REPEATS_TEXT = ("response.output_text.done", "response.content_part.done",
                 "response.output_item.done")

Part = tuple[int, int]  # (output_index, content_index)


async def response_events(raw: AsyncIterator[bytes]) -> AsyncIterator[dict]:
    """Decode a Responses stream; it ends with a terminal event (or ``[DONE]`` after
    one).  A stream cut before that, or an event without a ``type``, raises."""
    decoder = SSEDecoder()
    async for data in raw:
        for e in decoder.feed(data):
            if not e.data.strip():
                continue
            event = parse_chat_chunk(e)
            if event is None:
                raise UpstreamProtocolError("upstream sent [DONE] before the response ended")
            if not isinstance(event.get("type"), str):
                raise UpstreamProtocolError("upstream Responses event has no 'type'")
            yield event
            if event["type"] in TERMINAL:
                return
    if decoder.has_pending:
        raise UpstreamProtocolError("upstream stream ended in the middle of an event")
    raise UpstreamProtocolError("upstream closed the stream before the response ended")


def _delta(event: dict) -> Delta:
    kind = event["type"]
    if kind == "error":  # the upstream failed mid-stream: pass its message on
        error = {k: event.get(k) for k in ("message", "code", "param")}
        raise UpstreamStatusError(f"upstream error: {event.get('message', event)}",
                                  status=502, body={"error": error}, code=event.get("code"))
    if kind == _TEXT:
        text = event.get("delta")
        if not isinstance(text, str):
            raise UpstreamProtocolError(f"upstream {_TEXT} event has no 'delta' string")
        return Delta(event, text)
    if kind in TERMINAL:
        return Delta(event, rest=event, finished=True)
    # text ends before its repeats and before any other output item (a tool call)
    ends_text = kind in _REPEATS_TEXT or kind == "response.output_item.added"
    return Delta(event, rest=event, tool_call=ends_text)


async def _every_text(events: AsyncIterator[dict]) -> AsyncIterator[dict]:
    """The events, with a part's text sent only in its ``output_text.done`` (an upstream
    that streams no deltas) first sent as one delta: checked and released like any
    other, not blanked by the done event's rewrite."""
    streamed: set[Part] = set()
    async for e in events:
        kind = e["type"]
        if kind == _TEXT:
            streamed.add(_part(e))
        elif kind == "response.output_text.done" and _part(e) not in streamed \
                and isinstance(e.get("text"), str) and e["text"]:
            streamed.add(_part(e))
            yield {"type": _TEXT, "item_id": e.get("item_id"), "output_index": _part(e)[0],
                   "content_index": _part(e)[1], "delta": e["text"], "logprobs": []}
        yield e


def _part(event: dict) -> Part:
    where = event.get("output_index") or 0, event.get("content_index") or 0
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in where):
        raise UpstreamProtocolError(f"upstream {event['type']} event has a non-integer "
                                    "output_index or content_index")
    return where


class ResponsesWire:
    """One guarded Responses stream; ``hold``: the texts the client sees are rewritten
    to the released ones (off: the upstream's events pass as they are)."""

    def __init__(self, hold: bool = True) -> None:
        self.hold = hold
        self.seq = 0
        self.part: Optional[Part] = None         # the text part being released
        self.ids: dict[Part, Any] = {}            # its item_id
        self.released: dict[Part, str] = {}
        self.sent: dict[Part, str] = {}          # hold off: the upstream's text, as passed
        self.items: dict[int, dict] = {}          # output items the client was told of
        self.items_done: set[int] = set()         # ... and those it got whole
        self.response: dict = {"object": "response", "status": "in_progress", "output": []}

    def deltas(self, raw: AsyncIterator[bytes]) -> AsyncIterator[Delta]:
        return whole_character_deltas(_delta(e) async for e in _every_text(
            response_events(raw)))

    def note(self, d: Delta) -> None:
        if d.chunk.get("type") == _TEXT:  # a part that never said it was added
            self.ids.setdefault(_part(d.chunk), d.chunk.get("item_id"))

    def _send(self, event: dict) -> bytes:
        event = {**event, "sequence_number": self.seq}
        self.seq += 1
        return encode_event(event, event=event["type"])

    def text(self, released: str, sentence: Optional[dict]) -> bytes:
        part = self.part or next(iter(self.ids), (0, 0))
        self.released[part] = self.released.get(part, "") + released
        if not released and sentence is None:
            return b""
        event: dict = {"type": _TEXT, "item_id": self.ids.get(part),
                       "output_index": part[0], "content_index": part[1],
                       "delta": released, "logprobs": []}
        if sentence is not None:
            event["guardrail"] = {"sentence": sentence}
        return self._send(event)

    def passed(self, event: dict) -> bytes:
        kind = event["type"]
        if isinstance(event.get("response"), dict):
            self.response = event["response"]
        if kind == "response.content_part.added" and \
                (event.get("part") or {}).get("type") == "output_text":
            self.part = _part(event)
            self.ids[self.part] = event.get("item_id")
        elif self.hold and kind in _REPEATS_TEXT:
            event = self._rewritten(event)
        elif kind == _TEXT and isinstance(event.get("delta"), str):  # hold off
            self.sent[_part(event)] = self.sent.get(_part(event), "") + event["delta"]
        self._note_output(event)
        return self._send(event)

    def _note_output(self, event: dict) -> None:
        """Keep the output items as the client was told of them (``blocked`` sends them)."""
        kind, item = event["type"], event.get("item")
        if kind in ("response.output_item.added", "response.output_item.done") and \
                isinstance(item, dict):
            self.items[_part(event)[0]] = copy.deepcopy(item)
            if kind == "response.output_item.done":
                self.items_done.add(_part(event)[0])
        elif kind == "response.content_part.added" and isinstance(event.get("part"), dict):
            oi, ci = _part(event)
            content = self._item(oi, event.get("item_id")).setdefault("content", [])
            if isinstance(content, list) and len(content) == ci:
                content.append(copy.deepcopy(event["part"]))

    def _item(self, output_index: int, item_id: Any) -> dict:
        return self.items.setdefault(output_index, {
            "type": "message", "role": "assistant", "id": item_id, "status": "in_progress",
            "content": []})

    def _output_so_far(self) -> list[dict]:
        """The output items the client got, their texts as released (as sent, hold off);
        one whose ``output_item.done`` it did not get is ``incomplete``."""
        text = self.released if self.hold else self.sent
        for oi, ci in text:  # a part that never said it was added
            content = self._item(oi, self.ids.get((oi, ci))).setdefault("content", [])
            if isinstance(content, list) and len(content) == ci:
                content.append({"type": "output_text", "text": "", "annotations": []})
        output = []
        for oi in sorted(self.items):
            item = copy.deepcopy(self.items[oi])
            for ci, c in enumerate(item.get("content") or ()):
                if isinstance(c, dict) and c.get("type") == "output_text":
                    c["text"] = text.get((oi, ci), "")
            if oi not in self.items_done:
                item["status"] = "incomplete"
            output.append(item)
        return output

    def _rewritten(self, event: dict) -> dict:
        """A repeat of the text carries the released text (never the upstream's)."""
        event = copy.deepcopy(event)
        kind, part = event["type"], _part(event)
        if kind == "response.output_text.done":
            event["text"], event["logprobs"] = self.released.get(part, ""), []
        elif kind == "response.content_part.done" and isinstance(event.get("part"), dict) \
                and event["part"].get("type") == "output_text":
            event["part"]["text"] = self.released.get(part, "")
        elif kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            self._rewrite_item(event["item"], part[0])
        return event

    def _rewrite_item(self, item: dict, output_index: int) -> None:
        for j, c in enumerate(item.get("content") or ()):
            if isinstance(c, dict) and c.get("type") == "output_text":
                released = self.released.get((output_index, j), "")
                if c.get("text") != released and isinstance(c.get("annotations"), list):
                    # streamed, the sentences are gone: a citation with offsets into the
                    # upstream's text is dropped once that text changed
                    c["annotations"] = moved(c["annotations"], [(c.get("text") or "", "")])
                c["text"] = released
                c.pop("logprobs", None)

    def _final_response(self, response: dict, status: Optional[str] = None) -> dict:
        response = copy.deepcopy(response)
        if self.hold:
            for i, item in enumerate(response.get("output") or ()):
                if isinstance(item, dict):
                    self._rewrite_item(item, i)
        if status is not None:
            response["status"] = status
        return response

    def final(self, tail: list[dict], report: dict) -> bytes:
        if not tail:
            raise UpstreamProtocolError("upstream closed the stream before the response ended")
        first, *rest = tail
        event = {**first, "guardrail": report}
        if isinstance(first.get("response"), dict):
            event["response"] = self._final_response(first["response"])
        return b"".join([self._send(event), *(self._send(e) for e in rest)])

    def blocked(self, tail: list[dict], report: dict) -> bytes:
        """``response.incomplete`` (``content_filter``) with the output the client got,
        as OpenAI ends a filtered answer (the SDK's final response is this one)."""
        response = self._final_response(
            tail[0].get("response") if tail and isinstance(tail[0].get("response"), dict)
            else self.response, "incomplete")
        response["output"] = self._output_so_far()
        response["incomplete_details"] = {"reason": "content_filter"}
        return self._send({"type": "response.incomplete", "response": response,
                           "guardrail": report})

    def error(self, err: GuardrailError, report: dict) -> bytes:
        body = err.to_json().get("error") or {}
        return self._send({"type": "error", "code": body.get("code") or body.get("type"),
                           "message": body.get("message", err.message), "param": None,
                           "guardrail": report})


def responses_failure(err: GuardrailError) -> bytes:
    """How a Responses stream passed through unchecked ends on an error of ours (cut,
    malformed, silent): an ``error`` event, then ``[DONE]``, as a checked one ends."""
    body = err.to_json().get("error") or {}
    return encode_event({"type": "error", "code": body.get("code") or body.get("type"),
                         "message": body.get("message", err.message), "param": None},
                        event="error") + DONE


async def guarded_response(response: dict, settings: GuardSettings,
                           verifier: Verifier) -> CompletionResult:
    """Check a non-streaming Responses object: its ``output_text`` parts in order, each
    replaced by its released text; the report as ``guardrail``."""
    output = response.get("output")
    if not isinstance(output, list):
        raise UpstreamProtocolError("upstream response has no 'output' array")
    response = copy.deepcopy(response)
    parts = [c for item in response["output"]
             if isinstance(item, dict) and item.get("type") == "message"
             for c in item.get("content") or () if isinstance(c, dict)
             and c.get("type") == "output_text" and isinstance(c.get("text"), str)]
    texts = [c["text"] for c in parts]
    result = await check_parts(texts, settings, verifier)
    for c, text, pieces in zip(parts, result.texts, part_pieces(texts, result.report.sentences)):
        c["text"] = text
        c.pop("logprobs", None)
        if "annotations" in c:  # citations' offsets, into the released text
            c["annotations"] = moved(c["annotations"], pieces)
    body = {**response, "guardrail": result.report.to_json()}
    if settings.on_report is not None:
        settings.on_report(body["guardrail"])
    return CompletionResult(body, result.report, result.blocked)
