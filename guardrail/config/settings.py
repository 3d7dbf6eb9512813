"""Typed, documented settings: one section per pipeline stage.

Sources, lowest precedence first: defaults < YAML file < ``GUARDRAIL_*`` environment
variables < explicit overrides (CLI flags).  Environment variables name a field as
``GUARDRAIL_<SECTION>__<FIELD>`` (double underscore between levels), e.g.
``GUARDRAIL_UPSTREAM__BASE_URL=http://llm:8000/v1`` or
``GUARDRAIL_POLICY__REGENERATE__MAX_ATTEMPTS=3``; values are parsed as YAML scalars,
so ``true``, ``0.7`` and ``[a, b]`` get their natural types.

Every field carries its documentation as the docstring under it, so
``GuardrailConfig.model_json_schema()`` is the reference.  Unknown keys are errors.
"""

from __future__ import annotations

import os
import typing
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Sequence

import yaml
from pydantic import Field, SecretStr, ValidationError, model_validator

from guardrail.config.base import Section, redact_url
from guardrail.config.cache import CacheConfig
from guardrail.config.detector import DetectorConfig
from guardrail.config.policy import PolicyConfig, PolicyLimits, PolicyOverride, check_hold_action
from guardrail.config.scheduler import DEFAULT_TENANT, SchedulerConfig

ENV_PREFIX = "GUARDRAIL_"

class ServerConfig(Section):
    host: str = "127.0.0.1"
    """Interface uvicorn binds to."""
    port: int = Field(8080, ge=0, le=65535)
    """TCP port (0 picks a free one)."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """uvicorn and guardrail log level."""
    drain_grace_s: float = Field(30.0, ge=0)
    """On SIGTERM (``guardrail serve``): stop accepting, let streams in flight finish for
    this long, then end each with an error event (``shutting_down``) and ``[DONE]``."""
    max_concurrent_requests: int = Field(256, ge=1)
    """Chat requests in flight beyond this are answered 503 with Retry-After."""
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    """Largest accepted request body; larger bodies are answered 413."""
    ping_interval_s: float = Field(15.0, ge=0)
    """SSE keep-alive comment interval while a stream waits on checks (0 disables)."""
    require_api_key: Optional[bool] = None
    """Whether a client must send a key listed under ``tenants`` (else 401).  None: yes
    as soon as a tenant lists ``api_keys``; false lets clients without a known key in
    as the ``default`` tenant; without tenants everyone is the ``default`` tenant."""
    overload_status: Literal[429, 503] = 503
    """Status of a request refused for load (verification backlog over
    ``scheduler.latency_budget_s``, pending checks at ``scheduler.max_pending_checks``,
    ``max_concurrent_requests`` reached); it always carries ``Retry-After``."""


class UpstreamConfig(Section):
    base_url: str = "http://127.0.0.1:8000/v1"
    """Base URL of the OpenAI-compatible LLM server, including ``/v1``."""
    api_key: Optional[SecretStr] = None
    """Key guardrail sends upstream as ``Authorization: Bearer``. Clients never see it."""
    forward_client_key: bool = False
    """Send the client's own ``Authorization`` header upstream instead of ``api_key``."""
    connect_timeout_s: float = Field(5.0, gt=0)
    """Time to open a connection to the upstream."""
    read_timeout_s: float = Field(120.0, gt=0)
    """Longest silence between two reads from the upstream (per chunk, not per answer)."""
    write_timeout_s: float = Field(30.0, gt=0)
    """Time to send the request body."""
    pool_timeout_s: float = Field(5.0, gt=0)
    """Time to wait for a free pooled connection."""
    max_connections: int = Field(200, ge=1)
    """Connection pool size."""
    max_keepalive_connections: int = Field(50, ge=0)
    """Idle connections kept open for reuse."""
    max_error_body_bytes: int = Field(64 * 1024, ge=256)
    """An upstream error body is read up to this size, then cut."""
    max_response_bytes: int = Field(16 * 1024 * 1024, ge=1024)
    """Largest non-streaming upstream body guardrail reads."""

    @model_validator(mode="after")
    def _check_url(self) -> "UpstreamConfig":
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"upstream.base_url must start with http:// or https://, "
                             f"got {redact_url(self.base_url)!r}")
        if self.max_keepalive_connections > self.max_connections:
            raise ValueError(
                f"upstream.max_keepalive_connections ({self.max_keepalive_connections}) "
                f"exceeds upstream.max_connections ({self.max_connections})")
        return self


class VerificationConfig(Section):
    """What a stream does with its checks.  How checks are run (exits, context windows,
    batching, left context, queue bounds, timeouts) is the ``scheduler`` section."""

    engine: Literal["scheduler", "local"] = "scheduler"
    """``scheduler``: every check of every stream goes through one batching scheduler
    with the context cache (``guardrail.engine.scheduler``).  ``local``: one check at a time,
    no batching, no prepared-context cache (``LocalVerifier``; a baseline)."""
    on_error: Literal["closed", "open"] = "closed"
    """Detector failure: ``closed`` ends the stream with an error event; ``open``
    releases the sentence unchecked and marks it in the guardrail object."""
    final_pass: bool = True
    """Run the full-depth pass over the whole answer at the end of the stream."""
    max_sentences_in_flight: int = Field(64, ge=1)
    """Per stream: sentences awaiting release before upstream reading pauses."""
    no_grounding: Literal["pass", "refuse"] = "pass"
    """A request in which no grounding was found (no tool result, no
    ``guardrail.context``/``context_id``, no system documents): ``pass`` forwards it
    unchecked (``x-guardrail-verified: false``, ``x-guardrail-grounding: none``, counted
    in ``guardrail_ungrounded_requests_total``); ``refuse`` answers 400."""
    sentence_judge: bool = True
    """Decide per sentence with the model's judge (``guardrail.evidence``), if it has
    one; False: a sentence is flagged when any token reaches the threshold."""
    settle_restated: bool = True
    """With the sentence judge: release a sentence that copies the grounding word for
    word or says one of its lines again without a model call (the judge passes it
    whatever the detector says), once the judge's evidence about the grounding is built.
    False: check it like any other (the decision is the same)."""
    other_languages: Literal["pass", "withhold", "check"] = "pass"
    """A sentence in a language the detector was not trained on (the shipped ones read
    English: ``guardrail.evidence.language`` tells by script and function words), or
    any sentence checked against a grounding mostly in one: ``pass`` releases it as
    the upstream wrote it, unchecked (``checked: false, skipped: "language"`` in the
    report, counted in ``guardrail_sentences_unchecked_total``), since the detector's
    scores there mean nothing; ``withhold`` sends the redaction marker in its place
    (``action: redact``, the same marks: nothing unverified reaches the client);
    ``check`` checks it anyway (a detector trained on it)."""
    other_choices: Literal["reject", "pass"] = "reject"
    """Requests with ``n>1`` and context: only choice 0 is checked.  ``reject`` answers
    400; ``pass`` forwards choices >= 1 unchecked and lists them as unchecked."""


class ContextConfig(Section):
    tool_messages: bool = True
    """Use ``role: tool`` (and legacy ``function``) message contents as documents."""
    system_message: Literal["auto", "off", "documents", "whole"] = "auto"
    """System message as grounding: ``documents`` takes the text inside
    ``document_tags``; ``whole`` takes the entire system message; ``auto`` (the
    most common RAG layout, checked by default) takes the tagged documents if there
    are any, else the whole system message when it hands the model material to answer
    from (a ``Context:``/``Documents:`` line, or "use the following context", "the
    documents below", ... and at least ``auto_min_chars``); ``off`` ignores it."""
    auto_min_chars: int = Field(200, ge=0)
    """``auto``: a shorter system message is an instruction, never grounding."""
    document_tags: tuple[str, ...] = ("document", "context")
    """Tag names whose ``<tag>...</tag>`` bodies are documents in ``documents`` mode."""
    max_documents: int = Field(64, ge=1)
    """More documents than this in one request is a 400."""
    max_context_chars: int = Field(400_000, ge=1)
    """More grounding characters than this in one request is a 400."""


class TenantConfig(Section):
    api_keys: tuple[SecretStr, ...] = ()
    """Client keys (``Authorization: Bearer``) that identify this tenant."""
    policy: PolicyOverride = PolicyOverride()
    """The tenant's changes to the default policy (not subject to ``limits``)."""


class GuardrailConfig(Section):
    server: ServerConfig = ServerConfig()
    upstream: UpstreamConfig = UpstreamConfig()
    detector: DetectorConfig = DetectorConfig()
    policy: PolicyConfig = PolicyConfig()
    """The default policy for every request."""
    limits: PolicyLimits = PolicyLimits()
    """Bounds on per-request policy overrides."""
    verification: VerificationConfig = VerificationConfig()
    scheduler: SchedulerConfig = SchedulerConfig()
    """How sentence checks run: exits, context windows, cross-stream batching, left
    context, admission."""
    cache: CacheConfig = CacheConfig()
    """Prepared-context cache and the context store (``PUT /v1/contexts``): an
    in-process LRU, in front of Redis when ``redis_url`` is set."""
    context: ContextConfig = ContextConfig()
    tenants: dict[str, TenantConfig] = {}
    """Named tenants, each recognised by its API keys.  Every cached or stored context
    is namespaced by tenant.  The name ``default`` is reserved for requests without
    a tenant."""

    @property
    def keys_required(self) -> bool:
        """Whether requests need a tenant's key (``server.require_api_key``, resolved)."""
        has_keys = any(t.api_keys for t in self.tenants.values())
        req = self.server.require_api_key
        return has_keys if req is None else req

    @model_validator(mode="after")
    def _cross_checks(self) -> "GuardrailConfig":
        t = self.policy.threshold
        seen: dict[str, str] = {}
        if DEFAULT_TENANT in self.tenants:
            raise ValueError(f"tenants.{DEFAULT_TENANT}: the name is reserved for requests "
                             "without a tenant; choose another")
        for name, tenant in self.tenants.items():
            for key in tenant.api_keys:
                other = seen.setdefault(key.get_secret_value(), name)
                if other != name:
                    raise ValueError(f"tenants {other!r} and {name!r} share an API key")
            hold = self.policy.hold if tenant.policy.hold is None else tenant.policy.hold
            action = tenant.policy.action or self.policy.action
            try:
                check_hold_action(hold, action)
            except ValueError as e:
                raise ValueError(f"tenants.{name}: {e}") from None
        if self.server.require_api_key and not seen:
            raise ValueError("server.require_api_key=true but no tenant lists api_keys")
        if t is not None and not (self.limits.min_threshold <= t <= self.limits.max_threshold):
            # not an error for the operator's own default, but almost always a mistake
            raise ValueError(f"policy.threshold ({t}) lies outside limits "
                             f"[{self.limits.min_threshold}, {self.limits.max_threshold}]")
        return self

    def tenant_for_key(self, key: Optional[str]) -> Optional[str]:
        """Name of the tenant owning ``key``, or None."""
        if not key:
            return None
        for name, tenant in self.tenants.items():
            if any(k.get_secret_value() == key for k in tenant.api_keys):
                return name
        return None


SECRETS = ("api_key", "api_keys")
"""Fields read from the environment as written, never as YAML: "12345678" is a key, not
a number, "00123" not 83, "null" not no key (a list of keys: ``[a, b]``, each as written;
one key alone is a list of one)."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (the last would win
    silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _parse_env_value(raw: str, path: Sequence[str] = ()) -> Any:
    """An environment value for the field at ``path``: as written for a text field
    ("::" is a host, "[redacted]" a marker, "2024" a key prefix) and a secret, else as a
    YAML scalar or list ("0.5", "false", "[8, 32]")."""
    try:
        if path and path[-1] in SECRETS:
            if raw.lstrip().startswith("["):
                return yaml.load(raw, Loader=yaml.BaseLoader)
            return [raw] if path[-1] == "api_keys" else raw  # a tenant's one key
        if _text_field(path):
            return raw
        return yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        return raw


def _text_field(path: Sequence[str]) -> bool:
    """Whether ``path`` names a field of text (``str`` or ``Optional[str]``)."""
    node: Any = GuardrailConfig
    parts = iter(path)
    for part in parts:
        fields = getattr(node, "model_fields", None) if isinstance(node, type) else None
        if not fields or part not in fields:
            return False
        node = fields[part].annotation
        if typing.get_origin(node) is dict:  # named entries (tenants): the next part names one
            node = typing.get_args(node)[1]
            next(parts, None)
    return node is str or node == Optional[str]


def _set_path(tree: dict, path: list[str], value: Any) -> None:
    for part in path[:-1]:
        node = tree.get(part)
        if not isinstance(node, dict):
            node = tree[part] = {}
        tree = node
    tree[path[-1]] = value


def env_overrides(env: Mapping[str, str]) -> dict:
    """``GUARDRAIL_A__B=v`` -> ``{"a": {"b": v}}``."""
    tree: dict = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX):].split("__")]
        if all(path):
            _set_path(tree, path, _parse_env_value(raw, path))
    return tree


def _merge(base: dict, top: Mapping, where: str = "") -> dict:
    """``top`` over ``base``.  A key of ``top`` names the key of ``base`` it equals but for
    case (an environment variable's "ACMECORP" is the file's tenant "AcmeCorp"); a
    mapping over a section of ``base`` that is no mapping is an error, not a repair."""
    out = dict(base)
    for k, v in top.items():
        k = next((b for b in out if isinstance(b, str) and b.lower() == str(k).lower()), k)
        here = f"{where}.{k}" if where else str(k)
        if isinstance(v, Mapping) and out.get(k) is not None and not isinstance(out[k], dict):
            raise ValueError(f"'{here}' must be a mapping, got {type(out[k]).__name__}")
        out[k] = _merge(out[k], v, here) if isinstance(v, Mapping) and \
            isinstance(out.get(k), dict) else v
    return out


def load_config(path: Optional[str | Path] = None, *, env: Optional[Mapping[str, str]] = None,
                overrides: Optional[Mapping[str, Any]] = None) -> GuardrailConfig:
    """Build the config from a YAML file, ``GUARDRAIL_*`` env vars and dotted overrides
    (``{"upstream.base_url": ...}``; None values are skipped).  Raises ``ValueError``."""
    tree: dict = {}
    if path is not None:
        try:
            loaded = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
        except OSError as e:
            raise ValueError(f"cannot read config file {path}: {e.strerror}") from None
        except yaml.YAMLError as e:  # one line: what, and where
            mark = getattr(e, "problem_mark", None)
            at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            what = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise ValueError(f"config file {path} is not valid YAML: {what}{at}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError(f"config file {path} must hold a mapping, got "
                             f"{type(loaded).__name__}")
        tree = loaded or {}
    tree = _merge(tree, env_overrides(os.environ if env is None else env))
    dotted: dict = {}
    for key, value in (overrides or {}).items():
        if value is not None:
            _set_path(dotted, key.split("."), value)
    try:
        return GuardrailConfig.model_validate(_merge(tree, dotted))
    except ValidationError as e:  # never the values: a key or a password may be one
        raise ValueError("; ".join(_problem(err) for err in e.errors(
            include_url=False, include_input=False, include_context=False))) from None


def _problem(err: Any) -> str:
    where = ".".join(str(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {msg}" if where and not msg.startswith(where) else msg
