"""How the portal tells that an interactive session is idle: one probe kind per way of asking.

An app definition names its kind in its ``[idle]`` table; the kind says how to learn when
the session was last active, the table gives the kind its options:

``http_json``  asks the app's server (``path``, relative to the session's base URL, with the
               session's secret, through the same route the proxy uses) and reads the time
               of its last activity from ``field`` of the JSON answer (``a.b`` for nested
               objects): Jupyter Server's ``api/status`` and ``last_activity``. With
               ``busy_path``, it also asks there and counts the app as in use now when an
               item of the answer has ``busy_field`` equal to ``busy_value``: a kernel
               running a long, silent cell is busy, not idle.
``no_viewer``  a desktop's: idle while nobody has it open. The portal's VNC bridge stamps
               the session's row when someone (its owner or a viewer) connects, every
               ``VIEWED_EVERY_SECONDS`` while the stream lasts and when it closes
               (app/web/desktop.py), so the clock runs from when the last viewer left, or
               from the session's start when nobody ever came. It asks nothing remote.
``none``       never idle: the portal does not end the app's sessions for idleness.

Another kind (a shell's "no input") is one function registered here with :func:`register`;
a definition then names it with no other change.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.interactive.upstream import Upstream

PROBE_TIMEOUT_SECONDS = 5.0
MAX_ANSWER_BYTES = 64 * 1024
FIELD = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """What a probe may use to look at one running session; it changes nothing."""

    session_id: int
    session_uuid: str
    # The session's server, reached as its owner (None when where it listens is unknown).
    target: Upstream | None
    # ``/apps/sessions/UUID/``: the path the app serves under.
    base_path: str
    client: httpx.AsyncClient
    now: datetime
    path: str
    field: str
    busy_path: str = ""
    busy_field: str = ""
    busy_value: str = ""
    # From the session's row: when it became ready, and when someone last had it open
    # through the portal (a desktop's viewers; None when nobody ever did).
    started_at: datetime | None = None
    viewed_at: datetime | None = None


# When the session was last active (``now`` when it is in use), or None when the probe
# could not tell: a session the portal cannot see is never taken for an idle one.
Probe = Callable[[ProbeContext], Awaitable[datetime | None]]


@dataclass(frozen=True, slots=True)
class ProbeKind:
    probe: Probe
    # The options of the ``[idle]`` table this kind cannot do without.
    needs: tuple[str, ...] = ()


PROBES: dict[str, ProbeKind] = {}


def register(name: str, probe: Probe, *, needs: tuple[str, ...] = ()) -> None:
    """Make ``name`` a probe kind app definitions can name."""
    PROBES[name] = ProbeKind(probe, needs)


class Idle(BaseModel):
    """An app definition's ``[idle]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe: str = "none"
    path: str = Field(default="", pattern=r"^[A-Za-z0-9._~/-]*$")
    field: str = Field(default="", max_length=200)
    busy_path: str = Field(default="", pattern=r"^[A-Za-z0-9._~/?=&-]*$")
    busy_field: str = Field(default="", max_length=200)
    busy_value: str = Field(default="", max_length=200)
    # None: the site's limit (PORTAL_IDLE_LIMIT); 0: this app's sessions are never ended.
    limit_minutes: int | None = Field(default=None, ge=0, le=7 * 24 * 60)

    @model_validator(mode="after")
    def _known_kind(self) -> Idle:
        kind = PROBES.get(self.probe)
        if kind is None:
            raise ValueError(f"probe must be one of {', '.join(sorted(PROBES))}")
        missing = [name for name in kind.needs if not getattr(self, name)]
        if missing:
            raise ValueError(f"probe {self.probe!r} needs {', '.join(missing)}")
        for name in ("field", "busy_field"):
            if getattr(self, name) and not FIELD.match(getattr(self, name)):
                raise ValueError(f"{name} is a JSON key, or keys joined by dots")
        busy = (self.busy_path, self.busy_field, self.busy_value)
        if any(busy) and not all(busy):
            raise ValueError("busy_path, busy_field and busy_value go together")
        return self

    @property
    def is_watched(self) -> bool:
        return self.probe != "none" and self.limit_minutes != 0


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time (``Z`` or an offset; none is UTC) or a Unix time in seconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def field_of(document: Any, field: str) -> Any:
    for key in field.split("."):
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


_UNREADABLE = object()


async def _json_at(context: ProbeContext, path: str) -> Any:
    """The JSON the app's server answers at ``path``, or ``_UNREADABLE``."""
    target = context.target
    if target is None:
        return _UNREADABLE
    url = f"http://{target.authority}{context.base_path}{path}"
    try:
        response = await context.client.get(
            url,
            headers={target.auth_header: target.auth_value},
            timeout=PROBE_TIMEOUT_SECONDS,
            extensions=target.extensions(),
        )
    except httpx.HTTPError:
        return _UNREADABLE
    if not response.is_success or len(response.content) > MAX_ANSWER_BYTES:
        return _UNREADABLE
    try:
        return response.json()
    except ValueError:
        return _UNREADABLE


async def _is_busy(context: ProbeContext) -> bool:
    document = await _json_at(context, context.busy_path)
    items = document if isinstance(document, list) else [document]
    return any(field_of(item, context.busy_field) == context.busy_value for item in items)


async def http_json(context: ProbeContext) -> datetime | None:
    """The time in ``field`` of the JSON the app's server answers at ``path``; now when it
    says it is busy at ``busy_path``."""
    document = await _json_at(context, context.path)
    if document is _UNREADABLE:
        return None
    moment = parse_time(field_of(document, context.field))
    if moment is None:
        return None
    if context.busy_path and await _is_busy(context):
        return context.now
    # A clock ahead of the portal's is read as "active now", never as a future time.
    return min(moment, context.now)


async def no_viewer(context: ProbeContext) -> datetime | None:
    """When someone last had the desktop open, or when it started if nobody ever did."""
    known = [moment for moment in (context.started_at, context.viewed_at) if moment is not None]
    if not known:
        return None
    return min(max(known), context.now)


async def never_idle(context: ProbeContext) -> datetime | None:
    return context.now


register("none", never_idle)
register("http_json", http_json, needs=("path", "field"))
register("no_viewer", no_viewer)
