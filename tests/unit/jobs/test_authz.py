"""Who may see and act on a job, on unsaved model objects."""

from __future__ import annotations

from app.jobs.authz import can_act, can_view
from app.models.jobs import Job
from app.users.actor import Actor

OWNER_ID = 1
PROJECT_ID = 7


def actor(user_id: int, role: str | None = None, *, is_site_admin: bool = False) -> Actor:
    roles = {PROJECT_ID: role} if role else {}
    return Actor(
        user_id=user_id, login=f"u{user_id}", is_site_admin=is_site_admin, project_roles=roles
    )


def a_job() -> Job:
    return Job(
        id=5,
        owner_user_id=OWNER_ID,
        project_id=PROJECT_ID,
        cluster="c",
        uuid="u",
        name="j",
        script="#!/bin/sh\n",
        state="running",
    )


def test_owner_sees_and_acts_on_own_job() -> None:
    owner = actor(OWNER_ID)
    assert can_view(owner, a_job())
    assert can_act(owner, a_job())


def test_project_member_sees_but_cannot_act_on_a_colleagues_job() -> None:
    colleague = actor(2, "member")
    assert can_view(colleague, a_job())
    assert not can_act(colleague, a_job())


def test_project_manager_acts_on_the_projects_jobs() -> None:
    assert can_act(actor(3, "manager"), a_job())


def test_member_of_another_project_cannot_see_the_job() -> None:
    elsewhere = Actor(user_id=4, login="u4", project_roles={PROJECT_ID + 1: "manager"})
    assert not can_view(elsewhere, a_job())
    assert not can_act(elsewhere, a_job())


def test_outsider_cannot_even_see_the_job() -> None:
    assert not can_view(actor(4), a_job())
    assert not can_act(actor(4), a_job())


def test_site_admin_acts_on_every_job() -> None:
    admin = actor(9, is_site_admin=True)
    assert can_view(admin, a_job())
    assert can_act(admin, a_job())
