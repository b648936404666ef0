"""Own scripts with ``#PBS`` and ``#BSUB`` lines through the API, on the real PBS and LSF
clusters: refused before submission in plain words with the scheduler's own, or run as written."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from tests.factories import add_member, make_project, make_user
from tests.integration.api.conftest import issue_token, serving
from tests.other_schedulers import clusters_file, scheduler_cluster

GPU_JOBSCRIPT = Path(__file__).parents[2] / "fixtures" / "lsf" / "gpu-jobscript.sh"


@dataclass
class OnCluster:
    client: httpx.AsyncClient
    headers: dict[str, str]
    project_id: int

    async def post(self, script: str) -> httpx.Response:
        body = {"script": script, "project_id": self.project_id}
        return await self.client.post("/api/v1/jobs", json=body, headers=self.headers)

    async def refusal(self, script: str) -> dict[str, Any]:
        response = await self.post(script)
        assert response.status_code == 422, response.text
        found: dict[str, Any] = response.json()
        return found

    async def finished(self, script: str) -> dict[str, Any]:
        response = await self.post(script)
        assert response.status_code == 201, response.text
        job_id = response.json()["id"]
        for _ in range(240):
            job: dict[str, Any] = (
                await self.client.get(f"/api/v1/jobs/{job_id}", headers=self.headers)
            ).json()
            if job["is_finished"]:
                return job
            await asyncio.sleep(0.5)
        raise AssertionError(f"job {job_id} did not finish")

    async def stdout(self, job: dict[str, Any]) -> str:
        path = f"/api/v1/jobs/{job['id']}/logs/stdout"
        response = await self.client.get(path, headers=self.headers)
        assert response.status_code == 200, response.text
        return str(response.json()["data"])


async def _on(scheduler: str, db_url: str, session: AsyncSession) -> AsyncIterator[OnCluster]:
    cluster = scheduler_cluster(scheduler).name
    carol = await make_user(session, "carol", cluster_username="carol", cluster=cluster)
    physics = await make_project(session, "physics", slurm_account="physics", cluster=cluster)
    await add_member(session, carol, physics)
    await session.commit()
    headers = await issue_token(session, carol)
    settings = Settings(
        env="dev",
        database_url=db_url,
        clusters_file=clusters_file(scheduler),
        run_poller_in_web=True,
        poll_interval=1,
    )
    async with serving(settings) as http:
        yield OnCluster(http, headers, physics.id)


@pytest.fixture
async def on_pbs(db_url: str, session: AsyncSession) -> AsyncIterator[OnCluster]:
    async for on in _on("pbs", db_url, session):
        yield on


@pytest.fixture
async def on_lsf(db_url: str, session: AsyncSession) -> AsyncIterator[OnCluster]:
    async for on in _on("lsf", db_url, session):
        yield on


@pytest.mark.lsf
async def test_the_seeds_gpu_jobscript_is_refused_on_lsf_without_a_gpu_queue(
    on_lsf: OnCluster,
) -> None:
    refusal = await on_lsf.refusal(GPU_JOBSCRIPT.read_text())
    said = (
        "line 4: #BSUB -q gpu: this cluster has no queue gpu (it has: normal, short) "
        "(bsub: gpu: No such queue. Job not submitted.)"
    )
    assert refusal["fields"] == {"script": said}
    assert refusal["detail"] == f"The cluster would refuse this job: script: {said}"


@pytest.mark.lsf
@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "#BSUB -gpu num=1",
            "bsub would refuse this script: line 2: this cluster's bsub (OpenLava 2.2) has no "
            "-gpu, an option of newer LSF (bsub: illegal option -- gpu)",
        ),
        (
            "#BSUB -Z 4",
            "bsub would refuse this script: line 2: bsub has no option -Z "
            "(bsub: illegal option -- Z)",
        ),
        (
            "#BSUB -n 8",
            "The cluster would refuse this job: script: line 2: #BSUB -n 8: 8 cores asked, the "
            "queue allows at most 2 (bsub: Too many processors requested. Job not submitted.)",
        ),
    ],
)
async def test_a_bsub_line_this_cluster_refuses_is_named_before_bsub(
    on_lsf: OnCluster, line: str, said: str
) -> None:
    refusal = await on_lsf.refusal(f"#!/bin/bash\n{line}\nhostname\n")
    assert refusal["detail"] == said


@pytest.mark.lsf
async def test_a_bsub_script_runs_as_written_with_its_own_output_file(on_lsf: OnCluster) -> None:
    tag = uuid.uuid4().hex[:8]
    script = (
        f"#!/bin/bash\n#BSUB -J own_{tag}\n#BSUB -q short\n#BSUB -n 1\n#BSUB -W 5\n"
        f'#BSUB -o own_{tag}_%J.out\n\necho "hello from $LSB_JOBID"\n'
    )
    job = await on_lsf.finished(script)
    assert (job["name"], job["partition"], job["state"]) == (f"own_{tag}", "short", "completed")
    lsf_id = job["slurm_job_id"]
    # The script's own file (the home is shared with the cluster), which the portal reads too.
    assert Path(f"/home/carol/own_{tag}_{lsf_id}.out").read_text() == f"hello from {lsf_id}\n"
    assert await on_lsf.stdout(job) == f"hello from {lsf_id}\n"


PBS_GPU = """#!/bin/bash
#PBS -N gpu_{tag}
#PBS -q gpu
#PBS -l select=1:ncpus=1:mem=100mb
#PBS -l walltime=00:05:00
#PBS -o pbs_{tag}.out
#PBS -j oe

echo "queue $PBS_QUEUE"
"""


@pytest.mark.pbs
async def test_a_pbs_script_for_the_gpu_queue_runs_as_written(on_pbs: OnCluster) -> None:
    tag = uuid.uuid4().hex[:8]
    job = await on_pbs.finished(PBS_GPU.format(tag=tag))
    assert (job["name"], job["partition"], job["state"]) == (f"gpu_{tag}", "gpu", "completed")
    assert Path(f"/home/carol/pbs_{tag}.out").read_text() == "queue gpu\n"
    assert await on_pbs.stdout(job) == "queue gpu\n"


@pytest.mark.pbs
@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "#PBS -l walltim=01:00:00",
            "qsub would refuse this script: line 2: PBS has no resource walltim (did you mean "
            "walltime?) (PBS says: qsub: Unknown resource Resource_List.walltim)",
        ),
        (
            "#PBS -Q gpu",
            "qsub would refuse this script: line 2: qsub has no option -Q "
            "(PBS says: qsub: invalid option -- 'Q')",
        ),
        (
            "#PBS -q gpux",
            "The cluster would refuse this job: script: line 2: #PBS -q gpux: queue gpux does "
            "not exist (this cluster has: gpu, workq) (PBS says: qsub: Unknown queue)",
        ),
    ],
)
async def test_a_pbs_line_this_cluster_refuses_is_named_before_qsub(
    on_pbs: OnCluster, line: str, said: str
) -> None:
    refusal = await on_pbs.refusal(f"#!/bin/bash\n{line}\nhostname\n")
    assert refusal["detail"] == said


@pytest.mark.pbs
async def test_too_many_cpus_in_a_chunk_are_refused_with_pbss_words(on_pbs: OnCluster) -> None:
    refusal = await on_pbs.refusal("#!/bin/bash\n#PBS -l select=1:ncpus=64\nhostname\n")
    detail = refusal["detail"]
    assert detail.startswith(
        "The cluster would refuse this job: script: line 2: #PBS -l select=1:ncpus=64: 64 CPUs "
        "in one chunk, but no node has more than "
    ), detail
    assert "(PBS says: Can Never Run: Insufficient amount of resource: ncpus (R: 64 A: " in detail


SWEEPS = {
    "pbs": """#!/bin/bash
#PBS -N sweep_{tag}
#PBS -J 1-3
#PBS -l walltime=00:02:00
i=$PBS_ARRAY_INDEX
[ "$i" != 2 ] || [ -e "$HOME/retried-{tag}" ] || {{ touch "$HOME/retried-{tag}"; exit 3; }}
""",
    "lsf": """#!/bin/bash
#BSUB -J sweep_{tag}[1-3]
#BSUB -W 2
#BSUB -o sweep_{tag}_%J_%I.out
i=$LSB_JOBINDEX
echo "task $i"
[ "$i" != 2 ] || [ -e "$HOME/retried-{tag}" ] || {{ touch "$HOME/retried-{tag}"; exit 3; }}
""",
}


async def _tasks(on: OnCluster, job_id: int) -> list[tuple[int, str]]:
    response = await on.client.get(f"/api/v1/jobs/{job_id}/tasks", headers=on.headers)
    assert response.status_code == 200, response.text
    return [(t["array_task_id"], t["state"]) for t in response.json()["items"]]


async def _retry_of_the_failing_task(on: OnCluster, scheduler: str, retried_as: str) -> None:
    tag = uuid.uuid4().hex[:8]
    array = await on.finished(SWEEPS[scheduler].format(tag=tag))
    assert array["state"] == "failed", array
    assert await _tasks(on, array["id"]) == [(1, "completed"), (2, "failed"), (3, "completed")]
    if scheduler == "lsf":  # each task's own file, named by the script's -o
        await _each_task_log(on, array["id"])
    retry = await on.client.post(f"/api/v1/jobs/{array['id']}/retry-failed", headers=on.headers)
    assert retry.status_code == 201, retry.text
    assert (retry.json()["array_spec"], retry.json()["retry_of_id"]) == (retried_as, array["id"])
    job_id = retry.json()["id"]
    for _ in range(240):
        rerun = (await on.client.get(f"/api/v1/jobs/{job_id}", headers=on.headers)).json()
        if rerun["is_finished"]:
            break
        await asyncio.sleep(0.5)
    assert rerun["state"] == "completed", rerun
    assert await _tasks(on, job_id) == [(2, "completed")]


async def _each_task_log(on: OnCluster, array_id: int) -> None:
    response = await on.client.get(f"/api/v1/jobs/{array_id}/tasks", headers=on.headers)
    for task in response.json()["items"]:
        assert await on.stdout(task) == f"task {task['array_task_id']}\n", task


@pytest.mark.pbs
async def test_a_pbs_array_retries_its_failed_task_as_a_stepped_range(on_pbs: OnCluster) -> None:
    await _retry_of_the_failing_task(on_pbs, "pbs", "2-3:2")


@pytest.mark.lsf
async def test_an_lsf_array_retries_exactly_its_failed_task(on_lsf: OnCluster) -> None:
    await _retry_of_the_failing_task(on_lsf, "lsf", "2")


@pytest.mark.pbs
async def test_a_pbs_cluster_says_it_has_queues_and_no_start_estimates(on_pbs: OnCluster) -> None:
    response = await on_pbs.client.get("/api/v1/clusters", headers=on_pbs.headers)
    assert response.status_code == 200, response.text
    [cluster] = response.json()
    assert (cluster["scheduler"], cluster["username"]) == ("pbs", "carol")
    said = cluster["capabilities"]
    assert (said["partition_word"], said["expected_start"], said["rest_api"]) == (
        "queue",
        False,
        False,
    )
    assert said["array_lists"] is False  # -J takes one range with a step


@pytest.mark.lsf
async def test_an_lsf_cluster_says_what_bsub_cannot_do(on_lsf: OnCluster) -> None:
    name = scheduler_cluster("lsf").name
    response = await on_lsf.client.get(f"/api/v1/clusters/{name}", headers=on_lsf.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["scheduler"] == "lsf"
    said = body["capabilities"]
    assert (said["test_submission"], said["script_arguments"], said["expected_start"]) == (
        False,
        False,
        False,
    )
    assert {queue["name"] for queue in body["partitions"]} == {"normal", "short"}
