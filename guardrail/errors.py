"""One exception tree for guardrail.

    GuardrailError
    ├── BadRequest              the client's request is malformed      -> HTTP 400
    │   └── InputError          a detector input cannot be checked     -> HTTP 400 / CLI error
    │       └── ContextError    the grounding itself cannot be used    -> 400; mid-stream, the
    │                           (empty, over the token limit)             fail policy (never
    │                                                                     "checked")
    ├── NotFound                unknown model, context id, route       -> HTTP 404
    ├── Unauthorized            missing or unknown API key             -> HTTP 401
    ├── Overloaded              the backlog would break the budget     -> HTTP 429/503 + Retry-After
    │   └── StoreUnavailable    shared context store (Redis) down and  -> HTTP 503 + Retry-After
    │                           the in-process tier lacks the entry
    ├── UpstreamError           the LLM server failed                  -> HTTP 502 or its own status
    │   ├── UpstreamStatusError the upstream answered an error status  -> its status and error body
    │   ├── UpstreamUnreachable connection refused / timed out         -> HTTP 502
    │   └── UpstreamProtocolError malformed SSE, stream cut mid-way    -> SSE error event + [DONE]
    ├── DetectorError           the model failed while checking        -> SSE error event (fail closed)
    ├── ModelLoadError          weights/tokenizer could not be loaded
    └── Blocked                 the policy stopped the stream          -> SSE error event + [DONE]

Each carries an HTTP ``status`` and an OpenAI-style error ``type`` so the server
turns any of them into ``{"error": {"message", "type", "code"}}`` the same way.
"""

from __future__ import annotations


class GuardrailError(Exception):
    status: int = 500
    type: str = "guardrail_error"

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.code = code

    def to_json(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "code": self.code}}



def describe(err: BaseException) -> str:
    """One line for a note or a log: a guardrail error's message, else the exception's
    type and text."""
    return err.message if isinstance(err, GuardrailError) else f"{type(err).__name__}: {err}"

class BadRequest(GuardrailError):
    status = 400
    type = "invalid_request_error"


class InputError(BadRequest):
    type = "invalid_input"


class ContextError(InputError):
    """The grounding cannot be prepared: no sentence of the answer can be checked."""

    type = "invalid_context"


class NotFound(GuardrailError):
    status = 404
    type = "not_found"


class Unauthorized(GuardrailError):
    status = 401
    type = "authentication_error"


class Overloaded(GuardrailError):
    status = 503
    type = "overloaded"

    def __init__(self, message: str, *, retry_after: float = 1.0, status: int | None = None,
                 code: str | None = None):
        super().__init__(message, status=status, code=code)
        self.retry_after = retry_after


class StoreUnavailable(Overloaded):
    type = "store_unavailable"


class UpstreamError(GuardrailError):
    status = 502
    type = "upstream_error"


class UpstreamStatusError(UpstreamError):
    """The upstream answered with an error status; ``body`` is its OpenAI-style error."""

    def __init__(self, message: str, *, status: int, body: dict, code: str | None = None,
                 retry_after: str | None = None):
        super().__init__(message, status=status, code=code)
        self.body = body
        self.retry_after = retry_after  # the upstream's Retry-After, passed on as is

    def to_json(self) -> dict:
        return self.body


class UpstreamUnreachable(UpstreamError):
    type = "upstream_unreachable"


class UpstreamProtocolError(UpstreamError):
    type = "upstream_protocol_error"


class DetectorError(GuardrailError):
    status = 500
    type = "detector_error"


class ModelLoadError(GuardrailError):
    type = "model_load_error"


class Blocked(GuardrailError):
    status = 422
    type = "guardrail_blocked"
