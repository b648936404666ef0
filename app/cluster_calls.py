"""The scheduler adapters as the portal's requests and use cases reach them.

Each call first ends the serving request's read phase (``app.db.free_request_session``), so a
cluster that takes seconds to answer never holds a pooled connection, or SQLite's write lock,
meanwhile. One wrapper here does what every route and use case would otherwise have to
remember before each cluster call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any, cast

from app.db import free_request_session
from app.scheduler.base import SchedulerAdapter
from app.scheduler.registry import Schedulers


class _ReleasingAdapter:
    """Delegates to ``inner``; its coroutine methods free the request's session first."""

    def __init__(self, inner: SchedulerAdapter) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not inspect.iscoroutinefunction(value):
            # Attributes, the file store (its routes hold no session), and ``follow``, whose
            # stream is read by a route that has finished with its session.
            return value
        return _releasing(value)


def _releasing(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        await free_request_session()
        return await method(*args, **kwargs)

    return call


class ReleasingSchedulers:
    """``schedulers``, each adapter wrapped so that no call is made holding the request's
    transaction. The poller's calls pass through unchanged: it serves no request."""

    def __init__(self, schedulers: Schedulers) -> None:
        self.inner = schedulers
        self._wrapped: dict[str, SchedulerAdapter] = {}

    def get(self, cluster: str) -> SchedulerAdapter:
        adapter = self.inner.get(cluster)
        wrapped = self._wrapped.get(cluster)
        if wrapped is None or cast(_ReleasingAdapter, wrapped)._inner is not adapter:
            wrapped = cast(SchedulerAdapter, _ReleasingAdapter(adapter))
            self._wrapped[cluster] = wrapped
        return wrapped

    def __iter__(self) -> Iterator[str]:
        return iter(self.inner)

    async def close(self) -> None:
        await self.inner.close()
