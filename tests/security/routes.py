"""Every HTTP route of the application, read from ``app.routes`` (included routers flattened)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI

PARAMETER = re.compile(r"{([a-z_]+)(?::[a-z]+)?}")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class RouteInfo:
    method: str
    path: str
    name: str

    @property
    def parameters(self) -> list[str]:
        return PARAMETER.findall(self.path)

    @property
    def is_api(self) -> bool:
        return self.path.startswith("/api/")

    def url(self, values: dict[str, str]) -> str:
        return PARAMETER.sub(lambda match: values[match.group(1)], self.path)


def _contexts(route: Any) -> Iterator[tuple[set[str], str, str]]:
    contexts = getattr(route, "effective_route_contexts", None)
    if contexts is not None:
        for context in contexts() if callable(contexts) else contexts:
            original = context.original_route
            yield set(getattr(original, "methods", None) or ()), context.path, original.name
        return
    methods = getattr(route, "methods", None)
    if methods and isinstance(getattr(route, "path", None), str):
        yield set(methods), route.path, getattr(route, "name", "")


def all_routes(app: FastAPI) -> list[RouteInfo]:
    found = []
    for route in app.routes:
        for methods, path, name in _contexts(route):
            found += [RouteInfo(m, path, name) for m in sorted(methods - {"HEAD"})]
    return found
