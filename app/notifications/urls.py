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

import idna

from app.notifications import wording
from app.notifications.wording import english

MAX_URL_LENGTH = 2000
RESOLVE_TIMEOUT_SECONDS = 5.0
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# IPv6 ranges whose addresses carry an IPv4 one that the network delivers to (RFC 4291,
# RFC 6052, RFC 8215, RFC 3056): judged by that IPv4 address, not by the IPv6 tables.
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")
# RFC 6052 section 2.2: where a NAT64 prefix of each length puts the IPv4 address's bits,
# skipping bits 64 to 71; a local-use prefix may be any of these lengths from its own /48.
NAT64_PREFIX_LENGTHS = (48, 56, 64, 96)


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


def ascii_host(hostname: str) -> str:
    """``hostname`` as it goes on the wire: an IP literal as is, a name in IDNA (UTS 46)
    form, lower case; UnsafeUrl when the name has no such form (a space, an empty label).

    HTTP headers, TLS and DNS carry ASCII only: a name kept as typed would fail only when a
    delivery built its request, long after the rule was accepted."""
    try:
        return str(ipaddress.ip_address(hostname))
    except ValueError:
        pass
    try:
        return idna.encode(hostname, uts46=True, std3_rules=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise UnsafeUrl(english(wording.BAD_HOST_NAME, host=hostname)) from None


def _netloc(parts: SplitResult, host: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{parts.port}" if parts.port is not None else shown


def check_syntax(url: str) -> SplitResult:
    """The parsed address with its host in ASCII, or UnsafeUrl when it is not a plain
    http(s) address."""
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
    return parts._replace(netloc=_netloc(parts, ascii_host(parts.hostname)))


def normalised(url: str) -> str:
    """The address as stored and delivered to: its host in ASCII (``check_syntax``)."""
    return urlunsplit(check_syntax(url))


def _nat64_ipv4(address: ipaddress.IPv6Address, prefix_length: int) -> ipaddress.IPv4Address:
    bits = int(address)
    # The 128 bits without bits 64 to 71 (the "u" octet), so the IPv4 address is contiguous.
    packed = ((bits >> 64) << 56) | (bits & (2**56 - 1))
    start = prefix_length if prefix_length <= 64 else prefix_length - 8
    return ipaddress.IPv4Address((packed >> (120 - start - 32)) & 0xFFFFFFFF)


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses packets to ``address`` may end up at, when it is a form that
    carries one (mapped, compatible, NAT64, 6to4, Teredo); else none."""
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if any(address in network for network in (IPV4_COMPATIBLE, IPV4_TRANSLATED, NAT64_WELL_KNOWN)):
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address in NAT64_LOCAL_USE:
        return [_nat64_ipv4(address, length) for length in NAT64_PREFIX_LENGTHS]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)
    return []


def _is_public_ipv4(address: ipaddress.IPv4Address) -> bool:
    return address.is_global and not address.is_multicast


def is_public(address: IPAddress) -> bool:
    """Not private, loopback, link-local, multicast, reserved or unspecified; an IPv6 form
    carrying an IPv4 address is judged by every IPv4 address it may carry."""
    if isinstance(address, ipaddress.IPv4Address):
        return _is_public_ipv4(address)
    carried = embedded_ipv4(address)
    if carried:
        return all(_is_public_ipv4(ipv4) for ipv4 in carried)
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
