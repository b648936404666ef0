"""The portal's side of VNC's protocol: the password handshake with the server, the browser's
greeting, and what a view-only viewer's messages become."""

from __future__ import annotations

import struct

import pytest

from app.interactive import rfb

KEY = struct.pack(">BBHI", rfb.KEY_EVENT, 1, 0, 0x61)
POINTER = struct.pack(">BBHH", rfb.POINTER_EVENT, 1, 10, 20)
UPDATE = struct.pack(">BBHHHH", rfb.UPDATE_REQUEST, 1, 0, 0, 1280, 800)
ENCODINGS = struct.pack(">BBHii", rfb.SET_ENCODINGS, 0, 2, 7, -223)
CUT = struct.pack(">BxxxI", rfb.CLIENT_CUT_TEXT, 5) + b"hello"
RESIZE = struct.pack(">BxHHBx", rfb.SET_DESKTOP_SIZE, 800, 600, 1) + bytes(16)
QEMU_KEY = struct.pack(">BBHII", rfb.QEMU, 0, 1, 0x61, 30)
FENCE = struct.pack(">BxxxIB", rfb.CLIENT_FENCE, 0x80000000, 2) + b"ab"


class Wire:
    """One side of a connection: what it will read, and what was written to it."""

    def __init__(self, incoming: bytes) -> None:
        self.incoming, self.written = bytearray(incoming), bytearray()

    async def read(self, count: int) -> bytes:
        assert len(self.incoming) >= count, "read past what the peer sent"
        data = bytes(self.incoming[:count])
        del self.incoming[:count]
        return data

    async def write(self, data: bytes) -> None:
        self.written += data


def test_the_password_response_is_des_with_vncs_bit_reversed_key() -> None:
    # Checked against TigerVNC 1.12's Xvnc, which accepted it for the password "secretpw".
    response = rfb.vnc_auth_response("secretpw", bytes(range(16)))
    assert response.hex() == "5002a20f40d96c59ec8a26f47ae5688d"
    # VNC passwords are eight characters: the rest of a longer secret changes nothing.
    assert rfb.vnc_auth_response("secretpw-and-more", bytes(range(16))) == response


async def test_the_portal_answers_the_servers_challenge_with_the_sessions_secret() -> None:
    challenge = bytes(range(16, 32))
    server = Wire(rfb.VERSION + bytes([2, 1, 2]) + challenge + struct.pack(">I", 0))

    await rfb.sign_in_to_server(server.read, server.write, "secretpw")

    assert server.written == rfb.VERSION + bytes([2]) + rfb.vnc_auth_response("secretpw", challenge)
    assert not server.incoming


async def test_a_refused_password_or_a_server_without_one_is_an_error() -> None:
    reason = b"Authentication failure"
    refused = Wire(
        rfb.VERSION + bytes([1, 2]) + bytes(16) + struct.pack(">II", 1, len(reason)) + reason
    )
    with pytest.raises(rfb.RfbError, match="Authentication failure"):
        await rfb.sign_in_to_server(refused.read, refused.write, "secretpw")
    # A server that offers no password must not be reached without one.
    open_server = Wire(rfb.VERSION + bytes([1, 1]))
    with pytest.raises(rfb.RfbError, match="password"):
        await rfb.sign_in_to_server(open_server.read, open_server.write, "secretpw")


async def test_the_browser_is_offered_no_security_and_told_it_succeeded() -> None:
    browser = Wire(rfb.VERSION + bytes([rfb.SECURITY_NONE]))

    await rfb.greet_browser(browser.read, browser.write)

    assert browser.written == rfb.VERSION + bytes([1, rfb.SECURITY_NONE]) + bytes(4)


async def test_a_browser_that_picks_a_type_it_was_not_offered_is_refused() -> None:
    browser = Wire(rfb.VERSION + bytes([rfb.SECURITY_VNC]))
    with pytest.raises(rfb.RfbError):
        await rfb.greet_browser(browser.read, browser.write)


def test_every_client_asks_to_share_the_desktop() -> None:
    assert rfb.shared_client_init(b"\x00") == b"\x01"


def test_a_viewer_keeps_only_what_asks_for_pictures() -> None:
    viewer = rfb.ViewerFilter()
    stream = ENCODINGS + KEY + UPDATE + POINTER + CUT + RESIZE + QEMU_KEY + FENCE + UPDATE

    assert viewer.feed(stream) == ENCODINGS + UPDATE + FENCE + UPDATE
    assert viewer.dropped == 5


def test_a_message_split_across_frames_is_held_until_it_is_whole() -> None:
    viewer = rfb.ViewerFilter()
    stream = UPDATE + KEY + ENCODINGS + CUT
    kept = b"".join(viewer.feed(stream[i : i + 3]) for i in range(0, len(stream), 3))

    assert kept == UPDATE + ENCODINGS
    assert viewer.dropped == 2


def test_a_message_the_portal_cannot_measure_ends_the_viewers_stream() -> None:
    with pytest.raises(rfb.RfbError):
        rfb.ViewerFilter().feed(bytes([99, 0, 0, 0]))
    with pytest.raises(rfb.RfbError):
        rfb.ViewerFilter().feed(bytes([rfb.QEMU, 7]))
