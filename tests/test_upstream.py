"""guardrail.proxy.upstream: pooled client, error mapping, key handling."""

import json

import httpx
import pytest
from conftest import free_port

from guardrail.config import UpstreamConfig
from guardrail.errors import (Overloaded, UpstreamError, UpstreamProtocolError,
                              UpstreamStatusError, UpstreamUnreachable)
from guardrail.proxy.upstream import UpstreamClient
from guardrail.testing.fake_upstream import create_fake_upstream

BODY = json.dumps({"model": "m", "stream": True,
                   "messages": [{"role": "user", "content": "hi"}]}).encode()


def client(handler=None, **cfg) -> UpstreamClient:
    cfg.setdefault("base_url", "http://llm.test/v1")
    transport = httpx.MockTransport(handler) if handler else None
    return UpstreamClient(UpstreamConfig(**cfg), transport=transport)


class Cut(httpx.AsyncByteStream):
    async def __aiter__(self):
        yield b'data: {"a": 1}\n\n'
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


async def test_streams_bytes_from_the_fake_upstream():
    up = UpstreamClient(UpstreamConfig(base_url="http://fake/v1"),
                        transport=httpx.ASGITransport(create_fake_upstream()))
    stream = await up.open_stream("chat/completions", BODY)
    data = b"".join([c async for c in stream.chunks()])
    await stream.aclose()
    await up.aclose()
    assert data.startswith(b"data: {") and data.endswith(b"data: [DONE]\n\n")


async def test_key_comes_from_config_never_from_client():
    seen = []

    def handler(request):
        seen.append((str(request.url), request.headers.get("authorization")))
        return httpx.Response(200, json={"ok": True})
    up = client(handler, api_key="sk-guardrail")
    await up.request("GET", "models", client_auth="Bearer sk-client")
    fwd = client(handler, api_key="sk-guardrail", forward_client_key=True)
    await fwd.request("GET", "models", client_auth="Bearer sk-client")
    anon = client(handler)
    await anon.request("GET", "models", client_auth="Bearer sk-client")
    assert seen == [("http://llm.test/v1/models", "Bearer sk-guardrail"),
                    ("http://llm.test/v1/models", "Bearer sk-client"),
                    ("http://llm.test/v1/models", None)]
    for c in (up, fwd, anon):
        await c.aclose()


async def test_error_status_keeps_status_and_openai_body():
    body = {"error": {"message": "model not found", "type": "invalid_request_error",
                      "code": "model_not_found"}}
    up = client(lambda r: httpx.Response(404, json=body))
    with pytest.raises(UpstreamStatusError) as e:
        await up.open_stream("chat/completions", BODY)
    assert e.value.status == 404 and e.value.to_json() == body
    await up.aclose()


async def test_non_json_error_body_is_wrapped():
    up = client(lambda r: httpx.Response(503, text="<html>overloaded</html>"))
    with pytest.raises(UpstreamStatusError) as e:
        await up.request("POST", "chat/completions", BODY)
    assert e.value.status == 503
    err = e.value.to_json()["error"]
    assert "overloaded" in err["message"] and err["type"] == "upstream_error"
    await up.aclose()


async def test_unreachable_upstream():
    up = client(base_url=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(UpstreamUnreachable) as e:
        await up.open_stream("chat/completions", BODY)
    assert e.value.status == 502
    await up.aclose()


@pytest.mark.parametrize("exc, expected, status", [
    (httpx.ConnectTimeout("t"), UpstreamUnreachable, 502),
    (httpx.ReadTimeout("t"), UpstreamError, 504),
    (httpx.PoolTimeout("t"), Overloaded, 503),
])
async def test_transport_errors_are_mapped(exc, expected, status):
    def handler(request):
        raise exc
    up = client(handler)
    with pytest.raises(expected) as e:
        await up.request("POST", "chat/completions", BODY)
    assert e.value.status == status
    await up.aclose()


async def test_cut_mid_stream_is_a_protocol_error():
    up = client(lambda r: httpx.Response(200, stream=Cut()))
    stream = await up.open_stream("chat/completions", BODY)
    got = []
    with pytest.raises(UpstreamProtocolError, match="closed the connection"):
        async for c in stream.chunks():
            got.append(c)
    assert got == [b'data: {"a": 1}\n\n']
    await stream.aclose()
    await up.aclose()


async def test_chat_parses_json_and_rejects_garbage():
    up = client(lambda r: httpx.Response(200, content=b"not json"))
    with pytest.raises(UpstreamProtocolError, match="not JSON"):
        await up.chat({"model": "m", "messages": []})
    await up.aclose()
    up = client(lambda r: httpx.Response(200, json={"choices": []}))
    assert await up.chat({"model": "m", "messages": []}) == {"choices": []}
    await up.aclose()


async def test_response_size_is_bounded():
    up = client(lambda r: httpx.Response(200, content=b"x" * 5000), max_response_bytes=1024)
    with pytest.raises(UpstreamError, match="exceeds 1024 bytes"):
        await up.request("GET", "models")
    await up.aclose()
