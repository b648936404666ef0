"""Terminals without a cluster, for tests and demos: each shell echoes what it is sent, says
its size when asked ("size\\r"), ends on "exit\\r", and loses its connection on ``lose()``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from app.scheduler.errors import SchedulerUnavailable
from app.scheduler.terminals import Terminal, TerminalSize


@dataclass(eq=False)
class FakeTerminal:
    user: str
    size: TerminalSize
    received: bytearray = field(default_factory=bytearray)
    sizes: list[TerminalSize] = field(default_factory=list)
    closed: bool = False
    _output: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)

    async def read(self) -> bytes:
        data = await self._output.get()
        if data is None:
            raise SchedulerUnavailable("the fake login node went away")
        return data

    async def write(self, data: bytes) -> None:
        self.received += data
        self._output.put_nowait(data)
        if data.endswith(b"size\r"):
            self._output.put_nowait(f"\r\n{self.size.columns}x{self.size.rows}\r\n".encode())
        if data.endswith(b"exit\r"):
            self._output.put_nowait(b"")

    def resize(self, size: TerminalSize) -> None:
        self.size = size
        self.sizes.append(size)

    def say(self, text: str) -> None:
        """Output of the shell's own, as if a program printed it."""
        self._output.put_nowait(text.encode())

    def lose(self) -> None:
        """The connection to the login node goes away."""
        self._output.put_nowait(None)


class FakeTerminals:
    """Every shell opened, open or ended, in ``opened``; ``refusal`` is raised by the next
    ``open`` (then forgotten)."""

    def __init__(self) -> None:
        self.opened: list[FakeTerminal] = []
        self.refusal: Exception | None = None

    @property
    def open_now(self) -> list[FakeTerminal]:
        return [terminal for terminal in self.opened if not terminal.closed]

    @asynccontextmanager
    async def open(self, as_user: str, size: TerminalSize) -> AsyncIterator[Terminal]:
        if self.refusal is not None:
            refusal, self.refusal = self.refusal, None
            raise refusal
        terminal = FakeTerminal(as_user, size)
        self.opened.append(terminal)
        try:
            yield terminal
        finally:
            terminal.closed = True
