"""Database constraints hold on both backends, whatever the application code does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import release_connection, unit_of_work
from app.models.job_templates import JobTemplate, TemplateVersion
from app.models.jobs import Job
from app.models.projects import Membership
from app.models.users import User, UserClusterAccount
from tests.factories import add_member, make_job, make_project, make_template, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def test_idempotency_key_is_unique_per_owner(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")
    await make_job(session, alice, project, idempotency_key="retry-1")

    with pytest.raises(IntegrityError):
        await make_job(session, alice, project, idempotency_key="retry-1")


async def test_same_idempotency_key_is_allowed_for_different_owners(
    session: AsyncSession,
) -> None:
    alice = await make_user(session, "alice")
    bob = await make_user(session, "bob")
    project = await make_project(session, "physics")
    await make_job(session, alice, project, idempotency_key="retry-1")
    await make_job(session, bob, project, idempotency_key="retry-1")

    keys = (await session.scalars(select(Job.idempotency_key))).all()
    assert keys == ["retry-1", "retry-1"]


async def test_jobs_without_idempotency_key_do_not_collide(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")
    await make_job(session, alice, project)
    await make_job(session, alice, project)

    assert len((await session.scalars(select(Job))).all()) == 2


async def test_template_version_numbers_are_unique_per_template(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    template = await make_template(session, alice)
    session.add(
        TemplateVersion(template_id=template.id, version=1, script="x", created_by_user_id=alice.id)
    )

    with pytest.raises(IntegrityError):
        await session.flush()


async def test_template_current_version_points_at_its_version(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    template = await make_template(session, alice)

    current = await session.get(TemplateVersion, template.current_version_id)
    assert current is not None
    assert (current.template_id, current.version) == (template.id, 1)


async def test_cluster_username_belongs_to_one_user_per_cluster(session: AsyncSession) -> None:
    await make_user(session, "alice", cluster_username="alice")

    with pytest.raises(IntegrityError):
        await make_user(session, "alice2", cluster_username="alice")


async def test_user_has_at_most_one_account_per_cluster(session: AsyncSession) -> None:
    alice = await make_user(session, "alice", cluster_username="alice")
    session.add(UserClusterAccount(user_id=alice.id, cluster="testcluster", username="alice2"))

    with pytest.raises(IntegrityError):
        await session.flush()


async def test_same_username_on_different_clusters_is_allowed(session: AsyncSession) -> None:
    await make_user(session, "alice", cluster_username="alice", cluster="one")
    await make_user(session, "alice-two", cluster_username="alice", cluster="two")

    clusters = (await session.scalars(select(UserClusterAccount.cluster))).all()
    assert sorted(clusters) == ["one", "two"]


async def test_membership_pair_is_unique(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")
    await add_member(session, alice, project)

    with pytest.raises(IntegrityError):
        await add_member(session, alice, project, role="manager")


async def test_membership_role_outside_the_known_roles_is_rejected(
    session: AsyncSession,
) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")

    with pytest.raises(IntegrityError):
        await add_member(session, alice, project, role="owner")


async def test_job_state_outside_the_portal_states_is_rejected(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")

    with pytest.raises(IntegrityError):
        await make_job(session, alice, project, state="PENDING")


async def test_project_scoped_template_requires_a_project(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    session.add(JobTemplate(name="t", scope="project", owner_user_id=alice.id))

    with pytest.raises(IntegrityError):
        await session.flush()


async def test_job_for_a_missing_user_violates_the_foreign_key(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")
    job = await make_job(session, alice, project)
    job.owner_user_id = alice.id + 1000

    with pytest.raises(IntegrityError):
        await session.flush()


async def test_deleting_a_user_with_jobs_is_refused(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")
    await make_job(session, alice, project)

    with pytest.raises(IntegrityError):
        await session.execute(delete(User).where(User.id == alice.id))


async def test_deleting_a_project_removes_its_memberships(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")
    await add_member(session, alice, project)

    await session.delete(project)
    await session.flush()

    assert (await session.scalars(select(Membership))).all() == []


async def test_timestamps_come_back_timezone_aware_in_utc(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    submitted = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    async with unit_of_work(sessionmaker) as session:
        alice = await make_user(session, "alice")
        project = await make_project(session, "physics")
        job = await make_job(session, alice, project, submitted_at=submitted)
        job_id = job.id

    async with sessionmaker() as session:
        stored = await session.get(Job, job_id)

    assert stored is not None
    assert stored.submitted_at == submitted
    assert stored.submitted_at is not None and stored.submitted_at.tzinfo == UTC
    assert stored.created_at.tzinfo == UTC


async def test_naive_timestamps_are_refused(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    project = await make_project(session, "physics")

    with pytest.raises(StatementError, match="timezone-aware"):
        await make_job(session, alice, project, submitted_at=datetime(2026, 1, 1))


async def test_a_read_phase_may_end_early_but_pending_writes_may_not(
    session: AsyncSession,
) -> None:
    await release_connection(session)  # nothing pending: the connection goes back
    session.add(User(login="halfway", display_name="Halfway", email="h@example.org"))
    with pytest.raises(RuntimeError, match="not finished"):
        await release_connection(session)
    await session.rollback()
