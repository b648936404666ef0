"""Request-scoped dependencies, as ``Annotated`` aliases for route signatures.

Each reads what ``create_app`` built (``app.wiring.Services``); tests replace one with
``app.dependency_overrides`` or hand ``create_app`` their own scheduler registry. The readers
are coroutines although they do not wait: FastAPI runs a plain function in its thread pool,
where a request would queue behind busy threads for an attribute read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Annotated

import httpx
from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.db import bind_request_session
from app.files.service import FilesService
from app.interactive.definitions import AppDefinition
from app.jobs.service import JobService
from app.observability.supervisor import TaskBoard
from app.scheduler.config import ClusterConfig
from app.scheduler.registry import Schedulers
from app.shell.service import ShellService
from app.storage.service import DiskUsageService
from app.submissions.choices import SubmitChoices
from app.wiring import Services, services_of
from app.workflows.runner import WorkflowRunner


async def get_services(request: Request) -> Services:
    return services_of(request.app)


async def get_sessionmaker(request: Request) -> async_sessionmaker[AsyncSession]:
    return services_of(request.app).sessionmaker


async def get_session(
    sessionmaker: Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)],
) -> AsyncIterator[AsyncSession]:
    """One transaction per request: committed once when the route succeeds, else rolled back."""
    async with sessionmaker() as session:
        # Named for the adapters and app-server clients, which end its read phase before each
        # remote call (app.cluster_calls).
        bind_request_session(session)
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        else:
            await session.commit()
        finally:
            bind_request_session(None)


async def get_settings(request: Request) -> Settings:
    return services_of(request.app).settings


async def get_clusters(request: Request) -> Mapping[str, ClusterConfig]:
    return services_of(request.app).clusters


async def get_cluster_names(request: Request) -> tuple[str, ...]:
    """The clusters the portal serves, sorted: those its scheduler registry has adapters for."""
    return services_of(request.app).cluster_names


async def get_registry(request: Request) -> Schedulers:
    return services_of(request.app).schedulers


async def get_apps(request: Request) -> Mapping[str, AppDefinition]:
    """The interactive apps, by name: the shipped ones and the site's."""
    return services_of(request.app).apps


async def get_app_servers_client(request: Request) -> httpx.AsyncClient:
    """The client that reaches interactive apps' servers on compute nodes."""
    return services_of(request.app).http


async def get_job_service(request: Request) -> JobService:
    return services_of(request.app).jobs


async def get_workflow_runner(request: Request) -> WorkflowRunner:
    # Stateless over the jobs service and the sessionmaker, so one per request costs nothing.
    services = services_of(request.app)
    return WorkflowRunner(services.sessionmaker, services.jobs)


async def get_disk_usage_service(request: Request) -> DiskUsageService:
    return services_of(request.app).disk_usage


async def get_files_service(request: Request) -> FilesService:
    return services_of(request.app).files


async def get_submit_choices(request: Request) -> SubmitChoices:
    return services_of(request.app).choices


async def get_shell_service(request: Request) -> ShellService:
    return services_of(request.app).shells


def get_task_board(request: Request) -> TaskBoard:
    """The background tasks this process supervises, for /healthz."""
    return services_of(request.app).tasks


# scope="function": commit before the response is sent, so a failed commit is reported as
# an error and the client never sees success for data that was not saved.
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
SessionmakerDep = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
ClustersDep = Annotated[Mapping[str, ClusterConfig], Depends(get_clusters)]
ClusterNamesDep = Annotated[tuple[str, ...], Depends(get_cluster_names)]
RegistryDep = Annotated[Schedulers, Depends(get_registry)]
AppsDep = Annotated[Mapping[str, AppDefinition], Depends(get_apps)]
AppServersDep = Annotated[httpx.AsyncClient, Depends(get_app_servers_client)]
JobServiceDep = Annotated[JobService, Depends(get_job_service)]
WorkflowRunnerDep = Annotated[WorkflowRunner, Depends(get_workflow_runner)]
DiskUsageServiceDep = Annotated[DiskUsageService, Depends(get_disk_usage_service)]
FilesServiceDep = Annotated[FilesService, Depends(get_files_service)]
SubmitChoicesDep = Annotated[SubmitChoices, Depends(get_submit_choices)]
ShellServiceDep = Annotated[ShellService, Depends(get_shell_service)]
TaskBoardDep = Annotated[TaskBoard, Depends(get_task_board)]
