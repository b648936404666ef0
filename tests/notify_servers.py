"""Real local receivers for notification tests: an SMTP server (aiosmtpd) and an HTTP server.

Both run in threads of the test process and speak their protocols for real; they only record
what arrives, so a test can assert how many e-mails and webhook requests came.
"""

from __future__ import annotations

import email
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

from tests.portal import free_port


@dataclass
class Mailbox:
    """What the SMTP server accepted: (envelope recipients, parsed message)."""

    messages: list[tuple[list[str], Message]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        content = envelope.original_content or envelope.content
        with self.lock:
            self.messages.append((list(envelope.rcpt_tos), email.message_from_bytes(content)))
        return "250 Message accepted for delivery"


@contextmanager
def smtp_server() -> Iterator[tuple[Mailbox, int]]:
    """(the mailbox, the port) of an SMTP server on 127.0.0.1 for the block's duration."""
    mailbox = Mailbox()
    port = free_port()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield mailbox, port
    finally:
        controller.stop()


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Webhook requests as they arrived; ``statuses`` are answered in turn, then 200."""

    requests: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, request: Received) -> int:
        with self.lock:
            self.requests.append(request)
            return self.statuses.pop(0) if self.statuses else 200


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            status = receiver.record(Received(self.path, dict(self.headers.items()), body))
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def webhook_receiver() -> Iterator[tuple[Receiver, str]]:
    """(the receiver, its URL) of an HTTP server on 127.0.0.1 for the block's duration."""
    receiver = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver, f"http://127.0.0.1:{server.server_address[1]}/hooks/portal"
    finally:
        server.shutdown()
        server.server_close()


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
