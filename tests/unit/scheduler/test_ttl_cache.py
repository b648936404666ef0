"""TtlCache: a value is reused for its seconds, never after, and a bounded one stays bounded."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from app.scheduler.cache import TtlCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def loader(value: str, calls: list[str]) -> Callable[[], Awaitable[str]]:
    async def load() -> str:
        calls.append(value)
        return value

    return load


async def test_a_value_is_reused_for_its_seconds_and_loaded_again_after() -> None:
    clock, calls = Clock(), []
    cache: TtlCache[tuple[int, str], str] = TtlCache(1.0, clock=clock)
    assert await cache.get((1, "a"), loader("first", calls)) == "first"
    clock.now += 0.99
    assert await cache.get((1, "a"), loader("second", calls)) == "first"
    clock.now += 0.01
    assert await cache.get((1, "a"), loader("second", calls)) == "second"
    assert calls == ["first", "second"]


async def test_values_are_per_key_and_a_forgotten_one_is_loaded_again() -> None:
    calls: list[str] = []
    cache: TtlCache[tuple[int, str], str] = TtlCache(60.0, clock=Clock())
    await cache.get((1, "a"), loader("alice's", calls))
    assert await cache.get((2, "a"), loader("bob's", calls)) == "bob's"
    cache.forget((1, "a"))
    cache.forget((9, "never loaded"))
    assert await cache.get((1, "a"), loader("again", calls)) == "again"
    assert calls == ["alice's", "bob's", "again"]


async def test_a_bounded_cache_drops_the_expired_then_the_oldest() -> None:
    clock, calls = Clock(), []
    cache: TtlCache[int, str] = TtlCache(1.0, clock=clock, most=3)
    await cache.get(0, loader("expired", calls))
    clock.now += 2
    for key in (1, 2, 3):
        await cache.get(key, loader(str(key), calls))
    assert len(cache) == 3  # the expired one went first
    await cache.get(4, loader("4", calls))
    assert len(cache) == 3
    calls.clear()
    for key in (2, 3, 4):
        await cache.get(key, loader("reloaded", calls))
    assert calls == []  # the oldest (1) went, the others stayed
    await cache.get(1, loader("reloaded", calls))
    assert calls == ["reloaded"]


async def test_an_unbounded_cache_keeps_every_key() -> None:
    cache: TtlCache[int, str] = TtlCache(60.0, clock=Clock())
    for key in range(5000):
        await cache.get(key, loader("v", []))
    assert len(cache) == 5000
