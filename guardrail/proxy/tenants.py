"""Who is asking: ``Authorization: Bearer <key>`` -> a tenant name.

Every cached or stored context is namespaced by the tenant this returns, so this is
the one place that decides whose contexts a request can reach:

* no tenant lists ``api_keys``: every request is the ``default`` tenant (the start-up
  log says so);
* tenants with keys: a known key is its tenant; a missing or unknown key is 401,
  unless ``server.require_api_key: false`` lets it in as the ``default`` tenant
  (a name no configured tenant may take).
"""

from __future__ import annotations

import hmac
from typing import Optional

from guardrail.config import GuardrailConfig
from guardrail.config.scheduler import DEFAULT_TENANT
from guardrail.errors import Unauthorized

__all__ = ["DEFAULT_TENANT", "Tenants", "bearer_key"]


def bearer_key(authorization: Optional[str]) -> Optional[str]:
    """The key of an ``Authorization: Bearer <key>`` header, or None."""
    if not authorization or authorization[:7].lower() != "bearer ":
        return None
    return authorization[7:].strip() or None


class Tenants:
    def __init__(self, config: GuardrailConfig):
        self._keys = [(k.get_secret_value().encode(), name)
                      for name, t in config.tenants.items() for k in t.api_keys]
        self.required = config.keys_required
        self.names = sorted(config.tenants)

    @property
    def single(self) -> bool:
        """No tenant is configured with keys: everyone is the default tenant."""
        return not self._keys

    def resolve(self, authorization: Optional[str]) -> str:
        """The tenant of a request (raises ``Unauthorized`` for a required, unknown key)."""
        key = bearer_key(authorization)
        if key is not None:
            raw = key.encode()
            found = None
            for known, name in self._keys:  # compare every key: no timing hint of a match
                if hmac.compare_digest(raw, known):
                    found = name
            if found is not None:
                return found
        if self.required:
            raise Unauthorized("a valid API key is required (Authorization: Bearer ...)",
                               code="invalid_api_key")
        return DEFAULT_TENANT

    def policy_name(self, tenant: str) -> Optional[str]:
        """The tenant as the policy and the guardrail object name it (None: default)."""
        return None if tenant == DEFAULT_TENANT else tenant

    def describe(self) -> str:
        """The start-up log line."""
        if self.single:
            return (f"no tenants configured: running as a single default tenant "
                    f"({DEFAULT_TENANT!r}); every client shares its contexts")
        anonymous = "refused (401)" if self.required else f"served as {DEFAULT_TENANT!r}"
        return (f"{len(self.names)} tenant(s) configured ({', '.join(self.names)}); "
                f"requests without a known key are {anonymous}")
