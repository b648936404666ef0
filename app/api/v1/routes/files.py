"""Files on a cluster, as the token's user over SFTP: the same use cases as the Files pages.

Reading needs the ``read`` scope; anything that changes files needs ``submit``. Large files
are uploaded in pieces (ADR 0014): ``PUT /uploads/{id}?folder=&offset=`` with the raw bytes
(at most 8 MiB each), then ``POST /uploads/{id}/complete``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from app.api.v1.deps import Reader, Submitter
from app.api.v1.file_schemas import (
    FileEntryOut,
    FileRootOut,
    FolderOut,
    MakeFolderIn,
    RenameIn,
    UploadCompleteIn,
    UploadPartOut,
    entry_out,
    folder_out,
    root_out,
)
from app.api.v1.schemas import errors
from app.deps import FilesServiceDep
from app.files.service import PAGE_SIZE, UPLOAD_PART_BYTES, UploadConflict, UploadPart
from app.scheduler.files import MAX_PAGE_ENTRIES

# Raw bytes, declared so that generated clients can send and receive them.
BINARY: dict[str, object] = {"schema": {"type": "string", "format": "binary"}}
BINARY_BODY = {"content": {"application/octet-stream": BINARY}, "required": True}

router = APIRouter(prefix="/files/{cluster}", tags=["files"])
PathQuery = Annotated[str, Query(max_length=4096, description="Absolute, or ~ for your home.")]


@router.get(
    "/roots",
    response_model=list[FileRootOut],
    summary="Where you may browse: your home and the cluster's roots",
    responses=errors(404, 503),
)
async def list_file_roots(
    service: FilesServiceDep, principal: Reader, cluster: str
) -> list[FileRootOut]:
    return [root_out(root) for root in await service.roots(principal.actor, cluster)]


@router.get(
    "",
    response_model=FolderOut,
    summary="A page of a folder, folders first, then by name",
    responses=errors(403, 404, 503),
)
async def list_folder(
    service: FilesServiceDep,
    principal: Reader,
    cluster: str,
    path: PathQuery = "~",
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_ENTRIES)] = PAGE_SIZE,
) -> FolderOut:
    return folder_out(await service.folder(principal.actor, cluster, path, offset, limit))


@router.get(
    "/stat",
    response_model=FileEntryOut,
    summary="One file or folder (symlinks followed)",
    responses=errors(403, 404, 503),
)
async def stat_file(
    service: FilesServiceDep, principal: Reader, cluster: str, path: PathQuery
) -> FileEntryOut:
    return entry_out(await service.stat(principal.actor, cluster, path))


@router.get(
    "/download",
    summary="A file's bytes, streamed",
    response_class=StreamingResponse,
    responses=errors(403, 404, 503)
    | {200: {"content": {"application/octet-stream": BINARY}, "description": "The file."}},
)
async def download_file(
    service: FilesServiceDep, principal: Reader, cluster: str, path: PathQuery
) -> StreamingResponse:
    found = await service.download(principal.actor, cluster, path)
    headers = {"Content-Length": str(found.entry.size)}
    return StreamingResponse(found.chunks, media_type="application/octet-stream", headers=headers)


@router.post(
    "/folders",
    response_model=FileEntryOut,
    status_code=201,
    summary="Create a folder",
    responses=errors(403, 404, 409, 503),
)
async def make_folder(
    service: FilesServiceDep, principal: Submitter, cluster: str, body: MakeFolderIn
) -> FileEntryOut:
    return entry_out(await service.make_folder(principal.actor, cluster, body.path))


@router.post(
    "/rename",
    response_model=FileEntryOut,
    summary="Rename or move a file or folder",
    responses=errors(403, 404, 409, 503),
)
async def rename_file(
    service: FilesServiceDep, principal: Submitter, cluster: str, body: RenameIn
) -> FileEntryOut:
    return entry_out(await service.rename(principal.actor, cluster, body.path, body.new_path))


@router.delete(
    "",
    status_code=204,
    summary="Delete a file, a symlink or an empty folder",
    description="A folder must be empty (409 otherwise); a symlink is removed, never what it "
    "points to.",
    responses=errors(403, 404, 409, 503),
)
async def delete_file(
    service: FilesServiceDep, principal: Submitter, cluster: str, path: PathQuery
) -> Response:
    await service.remove(principal.actor, cluster, path)
    return Response(status_code=204)


@router.put(
    "/uploads/{upload_id}",
    response_model=UploadPartOut,
    summary="Send one piece of an upload",
    description=f"The raw bytes (at most {UPLOAD_PART_BYTES} per request) from ``offset``; "
    "``upload_id`` is 32 hex digits you choose. Offset 0 starts the upload over. A piece "
    "that does not continue what arrived gets 409 with ``expected_offset``.",
    responses=errors(403, 404, 409, 503),
    openapi_extra={"requestBody": BINARY_BODY},
)
async def upload_part(
    request: Request,
    service: FilesServiceDep,
    principal: Submitter,
    cluster: str,
    upload_id: str,
    folder: PathQuery,
    offset: Annotated[int, Query(ge=0, le=2**62)],
) -> Response:
    body: AsyncIterator[bytes] = request.stream()
    part = UploadPart(folder, upload_id, offset)
    try:
        size = await service.upload_part(principal.actor, cluster, part, body)
    except UploadConflict as error:
        content = {"error": error.error_type, "detail": error.detail}
        return JSONResponse(content | {"expected_offset": error.expected_offset}, 409)
    return JSONResponse(UploadPartOut(size=size).model_dump())


@router.post(
    "/uploads/{upload_id}/complete",
    response_model=FileEntryOut,
    status_code=201,
    summary="Put a complete upload in place",
    responses=errors(403, 404, 409, 503),
)
async def complete_upload(
    service: FilesServiceDep,
    principal: Submitter,
    cluster: str,
    upload_id: str,
    body: UploadCompleteIn,
) -> FileEntryOut:
    part = UploadPart(body.folder, upload_id, body.size)
    entry = await service.finish_upload(
        principal.actor, cluster, part, body.name, replace=body.replace
    )
    return entry_out(entry)


@router.delete(
    "/uploads/{upload_id}",
    status_code=204,
    summary="Give up an upload and remove what arrived",
    responses=errors(403, 404, 503),
)
async def abort_upload(
    service: FilesServiceDep, principal: Submitter, cluster: str, upload_id: str, folder: PathQuery
) -> Response:
    await service.abort_upload(principal.actor, cluster, folder, upload_id)
    return Response(status_code=204)
