"""FileStore over SFTP, as the user, on the transport's pooled connection.

Every path is cleaned (``file_paths``), checked against the roots, resolved on the cluster
with SFTP ``realpath`` as the user and checked again, so a symlink cannot lead outside. Only
regular files are read or written (``sftp_entries.regular_file``, without following links),
so a named pipe, a device or a link planted in a file's place is refused before it is opened.
Changes to an entry (rename, delete) resolve its parent only: deleting a symlink removes
the link, never what it points to. Uploads go to a hidden part file beside their target and
are renamed into place once complete, so an interrupted one never leaves a half file under
the real name.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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
    FileData,
    FileEntry,
    FileRoot,
    FolderPage,
    OpenedFile,
)
from app.scheduler.slurm.sftp_entries import (
    changed_meanwhile,
    entry_of,
    is_same_file,
    kind_of,
    opened_regular_file,
    read_ahead,
    regular_file,
    sort_key,
    write_blocks,
)
from app.scheduler.slurm.sftp_timed import TimedSftp
from app.scheduler.slurm.ssh import SshTransport

# Roots are resolved as each user (their realpath may differ); kept a few minutes.
SCOPE_SECONDS = 300.0


def _is_hidden(name: str | bytes) -> bool:
    return name[:1] in (".", b".")


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


class SftpFiles:
    """Implements FileStore for one cluster over its SSH transport's connections."""

    def __init__(self, ssh: SshTransport, roots: tuple[str, ...]) -> None:
        self._ssh = ssh
        self._configured = roots
        self._scopes: TtlCache[str, _Scope] = TtlCache(SCOPE_SECONDS)

    async def _scope(self, sftp: TimedSftp, user: str) -> _Scope:
        async def load() -> _Scope:
            with _sftp_errors(_("your home folder")):
                home = clean_path(await sftp.realpath("."), "/")
            roots = expand_roots(self._configured, home)
            resolved = await asyncio.gather(*(self._real_or_none(sftp, r) for r in roots))
            allowed = tuple(dict.fromkeys([*roots, *(r for r in resolved if r)]))
            return _Scope(home, roots, allowed)

        return await self._scopes.get(user, load)

    @staticmethod
    async def _real_or_none(sftp: TimedSftp, path: str) -> str | None:
        try:
            return clean_path(await sftp.realpath(path), "/")
        except (asyncssh.SFTPError, InvalidFilePath):
            return None

    def _clean(self, scope: _Scope, path: str) -> str:
        clean = clean_path(path, scope.home)
        if not is_under_roots(clean, scope.allowed):
            raise outside_roots(clean)
        return clean

    async def _resolve(self, sftp: TimedSftp, scope: _Scope, clean: str) -> str:
        """``clean`` with every symlink resolved as the user; refused outside the roots."""
        with _sftp_errors(clean):
            real = await sftp.realpath(clean)
        real = clean_path(real, "/")
        if not is_under_roots(real, scope.allowed):
            raise outside_roots(clean, real)
        return real

    async def _in_parent(self, sftp: TimedSftp, scope: _Scope, clean: str) -> str:
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
        self,
        path: str,
        as_user: str,
        *,
        offset: int = 0,
        limit: int = 200,
        show_hidden: bool = True,
    ) -> FolderPage:
        limit = max(1, min(limit, MAX_PAGE_ENTRIES))
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            real = await self._resolve(sftp, scope, clean)
            with _sftp_errors(clean):
                names = [n for n in await sftp.readdir(real) if n.filename not in (".", "..")]
                shown = [n for n in names if show_hidden or not _is_hidden(n.filename)]
                entries = await self._entries(sftp, clean, real, shown)
        entries.sort(key=sort_key)
        page = tuple(entries[offset : offset + limit])
        return FolderPage(clean, page, offset, len(entries), len(names) - len(shown))

    async def _entries(
        self, sftp: TimedSftp, shown: str, real: str, names: list[Any]
    ) -> list[FileEntry]:
        # Only symlinks need a second look, to sort a link to a folder among the folders.
        links = [n for n in names if kind_of(n.attrs.permissions) == "symlink"]
        targets = await asyncio.gather(
            *(self._target(sftp, posixpath.join(real, n.filename)) for n in links)
        )
        followed = {id(n): t for n, t in zip(links, targets, strict=True)}
        return [
            entry_of(n.filename, posixpath.join(shown, n.filename), n.attrs, followed.get(id(n)))
            for n in names
        ]

    @staticmethod
    async def _target(sftp: TimedSftp, path: str) -> Any:
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
        return entry_of(posixpath.basename(clean) or "/", clean, attrs)

    async def _located(self, sftp: TimedSftp, as_user: str, path: str) -> tuple[str, str]:
        """``path`` cleaned and checked against the roots, and where it really is."""
        scope = await self._scope(sftp, as_user)
        clean = self._clean(scope, path)
        return clean, await self._resolve(sftp, scope, clean)

    async def read(self, path: str, as_user: str, *, offset: int = 0, limit: int) -> FileData:
        async with self._ssh.sftp(as_user) as sftp:
            clean, real = await self._located(sftp, as_user, path)
            with _sftp_errors(clean):
                await regular_file(sftp, real, clean)
                async with sftp.open(real, "rb") as handle:
                    size = int((await opened_regular_file(handle, clean)).size or 0)
                    data = await handle.read(limit, offset) if limit else b""
        return FileData(clean, data, offset, size)

    async def open_file(self, path: str, as_user: str, *, chunk: int = 1 << 20) -> OpenedFile:
        pieces = self._opened(path, as_user, chunk)
        # Runs until the file is open and checked: a refusal is raised here, not mid-stream.
        entry = await anext(pieces)
        assert isinstance(entry, FileEntry)
        return OpenedFile(entry, _bytes_of(pieces))

    async def _opened(
        self, path: str, as_user: str, chunk: int
    ) -> AsyncIterator[FileEntry | bytes]:
        """The file's entry once it is open, then its bytes; its SFTP session is closed
        when the bytes end or the caller stops (asyncio finalizes an abandoned generator)."""
        async with self._ssh.sftp(as_user) as sftp:
            clean, real = await self._located(sftp, as_user, path)
            with _sftp_errors(clean):
                await regular_file(sftp, real, clean)
                async with sftp.open(real, "rb") as handle:
                    attrs = await opened_regular_file(handle, clean)
                    yield entry_of(posixpath.basename(clean), clean, attrs)
                    async for data in read_ahead(handle, chunk):
                        yield data

    async def write_part(
        self, folder: str, upload_id: str, offset: int, data: AsyncIterator[bytes], as_user: str
    ) -> int:
        part_name = upload_part_name(upload_id)
        async with self._ssh.sftp(as_user) as sftp:
            clean, real = await self._located(sftp, as_user, folder)
            part, shown = posixpath.join(real, part_name), posixpath.join(clean, part_name)
            with _sftp_errors(clean):
                before = await self._check_step(sftp, part, shown, offset)
                if not offset:
                    await self._start_over(sftp, part)
                # "x" is O_CREAT|O_EXCL, which never follows a link put back meanwhile.
                async with sftp.open(part, "r+b" if offset else "xb") as handle:
                    opened = await opened_regular_file(handle, shown)
                    if before is not None and not is_same_file(before, opened):
                        raise changed_meanwhile(shown)
                    return await write_blocks(handle, offset, data)

    @staticmethod
    async def _start_over(sftp: TimedSftp, part: str) -> None:
        """Removes whatever holds the part's name; a link is removed, never followed."""
        try:
            await sftp.remove(part)
        except asyncssh.SFTPNoSuchFile:
            return

    @staticmethod
    async def _check_step(sftp: TimedSftp, part: str, shown: str, offset: int) -> Any:
        """The part file's attributes when a piece at ``offset`` continues it (None when
        the upload starts over): a regular file of exactly ``offset`` bytes."""
        if not offset:
            return None
        try:
            attrs = await regular_file(sftp, part, shown)
        except asyncssh.SFTPNoSuchFile:
            raise upload_out_of_step(0, offset) from None
        if (attrs.size or 0) != offset:
            raise upload_out_of_step(attrs.size or 0, offset)
        return attrs

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
                await self._check_complete(sftp, part, posixpath.join(clean, part_name), size)
                await self._refuse_existing(sftp, target, already_there(name, clean), replace)
                await (sftp.posix_rename if replace else sftp.rename)(part, target)
                attrs = await sftp.lstat(target)
        return entry_of(name, posixpath.join(clean, name), attrs)

    @staticmethod
    async def _check_complete(sftp: TimedSftp, part: str, shown: str, size: int) -> None:
        try:
            written = (await regular_file(sftp, part, shown)).size or 0
        except asyncssh.SFTPNoSuchFile:
            raise FileNotFound(_("This upload has no data on the cluster any more.")) from None
        if written != size:
            raise upload_out_of_step(written, size, complete=True)

    @staticmethod
    async def _refuse_existing(
        sftp: TimedSftp, path: str, taken: FileExists, replace: bool
    ) -> None:
        try:
            attrs = await sftp.lstat(path)
        except asyncssh.SFTPNoSuchFile:
            return
        if not replace or kind_of(attrs.permissions) == "folder":
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
        return entry_of(posixpath.basename(clean), clean, attrs)

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
        return entry_of(posixpath.basename(clean_new), clean_new, attrs)

    async def remove(self, path: str, as_user: str) -> None:
        async with self._ssh.sftp(as_user) as sftp:
            scope = await self._scope(sftp, as_user)
            clean = self._clean(scope, path)
            target = await self._in_parent(sftp, scope, clean)
            with _sftp_errors(clean):
                attrs = await sftp.lstat(target)
                if kind_of(attrs.permissions) != "folder":
                    await sftp.remove(target)
                    return
                async for found in sftp.scandir(target):
                    if found.filename not in (".", ".."):
                        raise not_empty(clean)
                await sftp.rmdir(target)


async def _bytes_of(pieces: AsyncIterator[FileEntry | bytes]) -> AsyncIterator[bytes]:
    async for piece in pieces:
        assert isinstance(piece, bytes)
        yield piece
