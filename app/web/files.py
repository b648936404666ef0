"""The Files pages: a cluster's roots as tabs, a folder page by page, a file's text, downloads.

Paths travel in the query string (``?path=``) so that any name, spaces and ``#`` included,
survives the round trip. Changes to files are in ``app.web.files_changes``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import quote, urlencode

from babel.numbers import format_decimal
from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse

from app import i18n
from app.deps import ClusterNamesDep, FilesServiceDep
from app.errors import NotFound
from app.files.service import PAGE_SIZE, UPLOAD_PART_BYTES, FilesService, format_size
from app.i18n import _, ngettext, pgettext
from app.jobs.logs import LogStream, default_log_path, expand_log_path, is_array_parent
from app.models.jobs import Job
from app.scheduler.file_paths import display_name, has_plain_name, is_under_roots
from app.scheduler.files import MAX_PAGE_ENTRIES, FileEntry, FileRoot, FolderPage
from app.web.auth import CurrentUser, WebContextDep
from app.web.jobs_fragments import format_time
from app.web.views import page

router = APIRouter(include_in_schema=False)
PathQuery = Annotated[str, Query(max_length=4096)]
OffsetQuery = Annotated[int, Query(ge=0, le=10**9)]


def files_url(cluster: str, path: str, action: str = "", **more: object) -> str:
    """The page of ``path`` (``action``: view, download, rename, delete) on ``cluster``."""
    base = f"/files/{quote(cluster, safe='')}" + (f"/{action}" if action else "")
    return f"{base}?{urlencode({'path': path, **more})}"


@dataclass(frozen=True, slots=True)
class EntryRow:
    name: str
    kind: str
    size: str
    modified: str
    href: str | None
    rename_href: str | None
    delete_href: str | None
    is_folder: bool
    is_symlink: bool


@dataclass(frozen=True, slots=True)
class Crumb:
    label: str
    href: str
    # A folder's own name or path, not words of the portal's.
    is_name: bool = True


def kind_label(entry: FileEntry) -> str:
    """What an entry is, in words; a symlink's own kind is what it points to."""
    if entry.kind == "symlink":
        return _("Broken link")
    if not entry.is_symlink:
        return {"folder": _("Folder"), "file": _("File")}.get(entry.kind, _("Special file"))
    linked = {"folder": _("Folder (link)"), "file": _("File (link)")}
    return linked.get(entry.kind, _("Special file (link)"))


def root_label(root: FileRoot) -> str:
    # The file store names the user's home "Home"; other roots are named by their path.
    return pgettext("file root", "Home") if root.label == "Home" else root.label


def tab_label(root: FileRoot) -> str | None:
    """Words above a root's path on its tab: only the home has a name of its own, so that
    "Home" beside "/home" reads as the user's folder and the folder of all homes."""
    return _("My home folder") if root.label == "Home" else None


def entry_row(cluster: str, entry: FileEntry) -> EntryRow:
    # A name that is not UTF-8 cannot be put in a URL and read back: shown, not linked.
    addressable = has_plain_name(entry.name)
    action = "" if entry.is_folder else "view"
    return EntryRow(
        name=display_name(entry.name) + ("/" if entry.is_folder else ""),
        kind=kind_label(entry),
        size="" if entry.is_folder else format_size(entry.size),
        modified=format_time(entry.mtime),
        href=files_url(cluster, entry.path, action) if addressable else None,
        rename_href=files_url(cluster, entry.path, "rename") if addressable else None,
        delete_href=files_url(cluster, entry.path, "delete") if addressable else None,
        is_folder=entry.is_folder,
        is_symlink=entry.is_symlink,
    )


def holding_root(path: str, roots: Sequence[FileRoot]) -> FileRoot:
    """The deepest root ``path`` lies under (home rather than /home)."""
    holding = [root for root in roots if is_under_roots(path, [root.path])]
    return max(holding, key=lambda found: len(found.path), default=FileRoot("/", "/"))


def crumbs(cluster: str, path: str, roots: Sequence[FileRoot]) -> list[Crumb]:
    """From the deepest root holding ``path`` down to ``path`` itself."""
    root = holding_root(path, roots)
    found = [Crumb(root_label(root), files_url(cluster, root.path), root.label != "Home")]
    rest = path[len(root.path) :].strip("/")
    current = root.path
    for part in rest.split("/") if rest else []:
        current = posixpath.join(current, part)
        found.append(Crumb(display_name(part), files_url(cluster, current)))
    return found


def _count(number: int) -> str:
    return format_decimal(number, locale=i18n.current_locale())


# What the folder page says after a change, the changed entry's name in ``name``.
DONE = Literal["uploaded", "renamed", "deleted", "created"]


def done_message(done: DONE, name: str) -> str:
    if done == "uploaded":
        return _("Uploaded %(name)s.", name=name)
    if done == "renamed":
        return _("Renamed to %(name)s.", name=name)
    if done == "created":
        return _("Created the folder %(name)s.", name=name)
    return _("Deleted %(name)s.", name=name)


def hidden_toggle(cluster: str, folder: FolderPage, show_hidden: bool) -> dict[str, str] | None:
    """The link that shows or hides the entries whose names start with a dot."""
    if show_hidden:
        return {"href": files_url(cluster, folder.path), "label": _("Hide hidden files")}
    if not folder.hidden:
        return None
    label = ngettext(
        "Show %(number)s hidden file",
        "Show %(number)s hidden files",
        folder.hidden,
        number=_count(folder.hidden),
    )
    return {"href": files_url(cluster, folder.path, hidden=1), "label": label}


def paging(cluster: str, folder: FolderPage, limit: int, more: dict[str, int]) -> dict[str, Any]:
    first = folder.offset + 1 if folder.entries else 0
    last = folder.offset + len(folder.entries)
    previous = max(0, folder.offset - limit)
    return {
        "shown": _(
            "Entries %(first)s to %(last)s of %(total)s, folders first.",
            first=_count(first),
            last=_count(last),
            total=_count(folder.total),
        )
        if folder.total
        else _("No entries."),
        "previous_href": files_url(cluster, folder.path, "", offset=previous, limit=limit, **more)
        if folder.offset
        else None,
        "next_href": None
        if folder.next_offset is None
        else files_url(cluster, folder.path, "", offset=folder.next_offset, limit=limit, **more),
    }


@router.get("/files", name="files")
async def files_home(actor: CurrentUser, names: ClusterNamesDep) -> Response:
    """The first cluster the user has an account on."""
    mine = [name for name in names if actor.username_on(name)]
    if not mine:
        raise NotFound(_("You have no account on any cluster, so there are no files to show."))
    return RedirectResponse(f"/files/{quote(mine[0], safe='')}", status_code=303)


@router.get("/files/{cluster}", name="files_folder")
async def folder_page(
    request: Request,
    actor: CurrentUser,
    web: WebContextDep,
    service: FilesServiceDep,
    cluster: str,
    path: PathQuery = "",
    offset: OffsetQuery = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_ENTRIES)] = PAGE_SIZE,
    hidden: bool = False,
    done: DONE | None = None,
    name: Annotated[str, Query(max_length=255)] = "",
) -> Response:
    roots = await service.roots(actor, cluster)
    if not path:
        if not roots:
            raise NotFound(
                _("Cluster %(cluster)s has no folders the portal may open.", cluster=cluster)
            )
        path = roots[0].path
    entry = await service.stat(actor, cluster, path)
    if not entry.is_folder:
        return RedirectResponse(files_url(cluster, entry.path, "view"), status_code=303)
    folder = await service.folder(actor, cluster, path, offset, limit, show_hidden=hidden)
    context = folder_context(cluster, folder, roots, limit, show_hidden=hidden)
    if done and name and "/" not in name:
        context.update(message=done_message(done, name), marked=None if done == "deleted" else name)
    return page(request, web, "files/folder.html", context)


def folder_context(
    cluster: str,
    folder: FolderPage,
    roots: Sequence[FileRoot],
    limit: int,
    *,
    show_hidden: bool = False,
) -> dict[str, Any]:
    current = holding_root(folder.path, roots)
    return {
        "cluster": cluster,
        "path": folder.path,
        "shown_path": display_name(folder.path),
        "tabs": [
            (
                tab_label(root),
                display_name(root.path),
                files_url(cluster, root.path),
                root == current,
            )
            for root in roots
        ],
        "crumbs": crumbs(cluster, folder.path, roots),
        "rows": [entry_row(cluster, entry) for entry in folder.entries],
        "paging": paging(cluster, folder, limit, {"hidden": 1} if show_hidden else {}),
        "hidden_toggle": hidden_toggle(cluster, folder, show_hidden),
        "upload_part_bytes": UPLOAD_PART_BYTES,
    }


@router.get("/files/{cluster}/view", name="files_view")
async def view_page(
    request: Request,
    actor: CurrentUser,
    web: WebContextDep,
    service: FilesServiceDep,
    cluster: str,
    path: PathQuery,
) -> Response:
    roots = await service.roots(actor, cluster)
    shown = await service.view(actor, cluster, path)
    entry = shown.entry
    context = {
        "cluster": cluster,
        "name": display_name(entry.name),
        "crumbs": crumbs(cluster, entry.path, roots),
        "size": format_size(entry.size),
        "modified": format_time(entry.mtime),
        "text": shown.text,
        "problem": shown.problem,
        "download_href": files_url(cluster, entry.path, "download"),
        "rename_href": files_url(cluster, entry.path, "rename"),
        "delete_href": files_url(cluster, entry.path, "delete"),
        "folder_href": files_url(cluster, posixpath.dirname(entry.path)),
    }
    return page(request, web, "files/view.html", context)


def _is_plain(char: str) -> bool:
    return char.isascii() and char.isprintable() and char not in '"\\'


def attachment(name: str) -> str:
    """A Content-Disposition naming the file; the plain fallback keeps only safe ASCII, so
    no name (quotes, line breaks) can end the header early."""
    fallback = "".join(c if _is_plain(c) else "_" for c in name)
    encoded = quote(name.encode("utf-8", "surrogateescape"), safe="")
    return f"attachment; filename=\"{fallback or 'download'}\"; filename*=UTF-8''{encoded}"


@router.get("/files/{cluster}/download", name="files_download")
async def download(
    actor: CurrentUser, service: FilesServiceDep, cluster: str, path: PathQuery
) -> StreamingResponse:
    """The file streamed from the cluster a piece at a time; never held whole in memory."""
    found = await service.download(actor, cluster, path)
    headers = {
        "Content-Disposition": attachment(found.entry.name),
        "Content-Length": str(found.entry.size),
    }
    return StreamingResponse(found.chunks, media_type="application/octet-stream", headers=headers)


def job_file_links(service: FilesService, job: Job, username: str | None) -> list[tuple[str, str]]:
    """Links from a job's page to its working folder and log files, when under the roots."""
    if not username or not job.slurm_job_id:
        return []
    wanted = [(_("Working folder"), job.work_dir, "")]
    if is_array_parent(job):
        # Each task writes its own files; the array as a whole has none (%a has no value).
        folder = _browsable(service, job.cluster, wanted)
        return [*folder, (_("Each task's output"), "#array-tasks")]
    streams: tuple[tuple[LogStream, str], ...] = (
        ("stdout", _("Output file")),
        ("stderr", _("Error file")),
    )
    for stream, label in streams:
        template = default_log_path(job, stream)
        path = expand_log_path(template, job, username) if template else None
        if stream == "stderr" and path == wanted[-1][1]:
            continue
        wanted.append((label, path, "view"))
    return _browsable(service, job.cluster, wanted)


def _browsable(
    service: FilesService, cluster: str, wanted: list[tuple[str, str | None, str]]
) -> list[tuple[str, str]]:
    return [
        (label, files_url(cluster, path, action))
        for label, path, action in wanted
        if path and service.is_browsable(cluster, path)
    ]
