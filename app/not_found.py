"""What a page's 404 names: "No job abc." rather than a message about integers.

Pages take typed path parameters (a job's numeric id). An address with a malformed or
out-of-range id is a page that does not exist, so it is told as such, naming the thing that
is missing; the JSON API keeps its own validation answers (``app.api.v1.errors``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from starlette.convertors import PathConvertor, StringConvertor
from starlette.routing import Route, compile_path

from app.i18n import _

# Enough to recognise what was typed without echoing a whole pasted paragraph back.
MAX_SHOWN = 40
_PARAMETER = re.compile(r"\{(\w+)\}")


def _noun(parameter: str) -> str | None:
    """``job`` for ``job_id``; None for a parameter that does not name a thing by its id."""
    if not parameter.endswith("_id") or parameter == "_id":
        return None
    return parameter.removesuffix("_id").replace("_", " ")


def _no_such(noun: str, shown: str) -> str:
    """One whole sentence per thing, so that each language can agree its words."""
    sentences = {
        "job": lambda: _("No job %(id)s.", id=shown),
        "template": lambda: _("No template %(id)s.", id=shown),
        "token": lambda: _("No token %(id)s.", id=shown),
        "session": lambda: _("No session %(id)s.", id=shown),
        "project": lambda: _("No project %(id)s.", id=shown),
        "user": lambda: _("No user %(id)s.", id=shown),
        "upload": lambda: _("No upload %(id)s.", id=shown),
        "rule": lambda: _("No rule %(id)s.", id=shown),
        "event": lambda: _("No event %(id)s.", id=shown),
    }
    sentence = sentences.get(noun)
    return sentence() if sentence else _("Nothing has the id %(id)s.", id=shown)


def _missing(parameter: str, value: object) -> str | None:
    noun = _noun(parameter)
    if noun is None:
        return None
    shown = str(value)
    shown = shown if len(shown) <= MAX_SHOWN else f"{shown[:MAX_SHOWN]}…"
    return _no_such(noun, shown)


def is_in_path(errors: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a path parameter failed validation (rather than the query or the body)."""
    return any(tuple(item.get("loc", ()))[:1] == ("path",) for item in errors)


def missing_in_path(errors: Sequence[Mapping[str, Any]]) -> str | None:
    """ "No job abc." for the first id in the path that failed validation; None when no id
    did (``/jobs/5/bogus`` fails on the action, which names no thing)."""
    for item in errors:
        location = tuple(item.get("loc", ()))
        if location[:1] == ("path",) and len(location) > 1:
            named = _missing(str(location[1]), item.get("input", ""))
            if named:
                return named
    return None


@dataclass(frozen=True, slots=True)
class _Address:
    """A route's path template read two ways: as routing reads it and with any value."""

    strict: re.Pattern[str]
    loose: re.Pattern[str]
    typed: tuple[str, ...]
    """The parameters whose convertor refuses some values (``{job_id:int}``)."""


@lru_cache(maxsize=512)
def _address(template: str) -> _Address:
    strict, path_format, convertors = compile_path(template)
    literals = _PARAMETER.split(path_format)
    loose = "".join(
        re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/]+)"
        for index, part in enumerate(literals)
    )
    free = (StringConvertor, PathConvertor)
    typed = tuple(name for name, kind in convertors.items() if not isinstance(kind, free))
    return _Address(strict, re.compile(f"^{loose}$"), typed)


def _templates(routes: Iterable[Any]) -> Iterator[str]:
    """Every route's full path template, included routers' too (which FastAPI may keep
    nested, each route's full path held by its effective context)."""
    for route in routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if callable(contexts):
            yield from (c.path for c in contexts() if isinstance(c.path, str))
        elif isinstance(route, Route):
            yield route.path


def _missing_on(template: str, path: str) -> str | None:
    address = _address(template)
    found = address.loose.match(path) if address.typed else None
    if found is None or address.strict.match(path):
        return None
    return next((named for name in address.typed if (named := _missing(name, found[name]))), None)


def missing_at(routes: Iterable[Any], path: str) -> str | None:
    """ "No job abc." when ``path`` misses every route only because a typed id in it is
    malformed (``/jobs/abc`` against ``/jobs/{job_id:int}``); None otherwise."""
    return next((named for t in _templates(routes) if (named := _missing_on(t, path))), None)
