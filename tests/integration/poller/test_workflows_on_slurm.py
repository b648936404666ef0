"""Dependencies and workflows on the real clusters: Slurm decides when a step may start."""

from __future__ import annotations

import uuid

import pytest

from app.api.v1.routes.jobs import job_out
from app.job_templates.context import SubmitContext
from app.jobs import states
from app.jobs.dependencies import After
from app.models.projects import Project
from app.scheduler.dependencies import DependencyKind
from app.workflows import service as workflows
from app.workflows.graph import Step
from app.workflows.runner import WorkflowRunner
from tests.integration.poller.conftest import Portal
from tests.slurm_versions import run_on

pytestmark = pytest.mark.slurm

HEADER = (
    "#!/bin/bash\n#SBATCH --time=2\n#SBATCH --mem=100\n#SBATCH --output=/scratch/alice/wf-%j.out\n"
)


async def test_job_after_a_failed_one_is_explained_as_never_starting(portal: Portal) -> None:
    first = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nexit 1\n"))
    after = (After(DependencyKind.AFTER_OK, (first.id,)),)
    waiting = await portal.service.submit(
        portal.alice, portal.request("#!/bin/bash\ntrue\n", after=after)
    )
    assert waiting.dependency == f"afterok:{first.slurm_job_id}"
    stuck = await portal.poll_until(
        waiting.id, lambda row: row.reason == "DependencyNeverSatisfied", timeout=60
    )
    assert stuck.state == "pending"
    shown = job_out(stuck)
    assert shown.waiting_explanation == (
        f"It was to start only once job {first.slurm_job_id} completed successfully, and that "
        "can no longer happen, so it will never start and Slurm keeps it waiting until you "
        "act. Cancel it, or resubmit a copy without the dependency."
    )
    assert shown.waiting_choices == ["cancel", "resubmit_without_dependency"]
    await portal.service.cancel(portal.alice, stuck.id)
    done = await portal.poll_until(stuck.id, lambda row: states.is_terminal(row.state), 60)
    assert done.state == "cancelled"


async def test_three_steps_with_a_failing_middle_rerun_from_it_to_completion(
    portal: Portal,
) -> None:
    marker = f"/scratch/alice/wf-{uuid.uuid4().hex[:10]}.ok"
    steps = (
        Step("prepare", HEADER + "true\n"),
        Step("compute", HEADER + f"test -e {marker}\n", after=("prepare",)),
        Step("report", HEADER + "true\n", after=("compute",)),
    )
    async with portal.sessionmaker() as session:
        draft = workflows.WorkflowDraft(portal.project.id, "chain", steps)
        workflow = await workflows.create(session, portal.alice, draft)
        await session.commit()
    runner = WorkflowRunner(portal.sessionmaker, portal.service)
    run_id = await runner.start(portal.alice, await _plan(portal, workflow.id))
    first = await _steps(portal, run_id)
    await portal.poll_until(
        first["report"], lambda row: row.reason == "DependencyNeverSatisfied", 90
    )
    assert (await portal.job(first["prepare"])).state == "completed"
    assert (await portal.job(first["compute"])).state == "failed"

    run_on(portal.version, ["install", "-o", "alice", "/dev/null", marker], check=True)
    try:
        async with portal.sessionmaker() as session:
            plan = await workflows.plan_rerun(session, portal.alice, run_id, _home(portal))
        assert [step.name for step in plan.steps] == ["compute", "report"]
        await runner.start(portal.alice, plan)
        again = await _steps(portal, run_id)
        done = await portal.poll_until(
            again["report"], lambda row: states.is_terminal(row.state), 90
        )
    finally:
        run_on(portal.version, ["rm", "-f", marker])
    assert done.state == "completed"
    assert again["prepare"] == first["prepare"]  # what succeeded was not run again
    assert (await portal.job(again["compute"])).state == "completed"
    assert (await portal.job(first["report"])).state == "cancelled"


def _home(portal: Portal) -> workflows.ContextFor:
    async def context(project: Project) -> SubmitContext:
        return SubmitContext(project.cluster, (project.slurm_account,), home="/home/alice")

    return context


async def _plan(portal: Portal, workflow_id: int) -> workflows.RunPlan:
    async with portal.sessionmaker() as session:
        return await workflows.plan_run(session, portal.alice, workflow_id, _home(portal))


async def _steps(portal: Portal, run_id: int) -> dict[str, int]:
    async with portal.sessionmaker() as session:
        view = await workflows.get_run(session, portal.alice, run_id)
    return {step.step.name: step.job.id for step in view.steps if step.job is not None}
