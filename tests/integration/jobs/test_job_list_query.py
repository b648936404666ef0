"""The job-list query shared by /jobs and the dashboard, on both databases."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import create_engine
from app.jobs import repository
from tests.factories import make_job, make_project, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def test_search_matches_names_case_insensitively_and_slurm_ids_exactly(
    session: AsyncSession,
) -> None:
    project = await make_project(session, "Physics", slurm_account="physics")
    alice = await make_user(session, "alice")
    wanted = [
        await make_job(session, alice, project, name="Big_Relax run"),
        await make_job(session, alice, project, name="other", slurm_job_id="4711"),
        await make_job(session, alice, project, name="array", slurm_job_id="4711_3"),
    ]
    await make_job(session, alice, project, name="bigxrelax", slurm_job_id="47110")
    await session.commit()
    visible = repository.visible_jobs_query(alice.id, False, [project.id])

    by_name = await repository.list_job_rows(
        session, visible, repository.JobListFilters(text="big_relax"), None, 10
    )
    by_id = await repository.list_job_rows(
        session, visible, repository.JobListFilters(text="4711"), None, 10
    )
    nothing = await repository.list_job_rows(
        session, visible, repository.JobListFilters(text="no such job"), None, 10
    )

    assert [row.job.id for row in by_name] == [wanted[0].id]
    assert [row.job.id for row in by_id] == [wanted[2].id, wanted[1].id]
    assert nothing == []
    assert by_name[0].project_name == "Physics"


async def test_postgresql_knows_that_a_jobs_owner_and_project_go_together(
    postgresql_database_url: str,
) -> None:
    # Extended statistics exist on PostgreSQL only, so this asks PostgreSQL alone.
    engine = create_engine(postgresql_database_url)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(
                text(
                    "SELECT s.stxkind, array_agg(a.attname ORDER BY a.attname) "
                    "FROM pg_statistic_ext s JOIN pg_attribute a "
                    "ON a.attrelid = s.stxrelid AND a.attnum = ANY(s.stxkeys) "
                    "WHERE s.stxname = 'st_jobs_owner_project' AND s.stxrelid = 'jobs'::regclass "
                    "GROUP BY s.stxkind"
                )
            )
            kinds, columns = found.one()
    finally:
        await engine.dispose()
    assert sorted(kinds) == ["d", "f"]  # ndistinct and functional dependencies
    assert columns == ["owner_user_id", "project_id"]
