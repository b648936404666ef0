"""FileStore over SFTP, as the user, on the transport's pooled connection.

Every path is cleaned (``file_paths``), checked against the roots, resolved on the cluster
with SFTP ``realpath`` as the user and checked again, so a symlink cannot lead outside.
Changes to an entry (rename, delete) resolve its parent only: deleting a symlink removes
the link, never what it points to. Uploads go to a hidden part file beside their target and
are renamed into place once complete, so an interrupted one never leaves a half file under
the real name.
"""

from __future__ import annotations

import asyncio
import posixpath
import stat
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncssh

from app.i18n import _
from app.scheduler.cache import TtlCache
from app.scheduler.errors import (
    FileAccessDenied,
    FileExists,
    FileNotFound,
    FileUnavailable,
    InvalidFilePath,
)
from app.scheduler.file_paths import (
    HOME_ROOT,
    already_there,
    clean_path,
    expand_roots,
    is_under_roots,
    new_name,
    not_empty,
    outside_roots,
    split_parent,
    upload_out_of_step,
    upload_part_name,
)
from app.scheduler.files import (
    MAX_PAGE_ENTRIES,
    EntryKind,
    FileData,
    FileEntry,
    FileRoot,
    FolderPage,
)
from app.scheduler.slurm.ssh import SshTransport

# Writes go out in blocks this large (asyncssh splits each into parallel requests): small
# enough that one is written while the next arrives, large enough to keep SFTP busy.
WRITE_BLOCK = 1 << 20
# Roots are resolved as each user (their realpath may differ); kept a few minutes.
SCOPE_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class _Scope:
    home: str
    roots: tuple[str, ...]
    # The roots and what they resolve to: a root may itself be a symlink (/scratch → /lustre).
    allowed: tuple[str, ...]


@contextmanager
def _sftp_errors(shown: str) -> Iterator[None]:
    """The server's refusal in words for people; a lost connection goes to the transport."""
    try:
        yield
    except asyncssh.SFTPConnectionLost:
        raise
    except asyncssh.SFTPNoSuchFile:
        raise FileNotFound(_("%(path)s does not exist.", path=shown)) from None
    except asyncssh.SFTPPermissionDenied:
        denied = _("Permission denied: you may not do this with %(path)s.", path=shown)
        raise FileAccessDenied(denied) from None
    except asyncssh.SFTPError as exc:
        reason = exc.reason or _("the cluster refused")
        raise FileUnavailable(f"{shown}: {reason}") from None


def _kind(mode: int | None) -> EntryKind:
    if mode is None:
        return "other"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "file" if stat.S_ISREG(mode) else "other"


def _entry(name: str, path: str, attrs: Any, target: Any = None) -> FileEntry:
    """An entry from lstat ``attrs``; ``target`` is the stat of what a symlink points to."""
    is_link = _kind(attrs.permissions) == "symlink"
    shown = target if is_link and target is not None else attrs
    mtime = None if shown.mtime is None else datetime.fromtimestamp(shown.mtime, UTC)
    return FileEntry(
        name=name,
        path=path,
        kind=_kind(shown.permissions),
        size=shown.size or 0,
        mtime=mtime,
        mode=stat.S_IMODE(shown.permissions or 0),
        is_symlink=is_link,
    )


def _sort_key(entry: FileEntry) -> tuple[bool, str, str]:
    return (not entry.is_folder, entry.name.casefold(), entry.name)


class SftpFiles:
    """Implements FileStore for one cluster over its SSH transport's connections."""

    def __init__(self, ssh: SshTransport, roots: tuple[str, ...]) -> None:
        self._ssh = ssh
        self._configured = roots
        self._scopes: TtlCache[str, _Scope] = TtlCache(SCOPE_SECONDS)

    async def _scope(self, sftp: Any, user: str) -> _Scope:
        async def load() -> _Scope:
            with _sftp_errors(_("your home folder")):
                home = clean_path(await sftp.realpath("."), "/")
            roots = expand_roots(self._configured, home)
            resolved = await asyncio.gather(*(self._real_or_none(sftp, r) for r in roots))
            allowed = tuple(dict.fromkeys([*roots, *(r for r in resolved if r)]))
            return _Scope(home, roots, allowed)

        return await self._scopes.get(user, load)

    @staticmethod
    async def _real_or_none(sftp: Any, path: str) -> str | None:
        try:
            return clean_path(await sftp.realpath(path), "/")
        except (asyncssh.SFTPError, InvalidFilePath):
            return None

    def _clean(self, scope: _Scope, path: str) -> str:
        clean = clean_path(path, scope.home)
        if not is_under_roots(clean, scope.allowed):
            raise outside_roots(clean)
        return clean

    async def _resolve(self, sftp: Any, scope: _Scope, clean: str) -> str:
        """``clean`` with every symlink resolved as the user; refused outside the roots."""
        with _sftp_errors(clean):
            real = await sftp.realpath(clean)
        real = clean_path(real, "/")
        if not is_under_roots(real, scope.allowed):
            raise outside_roots(clean, real)
        return real

    async def _in_parent(self, sftp: Any, scope: _Scope, clean: str) -> str:
        """The real path of ``clean``'s last component itself (not followed) in its
        resolved parent; refuses a root, which the portal never renames or deletes."""
        if clean in scope.roots or clean == scope.home:
            raise InvalidFilePath(
                _("%(path)s is one of your top folders and cannot be changed.", path=clean)
            )
        parent, name = split_parent(clean)
        return posixpath.join(await self._resolve(sftp, scope, parent), name)

    async def roots(self, as_user: str) -> list[FileRoot]:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
        found = [FileRoot("Home" if root == scope.home else root, root) for root in scope.roots]
        if HOME_ROOT not in self._configured and is_under_roots(scope.home, scope.roots):
            found.insert(0, FileRoot("Home", scope.home))
        return found

    async def list_folder(
        self, path: str, as_user: str, *, offset: int = 0, limit: int = 200
    ) -> FolderPage:
        limit = max(1, min(limit, MAX_PAGE_ENTRIES))
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            real = await self._resolve(sftp, scope, clean)
            with _sftp_errors(clean):
                names = [n for n in await sftp.readdir(real) if n.filename not in (".", "..")]
                entries = await self._entries(sftp, clean, real, names)
        entries.sort(key=_sort_key)
        return FolderPage(clean, tuple(entries[offset : offset + limit]), offset, len(entries))

    async def _entries(self, sftp: Any, shown: str, real: str, names: list[Any]) -> list[FileEntry]:
        # Only symlinks need a second look, to sort a link to a folder among the folders.
        links = [n for n in names if _kind(n.attrs.permissions) == "symlink"]
        targets = await asyncio.gather(
            *(self._target(sftp, posixpath.join(real, n.filename)) for n in links)
        )
        followed = {id(n): t for n, t in zip(links, targets, strict=True)}
        return [
            _entry(n.filename, posixpath.join(shown, n.filename), n.attrs, followed.get(id(n)))
            for n in names
        ]

    @staticmethod
    async def _target(sftp: Any, path: str) -> Any:
        try:
            return await sftp.stat(path)
        except asyncssh.SFTPError:
            return None

    async def stat(self, path: str, as_user: str) -> FileEntry:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            real = await self._resolve(sftp, scope, clean)
            with _sftp_errors(clean):
                attrs = await sftp.lstat(real)
        return _entry(posixpath.basename(clean) or "/", clean, attrs)

    async def read(self, path: str, as_user: str, *, offset: int = 0, limit: int) -> FileData:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            real = await self._resolve(sftp, scope, clean)
            with _sftp_errors(clean):
                async with sftp.open(real, "rb") as handle:
                    size = await self._file_size(handle, clean)
                    data = await handle.read(limit, offset) if limit else b""
        return FileData(clean, data, offset, size)

    @staticmethod
    async def _file_size(handle: Any, shown: str) -> int:
        attrs = await handle.stat()
        if _kind(attrs.permissions) == "folder":
            raise InvalidFilePath(_("%(path)s is a folder.", path=shown))
        return int(attrs.size or 0)

    async def stream(
        self, path: str, as_user: str, *, chunk: int = 1 << 20
    ) -> AsyncIterator[bytes]:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            real = await self._resolve(sftp, scope, clean)
            with _sftp_errors(clean):
                async with sftp.open(real, "rb") as handle:
                    await self._file_size(handle, clean)
                    async for data in _read_ahead(handle, chunk):
                        yield data

    async def write_part(
        self, folder: str, upload_id: str, offset: int, data: AsyncIterator[bytes], as_user: str
    ) -> int:
        part_name = upload_part_name(upload_id)
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, folder)
            part = posixpath.join(await self._resolve(sftp, scope, clean), part_name)
            with _sftp_errors(clean):
                if offset:
                    await self._check_step(sftp, part, offset)
                async with sftp.open(part, "r+b" if offset else "wb") as handle:
                    return await _write_blocks(handle, offset, data)

    @staticmethod
    async def _check_step(sftp: Any, part: str, offset: int) -> None:
        try:
            size = (await sftp.stat(part)).size or 0
        except asyncssh.SFTPNoSuchFile:
            size = 0
        if size != offset:
            raise upload_out_of_step(size, offset)

    async def finish_upload(
        self, folder: str, upload_id: str, name: str, size: int, as_user: str, *, replace: bool
    ) -> FileEntry:
        part_name, name = upload_part_name(upload_id), new_name(name)
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, folder)
            real = await self._resolve(sftp, scope, clean)
            part, target = posixpath.join(real, part_name), posixpath.join(real, name)
            with _sftp_errors(clean):
                await self._check_complete(sftp, part, size)
                await self._refuse_existing(sftp, target, already_there(name, clean), replace)
                await (sftp.posix_rename if replace else sftp.rename)(part, target)
                attrs = await sftp.lstat(target)
        return _entry(name, posixpath.join(clean, name), attrs)

    @staticmethod
    async def _check_complete(sftp: Any, part: str, size: int) -> None:
        try:
            written = (await sftp.stat(part)).size or 0
        except asyncssh.SFTPNoSuchFile:
            raise FileNotFound(_("This upload has no data on the cluster any more.")) from None
        if written != size:
            raise upload_out_of_step(written, size, complete=True)

    @staticmethod
    async def _refuse_existing(sftp: Any, path: str, taken: FileExists, replace: bool) -> None:
        try:
            attrs = await sftp.lstat(path)
        except asyncssh.SFTPNoSuchFile:
            return
        if not replace or _kind(attrs.permissions) == "folder":
            raise taken

    async def abort_upload(self, folder: str, upload_id: str, as_user: str) -> None:
        part_name = upload_part_name(upload_id)
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, folder)
            part = posixpath.join(await self._resolve(sftp, scope, clean), part_name)
            with _sftp_errors(clean):
                try:
                    await sftp.remove(part)
                except asyncssh.SFTPNoSuchFile:
                    return

    async def make_folder(self, path: str, as_user: str) -> FileEntry:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            new_name(split_parent(clean)[1])
            target = await self._in_parent(sftp, scope, clean)
            with _sftp_errors(clean):
                await self._refuse_existing(sftp, target, already_there(clean), replace=False)
                await sftp.mkdir(target)
                attrs = await sftp.lstat(target)
        return _entry(posixpath.basename(clean), clean, attrs)

    async def rename(self, path: str, new_path: str, as_user: str) -> FileEntry:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean, clean_new = self._clean(scope, path), self._clean(scope, new_path)
            new_name(split_parent(clean_new)[1])
            source = await self._in_parent(sftp, scope, clean)
            target = await self._in_parent(sftp, scope, clean_new)
            with _sftp_errors(clean):
                await sftp.lstat(source)
                taken = already_there(clean_new)
                await self._refuse_existing(sftp, target, taken, replace=False)
                await sftp.rename(source, target)
                attrs = await sftp.lstat(target)
        return _entry(posixpath.basename(clean_new), clean_new, attrs)

    async def remove(self, path: str, as_user: str) -> None:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            target = await self._in_parent(sftp, scope, clean)
            with _sftp_errors(clean):
                attrs = await sftp.lstat(target)
                if _kind(attrs.permissions) != "folder":
                    await sftp.remove(target)
                    return
                async for found in sftp.scandir(target):
                    if found.filename not in (".", ".."):
                        raise not_empty(clean)
                await sftp.rmdir(target)


async def _read_ahead(handle: Any, chunk: int) -> AsyncIterator[bytes]:
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


async def _write_blocks(handle: Any, offset: int, data: AsyncIterator[bytes]) -> int:
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
