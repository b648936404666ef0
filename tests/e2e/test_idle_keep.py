"""An idle session's warning in Chromium: the apps page says since when nobody has used it and
when it will end, and Keep it (by keyboard) starts its idle clock again."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import User
from tests.e2e.conftest import LiveServer
from tests.e2e.shots import shot
from tests.e2e.test_jobs_flow import sign_in

pytestmark = pytest.mark.browser

# No poller polls it: the session stays as the test leaves it.
NO_CLUSTER = "no-such-cluster"


def _warned_session(database_url: str) -> int:
    """Alice's running JupyterLab, idle for 45 minutes and warned that it ends in 15."""
    now = utc_now()
    engine = create_engine(database_url)
    try:
        with Session(engine) as db:
            alice = db.scalars(select(User).where(User.login == "alice")).one()
            physics = db.scalars(select(Project).where(Project.name == "physics")).one()
            job = Job(
                uuid=str(uuid.uuid4()), owner_user_id=alice.id, project_id=physics.id,
                cluster=NO_CLUSTER, script="#!/bin/bash\n", name="jupyterlab session",
                state="running", node_list="c1", started_at=now - timedelta(hours=1),
                time_limit_minutes=240,
            )  # fmt: skip
            db.add(job)
            db.flush()
            row = InteractiveSession(
                uuid=str(uuid.uuid4()), owner_user_id=alice.id, job_id=job.id,
                app="jupyterlab", values={}, port=40123, secret="s" * 32,
                ready_at=now - timedelta(hours=1), idle_since=now - timedelta(minutes=45),
                idle_warned_at=now, idle_ends_at=now + timedelta(minutes=15),
            )  # fmt: skip
            db.add(row)
            db.commit()
            return row.id
    finally:
        engine.dispose()


def _idle_clock(database_url: str, session_id: int) -> tuple[Any, Any]:
    engine = create_engine(database_url)
    try:
        with Session(engine) as db:
            row = db.get(InteractiveSession, session_id)
            assert row is not None
            return row.idle_warned_at, row.idle_ends_at
    finally:
        engine.dispose()


def test_keep_it_clears_the_idle_warning(
    page: Any, live_server: LiveServer, screenshots: Path
) -> None:
    session_id = _warned_session(live_server.database_url)
    sign_in(page)
    page.goto("/apps")
    row = page.locator(f"#session-{session_id}")
    expect(row.locator(".idle-warning")).to_contain_text("This session has been idle since")
    shot(page, screenshots, "apps-idle-warning")

    keep = row.get_by_role("button", name="Keep it (JupyterLab)")
    keep.focus()
    page.keyboard.press("Enter")

    expect(page.locator(f"#session-{session_id} .idle-warning")).to_have_count(0)
    expect(page.locator(f"#session-{session_id} .session-state")).to_contain_text("Running")
    assert _idle_clock(live_server.database_url, session_id) == (None, None)
