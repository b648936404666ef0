from __future__ import annotations

from fastapi import APIRouter

from app.api.v1.deps import Reader
from app.api.v1.params import PathId
from app.api.v1.schemas import MemberOut, ProjectOut, errors
from app.deps import SessionDep
from app.projects import service as projects
from app.projects.service import ProjectView

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
