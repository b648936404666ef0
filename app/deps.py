"""Request-scoped dependencies, as ``Annotated`` aliases for route signatures.

Each reads what ``create_app`` built (``app.wiring.Services``); tests replace one with
``app.dependency_overrides`` or hand ``create_app`` their own scheduler registry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.files.service import FilesService
from app.jobs.service import JobService
from app.scheduler.config import ClusterConfig
from app.scheduler.registry import Schedulers
from app.storage.service import DiskUsageService
from app.wiring import Services, services_of


def get_services(request: Request) -> Services:
    return services_of(request.app)


def get_sessionmaker(request: Request) -> async_sessionmaker[AsyncSession]:
    return services_of(request.app).sessionmaker


async def get_session(
    sessionmaker: Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)],
) -> AsyncIterator[AsyncSession]:
    """One transaction per request: committed once when the route succeeds, else rolled back."""
    async with sessionmaker() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        else:
            await session.commit()


def get_settings(request: Request) -> Settings:
    return services_of(request.app).settings


def get_clusters(request: Request) -> Mapping[str, ClusterConfig]:
    return services_of(request.app).clusters


def get_cluster_names(request: Request) -> tuple[str, ...]:
    """The clusters the portal serves, sorted: those its scheduler registry has adapters for."""
    return services_of(request.app).cluster_names


def get_registry(request: Request) -> Schedulers:
    return services_of(request.app).schedulers


def get_job_service(request: Request) -> JobService:
    return services_of(request.app).jobs


def get_disk_usage_service(request: Request) -> DiskUsageService:
    return services_of(request.app).disk_usage


def get_files_service(request: Request) -> FilesService:
    return services_of(request.app).files


# scope="function": commit before the response is sent, so a failed commit is reported as
# an error and the client never sees success for data that was not saved.
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
SessionmakerDep = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
ClustersDep = Annotated[Mapping[str, ClusterConfig], Depends(get_clusters)]
ClusterNamesDep = Annotated[tuple[str, ...], Depends(get_cluster_names)]
RegistryDep = Annotated[Schedulers, Depends(get_registry)]
JobServiceDep = Annotated[JobService, Depends(get_job_service)]
DiskUsageServiceDep = Annotated[DiskUsageService, Depends(get_disk_usage_service)]
FilesServiceDep = Annotated[FilesService, Depends(get_files_service)]
