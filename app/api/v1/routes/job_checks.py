"""What a submission would run into, said before it is sent (nothing is submitted)."""

from __future__ import annotations

from fastapi import APIRouter

from app.announcements import service as announcements
from app.api.v1.announcement_schemas import SubmitCheckOut, SubmitWarningOut
from app.api.v1.deps import Submitter
from app.api.v1.schemas import SubmitIn, errors
from app.api.v1.submissions import submission_from
from app.deps import JobServiceDep, SessionDep, SubmitChoicesDep
from app.models.base import utc_now
from app.projects import service as projects
from app.reports.allocation import allocation_warning, requested_minutes
from app.submissions.service import build_request

router = APIRouter(prefix="/jobs", tags=["jobs"])


@router.post(
    "/check",
    response_model=SubmitCheckOut,
    summary="Check a submission without sending it: its warnings (maintenance, allocation)",
    responses=errors(400, 404, 503),
)
async def check_job(
    session: SessionDep,
    choices: SubmitChoicesDep,
    service: JobServiceDep,
    principal: Submitter,
    body: SubmitIn,
) -> SubmitCheckOut:
    """The same body as a submission; refused with the same errors when it is not valid."""
    job = await build_request(
        session,
        principal.actor,
        submission_from(body),
        lambda project: choices.context_for(session, principal.actor, project),
    )
    await service.validate(principal.actor, job)
    project = (await projects.get(session, principal.actor, job.project_id)).project
    warnings: list[SubmitWarningOut] = []
    found = await announcements.maintenance_clash(
        session, project.cluster, job.time_limit_minutes, job.partition
    )
    if found is not None:
        warnings.append(
            SubmitWarningOut(
                code="maintenance",
                message=found.message(),
                cluster=found.window.cluster,
                window_start=found.window.start,
                window_end=found.window.end,
                fitting_minutes=found.fitting_minutes,
            )
        )
    over = await allocation_warning(session, project, job, utc_now().date())
    if over is not None:
        warnings.append(
            SubmitWarningOut(
                code="allocation",
                message=over,
                cluster=project.cluster,
                requested_cpu_minutes=requested_minutes(job),
            )
        )
    return SubmitCheckOut(warnings=warnings)
