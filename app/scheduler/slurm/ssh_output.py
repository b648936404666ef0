"""Where a remote command's output goes as it arrives: kept whole up to a cap, or handed
on piece by piece to a reader that keeps only what it needs (a large queue's listing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from app.scheduler.errors import SchedulerError


class OutputTooLarge(SchedulerError):
    """A command printed more than the transport's output cap."""


class Output(Protocol):
    """Where a command's output goes as it arrives."""

    def take(self, chunk: bytes) -> None: ...

    def value(self) -> bytes: ...


class Kept:
    """Output kept whole, up to ``cap`` bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.size = 0
        self.parts: list[bytes] = []

    def take(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.cap:
            raise OutputTooLarge(f"command output exceeded {self.cap} bytes")
        self.parts.append(chunk)

    def value(self) -> bytes:
        return b"".join(self.parts)


class Passed:
    """Output handed on as it arrives, not kept."""

    def __init__(self, consume: Callable[[bytes], None]) -> None:
        self.consume = consume
        self.size = 0

    def take(self, chunk: bytes) -> None:
        self.size += len(chunk)
        self.consume(chunk)

    def value(self) -> bytes:
        return b""


async def pump(stream: Any, output: Output) -> None:
    # Large reads: a queue of 100,000 jobs is 26 MB of squeue output.
    while chunk := await stream.read(1 << 20):
        output.take(chunk)
