"""On PostgreSQL, the poller's once-a-minute "still there" marks stay on their rows' pages.

Every waiting job's row gets one a minute: 100,000 of them at a large site. A new version of
a row that finds room on its page and changes no indexed column touches none of the table's
ten indexes (a heap-only update); the jobs table keeps that room (migration 0024).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import text

from app.db import create_engine, create_sessionmaker
from app.jobs.tracking import mark_seen
from tests.conftest import empty_all_tables
from tests.factories import make_project, make_user

ROWS = 2_000


async def test_still_there_marks_rewrite_no_index_where_the_page_has_room(
    postgresql_database_url: str,
) -> None:
    await empty_all_tables(postgresql_database_url)
    engine = create_engine(postgresql_database_url)
    try:
        sessionmaker = create_sessionmaker(engine)
        async with sessionmaker() as session:
            alice = await make_user(session, "alice")
            project = await make_project(session, "physics")
            await session.commit()
            await session.execute(
                text(
                    "INSERT INTO jobs (uuid, owner_user_id, project_id, cluster, parameters, "
                    "script, name, state, slurm_job_id, created_at, updated_at, "
                    "submitted_outside) VALUES (:uuid, :owner, :project, 'testcluster', '{}', "
                    "'#!/bin/sh', 'held', 'held', :slurm_id, now(), now(), false)"
                ),
                [
                    {
                        "uuid": str(uuid.uuid4()),
                        "owner": alice.id,
                        "project": project.id,
                        "slurm_id": str(1000 + n),
                    }
                    for n in range(ROWS)
                ],
            )
            await session.commit()
            ids = list((await session.execute(text("SELECT id FROM jobs"))).scalars())
            await mark_seen(session, ids, datetime.now(UTC))
            updated, in_place = (
                await session.execute(
                    text(
                        "SELECT pg_stat_get_xact_tuples_updated('jobs'::regclass), "
                        "pg_stat_get_xact_tuples_hot_updated('jobs'::regclass)"
                    )
                )
            ).one()
            fillfactor = await session.scalar(
                text("SELECT reloptions FROM pg_class WHERE oid = 'jobs'::regclass")
            )
    finally:
        await engine.dispose()
        # The database is the session's: the next test finds it as this one did.
        await empty_all_tables(postgresql_database_url)
    assert fillfactor == ["fillfactor=80"]
    assert updated == ROWS
    # A fifth of each page is free: one new version for about every fourth row fits there,
    # before any old version can be pruned. Full pages would fit none but on the last one.
    assert in_place >= ROWS // 5
