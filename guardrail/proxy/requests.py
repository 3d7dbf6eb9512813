"""Grounding extraction and validation of a chat completion request.

What a response is checked against comes from three places, in this order:

1. the request extension ``"guardrail": {"context": [...], "context_id": ..., "policy": {...}}``
   (sent with the openai SDK's ``extra_body``); it is stripped before forwarding;
2. ``role: "tool"`` (and legacy ``role: "function"``) messages: tool results;
3. the system message, when ``context.system_message`` says so.

The question is the last user message.  A request without grounding is passed
through unchecked.  Every validation failure is a ``BadRequest`` naming the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, AsyncIterator, Optional, Sequence

from pydantic import ValidationError
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse

from guardrail.config import ContextConfig, PolicyOverride
from guardrail.errors import BadRequest
from guardrail.stream.sse import json_bytes
from guardrail.types import Grounding

EXTENSION_KEY = "guardrail"
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Sampling fields whose type every OpenAI-compatible server agrees on: refused here,
# with the field named, rather than forwarded to fail upstream.
_NUMBERS = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
_INTEGERS = ("max_tokens", "max_completion_tokens", "seed", "top_logprobs")
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_EXTENSION_KEYS = {"context", "context_id", "policy", "sentence_events"}


@dataclass(frozen=True)
class Extension:
    """The request's ``guardrail`` object."""

    documents: list[str]
    context_id: Optional[str] = None
    policy: Optional[PolicyOverride] = None  # limits not yet applied
    sentence_events: bool = False  # each released sentence's chunk says what happened


@dataclass(frozen=True)
class ChatRequest:
    """A validated ``/v1/chat/completions`` request."""

    body: dict                      # the body sent upstream (extension removed)
    forward_bytes: bytes            # ``body`` serialised; the client's own bytes when unchanged
    model: str
    stream: bool
    n: int
    grounding: Grounding
    policy: Optional[PolicyOverride]  # the request's ``guardrail.policy``, unvalidated limits
    include_usage: bool = False
    sentence_events: bool = False

    @property
    def checked(self) -> bool:
        return not self.grounding.empty or self.grounding.context_id is not None

    @property
    def json_answer(self) -> bool:
        """The client asked for a JSON document: ``response_format`` (chat) or
        ``text.format`` (the Responses API) of type ``json_object`` or ``json_schema``."""
        fmt, text = self.body.get("response_format"), self.body.get("text")
        if fmt is None and isinstance(text, dict):
            fmt = text.get("format")
        return isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")


async def read_body(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """A request body, refused (413) as soon as it grows past ``limit`` bytes.  A client
    that goes away mid-upload is an ordinary 400, not a server error in the logs."""
    body = bytearray()
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) > limit:
                raise BadRequest(f"request body exceeds {limit} bytes", status=413,
                                 code="body_too_large")
    except ClientDisconnect:
        raise BadRequest("the client disconnected while sending the request body",
                         code="client_disconnected") from None
    return bytes(body)


def parse_json_object(raw: bytes) -> dict:
    """Decode a request body that must be a JSON object."""
    if not raw.strip():
        raise BadRequest("request body is empty; expected a JSON object", code="invalid_json")
    try:
        body = json.loads(raw)
    except UnicodeDecodeError:
        raise BadRequest("request body is not valid UTF-8", code="invalid_json") from None
    except json.JSONDecodeError as e:
        raise BadRequest(f"request body is not valid JSON: {e.msg} at line {e.lineno} "
                         f"column {e.colno}", code="invalid_json") from None
    except RecursionError:
        raise BadRequest("request body is nested too deeply", code="invalid_json") from None
    if not isinstance(body, dict):
        raise BadRequest(f"request body must be a JSON object, got {json_kind(body)}",
                         code="invalid_json")
    return body


def json_kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            type(None): "null", int: "number", float: "number"}.get(type(value), "value")


def message_text(content: Any, where: str) -> str:
    """Text of a message ``content``: a string, an array of content parts, or null."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if not isinstance(part, dict):
                raise BadRequest(f"'{where}[{i}]' must be an object, got {json_kind(part)}")
            if part.get("type") == "text":
                if not isinstance(part.get("text"), str):
                    raise BadRequest(f"'{where}[{i}].text' must be a string")
                texts.append(part["text"])
        return "\n".join(texts)
    raise BadRequest(f"'{where}' must be a string, an array of content parts or null, "
                     f"got {json_kind(content)}")


def _check_messages(messages: Any) -> list[dict]:
    if messages is None:
        raise BadRequest("'messages' is required", code="missing_messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest(f"'messages' must be a non-empty array, got "
                         f"{'an empty array' if messages == [] else json_kind(messages)}")
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise BadRequest(f"'messages[{i}]' must be an object, got {json_kind(m)}")
        role = m.get("role")
        if role not in ROLES:
            raise BadRequest(f"'messages[{i}].role' must be one of {', '.join(ROLES)}; "
                             f"got {role!r}")
        whole_characters(message_text(m.get("content"), f"messages[{i}].content"),
                         f"messages[{i}].content")
    return messages


def _check_scalars(body: dict) -> tuple[str, bool, int, bool]:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required and must be a non-empty string")
    stream = body.get("stream")
    if stream is None:  # OpenAI's API takes null as unset, as it does every optional field
        stream = False
    if not isinstance(stream, bool):
        raise BadRequest(f"'stream' must be a boolean, got {json_kind(stream)}")
    n = body.get("n", 1)
    if n is None:
        n = 1
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise BadRequest(f"'n' must be a positive integer, got {n!r}")
    for name in _NUMBERS:
        v = body.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise BadRequest(f"'{name}' must be a number, got {json_kind(v)}")
    for name in _INTEGERS:
        v = body.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise BadRequest(f"'{name}' must be an integer, got {json_kind(v)}")
    opts = body.get("stream_options")
    if opts is not None and not isinstance(opts, dict):
        raise BadRequest(f"'stream_options' must be an object, got {json_kind(opts)}")
    include_usage = bool((opts or {}).get("include_usage", False))
    return model, stream, n, include_usage


# "Context:" on a line of its own, or "use the following context", "the documents
# below", "the provided sources": a system message that hands over material to answer from
_MATERIAL = re.compile(
    r"^\s*(?:#+\s*)?(?:context|documents?|sources?|passages?|references?|knowledge|"
    r"search results|retrieved \w+)\s*:|"
    r"\b(?:following|below|provided|given|attached|these|retrieved)\s+(?:\w+\s+){0,2}"
    r"(?:context|documents?|sources?|passages?|excerpts?|articles?|search results|"
    r"information|facts|records|data)\b|"
    r"\b(?:context|documents?|sources?|passages?|excerpts?)\s+(?:\w+\s+){0,2}"
    r"(?:below|above|provided)\b", re.IGNORECASE | re.MULTILINE)


def _tagged(text: str, cfg: ContextConfig) -> list[str]:
    if not cfg.document_tags:
        return []
    tags = "|".join(re.escape(t) for t in cfg.document_tags)
    pattern = re.compile(rf"<({tags})(?:\s[^>]*)?>(.*?)</\1\s*>", re.DOTALL | re.IGNORECASE)
    return [m.group(2).strip() for m in pattern.finditer(text) if m.group(2).strip()]


def _system_documents(text: str, cfg: ContextConfig) -> list[str]:
    if cfg.system_message == "whole":
        return [text] if text.strip() else []
    if cfg.system_message == "documents":
        return _tagged(text, cfg)
    if cfg.system_message == "auto":
        tagged = _tagged(text, cfg)
        if tagged:
            return tagged
        if len(text.strip()) >= cfg.auto_min_chars and _MATERIAL.search(text):
            return [text]
    return []


def documents_list(value: Any, field: str, *, require_text: bool = False,
                   code: Optional[str] = None) -> list[str]:
    """Grounding documents as a client sends them: a string or an array of strings
    (``BadRequest`` naming ``field``); with ``require_text``, at least one holds text."""
    docs = [value] if isinstance(value, str) else value
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
        raise BadRequest(f"'{field}' must be a string or an array of strings", code=code)
    if require_text and not any(d.strip() for d in docs):
        raise BadRequest(f"'{field}' holds no text", code=code)
    for d in docs:
        whole_characters(d, field)
    return docs


def whole_characters(text: str, field: str) -> None:
    """``BadRequest`` (``invalid_unicode``) when ``text`` holds a lone UTF-16 surrogate:
    no tokenizer reads it and UTF-8 cannot carry it upstream."""
    if LONE_SURROGATE.search(text):
        raise BadRequest(f"'{field}' holds a lone UTF-16 surrogate (half of a character); "
                         "send whole characters", code="invalid_unicode")


def parse_extension(ext: Any) -> Extension:
    """The ``guardrail`` object; null, there or for any of its fields, means unset (as
    OpenAI reads a null parameter)."""
    if ext is None:
        return Extension([])
    if not isinstance(ext, dict):
        raise BadRequest(f"'guardrail' must be an object, got {json_kind(ext)}")
    unknown = sorted(set(ext) - _EXTENSION_KEYS)
    if unknown:
        raise BadRequest(f"'guardrail' has unknown field(s) {', '.join(unknown)}; "
                         f"known: {', '.join(sorted(_EXTENSION_KEYS))}")
    context = ext.get("context")
    docs = [] if context is None else documents_list(context, "guardrail.context")
    context_id = ext.get("context_id")
    if context_id is not None and (not isinstance(context_id, str) or not context_id):
        raise BadRequest("'guardrail.context_id' must be a non-empty string")
    events = ext.get("sentence_events")
    events = False if events is None else events
    if not isinstance(events, bool):
        raise BadRequest(f"'guardrail.sentence_events' must be a boolean, got {json_kind(events)}")
    return Extension(docs, context_id, parse_policy(ext.get("policy")), events)


def parse_policy(value: Any, where: str = "guardrail.policy") -> Optional[PolicyOverride]:
    """A request's policy (None: none given); ``where``: its name in error messages
    (``policy`` in a ``/v1/verify`` body)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRequest(f"'{where}' must be an object, got {json_kind(value)}")
    try:
        return PolicyOverride.model_validate(value)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise BadRequest(f"'{where}.{loc}': {err['msg']}") from None


def extract_grounding(messages: list[dict], ext_docs: list[str], cfg: ContextConfig,
                      context_id: Optional[str] = None) -> Grounding:
    """Documents from the extension, tool messages and (if configured) system messages."""
    docs = [d for d in ext_docs if d.strip()]
    question = ""
    for i, m in enumerate(messages):
        role, text = m["role"], message_text(m.get("content"), f"messages[{i}].content")
        if role in ("tool", "function") and cfg.tool_messages and text.strip():
            docs.append(text)
        elif role in ("system", "developer"):
            docs.extend(_system_documents(text, cfg))
        elif role == "user":
            question = text
    check_size(docs, cfg)
    return Grounding(documents=tuple(docs), question=question, context_id=context_id)


def check_size(docs: Sequence[str], cfg: ContextConfig, what: str = "grounding") -> None:
    """The one size rule for grounding, inline, stored or both (``context_too_large``)."""
    if len(docs) > cfg.max_documents:
        raise BadRequest(f"{what} has {len(docs)} documents; the limit is "
                         f"{cfg.max_documents}", code="context_too_large")
    total = sum(len(d) for d in docs)
    if total > cfg.max_context_chars:
        raise BadRequest(f"{what} has {total} characters; the limit is "
                         f"{cfg.max_context_chars} (context.max_context_chars)",
                         code="context_too_large")


def parse_chat_request(raw: bytes, cfg: ContextConfig) -> ChatRequest:
    """Validate a chat completion body and pull out its grounding (raises ``BadRequest``)."""
    body = parse_json_object(raw)
    messages = _check_messages(body.get("messages"))
    model, stream, n, include_usage = _check_scalars(body)
    ext, forward = pop_extension(body, raw)
    grounding = extract_grounding(messages, ext.documents, cfg, ext.context_id)
    req = ChatRequest(body=body, forward_bytes=forward, model=model, stream=stream, n=n,
                      grounding=grounding, policy=ext.policy, include_usage=include_usage,
                      sentence_events=ext.sentence_events)
    modalities = body.get("modalities")
    if req.checked and (body.get("audio") is not None or
                        isinstance(modalities, list) and "audio" in modalities):
        raise BadRequest("an audio answer cannot be checked: guardrail reads and redacts "
                         "text, and the audio would say what it withholds; ask for "
                         "'modalities': ['text'] (and speak the checked text), or send "
                         "the request without grounding", code="unsupported_modality")
    return req


class SafeJSONResponse(JSONResponse):
    """A JSON response that never fails on a lone UTF-16 surrogate an upstream sent (in
    a part nobody checks: another choice, a tool call's arguments): such a body goes out
    with ASCII escapes, which any client reads back as the upstream wrote it."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


def pop_extension(body: dict, raw: bytes) -> tuple[Extension, bytes]:
    """The ``guardrail`` object taken out of ``body``, and the bytes to send upstream
    (the client's own when there was none)."""
    if EXTENSION_KEY not in body:
        return Extension([]), raw
    ext = parse_extension(body.pop(EXTENSION_KEY))
    return ext, json_bytes(body)  # a lone surrogate outside the messages: escaped as sent
