"""A user's files on a cluster, as that user: browse, view, download, upload and change.

The username always comes from the actor, and every operation runs over SFTP as that user,
so their Unix permissions decide; the cluster's roots (``file_roots``) bound what the portal
opens at all, symlinks resolved. The scheduler library's refusals become the portal's
errors here, in words for people.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from app.errors import Conflict, Forbidden, NotFound, ServiceUnavailable, ValidationFailed
from app.i18n import _, format_units
from app.scheduler.disk_usage import binary_scale
from app.scheduler.errors import (
    FileAccessDenied,
    FileExists,
    FileNotFound,
    FileOperationTimedOut,
    FileUnavailable,
    FolderNotEmpty,
    InvalidFilePath,
    OutsideRoots,
    PermissionDenied,
    SchedulerUnavailable,
    UploadOutOfStep,
)
from app.scheduler.file_paths import HOME_ROOT, is_under_roots
from app.scheduler.files import FileEntry, FileRoot, FileStore, FolderPage, file_store_of
from app.scheduler.registry import Schedulers, UnknownCluster
from app.users.actor import Actor

# Text shown in the page at most; larger files are downloaded.
VIEW_LIMIT = 1 << 20
# One piece of an upload. Larger than the site's body limit for other requests (4 MiB by
# default): fewer round trips, and the limit for this route alone is raised to match.
UPLOAD_PART_BYTES = 8 << 20
DOWNLOAD_CHUNK = 1 << 20
PAGE_SIZE = 200
# A NUL in the first bytes is what `grep` and `file` take for binary too.
_SNIFF_BYTES = 8192


class UploadConflict(Conflict):
    """A piece of an upload arrived out of order; ``expected_offset`` says where to go on."""

    def __init__(self, detail: str, expected_offset: int) -> None:
        super().__init__(detail)
        self.expected_offset = expected_offset


@dataclass(frozen=True, slots=True)
class FileView:
    """A file for the page: its text when it is small and text, else why not."""

    entry: FileEntry
    text: str | None
    problem: str | None


@dataclass(frozen=True, slots=True)
class UploadPart:
    """Where a piece of an upload goes: the target folder, the upload's id (32 hex digits
    the client chose) and the byte offset it starts at."""

    folder: str
    upload_id: str
    offset: int


@dataclass(frozen=True, slots=True)
class Download:
    entry: FileEntry
    chunks: AsyncIterator[bytes]


def format_size(amount: int) -> str:
    """``1.5 MiB``: binary units, one decimal, in the reader's language."""
    value, unit = binary_scale(amount)
    return (
        format_units(amount, "B", "#,##0") if unit == "B" else format_units(value, unit, "#,##0.0")
    )


@contextmanager
def translated() -> Iterator[None]:
    """The scheduler library's file errors as the portal's, message kept."""
    try:
        yield
    except FileNotFound as error:
        raise NotFound(str(error)) from None
    except (FileAccessDenied, OutsideRoots, PermissionDenied) as error:
        raise Forbidden(str(error)) from None
    except InvalidFilePath as error:
        raise ValidationFailed(str(error), fields={"path": str(error)}) from None
    except UploadOutOfStep as error:
        raise UploadConflict(str(error), error.expected_offset) from None
    except (FileExists, FolderNotEmpty) as error:
        raise Conflict(str(error)) from None
    except FileUnavailable as error:
        raise ServiceUnavailable(str(error)) from None
    except FileOperationTimedOut as error:
        raise ServiceUnavailable(str(error)) from None
    except SchedulerUnavailable:
        raise ServiceUnavailable(_("The cluster did not answer; try again shortly.")) from None


class FilesService:
    """Files through each cluster's file store, always as the actor's cluster username."""

    def __init__(self, schedulers: Schedulers, roots: Mapping[str, tuple[str, ...]]) -> None:
        self._schedulers = schedulers
        self._roots = roots

    def _store(self, actor: Actor, cluster: str) -> tuple[FileStore, str]:
        try:
            adapter = self._schedulers.get(cluster)
        except UnknownCluster:
            raise NotFound(_("No cluster named %(cluster)s.", cluster=cluster)) from None
        username = actor.username_on(cluster)
        if not username:
            raise NotFound(_("You have no account on cluster %(cluster)s.", cluster=cluster))
        store = file_store_of(adapter)
        if store is None:
            raise NotFound(
                _("Cluster %(cluster)s does not offer access to files.", cluster=cluster)
            )
        return store, username

    def is_browsable(self, cluster: str, path: str | None) -> bool:
        """Whether a job's folder or log file can be linked to the Files pages: under a
        root as written (the pages check again, symlinks resolved, when it is opened)."""
        roots = self._roots.get(cluster, ())
        if not path or not path.startswith("/") or not roots:
            return False
        return HOME_ROOT in roots or is_under_roots(path, roots)

    async def roots(self, actor: Actor, cluster: str) -> list[FileRoot]:
        store, username = self._store(actor, cluster)
        with translated():
            return await store.roots(username)

    async def folder(
        self,
        actor: Actor,
        cluster: str,
        path: str,
        offset: int = 0,
        limit: int = PAGE_SIZE,
        *,
        show_hidden: bool = True,
    ) -> FolderPage:
        store, username = self._store(actor, cluster)
        with translated():
            return await store.list_folder(
                path, username, offset=offset, limit=limit, show_hidden=show_hidden
            )

    async def stat(self, actor: Actor, cluster: str, path: str) -> FileEntry:
        store, username = self._store(actor, cluster)
        with translated():
            return await store.stat(path, username)

    async def view(self, actor: Actor, cluster: str, path: str) -> FileView:
        store, username = self._store(actor, cluster)
        with translated():
            entry = await store.stat(path, username)
            if entry.size > VIEW_LIMIT:
                problem = _(
                    "This file is %(size)s; the portal shows files up to %(limit)s. "
                    "Download it instead.",
                    size=format_size(entry.size),
                    limit=format_size(VIEW_LIMIT),
                )
                return FileView(entry, None, problem)
            found = await store.read(path, username, limit=VIEW_LIMIT)
        if b"\x00" in found.data[:_SNIFF_BYTES]:
            problem = _("This looks like a binary file; download it instead.")
            return FileView(entry, None, problem)
        return FileView(entry, found.data.decode("utf-8", "replace"), None)

    async def download(self, actor: Actor, cluster: str, path: str) -> Download:
        """The file opened now, so that a refusal (a folder, a pipe, no permission) is a
        proper error before the response starts, and its bytes."""
        store, username = self._store(actor, cluster)
        with translated():
            opened = await store.open_file(path, username)
        return Download(opened.entry, _translated_stream(opened.chunks, opened.entry.size))

    async def upload_part(
        self, actor: Actor, cluster: str, part: UploadPart, data: AsyncIterator[bytes]
    ) -> int:
        """Write one piece of an upload; returns how many bytes it now holds."""
        store, username = self._store(actor, cluster)
        with translated():
            return await store.write_part(part.folder, part.upload_id, part.offset, data, username)

    async def finish_upload(
        self, actor: Actor, cluster: str, part: UploadPart, name: str, *, replace: bool = False
    ) -> FileEntry:
        """Put a complete upload in place under ``name``; ``part.offset`` is its whole size."""
        store, username = self._store(actor, cluster)
        with translated():
            return await store.finish_upload(
                part.folder, part.upload_id, name, part.offset, username, replace=replace
            )

    async def abort_upload(self, actor: Actor, cluster: str, folder: str, upload_id: str) -> None:
        store, username = self._store(actor, cluster)
        with translated():
            await store.abort_upload(folder, upload_id, username)

    async def make_folder(self, actor: Actor, cluster: str, path: str) -> FileEntry:
        store, username = self._store(actor, cluster)
        with translated():
            return await store.make_folder(path, username)

    async def rename(self, actor: Actor, cluster: str, path: str, new_path: str) -> FileEntry:
        store, username = self._store(actor, cluster)
        with translated():
            return await store.rename(path, new_path, username)

    async def remove(self, actor: Actor, cluster: str, path: str) -> None:
        store, username = self._store(actor, cluster)
        with translated():
            await store.remove(path, username)


async def _translated_stream(chunks: AsyncIterator[bytes], size: int) -> AsyncIterator[bytes]:
    """At most ``size`` bytes, the length already announced: a file growing meanwhile is
    sent as it was when the download began."""
    left = size
    with translated():
        async for chunk in chunks:
            if left <= 0:
                return
            yield chunk[:left]
            left -= len(chunk)
