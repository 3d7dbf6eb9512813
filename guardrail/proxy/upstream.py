"""The client for the upstream OpenAI-compatible LLM server.

One pooled ``httpx.AsyncClient`` per app, timeouts on every phase, transport
injectable (tests pass an ``httpx.ASGITransport`` or ``MockTransport``).  Every
httpx failure is mapped onto the error tree:

    connect refused / connect timeout      -> UpstreamUnreachable (502)
    no free pooled connection in time      -> Overloaded (503)
    error status (4xx/5xx)                 -> UpstreamStatusError (its status, its body)
    silence longer than read_timeout_s     -> UpstreamError (504)
    connection cut while reading the body  -> UpstreamProtocolError

The upstream key comes from the config, never from the client, unless
``upstream.forward_client_key`` is set.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import AsyncIterator, Optional

import httpx

from guardrail.config import UpstreamConfig, redact_url
from guardrail.errors import (Overloaded, UpstreamError, UpstreamProtocolError,
                              UpstreamStatusError, UpstreamUnreachable)
from guardrail.stream.sse import json_bytes

log = logging.getLogger(__name__)

PASSED_ON = ("x-request-id", "traceparent", "tracestate", "openai-organization",
             "openai-project")
"""A client's request headers the upstream receives too: its request id and trace, and
which OpenAI organization and project the request is billed to."""
PASSED_BACK = ("x-request-id", "openai-processing-ms", "openai-version",
               "openai-organization", "x-ratelimit-")
"""The upstream's response headers the client receives too (a name ending in ``-``:
every header it begins): the id to quote to the provider, and its rate limits."""


def passed(headers, names: tuple[str, ...]) -> dict[str, str]:
    """The headers of ``headers`` (a mapping or httpx/Starlette headers) that ``names``
    lets through, names in lower case."""
    return {k.lower(): v for k, v in headers.items()
            if any(k.lower() == n or n.endswith("-") and k.lower().startswith(n)
                   for n in names)}


@dataclass(frozen=True)
class UpstreamReply:
    """A complete (non-streaming) upstream answer, passed through byte for byte."""

    status: int
    content: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()  # the upstream's, as ``PASSED_BACK`` allows

    def json(self) -> dict:
        try:
            data = json.loads(self.content)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise UpstreamProtocolError("upstream answered with a body that is not JSON") \
                from None
        if not isinstance(data, dict):
            raise UpstreamProtocolError("upstream answered with JSON that is not an object")
        return data


def _map_transport_error(exc: httpx.HTTPError, base_url: str) -> Exception:
    """The client-facing error for a transport failure.  Its message never names the
    upstream's address (an internal URL); the log line does."""
    log.warning("upstream %s: %s: %s", redact_url(base_url), type(exc).__name__, exc)
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return UpstreamUnreachable(f"the upstream LLM server is unreachable "
                                   f"({type(exc).__name__})")
    if isinstance(exc, httpx.PoolTimeout):
        return Overloaded("no free upstream connection; retry later", retry_after=1.0)
    if isinstance(exc, httpx.ReadTimeout):
        return UpstreamError("the upstream LLM server did not answer in time", status=504,
                             code="upstream_timeout")
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return UpstreamProtocolError("the upstream LLM server closed the connection "
                                     f"({type(exc).__name__})")
    return UpstreamError(f"upstream request failed ({type(exc).__name__})")


def _own_error(content: bytes) -> Optional[dict]:
    """The upstream's OpenAI-style error body (``{"error": {...}}``), if it is one."""
    try:
        data = json.loads(content)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("error"), dict) else None


def _error_body(status: int, content: bytes) -> dict:
    """The upstream's OpenAI-style error body, or one built around its text."""
    own = _own_error(content)
    if own is not None:
        return own
    text = content.decode("utf-8", "replace").strip()[:500] or f"HTTP {status}"
    return {"error": {"message": f"upstream error: {text}", "type": "upstream_error",
                      "code": status}}


class UpstreamStream:
    """An open streaming response; iterate ``chunks()`` once, then ``aclose()``."""

    def __init__(self, response: httpx.Response, base_url: str):
        self.response = response
        self._base_url = base_url
        self._stopped: Optional[Exception] = None
        self._closing: Optional[asyncio.Task] = None

    async def chunks(self) -> AsyncIterator[bytes]:
        """Raw body bytes as they arrive; transport failures become guardrail errors."""
        try:
            async for chunk in self.response.aiter_bytes():
                if self._stopped is not None:
                    break
                if chunk:
                    yield chunk
        except httpx.HTTPError as e:
            if self._stopped is None:
                raise _map_transport_error(e, self._base_url) from e
        if self._stopped is not None:
            raise self._stopped

    def stop(self, reason: Exception) -> None:
        """End the stream from outside (a server shutting down): the reader gets
        ``reason``, as from a failed upstream, and ends the client's stream cleanly."""
        if self._stopped is None:
            self._stopped = reason
            self._closing = asyncio.get_running_loop().create_task(self.response.aclose())

    async def aclose(self) -> None:
        """Idempotent; closing an unfinished stream drops the upstream connection,
        which is how the upstream learns that the client went away."""
        await self.response.aclose()


class UpstreamClient:
    def __init__(self, cfg: UpstreamConfig,
                 transport: Optional[httpx.AsyncBaseTransport] = None):
        self.cfg = cfg
        timeout = httpx.Timeout(connect=cfg.connect_timeout_s, read=cfg.read_timeout_s,
                                write=cfg.write_timeout_s, pool=cfg.pool_timeout_s)
        limits = httpx.Limits(max_connections=cfg.max_connections,
                              max_keepalive_connections=cfg.max_keepalive_connections)
        self._client = httpx.AsyncClient(base_url=cfg.base_url, timeout=timeout,
                                         limits=limits, transport=transport)

    async def aclose(self) -> None:
        await self._client.aclose()

    def headers(self, client_auth: Optional[str] = None, *, stream: bool = False,
                client: Optional[dict] = None) -> dict:
        """``client``: the client's headers that pass on (``PASSED_ON``)."""
        h = {**(client or {}), "content-type": "application/json",
             "accept": "text/event-stream" if stream else "application/json"}
        if stream:  # compression would make the upstream buffer tokens
            h["accept-encoding"] = "identity"
        if self.cfg.forward_client_key:
            if client_auth:
                h["authorization"] = client_auth
        elif self.cfg.api_key is not None:
            h["authorization"] = f"Bearer {self.cfg.api_key.get_secret_value()}"
        return h

    async def _raise_for_status(self, response: httpx.Response, stream: bool = False
                                ) -> None:
        """An error status raises with the upstream's own error body; so does, for a
        stream, a 2xx whose body is JSON and not an event stream (an upstream that
        reports an error, e.g. overload, as ``200 {"error": ...}``)."""
        json_body = stream and response.headers.get("content-type", "").split(";")[0] \
            .strip().lower() == "application/json"
        if response.status_code < 400 and not json_body:
            return
        content = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                content += chunk
                if len(content) >= self.cfg.max_error_body_bytes:
                    break
        except httpx.HTTPError:
            pass  # the status is what matters; a cut error body is still reported
        finally:
            await response.aclose()
        body = _error_body(response.status_code, bytes(content))
        status = response.status_code
        if status < 400:  # a JSON body where an event stream was asked for
            if _own_error(bytes(content)) is None:
                raise UpstreamProtocolError("upstream answered a streaming request with a "
                                            "JSON body, not an event stream")
            status = 502
        raise UpstreamStatusError(str(body["error"].get("message", "upstream error")),
                                  status=status, body=body,
                                  retry_after=response.headers.get("retry-after"))

    async def open_stream(self, path: str, body: bytes, client_auth: Optional[str] = None,
                          client: Optional[dict] = None) -> UpstreamStream:
        """POST ``body`` and return once the upstream's headers arrived with a 2xx."""
        request = self._client.build_request(
            "POST", path, content=body, headers=self.headers(client_auth, stream=True,
                                                             client=client))
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as e:
            raise _map_transport_error(e, self.cfg.base_url) from e
        await self._raise_for_status(response, stream=True)
        return UpstreamStream(response, self.cfg.base_url)

    async def request(self, method: str, path: str, body: Optional[bytes] = None,
                      client_auth: Optional[str] = None,
                      timeout: Optional[float] = None,
                      client: Optional[dict] = None) -> UpstreamReply:
        """A whole request/response (non-streaming chat, ``/models``, regeneration),
        bounded by ``max_response_bytes``; error statuses raise."""
        request = self._client.build_request(
            method, path, content=body, headers=self.headers(client_auth, client=client),
            timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as e:
            raise _map_transport_error(e, self.cfg.base_url) from e
        await self._raise_for_status(response)
        content = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                content += chunk
                if len(content) > self.cfg.max_response_bytes:
                    raise UpstreamError(f"upstream response exceeds "
                                        f"{self.cfg.max_response_bytes} bytes")
        except httpx.HTTPError as e:
            raise _map_transport_error(e, self.cfg.base_url) from e
        finally:
            await response.aclose()
        return UpstreamReply(response.status_code, bytes(content),
                             response.headers.get("content-type", "application/json"),
                             tuple(passed(response.headers, PASSED_BACK).items()))

    async def chat(self, body: dict, client_auth: Optional[str] = None,
                   timeout: Optional[float] = None) -> dict:
        """A non-streaming chat completion as a parsed JSON object."""
        raw = json_bytes(body)
        reply = await self.request("POST", "chat/completions", raw, client_auth, timeout)
        return reply.json()
