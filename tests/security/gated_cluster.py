"""A cluster whose calls wait at a gate until the test opens it, to catch a request holding
database resources (a pooled connection, a transaction, SQLite's write lock) while it waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.fake import FakeScheduler
from app.scheduler.files import FileData, FileEntry, FileRoot, FolderPage, OpenedFile
from app.scheduler.types import FileChunk, JobSpec, PartitionInfo

ENTRY = FileEntry("a.txt", "/home/alice/a.txt", "file", 5, datetime(2026, 1, 1, tzinfo=UTC), 0o644)
FOLDER = FileEntry("alice", "/home/alice", "folder", 0, None, 0o755)


class Gate:
    """Every call waits here while the gate is shut; ``entered`` tells that one is waiting."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        self.entered = asyncio.Event()

    def shut(self) -> None:
        self._open.clear()
        self.entered.clear()

    def open(self) -> None:
        self._open.set()

    async def wait(self) -> None:
        if not self._open.is_set():
            self.entered.set()
            await self._open.wait()


class GatedFiles:
    """A FileStore of one file and one folder, every operation held at the gate."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate

    async def roots(self, as_user: str) -> list[FileRoot]:
        await self._gate.wait()
        return [FileRoot("Home", "/home/alice")]

    async def list_folder(
        self,
        path: str,
        as_user: str,
        *,
        offset: int = 0,
        limit: int = 200,
        show_hidden: bool = True,
    ) -> FolderPage:
        await self._gate.wait()
        return FolderPage("/home/alice", (ENTRY,), 0, 1)

    async def stat(self, path: str, as_user: str) -> FileEntry:
        await self._gate.wait()
        return FOLDER if path == FOLDER.path else ENTRY

    async def read(self, path: str, as_user: str, *, offset: int = 0, limit: int) -> FileData:
        await self._gate.wait()
        return FileData(ENTRY.path, b"hello", 0, 5)

    async def open_file(self, path: str, as_user: str, *, chunk: int = 1 << 20) -> OpenedFile:
        await self._gate.wait()
        return OpenedFile(ENTRY, _pieces(b"hello"))

    async def write_part(
        self, folder: str, upload_id: str, offset: int, data: AsyncIterator[bytes], as_user: str
    ) -> int:
        await self._gate.wait()
        return offset + sum([len(piece) async for piece in data])

    async def finish_upload(
        self, folder: str, upload_id: str, name: str, size: int, as_user: str, *, replace: bool
    ) -> FileEntry:
        await self._gate.wait()
        return ENTRY

    async def abort_upload(self, folder: str, upload_id: str, as_user: str) -> None:
        await self._gate.wait()

    async def make_folder(self, path: str, as_user: str) -> FileEntry:
        await self._gate.wait()
        return FOLDER

    async def rename(self, path: str, new_path: str, as_user: str) -> FileEntry:
        await self._gate.wait()
        return ENTRY

    async def remove(self, path: str, as_user: str) -> None:
        await self._gate.wait()


async def _pieces(data: bytes) -> AsyncIterator[bytes]:
    yield data


class GatedScheduler(FakeScheduler):
    """The in-memory scheduler, with its files, logs, disk usage and job commands gated."""

    def __init__(self, gate: Gate) -> None:
        super().__init__(accounts={"alice": ["physics"], "bob": ["chemistry"]}, disk_usages={})
        self.gate = gate
        # The fake keeps log contents in ``files``; read_file is replaced below, so the name
        # is free for the FileStore the portal looks for there.
        self.files = GatedFiles(gate)  # type: ignore[assignment]

    async def read_file(self, path: str, offset: int, limit: int, as_user: str) -> FileChunk:
        await self.gate.wait()
        return FileChunk(b"log\n", offset, offset + 4, True, 4)

    async def disk_usage(self, as_user: str) -> list[FilesystemUsage]:
        await self.gate.wait()
        return []

    async def cancel(self, job_ids: Any, as_user: str) -> None:
        await self.gate.wait()

    async def preflight(self, spec: JobSpec, as_user: str, *, ask_sbatch: bool = True) -> None:
        await self.gate.wait()
        await super().preflight(spec, as_user, ask_sbatch=ask_sbatch)

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        await self.gate.wait()
        return await super().submit(spec, as_user)

    async def partitions(self) -> list[PartitionInfo]:
        await self.gate.wait()
        return await super().partitions()
