"""Regenerate hooks: who rewrites a flagged sentence (all the I/O of regeneration).

Three ``Regenerator``s: the built-in upstream rewrite (``UpstreamRegenerator``), a
``module:function`` callable and an HTTP hook; ``RegeneratorFactory`` picks one from
``policy.regenerate.hook`` once per app and binds the client's key per request.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
from typing import Awaitable, Callable, Optional, Protocol, Union

import httpx

from guardrail.config import RegenerateConfig
from guardrail.errors import UpstreamProtocolError, UpstreamStatusError
from guardrail.stream.policy import RegenerateRequest, Regenerator
from guardrail.types import Rewrite


def fill_prompt(template: str, req: RegenerateRequest) -> str:
    """Substitute the four fields without ``str.format`` (documents hold braces)."""
    fields = {"context": req.grounding.text, "question": req.grounding.question,
              "answer_so_far": req.answer_so_far.strip() or "(nothing yet)",
              "sentence": req.sentence}
    # one pass: a field's value that holds "{sentence}" is not filled in again
    return re.sub(r"\{(" + "|".join(fields) + r")\}", lambda m: fields[m.group(1)], template)


class UpstreamRegenerator:
    """The built-in rewrite: one non-streaming call to the upstream LLM.

    A model that refuses a parameter of it (OpenAI's reasoning models: ``max_tokens``,
    "use max_completion_tokens"; a ``temperature`` other than their default) is asked
    again without it, and ``refused`` (shared by the app's regenerators) remembers that
    for the model's later rewrites."""

    def __init__(self, upstream: "ChatClient", cfg: RegenerateConfig,
                 client_auth: Optional[str] = None,
                 refused: Optional[dict[str, set[str]]] = None):
        self.upstream, self.cfg, self.client_auth = upstream, cfg, client_auth
        self.refused = {} if refused is None else refused

    async def rewrite(self, req: RegenerateRequest) -> str:
        # a deadline for the whole call: httpx's timeout is per read, and a reply sent a
        # few bytes at a time would never reach it
        reply = await asyncio.wait_for(self._call(req), self.cfg.timeout_s)
        try:
            content = reply["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise UpstreamProtocolError("the rewrite reply has no choices[0].message") from None
        return str(content)

    async def _call(self, req: RegenerateRequest) -> dict:
        model = self.cfg.model or req.model
        while True:
            refused = self.refused.get(model, set())
            body = {"model": model, "stream": False, "messages": [
                {"role": "user", "content": fill_prompt(self.cfg.prompt, req)}]}
            body["max_completion_tokens" if "max_tokens" in refused else "max_tokens"] = \
                self.cfg.max_tokens
            if "temperature" not in refused:
                body["temperature"] = self.cfg.temperature
            try:
                return await self.upstream.chat(body, self.client_auth,
                                                timeout=self.cfg.timeout_s)
            except UpstreamStatusError as e:
                param = _refused_parameter(e)
                if param is None or param in refused:
                    raise
                self.refused.setdefault(model, set()).add(param)


def _refused_parameter(err: UpstreamStatusError) -> Optional[str]:
    """``max_tokens`` or ``temperature`` when the upstream's 400 refuses that parameter
    of a rewrite call (OpenAI's ``param``, or the message naming it)."""
    error = err.body.get("error") if isinstance(err.body, dict) else None
    if err.status != 400 or not isinstance(error, dict):
        return None
    message = str(error.get("message") or "")
    return next((p for p in ("max_tokens", "temperature")
                 if error.get("param") == p or f"'{p}'" in message), None)


Rewritten = Union[str, Rewrite]  # what a hook returns: the sentence, or it with documents


class CallableRegenerator:
    """A ``module:function`` hook, sync (run in a thread) or async."""

    def __init__(self, fn: Callable[[RegenerateRequest], "Rewritten | Awaitable[Rewritten]"],
                 timeout_s: float):
        self.fn, self.timeout_s = fn, timeout_s

    async def rewrite(self, req: RegenerateRequest) -> str:
        if inspect.iscoroutinefunction(self.fn):
            result = await asyncio.wait_for(self.fn(req), self.timeout_s)
        else:
            result = await asyncio.wait_for(asyncio.to_thread(self.fn, req), self.timeout_s)
        if not isinstance(result, (str, Rewrite)):
            raise TypeError(f"regenerate hook returned {type(result).__name__}, "
                            "not str or guardrail.types.Rewrite")
        return result


class HttpRegenerator:
    """An HTTP hook: POST ``RegenerateRequest.to_json()``, expect ``{"text": "..."}``,
    with ``"documents": [...]`` when the hook retrieved grounding for the rewrite."""

    def __init__(self, url: str, client: httpx.AsyncClient, timeout_s: float):
        self.url, self.client, self.timeout_s = url, client, timeout_s

    async def rewrite(self, req: RegenerateRequest) -> Rewrite:
        r = await asyncio.wait_for(self.client.post(  # the whole call, not each read
            self.url, json=req.to_json(), timeout=self.timeout_s), self.timeout_s)
        r.raise_for_status()
        data = r.json()
        docs = data.get("documents", []) if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(data.get("text"), str) \
                or not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
            raise ValueError(f"regenerate hook {self.url} must answer {{\"text\": str}}, "
                             "optionally with \"documents\": [str, ...]")
        return Rewrite(data["text"], tuple(docs))


def load_callable(path: str) -> Callable:
    """Import ``module:function``; raises ValueError naming what is missing."""
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ValueError(f"regenerate hook {path!r}: cannot import {module_name!r}: {e}") \
            from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"regenerate hook {path!r}: {module_name} has no callable {attr!r}")
    return fn


class RegeneratorFactory:
    """Built once per app (a bad hook fails at start-up); ``for_request`` binds the
    client's key for the built-in upstream rewrite."""

    def __init__(self, cfg: RegenerateConfig, upstream: "ChatClient"):
        self.cfg, self.upstream = cfg, upstream
        self._refused: dict[str, set[str]] = {}  # model -> parameters it refused
        self._hook: Optional[Regenerator] = None
        self._client: Optional[httpx.AsyncClient] = None
        if cfg.hook and cfg.hook.startswith(("http://", "https://")):
            self._client = httpx.AsyncClient(timeout=cfg.timeout_s)
            self._hook = HttpRegenerator(cfg.hook, self._client, cfg.timeout_s)
        elif cfg.hook:
            self._hook = CallableRegenerator(load_callable(cfg.hook), cfg.timeout_s)

    def for_request(self, client_auth: Optional[str] = None) -> Regenerator:
        return self._hook or UpstreamRegenerator(self.upstream, self.cfg, client_auth,
                                                 self._refused)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class ChatClient(Protocol):
    async def chat(self, body: dict, client_auth: Optional[str] = None,
                   timeout: Optional[float] = None) -> dict: ...
