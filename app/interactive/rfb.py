"""The few parts of VNC's protocol (RFB 3.8, RFC 6143) the portal speaks itself.

The portal stands between the browser's noVNC and the desktop's VNC server: it answers the
server's password challenge with the session's secret, so the password never reaches a
browser, offers the browser no security of its own (it has already checked who the browser
is), and always asks the server for a shared session. For a view-only viewer it then reads
the browser's messages one by one and drops every one that would act on the desktop (keys,
pointer, clipboard, resizing), so a crafted client cannot type either.
"""

from __future__ import annotations

import contextlib
import importlib
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, modes


def _triple_des() -> Any:
    """cryptography 43 and later keep DES-based ciphers apart, in its "decrepit" module."""
    for module in ("decrepit.ciphers.algorithms", "primitives.ciphers.algorithms"):
        with contextlib.suppress(ImportError, AttributeError):
            return importlib.import_module(f"cryptography.hazmat.{module}").TripleDES
    raise ImportError("cryptography has no TripleDES")  # pragma: no cover


VERSION = b"RFB 003.008\n"
SECURITY_NONE = 1
SECURITY_VNC = 2
CHALLENGE_BYTES = 16
MAX_REASON_BYTES = 4096

# Client-to-server message types (RFC 6143 section 7.5, and the extensions noVNC sends).
SET_PIXEL_FORMAT = 0
SET_ENCODINGS = 2
UPDATE_REQUEST = 3
KEY_EVENT = 4
POINTER_EVENT = 5
CLIENT_CUT_TEXT = 6
ENABLE_CONTINUOUS_UPDATES = 150
CLIENT_FENCE = 248
SET_DESKTOP_SIZE = 251
XVP = 250
QEMU = 255
# What a viewer may send: asking for pictures, never acting on the desktop.
VIEWER_MAY_SEND = frozenset(
    {SET_PIXEL_FORMAT, SET_ENCODINGS, UPDATE_REQUEST, ENABLE_CONTINUOUS_UPDATES, CLIENT_FENCE}
)
MAX_CUT_TEXT_BYTES = 16 * 1024 * 1024

Read = Callable[[int], Awaitable[bytes]]
Write = Callable[[bytes], Awaitable[None]]


class RfbError(Exception):
    """The other side does not speak RFB as expected, or refused the password."""


def vnc_auth_response(password: str, challenge: bytes) -> bytes:
    """VNC authentication: the challenge encrypted with DES under the password's first eight
    bytes, each byte's bits reversed (as every VNC implementation does)."""
    key = password.encode("utf-8")[:8].ljust(8, b"\0")
    key = bytes(int(f"{byte:08b}"[::-1], 2) for byte in key)
    # Three equal keys make triple DES single DES, which is what VNC uses.
    # ECB on one 16-byte challenge is the protocol's own definition, not a choice made here.
    encryptor = Cipher(_triple_des()(key * 3), modes.ECB()).encryptor()  # noqa: S305
    return encryptor.update(challenge) + encryptor.finalize()


async def _reason(read: Read) -> str:
    (length,) = struct.unpack(">I", await read(4))
    return (await read(min(length, MAX_REASON_BYTES))).decode("utf-8", "replace")


async def sign_in_to_server(read: Read, write: Write, password: str) -> None:
    """As the client of the VNC server, up to its security result; RfbError if refused."""
    version = await read(12)
    if not version.startswith(b"RFB 003.") or version < VERSION:
        raise RfbError(f"the VNC server speaks {version!r}, not RFB 3.8")
    await write(VERSION)
    (count,) = await read(1)
    if count == 0:
        raise RfbError(f"the VNC server refused: {await _reason(read)}")
    if SECURITY_VNC not in await read(count):
        raise RfbError("the VNC server does not offer password authentication")
    await write(bytes([SECURITY_VNC]))
    await write(vnc_auth_response(password, await read(CHALLENGE_BYTES)))
    (result,) = struct.unpack(">I", await read(4))
    if result != 0:
        raise RfbError(f"the VNC server refused the password: {await _reason(read)}")


async def greet_browser(read: Read, write: Write) -> None:
    """As the server the browser sees: RFB 3.8 with no security of its own, then success."""
    await write(VERSION)
    if await read(12) != VERSION:
        raise RfbError("the browser does not speak RFB 3.8")
    await write(bytes([1, SECURITY_NONE]))
    if await read(1) != bytes([SECURITY_NONE]):
        raise RfbError("the browser chose a security type it was not offered")
    await write(struct.pack(">I", 0))


def shared_client_init(_client_init: bytes) -> bytes:
    """The browser's ClientInit, always asking to share: a browser that asks for the desktop
    alone would otherwise disconnect its owner's other tabs and every viewer."""
    return b"\x01"


def _length(buffer: bytes | bytearray) -> int | None:
    """The length of the client message at the start of ``buffer``; None while it is not
    known yet. RfbError for a message the portal cannot measure."""
    kind = buffer[0]
    fixed = {SET_PIXEL_FORMAT: 20, UPDATE_REQUEST: 10, KEY_EVENT: 8, POINTER_EVENT: 6,
             ENABLE_CONTINUOUS_UPDATES: 10, XVP: 4}  # fmt: skip
    if kind in fixed:
        return fixed[kind]
    if kind == SET_ENCODINGS:
        return None if len(buffer) < 4 else 4 + 4 * int(struct.unpack_from(">H", buffer, 2)[0])
    if kind == CLIENT_CUT_TEXT:
        if len(buffer) < 8:
            return None
        # Negative lengths are the extended clipboard's; its size is the absolute value.
        size = abs(int(struct.unpack_from(">i", buffer, 4)[0]))
        if size > MAX_CUT_TEXT_BYTES:
            raise RfbError("clipboard message too large")
        return 8 + size
    if kind == CLIENT_FENCE:
        return None if len(buffer) < 9 else 9 + buffer[8]
    if kind == SET_DESKTOP_SIZE:
        return None if len(buffer) < 8 else 8 + 16 * buffer[6]
    if kind == QEMU:
        return None if len(buffer) < 2 else {0: 12, 1: 12}.get(buffer[1], -1)
    raise RfbError(f"unknown client message type {kind}")


class ViewerFilter:
    """Reads a viewer's byte stream after ClientInit and keeps only the messages a viewer
    may send; a message split across WebSocket frames is held until it is whole."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> bytes:
        """The whole, allowed messages ``data`` completes, in order."""
        self._pending += data
        kept = bytearray()
        while self._pending:
            length = _length(self._pending)
            if length is not None and length < 0:
                raise RfbError("unknown QEMU client message")
            if length is None or len(self._pending) < length:
                break
            message = bytes(self._pending[:length])
            del self._pending[:length]
            if message[0] in VIEWER_MAY_SEND:
                kept += message
            else:
                self.dropped += 1
        return bytes(kept)
