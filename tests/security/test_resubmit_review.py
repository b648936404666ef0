"""Attack: resubmit a colleague's job, so that their script runs under your account unseen.

The resubmit page shows the script and its values and says whose it is; a POST without the
digest of that script is refused with a 403, on the web and the API; with it the copy runs
as the person who resubmitted.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from tests.faults.conftest import cancel_slurm_jobs
from tests.portal import PortalProcess, wait_for
from tests.security.conftest import api_token, project_and_template, signed_in

pytestmark = [pytest.mark.slurm]
REFUSAL = "This job is someone else&#39;s: resubmitting runs its script as you."


@pytest.fixture
def slurm_ids() -> Iterator[list[str]]:
    found: list[str] = []
    yield found
    cancel_slurm_jobs(found)


def _alices_job(portal: PortalProcess, slurm_ids: list[str]) -> int:
    project_id, template_id = project_and_template(portal, "physics", "Hello world")
    body = {
        "template_id": template_id,
        "project_id": project_id,
        "parameters": {
            "message": "alice's $(secret)",
            "seconds": 0,
            "job_name": "review-me",
            # %u: whoever runs a copy writes to their own scratch folder.
            "output": "/scratch/%u/%x-%j.out",
        },
    }
    headers = {"Authorization": f"Bearer {api_token(portal, 'alice')}"}
    with httpx.Client(base_url=portal.base_url, headers=headers, timeout=60) as api:
        job = api.post("/api/v1/jobs", json=body).json()
    slurm_ids.append(str(job["slurm_job_id"]))
    return int(job["id"])


def test_resubmitting_a_colleagues_job_shows_the_script_and_needs_it_reviewed(
    live_portal: PortalProcess, slurm_ids: list[str]
) -> None:
    job_id = _alices_job(live_portal, slurm_ids)
    with signed_in(live_portal, "carol") as web:
        form = web.client.get(f"/jobs/{job_id}/resubmit")
        assert form.status_code == 200
        assert 'id="not-own-notice"' in form.text
        assert "echo &#34;Message: &#34;&#34;${PORTAL_PARAM_message}&#34;" in form.text
        assert "alice&#39;s $(secret)" in form.text
        digest = re.search(r'name="script_digest" value="([0-9a-f]{64})"', form.text)
        assert digest
        unseen = web.client.post(
            f"/jobs/{job_id}/resubmit", data={"csrf_token": web.csrf, "name": "copy"}
        )
        assert unseen.status_code == 403 and REFUSAL in unseen.text
        reviewed = web.client.post(
            f"/jobs/{job_id}/resubmit",
            data={"csrf_token": web.csrf, "name": "copy", "script_digest": digest.group(1)},
        )
        assert reviewed.status_code == 303, re.findall(
            r'class="form-error"[^>]*>(.*?)</div>', reviewed.text, re.S
        )
    copy_id = int(reviewed.headers["location"].rsplit("/", 1)[1])
    headers = {"Authorization": f"Bearer {api_token(live_portal, 'carol', ['read'])}"}
    with httpx.Client(base_url=live_portal.base_url, headers=headers) as api:
        copy = api.get(f"/api/v1/jobs/{copy_id}").json()
    slurm_ids.append(str(copy["slurm_job_id"]))
    wait_for(lambda: _sacct_user(str(copy["slurm_job_id"])) == ["carol"], 30, "the copy as carol")


def _sacct_user(slurm_job_id: str) -> list[str]:
    return subprocess.run(
        ["sacct", "-X", "-n", "-P", "-o", "User", "-j", slurm_job_id],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip


def test_the_api_refuses_to_resubmit_a_colleagues_job(
    live_portal: PortalProcess, slurm_ids: list[str]
) -> None:
    job_id = _alices_job(live_portal, slurm_ids)
    headers = {"Authorization": f"Bearer {api_token(live_portal, 'carol')}"}
    with httpx.Client(base_url=live_portal.base_url, headers=headers, timeout=60) as api:
        answer = api.post(f"/api/v1/jobs/{job_id}/resubmit", json={})
    assert answer.status_code == 403
    assert "resubmitting runs its script as you" in answer.json()["detail"]
