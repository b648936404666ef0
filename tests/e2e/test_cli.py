"""The installed ``hpcportal`` client against a live portal on the development cluster."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.cli.exit_codes import ExitCode
from app.db import create_engine, create_sessionmaker
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.e2e.conftest import LiveServer
from tests.factories import seeded_user_and_project

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
HPCPORTAL = str(Path(sys.executable).with_name("hpcportal"))
# Other work shares the cluster's two CPUs, so a job may wait in the queue for a while.
JOB_DEADLINE = 300.0


async def _alice_token(database_url: str) -> tuple[str, int]:
    engine = create_engine(database_url)
    try:
        async with create_sessionmaker(engine)() as session:
            alice, project = await seeded_user_and_project(session)
            created = await tokens.create_token(
                session,
                await actor_for(session, alice),
                name="cli-e2e",
                scopes=["submit"],
                lifetime_days=1,
            )
            await session.commit()
            return created.secret, project.id
    finally:
        await engine.dispose()


class Portal:
    """The live portal as alice: the CLI's environment and a plain API client."""

    def __init__(self, server: LiveServer, token: str, project_id: int, home: Path) -> None:
        self.project_id = project_id
        self.env = {
            **os.environ,
            "HPCPORTAL_URL": server.base_url,
            "HPCPORTAL_TOKEN": token,
            "HPCPORTAL_CONFIG": str(home / "absent.toml"),
        }
        self.api = httpx.Client(
            base_url=f"{server.base_url}/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        self.submitted: list[int] = []

    def cli(
        self, *args: str, timeout: float = JOB_DEADLINE + 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [HPCPORTAL, *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def submit_script(self, script: str, name: str, key: str | None = None) -> dict[str, Any]:
        body = {"script": script, "name": name, "project_id": self.project_id}
        body["time_limit_minutes"] = 5
        headers = {"Idempotency-Key": key} if key else {}
        response = self.api.post("/jobs", json=body, headers=headers)
        assert response.status_code == 201, response.text
        job: dict[str, Any] = response.json()
        self.submitted.append(job["id"])
        return job

    def job(self, job_id: int) -> dict[str, Any]:
        found: dict[str, Any] = self.api.get(f"/jobs/{job_id}").json()
        return found

    def wait_for_state(self, job_id: int, wanted: set[str]) -> dict[str, Any]:
        deadline = time.monotonic() + JOB_DEADLINE
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if job["state"] in wanted:
                return job
            if job["is_finished"]:
                pytest.fail(f"job {job_id} ended {job['state']} before reaching {wanted}")
            time.sleep(0.5)
        pytest.fail(f"job {job_id} did not reach {wanted} within {JOB_DEADLINE} s")

    def cancel_leftovers(self) -> None:
        for job_id in self.submitted:
            if not self.job(job_id)["is_finished"]:
                self.api.post(f"/jobs/{job_id}/cancel")


@pytest.fixture(scope="module")
def portal(live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Portal]:
    token, project_id = asyncio.run(_alice_token(live_server.database_url))
    alice = Portal(live_server, token, project_id, tmp_path_factory.mktemp("cli-home"))
    try:
        yield alice
    finally:
        alice.cancel_leftovers()
        alice.api.close()


def test_templates_list_as_json(portal: Portal) -> None:
    result = portal.cli("templates", "list", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    names = {item["name"] for item in json.loads(result.stdout)["items"]}
    assert "Hello world" in names


def test_submit_hello_world_waits_then_logs_show_its_output(portal: Portal) -> None:
    args = ["submit", "Hello world", "-p", "message=from the CLI", "-p", "seconds=1"]
    result = portal.cli(*args, "--wait", "--json", "--timeout", str(JOB_DEADLINE))
    assert result.returncode == ExitCode.OK, result.stderr
    job = json.loads(result.stdout)
    portal.submitted.append(job["id"])
    assert (job["state"], job["exit_code"]) == ("completed", 0)
    logs = portal.cli("logs", str(job["id"]))
    assert logs.returncode == ExitCode.OK, logs.stderr
    assert "Message: from the CLI" in logs.stdout
    assert logs.stdout.rstrip().endswith("Done.")


def test_follow_prints_lines_while_the_job_runs_and_ends_with_it(portal: Portal) -> None:
    script = '#!/bin/bash\nfor i in 1 2 3 4 5; do echo "tick $i"; sleep 2; done\n'
    job = portal.submit_script(script, "ticks")
    follow = subprocess.Popen(
        [HPCPORTAL, "logs", str(job["id"]), "--follow"],
        env=portal.env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert follow.stdout is not None
        first = follow.stdout.readline()
        # The portal may not have seen the job start yet; it must not have seen it end.
        finished_at_first_line = portal.job(job["id"])["is_finished"]
        rest = follow.stdout.read()
        assert follow.wait(timeout=JOB_DEADLINE) == ExitCode.OK
    finally:
        follow.kill()
    assert first == "tick 1\n"
    assert finished_at_first_line is False
    assert first + rest == "".join(f"tick {i}\n" for i in range(1, 6))
    assert portal.job(job["id"])["state"] == "completed"


def test_failed_job_gives_the_failed_exit_code_and_its_own_exit_code(portal: Portal) -> None:
    job = portal.submit_script("#!/bin/bash\necho failing\nexit 3\n", "exit-three")
    waited = portal.cli("wait", str(job["id"]), "--timeout", str(JOB_DEADLINE))
    assert waited.returncode == ExitCode.JOB_FAILED, waited.stderr
    shown = portal.cli("jobs", "show", str(job["id"]), "--json")
    assert shown.returncode == ExitCode.OK, shown.stderr
    assert (json.loads(shown.stdout)["state"], json.loads(shown.stdout)["exit_code"]) == (
        "failed",
        3,
    )


def test_cancel_of_a_running_job(portal: Portal) -> None:
    job = portal.submit_script("#!/bin/bash\nsleep 240\n", "to-cancel")
    portal.wait_for_state(job["id"], {"running"})
    cancelled = portal.cli("jobs", "cancel", str(job["id"]))
    assert cancelled.returncode == ExitCode.OK, cancelled.stderr
    waited = portal.cli("wait", str(job["id"]), "--json", "--timeout", "120")
    assert waited.returncode == ExitCode.JOB_CANCELLED, waited.stderr
    assert json.loads(waited.stdout)["state"] == "cancelled"


def test_bad_token_gives_the_auth_exit_code(portal: Portal) -> None:
    env = {**portal.env, "HPCPORTAL_TOKEN": "hpc_" + "x" * 43}
    result = subprocess.run([HPCPORTAL, "me"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == ExitCode.AUTH
    assert "invalid, expired or revoked" in result.stderr


def _sacct_comments(since: str) -> list[str]:
    argv = ["sacct", "-a", "-X", "-n", "-P", "--format=Comment", f"--starttime={since}"]
    output = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return output.splitlines()


def _sacct_count_when_recorded(since: str, comment: str) -> int:
    """How many accounting records carry ``comment``, once slurmdbd has written any."""
    deadline = time.monotonic() + 60
    while (count := _sacct_comments(since).count(comment)) == 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    return count


def test_concurrent_submits_with_one_key_make_one_slurm_job(portal: Portal) -> None:
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 60))
    key = f"e2e-{uuid.uuid4()}"
    with ThreadPoolExecutor(max_workers=10) as pool:
        jobs = list(
            pool.map(
                lambda _: portal.submit_script("#!/bin/bash\ntrue\n", "idempotent", key),
                range(10),
            )
        )
    assert len({job["id"] for job in jobs}) == 1
    job = portal.wait_for_state(jobs[0]["id"], {"completed"})
    assert _sacct_count_when_recorded(since, job["uuid"]) == 1


TUTORIAL = """#!/bin/bash
#SBATCH --job-name=cli-{tag}
#SBATCH --time=00:10:00
#SBATCH --mem=200M
#SBATCH --output={folder}/%x-%j.out

echo "first=$1 second=$2 count=$#"
"""


def test_submit_of_a_script_file_runs_it_with_its_arguments_and_overrides(
    portal: Portal, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    folder = f"/home/alice/portal-cli-{tag}/logs"  # does not exist yet
    script = tmp_path / "job.sh"
    script.write_text(TUTORIAL.format(tag=tag, folder=folder))
    result = portal.cli(
        "submit",
        str(script),
        "-t",
        "5",
        "--mem",
        "300M",
        "--wait",
        "--json",
        "--timeout",
        str(JOB_DEADLINE),
        "--",
        "two words",
        "$(id)",
    )
    assert result.returncode == ExitCode.OK, result.stderr
    job = json.loads(result.stdout)
    portal.submitted.append(job["id"])
    assert (job["name"], job["state"]) == (f"cli-{tag}", "completed")
    logs = portal.cli("logs", str(job["id"]))
    assert logs.stdout == "first=two words second=$(id) count=2\n"


def test_submit_of_a_script_with_a_typo_names_the_option_and_submits_nothing(
    portal: Portal, tmp_path: Path
) -> None:
    script = tmp_path / "typo.sh"
    script.write_text("#!/bin/bash\n#SBATCH --ntaks-per-node=4\nsrun hostname\n")
    result = portal.cli("submit", str(script))
    assert result.returncode == ExitCode.ERROR
    assert "line 2: sbatch has no option --ntaks-per-node" in result.stderr
    assert "did you mean --ntasks-per-node?" in result.stderr


@pytest.mark.parametrize(
    ("directive", "plain", "slurm"),
    [
        ("--qos=high", "qos: QOS high does not exist or is not yours to use (yours: normal)", None),
        (
            "--cpus-per-task=64",
            "No node in the partition has the requested CPUs, memory or GPUs.",
            "Slurm said: sbatch: error: Batch job submission failed: More processors requested"
            " than permitted",
        ),
    ],
)
def test_submit_of_a_script_the_cluster_refuses_prints_why_and_slurms_words(
    portal: Portal, tmp_path: Path, directive: str, plain: str, slurm: str | None
) -> None:
    script = tmp_path / "elsewhere.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH {directive}\n#SBATCH --time=5\nhostname\n")
    result = portal.cli("submit", str(script))
    assert result.returncode == ExitCode.ERROR
    assert plain in result.stderr
    if slurm is not None:
        assert slurm in result.stderr


ENDINGS = {
    "exit3.sh": (
        "#!/bin/bash\n#SBATCH --time=2\necho failing\nexit 3\n",
        ExitCode.JOB_FAILED,
        "exit_code",
        "The script exited with code 3: a command in the script failed. Check the error output.",
    ),
    # tail keeps the 300 MB "line" in memory while it waits for more input.
    "oom.sh": (
        "#!/bin/bash\n#SBATCH --mem=100M\n#SBATCH --time=2\n"
        "(head -c 300M /dev/zero; sleep 60) | tail > /dev/null\n",
        ExitCode.JOB_FAILED,
        "out_of_memory",
        "Killed for using more memory than requested (used ",
    ),
    "timeout.sh": (
        "#!/bin/bash\n#SBATCH --time=1\nsleep 600\n",
        ExitCode.JOB_TIMEOUT,
        "time_limit",
        "Ran out of time: its time limit (0:01:00) was reached.",
    ),
}


@pytest.fixture(scope="module")
def endings(
    portal: Portal, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str]]:
    """The CLI's answers to submitting every script of ``ENDINGS``, all at once."""
    folder = tmp_path_factory.mktemp("endings")
    answers: dict[str, subprocess.CompletedProcess[str]] = {}
    for name, (script, *_) in ENDINGS.items():
        (folder / name).write_text(script)
        answers[name] = portal.cli("submit", str(folder / name), "--json")
        if answers[name].returncode == ExitCode.OK:
            portal.submitted.append(json.loads(answers[name].stdout)["id"])
    return answers


@pytest.fixture(scope="module", autouse=True)
def submit_endings_early(request: pytest.FixtureRequest) -> None:
    """Before the module's first test: the time-limited job's minute then passes meanwhile."""
    why = "test_why_a_script_ended_is_said_by_the_cli_the_api_and_the_job_page"
    if any(item.originalname == why for item in request.session.items):
        request.getfixturevalue("endings")


@pytest.mark.browser
def test_why_a_script_ended_is_said_by_the_cli_the_api_and_the_job_page(
    portal: Portal,
    endings: dict[str, subprocess.CompletedProcess[str]],
    page: Any,
    screenshots: Path,
) -> None:
    from playwright.sync_api import expect

    from tests.e2e.test_jobs_flow import shot, sign_in

    submitted: dict[str, int] = {}
    for name, result in endings.items():
        assert result.returncode == ExitCode.OK, result.stderr
        submitted[name] = json.loads(result.stdout)["id"]
    sign_in(page)
    for name, (_, exit_code, cause, sentence) in ENDINGS.items():
        job_id = submitted[name]
        waited = portal.cli("wait", str(job_id), "--timeout", str(JOB_DEADLINE))
        assert waited.returncode == exit_code, waited.stdout + waited.stderr
        assert f"  {cause}: {sentence}" in waited.stdout
        job = portal.job(job_id)
        assert (job["end_cause"], job["end_explanation"].startswith(sentence)) == (cause, True)
        page.goto(f"/jobs/{job_id}")
        expect(page.locator("p.reason")).to_contain_text(f"Outcome: {sentence}")
        shot(page, screenshots, f"script-ended-{cause}")
