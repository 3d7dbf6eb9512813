"""Settings of the context caches (the proxy wires them into ``GuardrailConfig``)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

from guardrail.config.base import redact_url


class CacheConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    redis_url: Optional[str] = None
    """Shared tier (``redis://``, ``rediss://`` or ``unix://``); None: the in-process tier
    alone (the embedded default)."""
    key_prefix: str = "guardrail"
    """First part of every Redis key: ``{prefix}:{<tenant>}:<kind>:<id>``."""
    prepared_ttl_s: float = Field(3600.0, gt=0)
    """Prepared (tokenized) contexts live this long in Redis after their last use."""
    context_ttl_s: float = Field(86400.0, gt=0)
    """Default lifetime of a context stored by id (``PUT /v1/contexts``), from its PUT."""
    max_context_ttl_s: float = Field(7 * 86400.0, gt=0)
    """Longest lifetime a PUT may ask for."""
    tenant_max_bytes: int = Field(256 * 2**20, ge=1)
    """Redis bytes per tenant and kind (prepared / stored); past it, the entries closest
    to expiry are dropped."""
    local_max_bytes: int = Field(512 * 2**20, ge=1)
    """In-process LRU tier, all tenants together."""
    local_tenant_max_bytes: int = Field(128 * 2**20, ge=1)
    """In-process LRU tier, one tenant (so one tenant cannot flush the others)."""
    states_max_bytes: int = Field(2 * 2**30, ge=0)
    """Encoded contexts (every layer's keys and values, Parallel Context Windows models
    only), in-process on the processor that runs the checks; never sent to Redis."""
    states_dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    """Number format of the encoded contexts: bfloat16 halves their bytes and the time a
    check spends reading them where the CPU computes in bfloat16 (probabilities move by
    about 1e-2); float32 reproduces the reference exactly; auto: bfloat16 where oneDNN
    supports it (and on CUDA), else float32."""
    max_context_bytes: int = Field(8 * 2**20, ge=1)
    """Largest context (UTF-8 bytes of all documents) a PUT may store."""
    report_ttl_s: float = Field(3600.0, gt=0)
    """How long a finished stream's ``guardrail`` report stays readable by its stream id
    (``GET /v1/guardrail/reports/{stream_id}``), for clients whose SDK drops it."""
    report_tenant_max_bytes: int = Field(32 * 2**20, ge=1024)
    """Report bytes kept per tenant (in-process, and in Redis when configured); past it
    the oldest go first."""
    socket_timeout_s: float = Field(0.25, gt=0)
    """Redis read/write timeout: a slow Redis costs a request at most about this."""
    connect_timeout_s: float = Field(0.25, gt=0)
    """Redis connect timeout."""
    down_cooldown_s: float = Field(5.0, ge=0)
    """After a Redis failure, skip Redis for this long (requests use the in-process
    tier or prepare again) instead of paying the timeout on every request."""

    @model_validator(mode="after")
    def _checks(self) -> "CacheConfig":
        url = self.redis_url
        if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"cache.redis_url must start with redis://, rediss:// or "
                             f"unix://, got {redact_url(url)!r}")
        if self.local_tenant_max_bytes > self.local_max_bytes:
            raise ValueError(f"cache.local_tenant_max_bytes ({self.local_tenant_max_bytes}) "
                             f"exceeds cache.local_max_bytes ({self.local_max_bytes})")
        if self.context_ttl_s > self.max_context_ttl_s:
            raise ValueError(f"cache.context_ttl_s ({self.context_ttl_s}) exceeds "
                             f"cache.max_context_ttl_s ({self.max_context_ttl_s})")
        if not self.key_prefix or any(c in self.key_prefix for c in "{}: "):
            raise ValueError(f"cache.key_prefix must be non-empty without '{{', '}}', ':' "
                             f"or spaces, got {self.key_prefix!r}")
        return self
