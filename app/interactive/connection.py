"""Where a session's server listens: the file its job wrote, read as the user, and its node.

The host is never taken from that file: it is the node Slurm says the job runs on. A user
who writes another host into the file cannot turn the portal into a proxy to somewhere else;
the port they write can only be one on their own job's node.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

import httpx

from app.interactive.definitions import AppDefinition
from app.interactive.sessions import BASE_PATH
from app.interactive.tunnelled import Opener
from app.interactive.upstream import Upstream
from app.models.interactive import InteractiveSession
from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import FileUnavailable, SchedulerUnavailable
from app.scheduler.tunnels import tunnels_of

# A single node name; a list or range ("c[1-2]", "c1,c2") is not a place to connect to.
NODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")
SECRET = re.compile(r"^[A-Za-z0-9._~+/=-]{16,255}$")
MAX_CONNECTION_BYTES = 4096
READY_TIMEOUT_SECONDS = 3.0


class BadConnection(ValueError):
    """The connection file is not what the app's script writes."""


@dataclass(frozen=True, slots=True)
class Connection:
    port: int
    secret: str


def parse_connection(data: bytes) -> Connection:
    """``{"port": N, "secret": "..."}`` as the app's script writes it; BadConnection if not."""
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadConnection("the connection file is not JSON") from None
    if not isinstance(record, dict):
        raise BadConnection("the connection file is not a JSON object")
    port, secret = record.get("port"), record.get("secret")
    if not isinstance(port, int) or isinstance(port, bool) or not 1024 <= port <= 65535:
        raise BadConnection("the port is not a number from 1024 to 65535")
    if not isinstance(secret, str) or not SECRET.match(secret):
        raise BadConnection("the secret is not 16 to 255 URL-safe characters")
    return Connection(port, secret)


def node_of(node_list: str | None) -> str | None:
    """The one node a session's job runs on, or None while Slurm has not said."""
    if node_list is None or not NODE.match(node_list):
        return None
    return node_list


def target_of(
    row: InteractiveSession,
    definition: AppDefinition,
    opener: Opener | None = None,
    *,
    port: int | None = None,
    secret: str | None = None,
) -> Upstream | None:
    """Where the proxy sends a session's requests, with the header that carries its secret;
    ``opener`` when the cluster's compute nodes are reached through its login node, ``port``
    and ``secret`` as just learnt, before they are recorded on the row."""
    host = node_of(row.job.node_list)
    port = row.port if port is None else port
    secret = row.secret if secret is None else secret
    if host is None or port is None or secret is None:
        return None
    auth = definition.auth
    return Upstream(host, port, auth.header, f"{auth.prefix}{secret}", opener)


def opener_for(adapter: object, username: str) -> Opener | None:
    """How to open connections to the cluster's compute nodes as ``username``: None when the
    portal connects to them itself (``compute_access = "direct"``)."""
    tunnels = tunnels_of(adapter)
    if tunnels is None:
        return None
    return functools.partial(tunnels.open, as_user=username)


async def is_ready(
    target: Upstream, row: InteractiveSession, definition: AppDefinition, client: httpx.AsyncClient
) -> bool:
    """Whether the app answers its readiness path with a success (any answer if it has none)."""
    url = f"http://{target.authority}{BASE_PATH.format(uuid=row.uuid)}{definition.ready_path}"
    # A desktop's secret is its VNC password, which only the portal's own handshake uses.
    headers = {} if definition.kind == "vnc" else {target.auth_header: target.auth_value}
    try:
        response = await client.get(
            url,
            headers=headers,
            timeout=READY_TIMEOUT_SECONDS,
            extensions=target.extensions(),
        )
    except httpx.HTTPError:
        return False
    return response.is_success if definition.ready_path else response.status_code < 500


async def learn_connection(
    row: InteractiveSession, adapter: SchedulerAdapter, username: str
) -> Connection | None:
    """The port and secret the job wrote, read as the user; None while there is no file yet."""
    path = (row.job.environment or {}).get("PORTAL_APP_CONNECTION")
    if path is None:
        return None
    try:
        chunk = await adapter.read_file(path, 0, MAX_CONNECTION_BYTES, username)
    except (FileUnavailable, SchedulerUnavailable):
        return None
    # A half-written file is read again on the next look; the script writes it in one move.
    return parse_connection(chunk.data) if chunk.eof else None
