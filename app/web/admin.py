"""/admin pages: users, projects and memberships (site administrators only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import RedirectResponse, Response

from app.admin import service
from app.deps import ClustersDep, SessionDep
from app.errors import ValidationFailed
from app.i18n import _
from app.params import PathId
from app.templating import render
from app.web.admin_common import SiteAdmin, page_context, web_origin
from app.web.auth import WebContextDep, csrf_protected_router

router = csrf_protected_router(prefix="/admin")
FormText = Annotated[str, Form()]


def _back(url: str) -> Response:
    return RedirectResponse(url, status_code=303)


@router.get("/", name="admin_home")
async def admin_home(request: Request, actor: SiteAdmin, web: WebContextDep) -> Response:
    return render(request, "admin/index.html", page_context(web))


@router.get("/users", name="admin_users")
async def users_page(
    request: Request,
    actor: SiteAdmin,
    web: WebContextDep,
    session: SessionDep,
    clusters: ClustersDep,
) -> Response:
    users = await service.list_users(session, actor)
    context = page_context(web, users=users, clusters=sorted(clusters))
    return render(request, "admin/users.html", context)


@router.post("/users", name="admin_create_user")
async def create_user(
    request: Request,
    actor: SiteAdmin,
    session: SessionDep,
    login: FormText,
    display_name: FormText = "",
    email: FormText = "",
    is_site_admin: Annotated[bool, Form()] = False,
) -> Response:
    user = await service.create_user(
        session,
        actor,
        web_origin(request),
        login=login,
        display_name=display_name,
        email=email,
        is_site_admin=is_site_admin,
    )
    return _back(f"/admin/users/{user.id}")


@router.get("/users/{user_id:int}", name="admin_user")
async def user_page(
    request: Request,
    user_id: PathId,
    actor: SiteAdmin,
    web: WebContextDep,
    session: SessionDep,
    clusters: ClustersDep,
) -> Response:
    user = await service.get_user(session, actor, user_id)
    usernames = await service.cluster_usernames(session, user.id)
    context = page_context(web, user=user, usernames=usernames, clusters=sorted(clusters))
    return render(request, "admin/user.html", context)


@router.post("/users/{user_id:int}/active", name="admin_user_active")
async def set_active(
    request: Request,
    user_id: PathId,
    actor: SiteAdmin,
    session: SessionDep,
    is_active: Annotated[bool, Form()] = False,
) -> Response:
    await service.set_user_active(session, actor, web_origin(request), user_id, is_active=is_active)
    return _back(f"/admin/users/{user_id}")


@router.post("/users/{user_id:int}/clusters", name="admin_user_cluster")
async def set_username(
    request: Request,
    user_id: PathId,
    actor: SiteAdmin,
    session: SessionDep,
    clusters: ClustersDep,
    cluster: FormText,
    username: FormText = "",
) -> Response:
    if cluster not in clusters:
        raise ValidationFailed(fields={"cluster": _("unknown cluster")})
    origin = web_origin(request)
    reserved = clusters[cluster].reserved_users
    await service.set_cluster_username(session, actor, origin, user_id, cluster, username, reserved)
    return _back(f"/admin/users/{user_id}")


@router.get("/projects", name="admin_projects")
async def projects_page(
    request: Request,
    actor: SiteAdmin,
    web: WebContextDep,
    session: SessionDep,
    clusters: ClustersDep,
) -> Response:
    projects = await service.list_projects(session, actor)
    context = page_context(web, projects=projects, clusters=sorted(clusters))
    return render(request, "admin/projects.html", context)


@router.post("/projects", name="admin_create_project")
async def create_project(
    request: Request,
    actor: SiteAdmin,
    session: SessionDep,
    name: FormText,
    cluster: FormText,
    slurm_account: FormText,
    description: FormText = "",
) -> Response:
    project = await service.create_project(
        session,
        actor,
        web_origin(request),
        name=name,
        cluster=cluster,
        slurm_account=slurm_account,
        description=description,
    )
    return _back(f"/admin/projects/{project.id}")


@router.get("/projects/{project_id:int}", name="admin_project")
async def project_page(
    request: Request, project_id: PathId, actor: SiteAdmin, web: WebContextDep, session: SessionDep
) -> Response:
    project = await service.get_project(session, actor, project_id)
    members = await service.members_of(session, project.id)
    users = await service.list_users(session, actor)
    context = page_context(web, project=project, members=members, users=users)
    return render(request, "admin/project.html", context)


@router.post("/projects/{project_id:int}/members", name="admin_set_member")
async def set_member(
    request: Request,
    project_id: PathId,
    actor: SiteAdmin,
    session: SessionDep,
    user_id: Annotated[int, Form()],
    role: FormText = "member",
) -> Response:
    origin = web_origin(request)
    await service.set_membership(session, actor, origin, project_id, user_id, role)
    return _back(f"/admin/projects/{project_id}")


@router.post("/projects/{project_id:int}/members/{user_id:int}/remove", name="admin_remove_member")
async def remove_member(
    request: Request, project_id: PathId, user_id: PathId, actor: SiteAdmin, session: SessionDep
) -> Response:
    await service.remove_membership(session, actor, web_origin(request), project_id, user_id)
    return _back(f"/admin/projects/{project_id}")
