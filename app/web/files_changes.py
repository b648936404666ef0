"""Changes on the Files pages: new folder, rename, delete (after a confirmation page) and
uploads in pieces, each a POST/PUT/DELETE checked for its CSRF token.

An upload is sent by ``static/js/files-upload.js`` in pieces of ``UPLOAD_PART_BYTES`` with an
id the browser chose, each to ``PUT …/uploads/{id}?folder=&offset=``, and is put in place by
``POST …/uploads/{id}/complete`` (ADR 0014); its answers are JSON for that script.
"""

from __future__ import annotations

import posixpath
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Form, Query, Request
from fastapi.responses import JSONResponse, Response

from app.deps import FilesServiceDep
from app.errors import PortalError
from app.files.service import UploadConflict, UploadPart
from app.scheduler.file_paths import display_name
from app.web.auth import CurrentUser, WebContextDep, csrf_protected_router
from app.web.files import PathQuery, crumbs, files_url
from app.web.views import page, redirect

router = csrf_protected_router()
UploadId = Annotated[str, Query(pattern=r"^[0-9a-f]{32}$")]
FolderQuery = Annotated[str, Query(max_length=4096)]
NameForm = Annotated[str, Form(max_length=255)]
PathForm = Annotated[str, Form(max_length=4096)]


async def _change_page(
    request: Request,
    web: WebContextDep,
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    path: str,
    action: str,
    problem: str | None = None,
    status_code: int = 200,
) -> Response:
    entry = await service.stat(actor, cluster, path)
    roots = await service.roots(actor, cluster)
    context = {
        "cluster": cluster,
        "action": action,
        "path": entry.path,
        "name": display_name(entry.name),
        "is_folder": entry.is_folder,
        "crumbs": crumbs(cluster, entry.path, roots),
        "back_href": files_url(cluster, posixpath.dirname(entry.path)),
        "problem": problem,
    }
    return page(request, web, "files/change.html", context, status_code=status_code)


@router.get("/files/{cluster}/rename", name="files_rename_form")
async def rename_form(
    request: Request,
    web: WebContextDep,
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    path: PathQuery,
) -> Response:
    return await _change_page(request, web, service, actor, cluster, path, "rename")


@router.get("/files/{cluster}/delete", name="files_delete_form")
async def delete_form(
    request: Request,
    web: WebContextDep,
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    path: PathQuery,
) -> Response:
    """Asks first: deleting on the cluster cannot be undone."""
    return await _change_page(request, web, service, actor, cluster, path, "delete")


@router.post("/files/{cluster}/rename", name="files_rename")
async def rename(
    request: Request,
    web: WebContextDep,
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    path: PathForm,
    new_name: NameForm,
) -> Response:
    target = posixpath.join(posixpath.dirname(path), new_name)
    try:
        await service.rename(actor, cluster, path, target)
    except PortalError as error:
        return await _change_page(
            request, web, service, actor, cluster, path, "rename", error.detail, error.status_code
        )
    folder = posixpath.dirname(path)
    return redirect(request, files_url(cluster, folder, done="renamed", name=new_name))


@router.post("/files/{cluster}/delete", name="files_delete")
async def delete(
    request: Request,
    web: WebContextDep,
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    path: PathForm,
) -> Response:
    try:
        await service.remove(actor, cluster, path)
    except PortalError as error:
        return await _change_page(
            request, web, service, actor, cluster, path, "delete", error.detail, error.status_code
        )
    name = posixpath.basename(path)
    return redirect(request, files_url(cluster, posixpath.dirname(path), done="deleted", name=name))


@router.post("/files/{cluster}/mkdir", name="files_mkdir")
async def make_folder(
    request: Request,
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    path: PathForm,
    name: NameForm,
) -> Response:
    """Errors (a bad name, one already there) come back as the error page says them."""
    await service.make_folder(actor, cluster, posixpath.join(path, name))
    return redirect(request, files_url(cluster, path, done="created", name=name))


def _json_error(error: PortalError) -> JSONResponse:
    body: dict[str, object] = {"error": error.error_type, "detail": error.detail}
    if isinstance(error, UploadConflict):
        body["expected_offset"] = error.expected_offset
    return JSONResponse(body, status_code=error.status_code)


@router.put("/files/{cluster}/uploads/{upload_id}", name="files_upload_part")
async def upload_part(
    request: Request,
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    upload_id: str,
    folder: FolderQuery,
    offset: Annotated[int, Query(ge=0, le=2**62)],
) -> Response:
    body: AsyncIterator[bytes] = request.stream()
    try:
        size = await service.upload_part(
            actor, cluster, UploadPart(folder, upload_id, offset), body
        )
    except PortalError as error:
        return _json_error(error)
    return JSONResponse({"size": size})


@router.post("/files/{cluster}/uploads/{upload_id}/complete", name="files_upload_complete")
async def upload_complete(
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    upload_id: str,
    folder: PathForm,
    name: NameForm,
    size: Annotated[int, Form(ge=0, le=2**62)],
    replace: Annotated[bool, Form()] = False,
) -> Response:
    try:
        entry = await service.finish_upload(
            actor, cluster, UploadPart(folder, upload_id, size), name, replace=replace
        )
    except PortalError as error:
        return _json_error(error)
    # The folder page it came from, listing the new file marked and saying it arrived.
    shown = files_url(cluster, folder, done="uploaded", name=posixpath.basename(entry.path))
    return JSONResponse(
        {"path": entry.path, "href": files_url(cluster, entry.path, "view"), "folder_href": shown}
    )


@router.delete("/files/{cluster}/uploads/{upload_id}", name="files_upload_abort")
async def upload_abort(
    service: FilesServiceDep,
    actor: CurrentUser,
    cluster: str,
    upload_id: str,
    folder: FolderQuery,
) -> Response:
    try:
        await service.abort_upload(actor, cluster, folder, upload_id)
    except PortalError as error:
        return _json_error(error)
    return Response(status_code=204)
