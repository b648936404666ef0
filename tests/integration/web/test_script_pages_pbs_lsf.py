"""The "Submit a script" page's verdict on the real PBS and LSF clusters: a script's own
#PBS / #BSUB line the cluster would refuse, named with the choices and the scheduler's words."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from tests.factories import add_member, make_project, make_user
from tests.integration.api.conftest import serving
from tests.integration.web.conftest import sign_in
from tests.other_schedulers import clusters_file, scheduler_cluster
from tests.world import password_hash

GPU_JOBSCRIPT = Path(__file__).parents[2] / "fixtures" / "lsf" / "gpu-jobscript.sh"


async def _verdict(
    scheduler: str, db_url: str, session: AsyncSession, script: str, route: str = "preflight"
) -> str:
    cluster = scheduler_cluster(scheduler).name
    login = f"carol-{scheduler}"
    carol = await make_user(
        session, login, cluster_username="carol", cluster=cluster, password_hash=password_hash()
    )
    physics = await make_project(session, "physics", slurm_account="physics", cluster=cluster)
    await add_member(session, carol, physics)
    await session.commit()
    settings = Settings(
        env="dev",
        database_url=db_url,
        clusters_file=clusters_file(scheduler),
        run_poller_in_web=False,
    )
    async with serving(settings) as http:
        csrf = await sign_in(http, login)
        data = {"csrf_token": csrf, "project_id": str(physics.id), "script": script}
        response = await http.post(
            f"/submit/script/{route}", data=data, headers={"HX-Request": "true"}
        )
    assert response.status_code == 200, response.text
    return html.unescape(response.text)


@pytest.mark.lsf
async def test_the_lsf_verdict_on_the_seeds_gpu_jobscript_names_the_queue_line(
    db_url: str, session: AsyncSession
) -> None:
    shown = await _verdict("lsf", db_url, session, GPU_JOBSCRIPT.read_text())
    assert "This job would be refused:" in shown
    assert (
        "line 4: #BSUB -q gpu: this cluster has no queue gpu (it has: normal, short) "
        "(bsub: gpu: No such queue. Job not submitted.)"
    ) in shown


@pytest.mark.pbs
async def test_the_pbs_verdict_names_a_misspelt_resource_in_pbss_words(
    db_url: str, session: AsyncSession
) -> None:
    script = "#!/bin/bash\n#PBS -l walltim=01:00:00\nhostname\n"
    shown = await _verdict("pbs", db_url, session, script)
    assert "This job would be refused:" in shown
    assert (
        "line 2: PBS has no resource walltim (did you mean walltime?) "
        "(PBS says: qsub: Unknown resource Resource_List.walltim)"
    ) in shown


@pytest.mark.lsf
async def test_the_reading_of_a_script_on_lsf_is_bsubs(db_url: str, session: AsyncSession) -> None:
    shown = await _verdict("lsf", db_url, session, GPU_JOBSCRIPT.read_text(), "check")
    assert "What bsub will read" in shown and "sbatch" not in shown
    assert "<td>4</td><td><code>-q</code></td><td><code>gpu</code></td>" in shown
    assert "<td>11</td><td><code>-o</code></td><td><code>gpu_%J.out</code></td>" in shown


@pytest.mark.pbs
async def test_the_reading_of_a_script_on_pbs_is_qsubs(db_url: str, session: AsyncSession) -> None:
    script = "#!/bin/bash\n#PBS -q gpu\n#PBS -l walltime=00:05:00\nhostname\n#PBS -N late\n"
    shown = await _verdict("pbs", db_url, session, script, "check")
    assert "What qsub will read" in shown
    assert "<td>3</td><td><code>-l</code></td><td><code>walltime=00:05:00</code></td>" in shown
    assert "qsub ignores these lines because they come after the first command:" in shown
    assert "<code>#PBS -N late</code>" in shown
