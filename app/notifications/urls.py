"""Webhook addresses are user input: only http(s), and only to public hosts unless allowed.

The host is resolved and every address it resolves to must be public; delivery then connects
to the very address that was checked (``Target.pinned_url``), so a name that resolves to a
public address when checked and to 127.0.0.1 a moment later (DNS rebinding) gains nothing.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

from app.notifications import wording
from app.notifications.wording import english

MAX_URL_LENGTH = 2000
RESOLVE_TIMEOUT_SECONDS = 5.0
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeUrl(ValueError):
    """The address may not receive webhooks; the message says why, in English (the pages
    show it in the reader's language with ``wording.shown``)."""


@dataclass(frozen=True, slots=True)
class Target:
    """A webhook address and the checked IP address to connect to."""

    parts: SplitResult
    address: IPAddress

    @property
    def hostname(self) -> str:
        return self.parts.hostname or ""

    @property
    def host_header(self) -> str:
        return self.parts.netloc

    @property
    def pinned_url(self) -> str:
        host = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        netloc = f"{host}:{self.parts.port}" if self.parts.port else host
        return urlunsplit(self.parts._replace(netloc=netloc))


def check_syntax(url: str) -> SplitResult:
    """The parsed address, or UnsafeUrl when it is not a plain http(s) address."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(english(wording.TOO_LONG, limit=MAX_URL_LENGTH))
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl(english(wording.NOT_HTTP))
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl(english(wording.HAS_PASSWORD))
    try:
        port = parts.port
    except ValueError:
        raise UnsafeUrl(english(wording.BAD_PORT)) from None
    if not parts.hostname or port == 0:
        raise UnsafeUrl(english(wording.NO_HOST))
    return parts


def is_public(address: IPAddress) -> bool:
    """Not private, loopback, link-local, multicast, reserved or unspecified."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


async def resolve(host: str, port: int) -> list[IPAddress]:
    lookup = asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    try:
        # A resolver that does not answer must not hold a page or a dispatcher for long.
        infos = await asyncio.wait_for(lookup, RESOLVE_TIMEOUT_SECONDS)
    except (socket.gaierror, UnicodeError, TimeoutError):
        raise UnsafeUrl(english(wording.UNRESOLVED, host=host)) from None
    found = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    return list(dict.fromkeys(found))


async def check_target(url: str, *, allow_private: bool) -> Target:
    """The address to deliver to, resolved now, or UnsafeUrl saying why it is refused."""
    parts = check_syntax(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addresses = await resolve(parts.hostname or "", port)
    if not addresses:
        raise UnsafeUrl(english(wording.UNRESOLVED, host=parts.hostname))
    # Every address must be public: a name with one private record among public ones
    # would otherwise reach inside whenever the client picked that one.
    if not allow_private and not all(is_public(address) for address in addresses):
        raise UnsafeUrl(english(wording.NOT_PUBLIC, host=parts.hostname))
    return Target(parts, addresses[0])
