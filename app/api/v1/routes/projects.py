from __future__ import annotations

from fastapi import APIRouter

from app.api.v1.allocation_schemas import AllocationIn, AllocationOut, allocation_out
from app.api.v1.deps import Reader, Submitter
from app.api.v1.params import PathId
from app.api.v1.schemas import MemberOut, ProjectOut, errors
from app.deps import SessionDep
from app.models.base import utc_now
from app.projects import service as projects
from app.projects.service import ProjectView
from app.reports import allocation

router = APIRouter(prefix="/projects", tags=["projects"])


def project_out(view: ProjectView) -> ProjectOut:
    project = view.project
    return ProjectOut(
        id=project.id,
        name=project.name,
        cluster=project.cluster,
        slurm_account=project.slurm_account,
        description=project.description,
        role=view.role,
    )


@router.get(
    "",
    response_model=list[ProjectOut],
    summary="Projects you belong to",
    responses=errors(takes_input=False),
)
async def list_projects(session: SessionDep, principal: Reader) -> list[ProjectOut]:
    return [project_out(view) for view in await projects.list_for_actor(session, principal.actor)]


@router.get(
    "/{project_id}",
    response_model=ProjectOut,
    summary="One of your projects",
    responses=errors(404),
)
async def get_project(session: SessionDep, principal: Reader, project_id: PathId) -> ProjectOut:
    return project_out(await projects.get(session, principal.actor, project_id))


@router.get(
    "/{project_id}/members",
    response_model=list[MemberOut],
    summary="Members of a project you manage",
    responses=errors(404),
)
async def list_project_members(
    session: SessionDep, principal: Reader, project_id: PathId
) -> list[MemberOut]:
    members = await projects.members(session, principal.actor, project_id)
    return [
        MemberOut(user_id=m.user_id, login=m.login, display_name=m.display_name, role=m.role)
        for m in members
    ]


@router.get(
    "/{project_id}/allocation",
    response_model=AllocationOut,
    summary="A project's allocation, its use day by day and when it runs out",
    responses=errors(404),
)
async def get_allocation(
    session: SessionDep, principal: Reader, project_id: PathId
) -> AllocationOut:
    found = await allocation.project_burndown(
        session, principal.actor, project_id, utc_now().date()
    )
    return allocation_out(found)


@router.put(
    "/{project_id}/allocation",
    response_model=AllocationOut,
    summary="Enter a project's allocation (site administrators)",
    responses=errors(403, 404),
)
async def set_allocation(
    session: SessionDep, principal: Submitter, project_id: PathId, body: AllocationIn
) -> AllocationOut:
    await allocation.set_allocation(session, principal.actor, project_id, body.cpu_minutes)
    found = await allocation.project_burndown(
        session, principal.actor, project_id, utc_now().date()
    )
    return allocation_out(found)
