"""Files on a cluster, read and changed as the user: value objects and the interface.

Every method takes ``as_user`` and acts with that user's own identity on the login host, so
their Unix permissions decide what they may read or change. Paths must lie under the
cluster's browse roots once symlinks are resolved there (``app.scheduler.file_paths``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

EntryKind = Literal["folder", "file", "symlink", "other"]
# One page of a listing at most: a folder of 10,000 entries is shown page by page.
MAX_PAGE_ENTRIES = 1000


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One entry of a folder. For a symlink, ``kind`` is what it points to (``symlink``
    when that is missing or unreadable) and ``is_symlink`` is set."""

    name: str
    path: str
    kind: EntryKind
    size: int
    mtime: datetime | None
    mode: int
    is_symlink: bool = False

    @property
    def is_folder(self) -> bool:
        return self.kind == "folder"


@dataclass(frozen=True, slots=True)
class FileRoot:
    """A place the portal browses from: the user's home or a configured root."""

    label: str
    path: str


@dataclass(frozen=True, slots=True)
class FolderPage:
    """A slice of a folder sorted folders first, then by name; ``total`` counts them all
    but the ``hidden`` ones (names starting with a dot) left out when asked."""

    path: str
    entries: tuple[FileEntry, ...]
    offset: int
    total: int
    hidden: int = 0

    @property
    def next_offset(self) -> int | None:
        end = self.offset + len(self.entries)
        return end if end < self.total else None


@dataclass(frozen=True, slots=True)
class FileData:
    """A slice of a file: ``size`` is the whole file's."""

    path: str
    data: bytes
    offset: int
    size: int

    @property
    def is_whole(self) -> bool:
        return self.offset == 0 and len(self.data) >= self.size


@dataclass(frozen=True, slots=True)
class OpenedFile:
    """A regular file opened for reading: its entry, and its bytes in pieces. The file is
    closed when ``chunks`` ends or is closed."""

    entry: FileEntry
    chunks: AsyncIterator[bytes]


@runtime_checkable
class FileStore(Protocol):
    """What the portal may do with files on one cluster, always as ``as_user``."""

    async def roots(self, as_user: str) -> list[FileRoot]:
        """The user's home (when under a root) and the configured roots, expanded."""
        ...

    async def list_folder(
        self,
        path: str,
        as_user: str,
        *,
        offset: int = 0,
        limit: int = 200,
        show_hidden: bool = True,
    ) -> FolderPage:
        """A page of the folder's entries, folders first, then by name; without
        ``show_hidden``, names starting with a dot are left out and counted."""
        ...

    async def stat(self, path: str, as_user: str) -> FileEntry:
        """The entry ``path`` resolves to (symlinks followed)."""
        ...

    async def read(self, path: str, as_user: str, *, offset: int = 0, limit: int) -> FileData:
        """Up to ``limit`` bytes of a regular file from ``offset``."""
        ...

    async def open_file(self, path: str, as_user: str, *, chunk: int = 1 << 20) -> OpenedFile:
        """A regular file, opened now (so a refusal comes before any byte), then read in
        pieces of ``chunk`` bytes through one file handle."""
        ...

    async def write_part(
        self, folder: str, upload_id: str, offset: int, data: AsyncIterator[bytes], as_user: str
    ) -> int:
        """Append one piece of an upload to its hidden part file; returns its new size.

        UploadOutOfStep when ``offset`` is not the part's size (a lost or repeated piece).
        The part file is never a link followed elsewhere: offset 0 creates it afresh.
        """
        ...

    async def finish_upload(
        self, folder: str, upload_id: str, name: str, size: int, as_user: str, *, replace: bool
    ) -> FileEntry:
        """Rename a complete part file to ``name``; FileExists unless ``replace``."""
        ...

    async def abort_upload(self, folder: str, upload_id: str, as_user: str) -> None:
        """Remove an upload's part file (nothing when there is none)."""
        ...

    async def make_folder(self, path: str, as_user: str) -> FileEntry:
        """Create one folder; its parent must exist."""
        ...

    async def rename(self, path: str, new_path: str, as_user: str) -> FileEntry:
        """Move or rename; never replaces an existing entry."""
        ...

    async def remove(self, path: str, as_user: str) -> None:
        """Delete a file, a symlink (not what it points to) or an empty folder."""
        ...


def file_store_of(adapter: object) -> FileStore | None:
    """The adapter's file store, when its cluster offers one."""
    store = getattr(adapter, "files", None)
    return store if isinstance(store, FileStore) else None
