"""Attack: a manager changes a project template between a member's preview and their
submit, so the member runs a script they never saw. The submit form names the version it
previewed; the job runs that version's script, on the real cluster."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.faults.conftest import cancel_slurm_jobs
from tests.portal import PortalProcess
from tests.security.conftest import api_token, project_and_template, run_sql, signed_in

pytestmark = [pytest.mark.slurm]
SHOWN = "#!/bin/bash\necho previewed {{ message }}\n"
SWAPPED = "#!/bin/bash\necho swapped-in-after-the-preview {{ message }}\n"


def _editor(csrf: str, name: str, script: str, project_id: int) -> dict[str, str]:
    return {
        "csrf_token": csrf,
        "name": name,
        "scope": "project",
        "project_id": str(project_id),
        "job_name": "pinned",
        "script": script,
        "action": "save",
        "params-0-name": "message",
        "params-0-label": "Message",
        "params-0-type": "text",
        "params-0-default": "hi",
        "params-0-required": "on",
        "params-1-name": "output",
        "params-1-label": "Output",
        "params-1-type": "path",
        "params-1-maps_to": "stdout",
        "params-1-default": "/scratch/%u/%x-%j.out",
    }


@pytest.fixture
def slurm_ids() -> Iterator[list[str]]:
    found: list[str] = []
    yield found
    cancel_slurm_jobs(found)


def test_submit_runs_the_version_that_was_previewed(
    live_portal: PortalProcess, slurm_ids: list[str]
) -> None:
    project_id, _ = project_and_template(live_portal, "physics", "Hello world")
    name = f"Pinned {uuid.uuid4().hex[:6]}"
    with signed_in(live_portal, "alice") as manager, signed_in(live_portal, "carol") as member:
        created = manager.client.post(
            "/templates/new", data=_editor(manager.csrf, name, SHOWN, project_id)
        )
        assert created.status_code == 303, created.text[:500]
        template_id = int(created.headers["location"].rstrip("/").rsplit("/", 1)[1])
        page = member.client.get(f"/templates/{template_id}/submit")
        assert "echo previewed" in page.text
        pinned = re.search(r'name="template_version" value="(\d+)"', page.text)
        assert pinned
        edited = manager.client.post(
            f"/templates/{template_id}/edit", data=_editor(manager.csrf, name, SWAPPED, project_id)
        )
        assert edited.status_code == 303
        form = {
            "csrf_token": member.csrf,
            "template_version": pinned.group(1),
            "account": "physics",
            "message": "hello",
            "output": "/scratch/%u/%x-%j.out",
            "job_name": "pinned",
        }
        answer = member.client.post(f"/templates/{template_id}/submit", data=form)
        assert answer.status_code == 303, answer.text[:300]
    job_id = int(answer.headers["location"].rsplit("/", 1)[1])
    headers = {"Authorization": f"Bearer {api_token(live_portal, 'carol', ['read'])}"}
    with httpx.Client(base_url=live_portal.base_url, headers=headers) as api:
        job = api.get(f"/api/v1/jobs/{job_id}").json()
    slurm_ids.append(str(job["slurm_job_id"]))
    rows = run_sql(
        live_portal,
        "SELECT j.script, v.version FROM jobs j JOIN template_versions v "
        "ON v.id = j.template_version_id WHERE j.id = :id",
        id=job_id,
    )
    script, version = rows[0]
    assert version == int(pinned.group(1)) == 1
    assert "echo previewed" in str(script) and "swapped" not in str(script)
