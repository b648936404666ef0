"""Bodies of /api/v1/files/{cluster}/…, from the files service's value objects."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.scheduler.file_paths import display_name
from app.scheduler.files import FileEntry, FileRoot, FolderPage


class FileRootOut(BaseModel):
    label: str = Field(description="'Home' for your home folder, else the root's path.")
    path: str


class FileEntryOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "results.csv",
                    "path": "/home/alice/run-1/results.csv",
                    "kind": "file",
                    "size": 5120,
                    "mtime": "2026-11-25T10:00:00Z",
                    "mode": 420,
                    "is_symlink": False,
                }
            ]
        }
    )

    name: str = Field(description="Bytes that are not UTF-8 are shown as U+FFFD.")
    path: str
    kind: Literal["folder", "file", "symlink", "other"] = Field(
        description="For a symlink, what it points to; 'symlink' when that is missing."
    )
    size: int
    mtime: datetime | None
    mode: int = Field(description="Unix permission bits, e.g. 420 (0o644).")
    is_symlink: bool


class FolderOut(BaseModel):
    path: str
    entries: list[FileEntryOut] = Field(description="Folders first, then by name.")
    offset: int
    total: int = Field(description="Entries in the whole folder.")
    next_offset: int | None = Field(description="Where the next page starts; null at the end.")


class MakeFolderIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(max_length=4096, description="The new folder; its parent must exist.")


class RenameIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(max_length=4096)
    new_path: str = Field(max_length=4096, description="Never replaces an existing entry.")


class UploadPartOut(BaseModel):
    size: int = Field(description="Bytes the upload holds so far: the next piece's offset.")


class UploadCompleteIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    folder: str = Field(max_length=4096)
    name: str = Field(max_length=255)
    size: int = Field(ge=0, description="The whole file's size, checked against what arrived.")
    replace: bool = Field(default=False, description="Replace a file of the same name.")


def entry_out(entry: FileEntry) -> FileEntryOut:
    return FileEntryOut(
        name=display_name(entry.name),
        path=display_name(entry.path),
        kind=entry.kind,
        size=entry.size,
        mtime=entry.mtime,
        mode=entry.mode,
        is_symlink=entry.is_symlink,
    )


def folder_out(folder: FolderPage) -> FolderOut:
    return FolderOut(
        path=folder.path,
        entries=[entry_out(entry) for entry in folder.entries],
        offset=folder.offset,
        total=folder.total,
        next_offset=folder.next_offset,
    )


def root_out(root: FileRoot) -> FileRootOut:
    return FileRootOut(label=root.label, path=root.path)
