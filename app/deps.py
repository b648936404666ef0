"""Request-scoped dependencies, as ``Annotated`` aliases for route signatures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.scheduler.config import ClusterConfig


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """One transaction per request: committed once when the route succeeds, else rolled back."""
    sessionmaker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    async with sessionmaker() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        else:
            await session.commit()


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_clusters(request: Request) -> dict[str, ClusterConfig]:
    clusters: dict[str, ClusterConfig] = request.app.state.clusters
    return clusters


# scope="function": commit before the response is sent, so a failed commit is reported as
# an error and the client never sees success for data that was not saved.
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
SettingsDep = Annotated[Settings, Depends(get_settings)]
ClustersDep = Annotated[dict[str, ClusterConfig], Depends(get_clusters)]
