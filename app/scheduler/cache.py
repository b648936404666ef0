"""A small time-limited cache for slow-changing facts (cluster associations and partitions,
who may reach an interactive session)."""

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
    With ``most``, loading a key beyond that many drops the expired entries, then the oldest,
    so keys that are never asked again cannot grow it.
    """

    def __init__(
        self, ttl: float, clock: Callable[[], float] = time.monotonic, most: int | None = None
    ) -> None:
        self.ttl = ttl
        self.most = most
        self._clock = clock
        self._entries: dict[K, tuple[float, V]] = {}

    async def get(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        now = self._clock()
        found = self._entries.get(key)
        if found is not None and found[0] > now:
            return found[1]
        value = await load()
        # Popped first, so the dict's order stays the order of loading: oldest first.
        self._entries.pop(key, None)
        self._entries[key] = (now + self.ttl, value)
        if self.most is not None and len(self._entries) > self.most:
            self._trim(now)
        return value

    def forget(self, key: K) -> None:
        self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)

    def _trim(self, now: float) -> None:
        for key in [key for key, (expires, _) in self._entries.items() if expires <= now]:
            del self._entries[key]
        while self.most is not None and len(self._entries) > self.most:
            del self._entries[next(iter(self._entries))]
