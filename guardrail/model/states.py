"""Encoded contexts: every layer's keys and values of every window, kept in memory.

``ContextStates`` is what a Parallel Context Windows check reads instead of
re-encoding the context: per layer one ``[heads, tokens, head_dim]`` key tensor and
one value tensor holding all windows back to back.  ``StateCache`` keeps them per
process, bounded in bytes, least recently used out, and builds each at most once
however many checks ask for it at the same time (single flight across threads).

Size: ``2 * layers * hidden`` numbers per context token (all-MiniLM-L6-v2: 4,608,
18 KiB per token in float32, 9 KiB in bfloat16), so a 32K-token context holds about
600 MB in float32.  That is why states are not written to Redis: re-encoding a
context on a miss costs about as much as moving its states over the network and
they are only worth anything on the processor that runs the checks; the prepared
(tokenized) context is what tenants share through Redis.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True, eq=False)
class ContextStates:
    key: str                        # the prepared context's key
    n_tokens: int                   # cached positions, special tokens of each window included
    n_windows: int
    keys: tuple[torch.Tensor, ...]  # per layer [heads, n_tokens, head_dim]
    values: tuple[torch.Tensor, ...]

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))

    def layer(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.keys[i], self.values[i]


@dataclass(frozen=True)
class StateStats:
    entries: int
    bytes: int
    builds: int       # contexts encoded
    hits: int
    shared: int       # callers that waited on another caller's encoding
    evictions: int
    resumed: int = 0  # entries a deeper pass started from, then dropped (answers so far)


class StateCache:
    """Thread-safe LRU of :class:`ContextStates` by key, bounded in bytes.

    One entry larger than the bound is built, returned and not kept.  ``builds``,
    ``hits`` and ``shared`` (callers that waited on another's build) are for stats.
    """

    def __init__(self, max_bytes: int = 2 << 30):
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self.bytes = 0
        self.builds = self.hits = self.shared = self.evictions = self.resumes = 0
        self._items: OrderedDict[str, ContextStates] = OrderedDict()
        self._building: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def stats(self) -> StateStats:
        with self._lock:
            return StateStats(len(self._items), self.bytes, self.builds, self.hits,
                              self.shared, self.evictions, self.resumes)

    def peek(self, key: str) -> "ContextStates | None":
        """The states of ``key`` if they are ready now (never builds, never waits; a
        probe, not counted: the check that follows counts its own hit)."""
        with self._lock:
            return self._items.get(key)

    def put(self, key: str, states) -> None:
        """Keep ``states`` (anything with ``nbytes``) under ``key``, replacing any
        (counted as a build)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old.nbytes
            self.builds += 1
            self._store(key, states)

    def demote(self, key: str) -> None:
        """Make ``key`` the first to go when room is needed (nothing if it is not kept)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key, last=False)

    def drop(self, key: str, resumed: bool = False) -> None:
        """Forget ``key`` (nothing if it is not kept); ``resumed``: a deeper pass started
        from it (counted)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old.nbytes
            self.resumes += resumed

    def reused(self, n: int = 1) -> None:
        """Count ``n`` uses of entries found by :meth:`peek` (as ``hits``)."""
        with self._lock:
            self.hits += n

    def _store(self, key: str, states) -> None:  # holding the lock
        if states.nbytes <= self.max_bytes:
            self._items[key] = states
            self.bytes += states.nbytes
            while self.bytes > self.max_bytes:
                _, old = self._items.popitem(last=False)
                self.bytes -= old.nbytes
                self.evictions += 1

    def get(self, key: str, build: Callable[[], ContextStates]) -> ContextStates:
        while True:
            with self._lock:
                states = self._items.get(key)
                if states is not None:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return states
                event = self._building.get(key)
                if event is None:
                    event = self._building[key] = threading.Event()
                    break
                self.shared += 1
            event.wait()  # another thread builds it; then look again (it may have failed)
        try:
            states = build()
            with self._lock:
                self.builds += 1
                self._store(key, states)
            return states
        finally:
            with self._lock:
                self._building.pop(key, None)
            event.set()
