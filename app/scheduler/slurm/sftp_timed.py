"""An asyncssh SFTP client whose every request has a deadline.

sftp-server answers a channel's requests one after another, so one that never returns (a
named pipe opened for reading waits for a writer; a hung file system) holds up the channel for
good. Each request here gives up after ``timeout`` seconds (``FileOperationTimedOut``); the
transport then closes that channel instead of handing it to the next operation.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from app.i18n import _
from app.scheduler.errors import FileOperationTimedOut

T = TypeVar("T")


async def _within(seconds: float, call: Awaitable[T]) -> T:
    try:
        return await asyncio.wait_for(call, seconds)
    except TimeoutError:
        shown = f"{seconds:g}"
        raise FileOperationTimedOut(
            _("The cluster did not answer within %(seconds)s s; try again shortly.", seconds=shown)
        ) from None


class TimedFile:
    """An open remote file: reads, writes and its attributes, each under the deadline."""

    def __init__(self, handle: Any, timeout: float) -> None:
        self._handle = handle
        self._timeout = timeout

    async def read(self, size: int, offset: int) -> bytes:
        data: bytes = await _within(self._timeout, self._handle.read(size, offset))
        return data

    async def write(self, data: bytes, offset: int) -> int:
        written: int = await _within(self._timeout, self._handle.write(data, offset))
        return written

    async def stat(self) -> Any:
        return await _within(self._timeout, self._handle.stat())


class TimedSftp:
    """The SFTP requests the file store makes, each under the deadline."""

    def __init__(self, client: Any, timeout: float) -> None:
        self.client = client
        self.timeout = timeout

    def _within(self, call: Awaitable[T]) -> Awaitable[T]:
        return _within(self.timeout, call)

    async def realpath(self, path: str) -> str:
        real: str = await self._within(self.client.realpath(path))
        return real

    async def readdir(self, path: str) -> list[Any]:
        names: list[Any] = await self._within(self.client.readdir(path))
        return names

    async def stat(self, path: str) -> Any:
        return await self._within(self.client.stat(path))

    async def lstat(self, path: str) -> Any:
        return await self._within(self.client.lstat(path))

    async def rename(self, old: str, new: str) -> None:
        await self._within(self.client.rename(old, new))

    async def posix_rename(self, old: str, new: str) -> None:
        await self._within(self.client.posix_rename(old, new))

    async def remove(self, path: str) -> None:
        await self._within(self.client.remove(path))

    async def mkdir(self, path: str) -> None:
        await self._within(self.client.mkdir(path))

    async def rmdir(self, path: str) -> None:
        await self._within(self.client.rmdir(path))

    async def scandir(self, path: str) -> AsyncIterator[Any]:
        entries = self.client.scandir(path).__aiter__()
        while (entry := await self._within(_next_or_none(entries))) is not None:
            yield entry

    @asynccontextmanager
    async def open(self, path: str, mode: str) -> AsyncIterator[TimedFile]:
        handle = await self._within(self.client.open(path, mode))
        try:
            yield TimedFile(handle, self.timeout)
        except (FileOperationTimedOut, asyncio.CancelledError, GeneratorExit):
            # The transport drops the channel after these: a close could wait as long again.
            raise
        except BaseException:
            await self._within(handle.close())
            raise
        await self._within(handle.close())


async def _next_or_none(entries: AsyncIterator[Any]) -> Any:
    try:
        return await entries.__anext__()
    except StopAsyncIteration:
        return None
