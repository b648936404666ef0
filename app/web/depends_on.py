"""The "start after" part of the submit forms: earlier jobs of the submitter to wait for."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from app.i18n import _
from app.jobs.dependencies import After, choosable_jobs
from app.scheduler.dependencies import DependencyKind
from app.users.actor import Actor
from app.web.jobs_fragments import state_badge


def after_from(form: FormData) -> tuple[After, ...]:
    """What the form asks to wait for; the jobs service checks they are the submitter's."""
    kind = str(form.get("after_kind", ""))
    if kind == DependencyKind.SINGLETON:
        return (After(DependencyKind.SINGLETON),)
    ids = tuple(
        int(value)
        for value in form.getlist("after_jobs")
        if isinstance(value, str) and value.isdigit() and len(value) < 12
    )
    if kind not in set(DependencyKind) or not ids:
        return ()
    return (After(DependencyKind(kind), ids),)


def kind_words() -> list[tuple[str, str]]:
    return [
        (DependencyKind.AFTER_OK, _("when they have all succeeded")),
        (DependencyKind.AFTER_ANY, _("when they have all ended, however they ended")),
        (DependencyKind.AFTER_NOT_OK, _("when they have all failed (a clean-up or a retry)")),
        (
            DependencyKind.SINGLETON,
            _("when my earlier jobs of the same name have ended (choose no job)"),
        ),
    ]


async def after_context(
    session: AsyncSession, actor: Actor, after: tuple[After, ...] = ()
) -> dict[str, Any]:
    """What the form's "start after" part shows, with the choice made so far."""
    jobs = await choosable_jobs(session, actor)
    return {
        "after_jobs": [
            (
                job.id,
                _(
                    "%(name)s (job %(id)s on %(cluster)s, %(state)s)",
                    name=job.name,
                    id=job.slurm_job_id,
                    cluster=job.cluster,
                    state=state_badge(job.state).label.lower(),
                ),
            )
            for job in jobs
        ],
        "after_chosen": {str(job_id) for clause in after for job_id in clause.job_ids},
        "after_kind": after[0].kind.value if after else "",
        "after_kinds": kind_words(),
    }
