"""What the SFTP file store reads back from the cluster: entries from attributes, and the
check that what the portal is about to read or write is a plain file, made without following
links, so that a named pipe, a device, a socket or a planted symlink is refused by name.
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from app.i18n import _
from app.scheduler.errors import InvalidFilePath
from app.scheduler.files import EntryKind, FileEntry
from app.scheduler.slurm.sftp_timed import TimedFile, TimedSftp

# Writes go out in blocks this large (asyncssh splits each into parallel requests): small
# enough that one is written while the next arrives, large enough to keep SFTP busy.
WRITE_BLOCK = 1 << 20


class NotRegularFile(InvalidFilePath):
    """The path is a folder, a pipe, a device, a socket or a link where a file must be."""


def kind_of(mode: int | None) -> EntryKind:
    if mode is None:
        return "other"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "file" if stat.S_ISREG(mode) else "other"


def entry_of(name: str, path: str, attrs: Any, target: Any = None) -> FileEntry:
    """An entry from lstat ``attrs``; ``target`` is the stat of what a symlink points to."""
    is_link = kind_of(attrs.permissions) == "symlink"
    shown = target if is_link and target is not None else attrs
    mtime = None if shown.mtime is None else datetime.fromtimestamp(shown.mtime, UTC)
    return FileEntry(
        name=name,
        path=path,
        kind=kind_of(shown.permissions),
        size=shown.size or 0,
        mtime=mtime,
        mode=stat.S_IMODE(shown.permissions or 0),
        is_symlink=is_link,
    )


def sort_key(entry: FileEntry) -> tuple[bool, str, str]:
    return (not entry.is_folder, entry.name.casefold(), entry.name)


def _what(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, _("a folder")),
        (stat.S_ISLNK, _("a symbolic link")),
        (stat.S_ISFIFO, _("a named pipe")),
        (stat.S_ISSOCK, _("a socket")),
        (stat.S_ISCHR, _("a device")),
        (stat.S_ISBLK, _("a device")),
    )
    return next((word for is_kind, word in kinds if is_kind(mode)), _("a special file"))


def not_regular(shown: str, mode: int) -> NotRegularFile:
    return NotRegularFile(
        _(
            "%(path)s is %(kind)s, not a regular file; the portal opens regular files only.",
            path=shown,
            kind=_what(mode),
        )
    )


async def regular_file(sftp: TimedSftp, path: str, shown: str) -> Any:
    """``path``'s own attributes (lstat: a link is not followed), when it is a regular file.

    Checked before it is opened: opening a named pipe waits for a writer, a device may do
    anything, and a link planted there would lead the portal elsewhere.
    """
    attrs = await sftp.lstat(path)
    if not stat.S_ISREG(attrs.permissions or 0):
        raise not_regular(shown, attrs.permissions or 0)
    return attrs


async def opened_regular_file(handle: TimedFile, shown: str) -> Any:
    """The open file's attributes (fstat), when it is a regular file.

    Plain SFTP (version 3, OpenSSH's) cannot open without following links, so what was
    opened is checked again: something swapped in after ``regular_file`` is refused before a
    byte is read or written.
    """
    attrs = await handle.stat()
    if not stat.S_ISREG(attrs.permissions or 0):
        raise not_regular(shown, attrs.permissions or 0)
    return attrs


def is_same_file(before: Any, after: Any) -> bool:
    """Whether two sets of attributes (lstat before opening, fstat after) describe the same
    file, as far as SFTP version 3 tells: no inode, so size, time, mode and owner."""
    fields = ("size", "mtime", "permissions", "uid", "gid")
    return all(getattr(before, name) == getattr(after, name) for name in fields)


def changed_meanwhile(shown: str) -> NotRegularFile:
    return NotRegularFile(_("%(path)s changed while it was being opened; try again.", path=shown))


async def read_ahead(handle: Any, chunk: int) -> AsyncIterator[bytes]:
    """The file's pieces in order, the next one already asked for while one is handed on."""
    position = 0
    reading = asyncio.ensure_future(handle.read(chunk, position))
    try:
        while data := await reading:
            position += len(data)
            reading = asyncio.ensure_future(handle.read(chunk, position))
            yield data
    finally:
        if not reading.done():
            reading.cancel()


async def write_blocks(handle: Any, offset: int, data: AsyncIterator[bytes]) -> int:
    """Write ``data`` from ``offset`` in blocks of WRITE_BLOCK, one block travelling to the
    cluster while the next arrives from the client; returns the end offset."""
    position, pending = offset, bytearray()
    writing: asyncio.Future[Any] | None = None
    try:
        async for piece in data:
            pending += piece
            if len(pending) >= WRITE_BLOCK:
                if writing is not None:
                    await writing
                writing = asyncio.ensure_future(handle.write(bytes(pending), position))
                position, pending = position + len(pending), bytearray()
        if writing is not None:
            await writing
        if pending:
            await handle.write(bytes(pending), position)
        return position + len(pending)
    finally:
        if writing is not None and not writing.done():
            writing.cancel()
