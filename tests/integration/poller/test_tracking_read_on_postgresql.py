"""On PostgreSQL, the rows a poll cycle reads cost what the queue holds, not the history.

A cluster's finished jobs only grow (millions at a site after a few years). The cycle's
read asks for the active jobs and the tasks of active arrays; asked as one condition, it
read every job the cluster ever ran, every cycle.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import create_engine, create_sessionmaker
from app.jobs.tracking import list_tracking_rows_for_cluster
from tests.conftest import empty_all_tables
from tests.factories import make_project, make_user

FINISHED = 5_000
INSERT = text(
    "INSERT INTO jobs (uuid, owner_user_id, project_id, cluster, parameters, script, name, "
    "state, slurm_job_id, array_spec, array_parent_id, created_at, updated_at, "
    "submitted_outside) VALUES (:uuid, :owner, :project, :cluster, '{}', '#!/bin/sh', 'j', "
    ":state, :slurm_id, :spec, :parent, now(), now(), false) RETURNING id"
)


async def _job(session: AsyncSession, base: dict[str, Any], **values: Any) -> int:
    row = base | {"uuid": str(uuid.uuid4()), "spec": None, "parent": None} | values
    return int((await session.execute(INSERT, row)).scalar_one())


def _removed(plan: Any) -> int:
    """Rows every node of an EXPLAIN (ANALYZE, FORMAT JSON) plan read and then filtered out."""
    own = int(plan.get("Rows Removed by Filter", 0)) * int(plan.get("Actual Loops", 1))
    return own + sum(_removed(child) for child in plan.get("Plans", []))


async def test_the_cycles_read_finds_the_active_rows_without_reading_the_history(
    postgresql_database_url: str,
) -> None:
    await empty_all_tables(postgresql_database_url)
    engine = create_engine(postgresql_database_url)
    try:
        async with create_sessionmaker(engine)() as session:
            alice = await make_user(session, "alice")
            project = await make_project(session, "physics")
            base = {"owner": alice.id, "project": project.id, "cluster": "testcluster"}
            await session.execute(
                INSERT,
                [
                    base
                    | {
                        "uuid": str(uuid.uuid4()),
                        "state": "completed",
                        "spec": None,
                        "parent": None,
                        "slurm_id": str(n),
                    }
                    for n in range(1, FINISHED + 1)
                ],
            )
            waiting = await _job(session, base, state="pending", slurm_id="9001")
            array = await _job(session, base, state="running", slurm_id="9002", spec="1-2")
            task_done = await _job(
                session, base, state="completed", slurm_id="9002_1", parent=array
            )
            task_running = await _job(
                session, base, state="running", slurm_id="9002_2", parent=array
            )
            old_array = await _job(session, base, state="completed", slurm_id="9003", spec="1")
            await _job(session, base, state="completed", slurm_id="9003_1", parent=old_array)
            await _job(session, base | {"cluster": "elsewhere"}, state="pending", slurm_id="1")
            await session.commit()
            await session.execute(text("ANALYZE jobs"))
            rows = await list_tracking_rows_for_cluster(session, "testcluster")
            captured = await _plan_of_the_read(session)
    finally:
        await engine.dispose()
        # The database is the session's: the next test finds it as this one did.
        await empty_all_tables(postgresql_database_url)
    assert [(row[0], row[7]) for row in rows] == [
        (waiting, False),
        (array, True),
        (task_done, False),
        (task_running, False),
    ]
    assert _removed(captured) < 10, json.dumps(captured)[:2000]


async def _plan_of_the_read(session: AsyncSession) -> Any:
    statements: list[Any] = []
    execute = session.execute

    async def recording(statement: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(statement)
        return await execute(statement, *args, **kwargs)

    session.execute = recording  # type: ignore[method-assign]
    try:
        await list_tracking_rows_for_cluster(session, "testcluster")
    finally:
        session.execute = execute  # type: ignore[method-assign]
    compiled = statements[0].compile(
        dialect=session.get_bind().dialect, compile_kwargs={"literal_binds": True}
    )
    explained = await session.execute(text(f"EXPLAIN (ANALYZE, FORMAT JSON) {compiled}"))
    return explained.scalar_one()[0]["Plan"]
