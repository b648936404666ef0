"""The job list's text search on PostgreSQL's trigram indexes (PostgreSQL only: SQLite has
none, so this module is not in the portability tier)."""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.jobs import repository
from app.models.jobs import Job


async def test_postgresql_serves_the_search_from_the_trigram_indexes(
    session: AsyncSession,
) -> None:
    # Tiny test tables would be scanned anyway; the question is whether the index can serve.
    await session.execute(text("SET LOCAL enable_seqscan = off"))
    query = select(Job.id).where(repository.text_matches("relax"))
    compiled = query.compile(session.get_bind(), compile_kwargs={"literal_binds": True})
    plan = "\n".join((await session.execute(text(f"EXPLAIN {compiled}"))).scalars())
    assert "ix_jobs_name_trgm" in plan and "ix_jobs_slurm_job_id_trgm" in plan, plan
