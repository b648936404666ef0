"""The names of interactive sessions' own hosts: ``s-<uuid as hex>.<apps domain>``."""

from __future__ import annotations

import re
from urllib.parse import urlencode

from starlette.requests import HTTPConnection

from app.web.settings import web_settings_of

# Where a session's host redeems the portal's ticket; outside every app's own paths.
EXCHANGE_PATH = "/_portal/connect"
SESSION_LABEL = re.compile(r"^s-([0-9a-f]{32})$")


def split_host(value: str) -> tuple[str, str]:
    """A Host header as (lower-case name, ":port" or "")."""
    if value.startswith("["):
        end = value.find("]") + 1
        return value[:end].lower(), value[end:]
    name, _, port = value.partition(":")
    # Digits only: anything else after the colon could turn the rest into another host.
    return name.lower().rstrip("."), f":{port}" if port.isdigit() else ""


def session_hex_of(host_name: str, apps_domain: str) -> str | None:
    """The session a host under the apps domain names ("" if none); None for other hosts."""
    suffix = f".{apps_domain}"
    if host_name != apps_domain and not host_name.endswith(suffix):
        return None
    match = SESSION_LABEL.match(host_name.removesuffix(suffix))
    return match.group(1) if match else ""


def session_origin(connection: HTTPConnection, session_hex: str) -> str:
    """The session's own origin, with the scheme and port the portal was reached by."""
    _, port = split_host(connection.headers.get("host", ""))
    domain = web_settings_of(connection.app).apps_domain
    return f"{connection.url.scheme}://s-{session_hex}.{domain}{port}"


def connect_url(
    connection: HTTPConnection, session_hex: str, ticket: str, target: str, home: str = ""
) -> str:
    query = urlencode({"ticket": ticket, "next": target} | ({"home": home} if home else {}))
    return f"{session_origin(connection, session_hex)}{EXCHANGE_PATH}?{query}"
