"""A GrpTRESMins limit set with sacctmgr on the real clusters: the poller reads it with the
usage, the project's burn-down shows it and the day it runs out, and a manager's rule fires at
80 %. The limit is set for one poll cycle and removed at once: the cluster is shared."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from app.config import Settings
from app.jobs import states
from app.models.base import utc_now
from app.models.notifications import NotificationRule
from app.notifications.delivery import webhook_client
from app.notifications.dispatcher import dispatch_once
from app.poller.cycle import CycleWork, poll_cluster_once
from app.reports.allocation import Burndown, burndown
from app.reports.burndown_chart import render_burndown, summary
from tests.factories import add_member, make_user
from tests.integration.notifications.conftest import outbox_rows
from tests.integration.poller.conftest import Portal
from tests.notify_servers import smtp_server
from tests.slurm_versions import run_on

pytestmark = pytest.mark.slurm
USAGE = CycleWork(usage=True)


async def _burndown(portal: Portal) -> Burndown:
    await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter, work=USAGE)
    async with portal.sessionmaker() as session:
        return await burndown(session, portal.project, utc_now().date())


def _limit(version: str, value: str) -> None:
    argv = ["sacctmgr", "-i", "modify", "account", "physics", "set", f"GrpTRESMins=cpu={value}"]
    run_on(version, argv, check=True)


async def _manager_with_rule(portal: Portal) -> None:
    async with portal.sessionmaker() as session:
        boss = await make_user(session, "boss")
        await add_member(session, boss, portal.project, role="manager")
        session.add(NotificationRule(user_id=boss.id, event="allocation", channel="email"))
        await session.commit()


async def _used_today(portal: Portal, cpus: int, seconds: int) -> None:
    script = f"#!/bin/bash\n#SBATCH --cpus-per-task={cpus}\nsleep {seconds}\n"
    job = await portal.service.submit(portal.alice, portal.request(script, name="burn"))
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 90)
    assert done.state == "completed"


async def test_grptresmins_limit_shows_burndown_and_tells_the_manager_at_80(
    portal: Portal, db_url: str
) -> None:
    await _manager_with_rule(portal)
    await _used_today(portal, cpus=1, seconds=1)
    before = await _burndown(portal)
    if before.used_minutes < 0.8:  # a fresh cluster: use 0.8 CPU minutes, the smallest limit's 80 %
        await _used_today(portal, cpus=2, seconds=math.ceil((0.8 - before.used_minutes) * 30) + 2)
        before = await _burndown(portal)
    assert before.limit_minutes is None and before.per_day > 0
    limit = max(1, math.floor(before.used_minutes / 0.8))
    _limit(portal.version, str(limit))
    try:
        found = await _burndown(portal)
    finally:
        _limit(portal.version, "-1")
    used, today = found.used_minutes, utc_now().date()
    assert (found.limit_minutes, found.source) == (limit, "scheduler")
    days_left = max(0.0, limit - used) // found.per_day
    assert found.runs_out_on == today + timedelta(days=int(days_left))
    assert summary(found).endswith(f"a day it runs out on {found.runs_out_on.isoformat()}.")
    assert "burndown-chart" in render_burndown(found)
    assert {row.threshold for row in await outbox_rows(portal.sessionmaker)} >= {80}
    with smtp_server() as (mailbox, port):
        settings = Settings(
            database_url=db_url,
            smtp_host="127.0.0.1",
            smtp_port=port,
            smtp_security="none",
            smtp_from="portal@example.org",
        )
        async with webhook_client() as client:
            await dispatch_once(settings, portal.sessionmaker, client)
    subjects = [message["Subject"] for _, message in mailbox.messages]
    assert "Project Physics has used 80 % of its allocation" in subjects
