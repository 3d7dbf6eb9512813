"""``POST /v1/responses``: the Responses API, guarded like chat completions.

The request's grounding comes from the same places, in the Responses shape:
``function_call_output`` items (tool results), ``instructions`` and system/developer
messages (documents, as configured), the ``guardrail`` extension or a stored
``context_id``; the question is the last user message.  The answer's
``output_text`` is checked sentence by sentence (``stream.responses``).

Grounding held only server-side by the upstream (``previous_response_id``,
``conversation``, built-in tools' results) is not seen: send it in the request.
"""

from __future__ import annotations

from typing import Any

from guardrail.config import ContextConfig
from guardrail.errors import BadRequest
from guardrail.proxy.requests import (ChatRequest, extract_grounding, json_kind,
                                      parse_json_object, pop_extension, whole_characters)

__all__ = ["parse_responses_request"]

_ROLES = ("user", "assistant", "system", "developer")
_TEXT_PARTS = ("input_text", "output_text", "text")


def _text(content: Any, where: str) -> str:
    """A string, or the text parts of an array of content parts (images, files: none)."""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if not isinstance(part, dict):
                raise BadRequest(f"'{where}[{i}]' must be an object, got {json_kind(part)}")
            if part.get("type") in _TEXT_PARTS:
                if not isinstance(part.get("text"), str):
                    raise BadRequest(f"'{where}[{i}].text' must be a string")
                texts.append(part["text"])
        text = "\n".join(texts)
    elif content is None:
        text = ""
    else:
        raise BadRequest(f"'{where}' must be a string or an array of content parts, "
                         f"got {json_kind(content)}")
    whole_characters(text, where)
    return text


def _messages(body: dict) -> list[dict]:
    """The request as chat-style messages, for grounding: instructions as a system
    message, message items by role, tool outputs as tool messages."""
    out: list[dict] = []
    if body.get("instructions") is not None:
        out.append({"role": "system", "content": _text(body["instructions"], "instructions")})
    items = body.get("input")
    if items is None:  # optional: a stored prompt, a conversation, previous_response_id
        return out
    if isinstance(items, str):
        return out + [{"role": "user", "content": _text(items, "input")}]
    if not isinstance(items, list):
        raise BadRequest(f"'input' must be a string or an array of items, got {json_kind(items)}")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadRequest(f"'input[{i}]' must be an object, got {json_kind(item)}")
        kind = item.get("type", "message")
        if kind == "message":
            if item.get("role") not in _ROLES:
                raise BadRequest(f"'input[{i}].role' must be one of {', '.join(_ROLES)}; "
                                 f"got {item.get('role')!r}")
            out.append({"role": item["role"],
                        "content": _text(item.get("content"), f"input[{i}].content")})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append({"role": "tool",
                        "content": _text(item.get("output"), f"input[{i}].output")})
    return out


def parse_responses_request(raw: bytes, cfg: ContextConfig) -> ChatRequest:
    """Validate a Responses body and pull out its grounding (raises ``BadRequest``)."""
    body = parse_json_object(raw)
    model = body.get("model", "")
    if not isinstance(model, str):
        raise BadRequest(f"'model' must be a string, got {json_kind(model)}")
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise BadRequest(f"'stream' must be a boolean, got {json_kind(stream)}")
    for name in ("temperature", "top_p"):
        v = body.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise BadRequest(f"'{name}' must be a number, got {json_kind(v)}")
    v = body.get("max_output_tokens")
    if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
        raise BadRequest(f"'max_output_tokens' must be an integer, got {json_kind(v)}")
    ext, forward = pop_extension(body, raw)
    grounding = extract_grounding(_messages(body), ext.documents, cfg, ext.context_id)
    return ChatRequest(body=body, forward_bytes=forward, model=model, stream=stream, n=1,
                       grounding=grounding, policy=ext.policy,
                       sentence_events=ext.sentence_events)
