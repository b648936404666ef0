"""Paths the portal's file browser sends to a cluster: normalised, and checked against roots.

These checks are lexical. Symlinks can only be judged where they live, so every path is
also resolved on the cluster as the user (SFTP ``realpath``) and the result checked again
with ``is_under_roots``; a path whose last component does not exist yet (a new folder, an
upload) is judged by its resolved parent.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from app.i18n import _
from app.scheduler.errors import (
    FileExists,
    FolderNotEmpty,
    InvalidFilePath,
    OutsideRoots,
    UploadOutOfStep,
)
from app.scheduler.validation import is_under_roots

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
HOME_ROOT = "~"
UPLOAD_PREFIX = ".portal-upload-"
_UPLOAD_ID = re.compile(r"[0-9a-f]{32}")
# asyncssh hands names that are not valid UTF-8 over with their bytes as lone surrogates.
_UNDECODABLE = re.compile("[\udc80-\udcff]")
_CONTROL = re.compile("[\x00-\x1f\x7f]")

__all__ = [
    "HOME_ROOT",
    "already_there",
    "clean_path",
    "display_name",
    "expand_roots",
    "has_plain_name",
    "is_under_roots",
    "new_name",
    "not_empty",
    "outside_roots",
    "split_parent",
    "upload_out_of_step",
    "upload_part_name",
]


def has_plain_name(name: str) -> bool:
    """False for a name whose bytes are not UTF-8: shown, but not addressable by URL."""
    return _UNDECODABLE.search(name) is None


def display_name(name: str) -> str:
    """``name`` fit for a page: undecodable bytes shown as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def clean_path(path: str, home: str) -> str:
    """An absolute path without ``.``, empty components or a trailing slash.

    ``~`` and ``~/…`` start at ``home``. Refuses NUL, undecodable bytes, ``..`` (which a
    symlink would make ambiguous) and paths longer than the kernel takes.
    """
    if not path:
        raise InvalidFilePath(_("No path was given."))
    if "\x00" in path:
        raise InvalidFilePath(_("A path cannot contain NUL characters."))
    if not has_plain_name(path):
        raise InvalidFilePath(_("This name is not valid UTF-8; rename it on the cluster first."))
    if len(path.encode()) > MAX_PATH_BYTES:
        raise InvalidFilePath(_("The path is longer than %(limit)s bytes.", limit=MAX_PATH_BYTES))
    if path == HOME_ROOT or path.startswith(HOME_ROOT + "/"):
        path = home.rstrip("/") + path[1:]
    if not path.startswith("/"):
        raise InvalidFilePath(_("A path must start with / (or ~ for your home folder)."))
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise InvalidFilePath(_("A path cannot contain '..'; open the folder above instead."))
    return "/" + "/".join(parts)


def new_name(name: str) -> str:
    """A name for something the portal creates (folder, upload, rename): one plain
    component, no control characters, so it reads the same in every shell listing."""
    if not name or not name.strip():
        raise InvalidFilePath(_("Give a name."))
    if "/" in name:
        raise InvalidFilePath(_("A name cannot contain '/'."))
    if name in (".", ".."):
        raise InvalidFilePath(_("'%(name)s' cannot be used as a name.", name=name))
    if _CONTROL.search(name) or not has_plain_name(name):
        raise InvalidFilePath(_("A name cannot contain control characters such as line breaks."))
    if len(name.encode()) > MAX_NAME_BYTES:
        raise InvalidFilePath(_("A name is at most %(limit)s bytes long.", limit=MAX_NAME_BYTES))
    return name


def split_parent(path: str) -> tuple[str, str]:
    """(parent folder, last component) of a clean path; the root has no parent."""
    if path == "/":
        raise InvalidFilePath(_("The top folder '/' cannot be changed."))
    parent, name = posixpath.split(path)
    return parent or "/", name


def outside_roots(path: str, real: str | None = None) -> OutsideRoots:
    """The refusal of ``path``, or of ``real`` where its symlinks lead, outside the roots."""
    if real is None:
        return OutsideRoots(_("%(path)s is outside the folders the portal may open.", path=path))
    return OutsideRoots(
        _(
            "%(path)s leads to %(real)s, which is outside the folders the portal may open.",
            path=path,
            real=real,
        )
    )


def already_there(name: str, folder: str | None = None) -> FileExists:
    """The refusal to put something where ``name`` (in ``folder``, if given) already is."""
    if folder is None:
        return FileExists(_("%(path)s already exists.", path=name))
    return FileExists(_("%(name)s in %(folder)s already exists.", name=name, folder=folder))


def not_empty(path: str) -> FolderNotEmpty:
    return FolderNotEmpty(
        _("The folder %(path)s is not empty; delete what is in it first.", path=path)
    )


def expand_roots(roots: Iterable[str], home: str) -> tuple[str, ...]:
    """The configured roots as clean absolute paths, ``~`` being ``home``; no duplicates."""
    expanded: list[str] = []
    for root in roots:
        clean = clean_path(home if root == HOME_ROOT else root, home)
        if clean not in expanded:
            expanded.append(clean)
    return tuple(expanded)


def upload_part_name(upload_id: str) -> str:
    """The hidden name an upload is written under until it is complete."""
    if not _UPLOAD_ID.fullmatch(upload_id):
        raise InvalidFilePath(_("An upload id is 32 hexadecimal digits."))
    return f"{UPLOAD_PREFIX}{upload_id}.part"


def upload_out_of_step(size: int, wanted: int, *, complete: bool = False) -> UploadOutOfStep:
    """An upload's part holds ``size`` bytes where a piece starts, or the whole upload ends
    (``complete``), at ``wanted``; the client goes on from ``size``."""
    if complete:
        message = _("The upload has %(written)s of its %(size)s bytes.", written=size, size=wanted)
    else:
        message = _(
            "The upload continues at byte %(size)s, not %(offset)s.", size=size, offset=wanted
        )
    return UploadOutOfStep(message, size)
