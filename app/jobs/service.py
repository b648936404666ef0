"""The jobs service: submit, cancel, hold, release and resubmit, plus the reads pages use.

Commands that talk to a cluster take a ``JobService`` built once at start-up around a
sessionmaker: they open a short session per phase and never keep a transaction open while
the scheduler is called. Reads take the request's session like every other service.
Status always comes from the database; nothing here asks Slurm what a job is doing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import SYSTEM, Origin, record_action
from app.db import unit_of_work
from app.errors import Conflict, Forbidden, ServiceUnavailable, ValidationFailed
from app.i18n import _
from app.jobs import authz, control_words, event_notes, repository, states, submission, tasks
from app.jobs.job_fields import request_values
from app.jobs.requests import JobRequest
from app.models.jobs import Job, JobEvent
from app.scheduler.base import SchedulerAdapter
from app.scheduler.capabilities import capabilities_of
from app.scheduler.config import DEFAULT_LOG_ROOTS
from app.scheduler.errors import (
    JobNotFound,
    NotSent,
    PermissionDenied,
    PreflightFailed,
    SchedulerUnavailable,
    SubmitRejected,
)
from app.users.actor import Actor

logger = logging.getLogger(__name__)


class AdapterLookup(Protocol):
    """Anything that hands out the adapter for a cluster (e.g. SchedulerRegistry)."""

    def get(self, cluster: str) -> SchedulerAdapter: ...


async def get_job(session: AsyncSession, actor: Actor, job_id: int) -> Job:
    return await authz.get_visible_job(session, actor, job_id)


async def own_job_with_slurm_id(session: AsyncSession, actor: Actor, slurm_id: str) -> int | None:
    """The actor's newest job Slurm knows as ``slurm_id`` (Slurm reuses ids in time)."""
    if not slurm_id:
        return None
    return await repository.newest_owned_with_slurm_id(session, actor.user_id, slurm_id)


async def list_events(session: AsyncSession, actor: Actor, job_id: int) -> list[JobEvent]:
    job = await authz.get_visible_job(session, actor, job_id)
    return await repository.list_events_for_job(session, job.id)


def request_from_job(job: Job, edits: Mapping[str, Any]) -> JobRequest:
    """A new request copying what the job asked for, with ``edits`` applied."""
    base = JobRequest(**request_values(job))
    return dataclasses.replace(base, **dict(edits))


def script_digest(job: Job) -> str:
    """What a person reviewing a job's script saw: the script and the values it receives."""
    shown = json.dumps([job.script, job.environment or {}], sort_keys=True)
    return hashlib.sha256(shown.encode()).hexdigest()


ControlCall = Callable[[SchedulerAdapter, Sequence[str], str], Awaitable[None]]
_ACTIONS: dict[str, tuple[Callable[[str], bool], ControlCall]] = {
    "cancel": (states.can_cancel, lambda adapter, ids, user: adapter.cancel(ids, user)),
    "hold": (states.can_hold, lambda adapter, ids, user: adapter.hold(ids, user)),
    "release": (states.can_release, lambda adapter, ids, user: adapter.release(ids, user)),
}


def _unreachable(cluster: str) -> ServiceUnavailable:
    return ServiceUnavailable(_("Cluster %(cluster)s is unreachable.", cluster=cluster))


def _not_acting_as(plan: submission.SubmissionPlan) -> Forbidden:
    return Forbidden(
        _(
            "The portal does not act as %(username)s on %(cluster)s: it is a service "
            "or system account. Ask an administrator to map yours.",
            username=plan.username,
            cluster=plan.project.cluster,
        )
    )


def _refusal(
    error: SubmitRejected | PreflightFailed | PermissionDenied, plan: submission.SubmissionPlan
) -> tuple[ValidationFailed | Forbidden, str]:
    """A submission the cluster refused, as the surfaces show a refused check, and the plain
    reason the job's row keeps."""
    if isinstance(error, PermissionDenied):
        return _not_acting_as(plan), event_notes.NOT_ACTING_AS
    if isinstance(error, SubmitRejected):
        error = PreflightFailed([("submission", error.message)], error.raw)
    why = " ".join(message for _field, message in error.problems)
    return submission.preflight_failure(error), why


class JobService:
    """Job commands that reach a cluster; build one at start-up and share it."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        adapters: AdapterLookup,
        log_roots: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._adapters = adapters
        self._log_roots = dict(log_roots or {})

    async def submit(
        self,
        actor: Actor,
        request: JobRequest,
        idempotency_key: str | None = None,
        *,
        origin: Origin = SYSTEM,
    ) -> Job:
        """Submit two-phase (ADR 0002). The same key for the same owner gives the same job.

        Raises NotFound/ValidationFailed before anything is written, SubmitRejected (after
        the row became ``submit_failed``) when Slurm refuses. When the cluster cannot be
        reached mid-submission the row is returned still ``submitting``; the poller settles it.
        """
        note = submission.AuditNote("job.submit", origin)
        return await self._submit(actor, request, idempotency_key, note)

    async def validate(self, actor: Actor, request: JobRequest) -> None:
        """Refuse ``request`` as ``submit`` would before asking the cluster, asking it nothing.

        Raises ValidationFailed (a bad value: an array range, a path), NotFound or Forbidden.
        """
        async with self._sessionmaker() as session:
            await self._plan(session, actor, request)

    async def check(self, actor: Actor, request: JobRequest) -> None:
        """Ask the cluster whether it would take ``request``, writing and submitting nothing.

        Raises what ``submit`` raises before its first write (ValidationFailed with Slurm's
        words in ``raw``, NotFound, Forbidden, ServiceUnavailable). Like ``submit``'s own
        check, it creates the job's log folders as the user.
        """
        async with self._sessionmaker() as session:
            plan = await self._plan(session, actor, request)
        await self._preflight(self._adapters.get(plan.project.cluster), plan)

    async def _plan(
        self, session: AsyncSession, actor: Actor, request: JobRequest
    ) -> submission.SubmissionPlan:
        project = await repository.get_project(session, request.project_id)
        roots = self._log_roots.get(project.cluster if project else "", DEFAULT_LOG_ROOTS)
        return await submission.plan_submission(session, actor, request, roots)

    async def _submit(
        self,
        actor: Actor,
        request: JobRequest,
        idempotency_key: str | None,
        note: submission.AuditNote,
    ) -> Job:
        async with self._sessionmaker() as session:
            if idempotency_key is not None:
                existing = await repository.get_by_idempotency_key(
                    session, actor.user_id, idempotency_key
                )
                if existing is not None:
                    return existing
            plan = await self._plan(session, actor, request)
        adapter = self._adapters.get(plan.project.cluster)
        # sbatch's own verdict comes with the submission itself: asking it first as well
        # (--test-only) would double the cluster round trips of every submission.
        await self._preflight(adapter, plan, ask_sbatch=False)
        row = submission.new_job_row(plan, actor, request, idempotency_key)
        job, is_new = await submission.insert_submitting_row(
            self._sessionmaker, row, note, request.warnings
        )
        if not is_new:
            return job
        return await self._hand_over(adapter, job, plan)

    async def _preflight(
        self, adapter: SchedulerAdapter, plan: submission.SubmissionPlan, *, ask_sbatch: bool = True
    ) -> None:
        try:
            await adapter.preflight(plan.spec, plan.username, ask_sbatch=ask_sbatch)
        except PreflightFailed as error:
            raise submission.preflight_failure(error) from error
        except PermissionDenied as error:
            raise _not_acting_as(plan) from error
        except SchedulerUnavailable as error:
            raise _unreachable(plan.project.cluster) from error

    async def _hand_over(
        self, adapter: SchedulerAdapter, job: Job, plan: submission.SubmissionPlan
    ) -> Job:
        try:
            slurm_job_id = await adapter.submit(plan.spec, plan.username)
        except (SubmitRejected, PreflightFailed, PermissionDenied) as error:
            failure, why = _refusal(error, plan)
            await submission.record_rejection(self._sessionmaker, job.id, why)
            # Shown as a check's refusal is: the same words, fields and Slurm's own text.
            raise failure from error
        except NotSent as error:
            # Certainly not submitted, so not left for the poller to look for.
            await submission.record_rejection(self._sessionmaker, job.id, event_notes.NOT_SENT)
            raise _unreachable(plan.project.cluster) from error
        except SchedulerUnavailable:
            # The answer was lost, not necessarily the job: the poller looks for its UUID.
            logger.warning("submission of job %s unconfirmed", job.uuid, exc_info=True)
            return job
        saved = await submission.record_submission(self._sessionmaker, job.id, slurm_job_id)
        return saved or job

    async def resubmit(
        self,
        actor: Actor,
        job_id: int,
        edits: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        *,
        origin: Origin = SYSTEM,
        reviewed_script: str | None = None,
    ) -> Job:
        """Submit a copy of a job the actor can see, with ``edits`` to the JobRequest fields.

        A copy of someone else's job runs their script as the actor, so it needs
        ``reviewed_script``: the ``script_digest`` of the script the actor was shown.
        """
        async with self._sessionmaker() as session:
            original = await authz.get_visible_job(session, actor, job_id)
            if original.submitted_outside:
                raise Conflict(
                    _(
                        "This job was submitted outside the portal, so the portal has no copy "
                        "of its script to submit again."
                    )
                )
            request = request_from_job(original, edits or {})
        is_own = original.owner_user_id == actor.user_id
        if not is_own and reviewed_script != script_digest(original):
            raise Forbidden(
                _(
                    "This job is someone else's: resubmitting runs its script as you. Review "
                    "the script on the job's resubmit page first."
                )
            )
        note = submission.AuditNote(
            "job.resubmit", origin, {"copy_of": job_id, "edits": sorted(edits or {})}
        )
        return await self._submit(actor, request, idempotency_key, note)

    async def retry_failed_tasks(
        self,
        actor: Actor,
        job_id: int,
        idempotency_key: str | None = None,
        *,
        origin: Origin = SYSTEM,
    ) -> Job:
        """Submit the array again with exactly the indices that did not complete."""
        async with self._sessionmaker() as session:
            array = await tasks.visible_array(session, actor, job_id)
            if array.owner_user_id != actor.user_id:
                raise Forbidden(
                    _(
                        'Only the array\'s owner can retry its tasks; "Resubmit a copy" runs '
                        "its script as you after you have reviewed it."
                    )
                )
            # PBS takes no list of indices: the retry is one range with a step there.
            stepped = not capabilities_of(self._adapters.get(array.cluster)).array_lists
            spec = await tasks.failed_task_spec(session, array, stepped=stepped)
        request = request_from_job(array, {"array_spec": spec})
        request = dataclasses.replace(request, retry_of_id=array.id)
        note = submission.AuditNote("job.retry_failed", origin, {"retry_of": job_id, "tasks": spec})
        return await self._submit(actor, request, idempotency_key, note)

    async def cancel(self, actor: Actor, job_id: int, *, origin: Origin = SYSTEM) -> Job:
        return await self._control("cancel", actor, job_id, origin)

    async def hold(self, actor: Actor, job_id: int, *, origin: Origin = SYSTEM) -> Job:
        return await self._control("hold", actor, job_id, origin)

    async def release(self, actor: Actor, job_id: int, *, origin: Origin = SYSTEM) -> Job:
        return await self._control("release", actor, job_id, origin)

    async def _control(self, action: str, actor: Actor, job_id: int, origin: Origin) -> Job:
        """Ask Slurm as the actor; the state changes when the poller sees Slurm's answer.

        The portal only decides who may ask (owner, project manager, site admin); Slurm
        decides who may act (ADR 0005): the owner, a coordinator of the job's account, an
        operator. A manager who is none of these gets Slurm's refusal in plain words.
        """
        is_allowed, call = _ACTIONS[action]
        async with self._sessionmaker() as session:
            job = await authz.get_actionable_job(session, actor, job_id)
            actor_name = await repository.get_cluster_username(session, actor.user_id, job.cluster)
        if job.slurm_job_id is None or not is_allowed(job.state):
            raise Conflict(control_words.not_now(action, job.state))
        if actor_name is None:
            raise Forbidden(control_words.no_account(action, job.cluster))
        try:
            await call(self._adapters.get(job.cluster), [job.slurm_job_id], actor_name)
        except JobNotFound as error:
            raise Conflict(_("Slurm no longer knows this job; it has probably ended.")) from error
        except PermissionDenied as error:
            raise Forbidden(control_words.refused(action, actor_name)) from error
        except SchedulerUnavailable as error:
            raise _unreachable(job.cluster) from error
        async with unit_of_work(self._sessionmaker) as session:
            repository.add_event(
                session,
                job.id,
                job.state,
                job.state,
                reason=event_notes.requested(action, actor.login),
                source="user",
            )
            await record_action(
                session, actor.user_id, origin, f"job.{action}", ("job", job.id), state=job.state
            )
        return job
