from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter, status

from app.api.v1.deps import OriginDep, Reader, Submitter
from app.api.v1.params import PathId
from app.api.v1.schemas import (
    TemplateDetailOut,
    TemplateIn,
    TemplateListOut,
    TemplateOut,
    TemplateVersionOut,
    errors,
)
from app.deps import SessionDep
from app.errors import NotFound
from app.job_templates import service as templates
from app.job_templates.service import LIST_SCOPES, TemplateDraft
from app.models.job_templates import JobTemplate, TemplateVersion

router = APIRouter(prefix="/templates", tags=["templates"])


def version_out(version: TemplateVersion) -> TemplateVersionOut:
    return TemplateVersionOut(
        id=version.id,
        version=version.version,
        script=version.script,
        parameter_schema=version.parameter_schema,
        defaults=version.defaults,
        change_note=version.change_note,
        created_at=version.created_at,
    )


def template_out(template: JobTemplate) -> TemplateOut:
    current = template.current_version
    return TemplateOut(
        id=template.id,
        name=template.name,
        description=template.description,
        scope=template.scope,
        project_id=template.project_id,
        owner_user_id=template.owner_user_id,
        current_version=current.version if current else None,
        is_archived=template.is_archived,
    )


def detail_out(template: JobTemplate) -> TemplateDetailOut:
    current = template.current_version
    return TemplateDetailOut(
        **template_out(template).model_dump(), version=version_out(current) if current else None
    )


def draft_from(body: TemplateIn) -> TemplateDraft:
    return TemplateDraft(**body.model_dump())


@router.get(
    "",
    response_model=TemplateListOut,
    summary="Templates you can use",
    responses=errors(takes_input=False),
)
async def list_templates(session: SessionDep, principal: Reader) -> TemplateListOut:
    found: dict[int, JobTemplate] = {}
    for scope in LIST_SCOPES:
        for template in await templates.list_templates(session, principal.actor, scope):
            found.setdefault(template.id, template)
    return TemplateListOut(items=[template_out(t) for t in found.values() if not t.is_archived])


@router.post(
    "",
    response_model=TemplateDetailOut,
    status_code=status.HTTP_201_CREATED,
    summary="Create a template (version 1)",
    responses=errors(404),
)
async def create_template(
    session: SessionDep, principal: Submitter, origin: OriginDep, body: TemplateIn
) -> TemplateDetailOut:
    draft = draft_from(body)
    return detail_out(await templates.create(session, principal.actor, draft, origin=origin))


@router.get(
    "/{template_id}", response_model=TemplateDetailOut, summary="A template", responses=errors(404)
)
async def get_template(
    session: SessionDep, principal: Reader, template_id: PathId
) -> TemplateDetailOut:
    return detail_out(await templates.get(session, principal.actor, template_id))


@router.put(
    "/{template_id}",
    response_model=TemplateDetailOut,
    summary="Save a new version, which becomes the current one",
    responses=errors(404),
)
async def update_template(
    session: SessionDep,
    principal: Submitter,
    origin: OriginDep,
    template_id: PathId,
    body: TemplateIn,
) -> TemplateDetailOut:
    draft = draft_from(body)
    if "scope" not in body.model_fields_set:
        # Left out, who can use the template stays as it is rather than the create default.
        current = await templates.get(session, principal.actor, template_id)
        draft = replace(draft, scope=current.scope, project_id=current.project_id)
    await templates.update(session, principal.actor, template_id, draft, origin=origin)
    return detail_out(await templates.get(session, principal.actor, template_id))


@router.get(
    "/{template_id}/versions",
    response_model=list[TemplateVersionOut],
    summary="All versions",
    responses=errors(404),
)
async def list_template_versions(
    session: SessionDep, principal: Reader, template_id: PathId
) -> list[TemplateVersionOut]:
    return [version_out(v) for v in await templates.versions(session, principal.actor, template_id)]


@router.get(
    "/{template_id}/versions/{version}",
    response_model=TemplateVersionOut,
    summary="One version",
    responses=errors(404),
)
async def get_template_version(
    session: SessionDep, principal: Reader, template_id: PathId, version: int
) -> TemplateVersionOut:
    for found in await templates.versions(session, principal.actor, template_id):
        if found.version == version:
            return version_out(found)
    raise NotFound("No such version.")


@router.post(
    "/{template_id}/clone",
    response_model=TemplateDetailOut,
    status_code=status.HTTP_201_CREATED,
    summary="A personal copy of the current version",
    responses=errors(404),
)
async def clone_template(
    session: SessionDep, principal: Submitter, origin: OriginDep, template_id: PathId
) -> TemplateDetailOut:
    copy = await templates.clone(session, principal.actor, template_id, origin=origin)
    return detail_out(copy)
