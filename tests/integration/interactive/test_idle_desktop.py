"""Idle desktops, with the in-memory scheduler standing in for Slurm and a fake VNC server
behind the portal's real bridge: one nobody has open is warned and ended at the limit, one
its owner is watching is not, and its clock starts when they leave."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute

from app.interactive import service
from app.interactive.definitions import load_definitions
from app.interactive.idle_check import IdleWatch, check_idle
from app.interactive.sessions import LaunchForm
from app.jobs.service import JobService
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.states import JobState
from app.web import desktop
from tests.factories import DEFAULT_CLUSTER, as_actor, fake_registry
from tests.integration.interactive.app_host_client import open_app_host
from tests.integration.interactive.test_desktop_bridge import (
    SECRET,
    FakeVnc,
    Portal,
    _browser,
    _novnc,
)
from tests.integration.interactive.test_proxy import serve
from tests.world import World

DESKTOP = load_definitions()["desktop"]
LIMIT, WARNING = timedelta(seconds=40), timedelta(seconds=10)
LONG_AGO = timedelta(minutes=10)


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


@dataclass
class Desktops:
    watched: Portal
    alone: InteractiveSession
    slurm_ids: dict[int, str]


async def _launch(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    fake: FakeScheduler,
    port: int,
) -> tuple[InteractiveSession, str]:
    """alice's desktop and its job, launched through the service, running here for a while."""
    jobs = JobService(sessionmaker, fake_registry(fake))
    alice = await as_actor(session, world.alice)
    known = set(fake.jobs)
    row = await service.launch(
        session, alice, jobs, DESKTOP, LaunchForm(project_id=world.physics.id), "/home/alice"
    )
    await session.commit()
    (slurm_id,) = set(fake.jobs) - known
    fake.start(slurm_id)
    fake.set_state(slurm_id, JobState.RUNNING, nodes="127.0.0.1")
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, grace=Grace(submit=timedelta(0)))
    row.port, row.secret, row.ready_at = port, SECRET, utc_now() - LONG_AGO
    await session.commit()
    return row, slurm_id


@pytest.fixture
async def desktops(
    app: FastAPI,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    fake: FakeScheduler,
) -> AsyncIterator[Desktops]:
    vnc = FakeVnc()
    websockify = Starlette(routes=[WebSocketRoute("/", vnc.serve_socket)])
    async with serve(websockify) as vnc_port, serve(app) as portal_port:
        watched, watched_job = await _launch(session, sessionmaker, world, fake, vnc_port)
        alone, alone_job = await _launch(session, sessionmaker, world, fake, vnc_port)
        slurm_ids = {watched.id: watched_job, alone.id: alone_job}
        yield Desktops(Portal(portal_port, vnc, watched), alone, slurm_ids)


@dataclass(frozen=True)
class RowState:
    """What a session's row says of its idleness at one moment."""

    viewed_at: datetime | None
    idle_since: datetime | None
    warned_at: datetime | None
    ends_at: datetime | None
    ended_at: datetime | None


async def _state(session: AsyncSession, row: InteractiveSession) -> RowState:
    found = await session.get(InteractiveSession, row.id, populate_existing=True)
    assert found is not None
    await session.commit()  # the next read sees what the portal and the check wrote since
    return RowState(
        found.viewed_at,
        found.idle_since,
        found.idle_warned_at,
        found.idle_ends_at,
        found.idle_ended_at,
    )


async def test_a_desktop_nobody_has_open_is_ended_at_the_limit_and_one_being_watched_is_not(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    desktops: Desktops,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Noted at connect and at close only, however slowly the checks run.
    monkeypatch.setattr(desktop, "VIEWED_EVERY_SECONDS", 3600.0)
    portal, alone = desktops.watched, desktops.alone
    started = alone.ready_at
    async with httpx.AsyncClient() as client, _browser(portal, "alice") as alice:
        watch = IdleWatch({"desktop": DESKTOP}, client, LIMIT, WARNING, batch=5, every=1)
        host = await open_app_host(portal.url, alice, portal.prefix)
        async with _novnc(portal, host):
            first = utc_now()
            await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, first)
            warned, watching = await _state(session, alone), await _state(session, portal.desktop)
            later = first + WARNING + timedelta(seconds=1)
            await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, later)
            ended, still = await _state(session, alone), await _state(session, portal.desktop)
        left = await _left(session, portal.desktop, watching.viewed_at)
        # Nobody comes back: its clock runs from when its owner left.
        await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, left + LIMIT - WARNING)
        after = await _state(session, portal.desktop)

    # Nobody ever opened it: idle since it started, warned, then ended as its owner's End.
    assert (warned.viewed_at, warned.idle_since, warned.warned_at) == (None, started, first)
    assert ended.ended_at == later
    assert fake.jobs[desktops.slurm_ids[alone.id]].state == JobState.CANCELLED
    # Open in its owner's browser all along: in use, neither warned nor ended.
    assert watching.viewed_at is not None and watching.viewed_at <= first
    assert watching.idle_since == watching.viewed_at and watching.warned_at is None
    assert still.warned_at is None and still.ended_at is None
    assert fake.jobs[desktops.slurm_ids[portal.desktop.id]].state == JobState.RUNNING
    # Then left alone: warned, with its end counted from when its owner left.
    assert left > first
    assert (after.idle_since, after.ends_at) == (left, left + LIMIT)
    assert after.warned_at is not None and after.ended_at is None


async def _left(
    session: AsyncSession, row: InteractiveSession, connected: datetime | None
) -> datetime:
    """When the bridge noted that the desktop's last viewer left."""
    assert connected is not None
    async with asyncio.timeout(10):
        while (found := (await _state(session, row)).viewed_at) is None or found <= connected:
            await asyncio.sleep(0.05)
    return found
