"""``hpcportal submit job.sh …``: told apart from templates, parsed the way sbatch is used."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from app.cli.client import CliError, PortalClient
from app.cli.config import ClientConfig
from app.cli.main import _parse

CONFIG = ClientConfig(url="http://portal.test", token="hpc_secret")


def test_a_file_chooses_the_script_form_and_a_template_name_does_not(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    as_script = _parse(["submit", str(script), "-p", "long", "--", "a", "-p"])
    assert (as_script.partition, as_script.script_args) == ("long", ["a", "-p"])
    as_template = _parse(["submit", "Hello world", "-p", "message=hi"])
    assert as_template.parameter == ["message=hi"]
    assert _parse(["--json", "submit", "-", "-t", "10"]).json is True


def test_overrides_and_arguments_become_the_api_body(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text('#!/bin/bash\n#SBATCH --time=1:00:00\npython train.py "$1"\n')
    sent: list[dict[str, object]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/projects"):
            items = [{"id": 7, "slurm_account": "physics"}, {"id": 8, "slurm_account": "bio"}]
            return httpx.Response(200, json={"items": items})
        sent.append(json.loads(request.content))
        return httpx.Response(201, json={"id": 1, "state": "pending"})

    args = _parse(
        [
            "submit",
            str(script),
            "-A",
            "bio",
            "-t",
            "2-00:00",
            "--mem",
            "4G",
            "-c",
            "2",
            "-J",
            "x",
            "--array",
            "1-3%1",
            "--",
            "run 1",
        ]
    )
    client = PortalClient(CONFIG, transport=httpx.MockTransport(answer))
    assert args.run(client, args) == 0
    body = sent[0]
    assert body["script"] == script.read_text() and body["script_name"] == "train.sh"
    assert (body["project_id"], body["time_limit_minutes"], body["memory_mb"]) == (8, 2880, 4096)
    assert (body["cpus_per_task"], body["name"], body["array"]) == (2, "x", "1-3%1")
    assert body["args"] == ["run 1"]


def test_dependency_names_portal_jobs_as_sbatch_would(tmp_path: Path) -> None:
    script = tmp_path / "after.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    sent: list[dict[str, object]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(201, json={"id": 3, "state": "pending"})

    client = PortalClient(CONFIG, transport=httpx.MockTransport(answer))
    args = _parse(["submit", str(script), "-d", "afterok:12:13,singleton"])
    assert args.run(client, args) == 0
    assert sent[0]["depends_on"] == [
        {"kind": "afterok", "job_ids": [12, 13]},
        {"kind": "singleton", "job_ids": []},
    ]
    args = _parse(["submit", "hello", "--dependency", "afterany:4"])
    assert args.dependency == "afterany:4"


def test_a_malformed_dependency_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "after.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    args = _parse(["submit", str(script), "-d", "after:12"])
    client = PortalClient(CONFIG, transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    with pytest.raises(CliError, match=r"^--dependency after:12: expected e\.g\. afterok:12:13"):
        args.run(client, args)
