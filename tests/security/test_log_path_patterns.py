"""Attack: a job named ``..`` with an output path built from ``%x`` (and ``%u``), so that the
path checked at submission differs from the one Slurm writes and the portal later reads.
Both surfaces refuse it with a 422 on the output path before anything reaches Slurm."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.portal import PortalProcess
from tests.security.conftest import api_token, project_and_template, signed_in

pytestmark = [pytest.mark.slurm]
ESCAPES = [
    "~/portal-jobs/%x/%x/%x/tmp/pwned-{tag}-%j.out",
    "/home/%u/%x/bob/pwned-{tag}.out",
    "/scratch/%x/etc/pwned-{tag}-%u.out",
]
MESSAGE = "once Slurm fills in the job name and user (%x, %u)"


@pytest.mark.parametrize("path", ESCAPES)
def test_api_refuses_an_output_path_that_escapes_once_expanded(
    live_portal: PortalProcess, path: str
) -> None:
    project_id, template_id = project_and_template(live_portal, "physics", "Hello world")
    output = path.format(tag=uuid.uuid4().hex[:8])
    body = {
        "template_id": template_id,
        "project_id": project_id,
        "parameters": {"message": "x", "seconds": 0, "output": output, "job_name": ".."},
    }
    headers = {"Authorization": f"Bearer {api_token(live_portal, 'alice')}"}
    with httpx.Client(base_url=live_portal.base_url, headers=headers, timeout=60) as api:
        answer = api.post("/api/v1/jobs", json=body)
        assert answer.status_code == 422, answer.text
        assert MESSAGE in answer.json()["fields"]["stdout"]
        jobs = api.get("/api/v1/jobs", params={"q": ".."}).json()
    assert not [job for job in jobs["items"] if job["name"] == ".."]


def test_web_submit_refuses_an_output_path_that_escapes_once_expanded(
    live_portal: PortalProcess,
) -> None:
    _, template_id = project_and_template(live_portal, "physics", "Hello world")
    with signed_in(live_portal, "alice") as web:
        form = {
            "csrf_token": web.csrf,
            "account": "physics",
            "message": "hello",
            "seconds": "0",
            "partition": "debug",
            "time_limit": "0:02:00",
            "output": ESCAPES[0].format(tag="web"),
            "job_name": "..",
        }
        answer = web.client.post(f"/templates/{template_id}/submit", data=form)
    assert answer.status_code == 422
    # Shown next to the parameter that sets the path, not only at the top of the form.
    error = re.search(r'id="output-error"[^>]*>([^<]*)<', answer.text)
    assert error and "once Slurm fills in the job name and user" in error.group(1)
