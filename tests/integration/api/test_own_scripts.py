"""Researchers' own sbatch scripts through the API: read, checked and run as they are."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from tests.factories import add_member, make_project, make_user
from tests.integration.api.conftest import issue_token, serving
from tests.slurm_versions import cluster_config, clusters_file, run_on, versions
from tests.world import World

TUTORIAL = """#!/bin/bash
#SBATCH --job-name=sweep-{tag}
#SBATCH --partition=debug
#SBATCH --time=00:05:00
#SBATCH --cpus-per-task=1
#SBATCH --mem=200M
#SBATCH --output={folder}/%x-%j.out

arr=(a b c)
echo "n=${{#arr[@]}} {{{{ kept }}}} first=$1 second=$2"
#SBATCH --partition=long
"""


def tutorial(folder: str, tag: str = "t") -> str:
    return TUTORIAL.format(folder=folder, tag=tag)


async def test_a_scripts_directives_are_what_the_portal_stores_and_sends(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    script = tutorial("/home/carol/runs")
    body = {"script": script, "project_id": world.physics.id, "args": ["one", "two words"]}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 201, response.text
    job = response.json()
    assert (job["name"], job["partition"]) == ("sweep-t", "debug")
    [spec] = scheduler.specs.values()
    assert spec.script == script  # byte for byte: no template syntax read
    assert spec.args == ("one", "two words")
    assert (spec.time_limit_minutes, spec.memory_mb, spec.account) == (5, 200, "physics")
    assert spec.stdout == "/home/carol/runs/%x-%j.out" and spec.stderr is None
    events = (await client.get(f"/api/v1/jobs/{job['id']}/events", headers=headers)).json()
    reasons = [e["reason"] or "" for e in events]
    ignored = "line 11: sbatch ignores #SBATCH lines after the first command"
    assert any(ignored in r for r in reasons)


async def test_body_fields_override_the_script_like_sbatchs_command_line(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    body = {"script": tutorial("/home/carol/runs"), "project_id": world.physics.id}
    body |= {"partition": "long", "time_limit_minutes": 30, "name": "renamed"}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 201, response.text
    [spec] = scheduler.specs.values()
    assert (spec.partition, spec.time_limit_minutes, spec.name) == ("long", 30, "renamed")


async def test_a_misspelt_directive_is_refused_before_sbatch_with_the_option_named(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    script = "#!/bin/bash\n#SBATCH --ntaks-per-node=4\nsrun hostname\n"
    body = {"script": script, "project_id": world.physics.id}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 422
    expected = "line 2: sbatch has no option --ntaks-per-node (did you mean --ntasks-per-node?)"
    assert response.json()["fields"] == {"script": expected}
    assert "submit" not in scheduler.calls


async def test_args_with_a_template_are_refused(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = {"template_id": 1, "args": ["x"], "project_id": world.physics.id}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 422
    assert "args" in response.json()["fields"]


@dataclass
class OnCluster:
    """The API on one Slurm version's development cluster, as carol in its physics project."""

    client: httpx.AsyncClient
    headers: dict[str, str]
    project_id: int
    version: str


@pytest.fixture(params=versions())
def slurm_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def on_cluster(
    slurm_version: str, db_url: str, session: AsyncSession
) -> AsyncIterator[OnCluster]:
    version = slurm_version
    cluster = cluster_config(version).name
    carol = await make_user(session, "carol", cluster_username="carol", cluster=cluster)
    physics = await make_project(session, "physics", slurm_account="physics", cluster=cluster)
    await add_member(session, carol, physics)
    await session.commit()
    headers = await issue_token(session, carol)
    settings = Settings(
        env="dev",
        database_url=db_url,
        clusters_file=clusters_file(version),
        run_poller_in_web=True,
        poll_interval=1,
    )
    async with serving(settings) as http:
        yield OnCluster(http, headers, physics.id, version)


async def _finished(client: httpx.AsyncClient, headers: dict[str, str], job_id: int) -> Any:
    for _ in range(240):
        job = (await client.get(f"/api/v1/jobs/{job_id}", headers=headers)).json()
        if job["is_finished"]:
            return job
        await asyncio.sleep(0.5)
    raise AssertionError(f"job {job_id} did not finish: {job}")


async def _run(on: OnCluster, script: str, args: tuple[str, ...] = ()) -> Any:
    """Submit ``script`` as carol and return the job once it has ended."""
    body = {"script": script, "project_id": on.project_id, "args": list(args)}
    response = await on.client.post("/api/v1/jobs", json=body, headers=on.headers)
    assert response.status_code == 201, response.text
    return await _finished(on.client, on.headers, response.json()["id"])


@pytest.mark.slurm
async def test_a_tutorial_script_runs_as_written_with_its_arguments_and_new_log_folder(
    on_cluster: OnCluster,
) -> None:
    tag = uuid.uuid4().hex[:8]
    folder = f"/home/carol/portal-scripts-{tag}/logs"  # does not exist yet
    job = await _run(on_cluster, tutorial(folder, tag), ("$(id)", "two words"))
    assert (job["state"], job["exit_code"]) == ("completed", 0)
    # scripts/dev-cluster names its one node after the machine, on every version.
    assert job["node_list"] == socket.gethostname().split(".")[0]
    path = f"/api/v1/jobs/{job['id']}/logs/stdout"
    log = await on_cluster.client.get(path, headers=on_cluster.headers)
    assert log.status_code == 200, log.text
    assert log.json()["data"] == "n=3 {{ kept }} first=$(id) second=two words\n"


@pytest.mark.slurm
async def test_an_out_of_memory_kill_is_said_as_one_on_the_api(on_cluster: OnCluster) -> None:
    # tail keeps the 300 MB "line" in memory while it waits for more input.
    script = (
        "#!/bin/bash\n#SBATCH --mem=100M\n#SBATCH --time=2\n"
        f"#SBATCH --output=/home/carol/portal-scripts-{uuid.uuid4().hex[:8]}/%j.out\n"
        "(head -c 300M /dev/zero; sleep 60) | tail > /dev/null\n"
    )
    job = await _run(on_cluster, script)
    assert (job["state"], job["exit_signal"], job["end_cause"]) == ("failed", 9, "out_of_memory")
    assert job["end_explanation"].startswith("Killed for using more memory than requested")


@pytest.mark.slurm
@pytest.mark.parametrize(
    ("directive", "field", "words", "raw"),
    [
        (
            "--partition=gpu-a100",
            "partition",
            "partition gpu-a100 does not exist (this cluster has: debug, long)",
            None,
        ),
        (
            "--qos=high",
            "qos",
            "QOS high does not exist or is not yours to use (yours: normal)",
            None,
        ),
        (
            "--gres=gpu:v100:1",
            "gres",
            "gpu type v100 is not available in partition debug (it has: a100)",
            None,
        ),
        (
            "--cpus-per-task=64",
            "submission",
            "No node in the partition has the requested CPUs, memory or GPUs.",
            "More processors requested than permitted",
        ),
    ],
)
async def test_a_script_from_another_cluster_is_refused_with_the_choices_and_slurms_words(
    on_cluster: OnCluster, directive: str, field: str, words: str, raw: str | None
) -> None:
    script = f"#!/bin/bash\n#SBATCH {directive}\n#SBATCH --time=5\nhostname\n"
    body = {"script": script, "project_id": on_cluster.project_id}
    response = await on_cluster.client.post("/api/v1/jobs", json=body, headers=on_cluster.headers)
    assert response.status_code == 422, response.text
    refusal = response.json()
    assert refusal["fields"][field] == words
    if raw is None:
        return
    assert raw in refusal["raw"]  # sbatch's own line, from the submission itself
    # The attempt sbatch refused stays listed, with the plain reason; nothing else is written.
    # (carol's jobs of earlier tests that Slurm still reports are adopted as outside jobs.)
    listed = await on_cluster.client.get("/api/v1/jobs", headers=on_cluster.headers)
    items = listed.json()["items"]
    kept = [(job["state"], job["submit_error"]) for job in items if not job["submitted_outside"]]
    assert kept == [("submit_failed", words)]


@pytest.mark.slurm
async def test_an_array_declared_in_the_script_ends_with_its_tasks(
    on_cluster: OnCluster, session: AsyncSession
) -> None:
    folder = f"/home/carol/portal-scripts-{uuid.uuid4().hex[:8]}"
    script = (
        "#!/bin/bash\n#SBATCH --array=1-3%1\n#SBATCH --time=2\n"
        f"#SBATCH --output={folder}/%A_%a.out\n"
        'echo "task $SLURM_ARRAY_TASK_ID"\n'
    )
    job = await _run(on_cluster, script)
    assert (job["state"], job["end_cause"]) == ("completed", "completed")
    rows = await session.scalars(
        select(Job).where(Job.array_parent_id == job["id"]).order_by(Job.array_task_id)
    )
    master = job["slurm_job_id"]
    tasks = [(row.slurm_job_id, row.state) for row in rows]
    assert tasks == [(f"{master}_{n}", "completed") for n in (1, 2, 3)]


SWEEP = """#!/bin/bash
#SBATCH --array=1-20
#SBATCH --time=2
#SBATCH --output={folder}/%A_%a.out
echo "task $SLURM_ARRAY_TASK_ID"
case $SLURM_ARRAY_TASK_ID in
  3|7|12) if [ ! -e {folder}/retried-$SLURM_ARRAY_TASK_ID ]; then
      touch {folder}/retried-$SLURM_ARRAY_TASK_ID; exit 1; fi ;;
esac
"""


async def _tasks(on: OnCluster, job_id: int) -> dict[str, Any]:
    response = await on.client.get(f"/api/v1/jobs/{job_id}/tasks?limit=200", headers=on.headers)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


@pytest.mark.slurm
async def test_a_sweep_with_failing_tasks_shows_each_task_and_retries_exactly_those(
    on_cluster: OnCluster,
) -> None:
    folder = f"/home/carol/portal-sweep-{uuid.uuid4().hex[:8]}"
    array = await _run(on_cluster, SWEEP.format(folder=folder))
    listed = await _tasks(on_cluster, array["id"])
    assert listed["counts"] == {"completed": 17, "failed": 3}
    for task in listed["items"]:
        path = f"/api/v1/jobs/{task['id']}/logs/stdout"
        log = await on_cluster.client.get(path, headers=on_cluster.headers)
        assert log.json()["data"] == f"task {task['array_task_id']}\n", task
    retry = await on_cluster.client.post(
        f"/api/v1/jobs/{array['id']}/retry-failed", headers=on_cluster.headers
    )
    assert retry.status_code == 201, retry.text
    assert (retry.json()["array_spec"], retry.json()["retry_of_id"]) == ("3,7,12", array["id"])
    rerun = await _finished(on_cluster.client, on_cluster.headers, retry.json()["id"])
    assert rerun["state"] == "completed"
    again = await _tasks(on_cluster, rerun["id"])
    assert [(t["array_task_id"], t["state"]) for t in again["items"]] == [
        (3, "completed"),
        (7, "completed"),
        (12, "completed"),
    ]


def _by_hand(version: str, *options: str) -> str:
    """Submit with plain sbatch as carol on the cluster, as a tutorial does; the Slurm id."""
    argv = ["runuser", "-u", "carol", "--", "sbatch", "--parsable", "-A", "physics"]
    argv += ["-p", "debug", "-t", "2", "--chdir=/home/carol", *options]
    done = run_on(version, argv, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


async def _appeared(on: OnCluster, slurm_id: str) -> dict[str, Any]:
    for _ in range(60):
        listed = await on.client.get("/api/v1/jobs?mine=true", headers=on.headers)
        found = next((j for j in listed.json()["items"] if j["slurm_job_id"] == slurm_id), None)
        if found is not None:
            return found
        await asyncio.sleep(0.5)
    raise AssertionError(f"job {slurm_id} never appeared")


@pytest.mark.slurm
async def test_jobs_and_arrays_submitted_with_plain_sbatch_appear_and_end_with_their_true_state(
    on_cluster: OnCluster,
) -> None:
    on = on_cluster
    folder = f"/home/carol/portal-by-hand-{uuid.uuid4().hex[:8]}"
    run_on(on.version, ["runuser", "-u", "carol", "--", "mkdir", "-p", folder], check=True)
    plain_id = _by_hand(on.version, "-J", "by-hand", "--wrap=echo by hand; exit 4")
    # %j is each task's own Slurm number, not the array's: the portal must find every file.
    wrap = 'echo "task $SLURM_ARRAY_TASK_ID"; test "$SLURM_ARRAY_TASK_ID" -ne 3'
    array_id = _by_hand(
        on.version,
        "-J",
        "hand-array",
        "--array=1-4",
        f"--output={folder}/%x_%j.out",
        f"--wrap={wrap}",
    )
    plain, array = await _appeared(on, plain_id), await _appeared(on, array_id)
    assert (plain["name"], plain["submitted_outside"]) == ("by-hand", True)
    assert (array["name"], array["submitted_outside"]) == ("hand-array", True)
    script = await on.client.get(f"/api/v1/jobs/{array['id']}/script", headers=on.headers)
    assert script.json()["source"] == "slurm" and wrap in script.json()["script"], script.text

    ended = await _finished(on.client, on.headers, plain["id"])
    assert (ended["state"], ended["exit_code"], ended["end_cause"]) == ("failed", 4, "exit_code")
    ended = await _finished(on.client, on.headers, array["id"])
    assert ended["state"] == "failed"
    listed = await _tasks(on, array["id"])
    assert listed["counts"] == {"completed": 3, "failed": 1}
    for task in listed["items"]:
        log = await on.client.get(f"/api/v1/jobs/{task['id']}/logs/stdout", headers=on.headers)
        assert log.json()["data"] == f"task {task['array_task_id']}\n", (task, log.text)


async def _apart_from_slurms_estimate(on: OnCluster, job_id: int) -> timedelta | None:
    """How far the portal's expected start is from Slurm's own ``StartTime`` for the job,
    once a poll cycle has had the chance to catch up with a moved estimate; None when the
    job started meanwhile (its ``StartTime`` is then no longer an estimate)."""
    apart = timedelta.max
    for _ in range(30):
        job = (await on.client.get(f"/api/v1/jobs/{job_id}", headers=on.headers)).json()
        said = run_on(
            on.version, ["squeue", "-h", "-t", "PD", "-j", job["slurm_job_id"], "-o", "%S"]
        )
        if job["state"] != "pending" or not said.stdout.strip():
            return None
        if said.stdout.strip() != "N/A":
            slurms = datetime.fromisoformat(said.stdout.strip()).astimezone()
            apart = abs(datetime.fromisoformat(job["expected_start_at"]) - slurms)
            if apart <= timedelta(seconds=90):
                break
        await asyncio.sleep(1)
    return apart


@pytest.mark.slurm
async def test_a_job_waiting_for_cpus_shows_slurms_expected_start(on_cluster: OnCluster) -> None:
    # Two jobs fill the node's two CPUs; the third waits, and Slurm's backfill scheduler
    # estimates when it will start (every second on the development clusters, every 30 s
    # by default), which the next poll cycle records. Other tests' jobs on the same cluster
    # move that estimate, so the portal's figure is held to Slurm's own, not to a constant.
    script = "#!/bin/bash\n#SBATCH --time=3\n#SBATCH --cpus-per-task=1\nsleep 150\n"
    body = {"script": script, "project_id": on_cluster.project_id}
    ids: list[int] = []
    try:
        for _ in range(3):
            answer = await on_cluster.client.post(
                "/api/v1/jobs", json=body, headers=on_cluster.headers
            )
            assert answer.status_code == 201, answer.text
            ids.append(answer.json()["id"])
        waiting: dict[str, Any] = {}
        for _ in range(150):
            waiting = (
                await on_cluster.client.get(f"/api/v1/jobs/{ids[2]}", headers=on_cluster.headers)
            ).json()
            if waiting["expected_start_at"]:
                break
            await asyncio.sleep(0.5)
        assert waiting["state"] == "pending" and waiting["expected_start_at"], waiting
        submitted = datetime.fromisoformat(waiting["submitted_at"])
        assert submitted < datetime.fromisoformat(waiting["expected_start_at"])
        apart = await _apart_from_slurms_estimate(on_cluster, ids[2])
        assert apart is None or apart <= timedelta(seconds=90), apart
    finally:
        for job_id in ids:
            await on_cluster.client.post(
                f"/api/v1/jobs/{job_id}/cancel", headers=on_cluster.headers
            )
