"""The in-process tier: an LRU bounded by bytes, with a per-tenant share and expiry.

Entries are keyed by ``(tenant, key)``, so a tenant can only ever reach its own.
Not thread-safe: it lives on the event loop, like everything that calls it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Generic, Optional, TypeVar

V = TypeVar("V")


@dataclass
class _Entry(Generic[V]):
    value: V
    size: int
    expires_at: Optional[float]


class LRUCache(Generic[V]):
    def __init__(self, max_bytes: int, tenant_max_bytes: Optional[int] = None, *,
                 clock: Callable[[], float] = time.monotonic):
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, got {max_bytes}")
        self.max_bytes = max_bytes
        self.tenant_max_bytes = min(tenant_max_bytes or max_bytes, max_bytes)
        self.clock = clock
        self.evictions = 0
        self._data: OrderedDict[tuple[str, str], _Entry[V]] = OrderedDict()
        self._bytes = 0
        self._tenant_bytes: dict[str, int] = {}

    def get(self, tenant: str, key: str) -> Optional[V]:
        k = (tenant, key)
        entry = self._data.get(k)
        if entry is None:
            return None
        if entry.expires_at is not None and entry.expires_at <= self.clock():
            self._remove(k)
            return None
        self._data.move_to_end(k)
        return entry.value

    def put(self, tenant: str, key: str, value: V, size: int,
            ttl_s: Optional[float] = None) -> bool:
        """Store (replacing any old entry); False when ``size`` exceeds the tenant share."""
        k = (tenant, key)
        if k in self._data:
            self._remove(k)
        if size > self.tenant_max_bytes:
            return False
        expires = None if ttl_s is None else self.clock() + ttl_s
        self._data[k] = _Entry(value, size, expires)
        self._bytes += size
        self._tenant_bytes[tenant] = self._tenant_bytes.get(tenant, 0) + size
        while self._tenant_bytes[tenant] > self.tenant_max_bytes:
            self._evict(next(x for x in self._data if x[0] == tenant))
        while self._bytes > self.max_bytes:
            self._evict(next(iter(self._data)))
        return True

    def pop(self, tenant: str, key: str) -> Optional[V]:
        entry = self._data.get((tenant, key))
        if entry is None:
            return None
        self._remove((tenant, key))
        live = entry.expires_at is None or entry.expires_at > self.clock()
        return entry.value if live else None

    def entries(self, tenant: str) -> list[tuple[str, V, Optional[float]]]:
        """The tenant's live entries as ``(key, value, expires_at)``, least recent first."""
        now = self.clock()
        out = []
        for (t, key), e in list(self._data.items()):
            if t != tenant:
                continue
            if e.expires_at is not None and e.expires_at <= now:
                self._remove((t, key))
            else:
                out.append((key, e.value, e.expires_at))
        return out

    @property
    def bytes(self) -> int:
        return self._bytes

    def tenant_bytes(self, tenant: str) -> int:
        return self._tenant_bytes.get(tenant, 0)

    def __len__(self) -> int:
        return len(self._data)

    def _evict(self, k: tuple[str, str]) -> None:
        self.evictions += 1
        self._remove(k)

    def _remove(self, k: tuple[str, str]) -> None:
        entry = self._data.pop(k)
        self._bytes -= entry.size
        left = self._tenant_bytes[k[0]] - entry.size
        if left:
            self._tenant_bytes[k[0]] = left
        else:
            del self._tenant_bytes[k[0]]
