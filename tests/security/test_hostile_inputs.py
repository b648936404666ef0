"""Shell metacharacters, #SBATCH lines, NUL, overlong and look-alike text on the real cluster.

Each payload tries to create a marker file. Through the API and the web submit form it goes
into a template parameter, the job name, the partition and the output path. Every attempt
is either refused with a 422 naming the field, or runs as a job whose output shows the text
literally and which Slurm accounts to alice's account (physics) only. At the end no marker
exists, neither for root nor for alice. Environment values take the scheduler's own path
(``env KEY=VALUE sbatch`` over SSH) and are checked there directly.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobSpec
from tests.faults.conftest import cancel_slurm_jobs
from tests.portal import CLUSTERS_FILE, PortalProcess, wait_for
from tests.security.conftest import api_token, project_and_template, signed_in

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
RUN_TIMEOUT = 150.0


def payloads(marker: str) -> dict[str, str]:
    return {
        "substitution": f"$(touch {marker})",
        "backticks": f"`touch {marker}`",
        "separators": f"x; touch {marker} && touch {marker} | touch {marker}",
        "sbatch line": f"x\n#SBATCH --account=chemistry\ntouch {marker}",
        "nul": f"x\x00$(touch {marker})",
        "overlong": "A" * 300_000 + f"$(touch {marker})",
        "rtl override": f"\u202etxt.sh; $(touch {marker})",
        "full width": f"\uff04\uff08touch {marker}\uff09",
        "homoglyph": f"\u0430lice $(touch {marker})",
    }


@dataclass
class Attempts:
    marker: str
    # portal job id -> the message its output must show literally (None: not a message attack)
    accepted: dict[int, str | None] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    slurm_ids: list[str] = field(default_factory=list)


@pytest.fixture
def attempts() -> Iterator[Attempts]:
    found = Attempts(marker=f"/tmp/pwned-{uuid.uuid4().hex}")
    try:
        yield found
    finally:
        cancel_slurm_jobs(found.slurm_ids)
        Path(found.marker).unlink(missing_ok=True)


def _judge(
    response: httpx.Response,
    fields: set[str],
    text: str,
    attempts: Attempts,
    message: str | None = None,
) -> None:
    """A 422 must name one of ``fields``; anything else must be an accepted job."""
    if response.status_code == 422:
        is_json = response.headers["content-type"].startswith("application/json")
        named = set(response.json().get("fields") or {}) if is_json else _named_in_page(response)
        assert named & fields, f"422 names {named}, expected one of {fields}"
        attempts.refused.append(text)
        return
    assert response.status_code in (201, 303), (response.status_code, response.text[:300])
    job_id = response.json()["id"] if response.status_code == 201 else _job_from(response)
    attempts.accepted[job_id] = message


def _named_in_page(response: httpx.Response) -> set[str]:
    return set(re.findall(r'id="([a-z_]+)-error"', response.text))


def _job_from(response: httpx.Response) -> int:
    return int(response.headers["location"].rstrip("/").rsplit("/", 1)[1])


def _api_attacks(
    portal: PortalProcess, attempts: Attempts, project_id: int, template_id: int
) -> None:
    headers = {"Authorization": f"Bearer {api_token(portal, 'alice')}"}
    with httpx.Client(base_url=portal.base_url, headers=headers, timeout=60) as api:
        for text in payloads(attempts.marker).values():
            parameters = {"message": text, "seconds": 0}
            body = {"template_id": template_id, "project_id": project_id, "parameters": parameters}
            _judge(api.post("/api/v1/jobs", json=body), {"message"}, text, attempts, text)
            raw = {"script": "#!/bin/bash\ntrue\n", "project_id": project_id, "name": text[:200]}
            _judge(api.post("/api/v1/jobs", json=raw), {"name"}, text, attempts)
            raw = {
                "script": "#!/bin/bash\ntrue\n",
                "project_id": project_id,
                "partition": text[:64],
            }
            _judge(api.post("/api/v1/jobs", json=raw), {"partition"}, text, attempts)
            path = {"output": f"~/portal-jobs/{text[:200]}-%j.out", "seconds": 0}
            body = {"template_id": template_id, "project_id": project_id, "parameters": path}
            _judge(api.post("/api/v1/jobs", json=body), {"output"}, text, attempts)


def _web_attacks(portal: PortalProcess, attempts: Attempts, template_id: int) -> None:
    with signed_in(portal, "alice") as web:
        for text in payloads(attempts.marker).values():
            for name, fields in (("message", {"message"}), ("job_name", {"job_name"})):
                form = {
                    "csrf_token": web.csrf,
                    "account": "physics",
                    "message": "hello",
                    "seconds": "0",
                    "partition": "debug",
                    "time_limit": "0:02:00",
                    "output": "~/portal-jobs/%x-%j.out",
                    "job_name": "hostile",
                    name: text,
                }
                answer = web.client.post(f"/templates/{template_id}/submit", data=form)
                _judge(answer, fields, text, attempts, form["message"])


def _wait_finished(api: httpx.Client, job_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.get(f"/api/v1/jobs/{job_id}").json()
        if job["is_finished"]:
            return job
        time.sleep(1)
    raise AssertionError(f"job {job_id} did not finish in {RUN_TIMEOUT:.0f} s")


def _check_ran_literally(portal: PortalProcess, attempts: Attempts) -> None:
    headers = {"Authorization": f"Bearer {api_token(portal, 'alice', ['read'])}"}
    with httpx.Client(base_url=portal.base_url, headers=headers, timeout=60) as api:
        for job_id in attempts.accepted:
            job = api.get(f"/api/v1/jobs/{job_id}").json()
            if job["slurm_job_id"]:
                attempts.slurm_ids.append(str(job["slurm_job_id"]))
        for job_id, text in attempts.accepted.items():
            job = _wait_finished(api, job_id)
            if job["state"] == "submit_failed":
                continue
            assert _account(str(job["slurm_job_id"])) == "physics"
            if text is not None:
                log = api.get(f"/api/v1/jobs/{job_id}/logs/stdout").json()["data"]
                assert f"Message: {text}\n" in log, (text[:80], log[:300])


def _account(slurm_job_id: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = subprocess.run(
            ["sacct", "-X", "-n", "-P", "-o", "Account", "-j", slurm_job_id],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        if out:
            return out[0]
        time.sleep(1)
    raise AssertionError(f"no accounting record for {slurm_job_id}")


def _read(path: str) -> str:
    return Path(path).read_text() if Path(path).exists() else ""


def _assert_no_marker(marker: str) -> None:
    assert not Path(marker).exists(), "a payload was executed"
    as_alice = subprocess.run(["runuser", "-u", "alice", "--", "test", "-e", marker], check=False)
    assert as_alice.returncode == 1, "a payload was executed as alice"


def test_hostile_text_never_executes_nor_changes_the_account(
    live_portal: PortalProcess, attempts: Attempts
) -> None:
    project_id, template_id = project_and_template(live_portal, "physics", "Hello world")
    _api_attacks(live_portal, attempts, project_id, template_id)
    _web_attacks(live_portal, attempts, template_id)
    _check_ran_literally(live_portal, attempts)
    _assert_no_marker(attempts.marker)
    # Not only refusals: literal text did reach a running job through both surfaces.
    assert attempts.accepted and attempts.refused
    print(f"\nhostile inputs: accepted={len(attempts.accepted)} refused={len(attempts.refused)}")


def test_environment_values_reach_the_job_literally(attempts: Attempts) -> None:
    config = load_clusters(CLUSTERS_FILE)["testcluster"]
    adapter = build_adapter(config)
    hostile = payloads(attempts.marker).values()
    # NUL cannot be in an environment value and sbatch's argv has a length limit.
    texts = {f"V{i}": t for i, t in enumerate(hostile) if "\x00" not in t and len(t) < 1000}
    script = "#!/bin/bash\n" + "".join(f'printf "%s\\n" "${name}"\n' for name in texts)
    out = f"/home/alice/portal-jobs/env-{uuid.uuid4().hex}.out"
    spec = JobSpec(
        script=script,
        name="env-literal",
        account="physics",
        time_limit=2,
        stdout=out,
        environment=texts,
    )

    async def submit() -> str:
        try:
            # Preflight creates the log folder as alice, as every portal submission does.
            await adapter.preflight(spec, "alice")
            return await adapter.submit(spec, "alice")
        finally:
            await adapter.close()

    job_id = asyncio.run(submit())
    attempts.slurm_ids.append(job_id)
    expected = "".join(f"{t}\n" for t in texts.values())
    wait_for(lambda: _read(out) == expected, RUN_TIMEOUT, "the job's output")
    assert _account(job_id) == "physics"
    _assert_no_marker(attempts.marker)
