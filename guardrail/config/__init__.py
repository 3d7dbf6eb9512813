"""Typed, documented settings: one section per stage (the bottom floor; imports no stage).

``GuardrailConfig`` and its loading live in ``settings``; the ``policy``, ``scheduler``,
``cache`` and ``detector`` sections in modules of their own, on ``base.Section``.
"""

from guardrail.config.base import redact_url
from guardrail.config.cache import CacheConfig
from guardrail.config.detector import DetectorConfig
from guardrail.config.policy import (PolicyConfig, PolicyLimits, PolicyOverride,
                                     RegenerateConfig, check_hold_action)
from guardrail.config.scheduler import DEFAULT_TENANT, SchedulerConfig
from guardrail.config.settings import (ENV_PREFIX, ContextConfig, GuardrailConfig,
                                       ServerConfig, TenantConfig, UpstreamConfig,
                                       VerificationConfig, env_overrides, load_config)

__all__ = ["DEFAULT_TENANT", "ENV_PREFIX", "CacheConfig", "ContextConfig", "DetectorConfig",
           "GuardrailConfig", "PolicyConfig", "PolicyLimits", "PolicyOverride",
           "RegenerateConfig", "SchedulerConfig", "ServerConfig", "TenantConfig",
           "UpstreamConfig", "VerificationConfig", "check_hold_action", "env_overrides",
           "load_config", "redact_url"]
