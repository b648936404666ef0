"""A small time-limited cache for slow-changing cluster facts (associations, partitions)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """Values are reused for ``ttl`` seconds after they were loaded.

    Two concurrent misses may both load; that costs one extra call and is simpler than a
    lock per key. Each web worker keeps its own (ADR 0029): only cluster facts are kept, for
    ``ttl`` at most, and a refusal based on one is checked again against a fresh answer.
    """

    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._entries: dict[K, tuple[float, V]] = {}

    async def get(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        now = self._clock()
        found = self._entries.get(key)
        if found is not None and found[0] > now:
            return found[1]
        value = await load()
        self._entries[key] = (now + self.ttl, value)
        return value

    def forget(self, key: K) -> None:
        self._entries.pop(key, None)
