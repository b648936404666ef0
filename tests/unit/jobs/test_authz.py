"""Who may see and act on a job, on unsaved model objects."""

from __future__ import annotations

from app.jobs.authz import can_act, can_view
from app.models import Job, Membership, User

OWNER_ID = 1


def user(user_id: int, *, is_site_admin: bool = False) -> User:
    return User(id=user_id, login=f"u{user_id}", display_name="x", is_site_admin=is_site_admin)


def a_job() -> Job:
    return Job(
        id=5,
        owner_user_id=OWNER_ID,
        project_id=7,
        cluster="c",
        uuid="u",
        name="j",
        script="#!/bin/sh\n",
        state="running",
    )


def membership(user_id: int, role: str) -> Membership:
    return Membership(user_id=user_id, project_id=7, role=role)


def test_owner_sees_and_acts_on_own_job() -> None:
    owner = user(OWNER_ID)
    assert can_view(owner, a_job(), None)
    assert can_act(owner, a_job(), None)


def test_project_member_sees_but_cannot_act_on_a_colleagues_job() -> None:
    colleague = user(2)
    assert can_view(colleague, a_job(), membership(2, "member"))
    assert not can_act(colleague, a_job(), membership(2, "member"))


def test_project_manager_acts_on_the_projects_jobs() -> None:
    assert can_act(user(3), a_job(), membership(3, "manager"))


def test_outsider_cannot_even_see_the_job() -> None:
    assert not can_view(user(4), a_job(), None)
    assert not can_act(user(4), a_job(), None)


def test_site_admin_acts_on_every_job() -> None:
    admin = user(9, is_site_admin=True)
    assert can_view(admin, a_job(), None)
    assert can_act(admin, a_job(), None)
