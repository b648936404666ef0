"""The compose stack driven from outside, through its TLS proxy, as a site's users reach it.

Sign in over HTTPS (the self-signed certificate verified), make an API token, submit a job
that runs on the Slurm container and read its output; kill one web replica in the middle of
a loop of API requests (reads are retried on the other replica by nginx, a submission whose
replica died is retried by the client with the same Idempotency-Key: nothing lost, nothing
twice); kill the poller that holds the lease and see the other take it. The start times and
the stack's memory are printed and kept in test-artifacts/compose-stack.json.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.compose.conftest import ROOT, Stack, wait_until

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
SECRET = re.compile(r'id="new-token-secret"[^>]*value="(hpc_[^"]+)"')
# Under PROMETHEUS_MULTIPROC_DIR (as in the image) the gauge also carries the process's pid.
LEASE_HELD = re.compile(
    r'^portal_poller_lease_held\{(?=[^}]*cluster="testcluster")[^}]*\} 1\.0$', re.MULTILINE
)
READS = 300
SUBMITS = 30
KILL_AFTER_ANSWERED = 60
IN_FLIGHT = 8


def tls(stack: Stack) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(stack.cert))


@pytest.fixture(scope="module")
def seeded(stack: Stack) -> Stack:
    # The trial's demo accounts: the seed refuses PORTAL_ENV=prod, so this one run says dev.
    stack.compose(
        "run", "--rm", "--no-deps", "-e", "PORTAL_ENV=dev", "migrate", "python", "-m", "app.seed"
    )
    return stack


@pytest.fixture(scope="module")
def alice(seeded: Stack) -> tuple[str, int]:
    """(an API token made on the token page after signing in over HTTPS, physics' id)."""
    with httpx.Client(base_url=seeded.base_url, verify=tls(seeded), timeout=30) as browser:
        form = browser.get("/signin")
        token = CSRF.search(form.text)
        assert token, form.text[:500]
        data = {"login": "alice", "password": "alice-demo", "csrf_token": token.group(1)}
        signed_in = browser.post("/signin", data=data)
        assert signed_in.status_code == 303
        assert any(c.secure for c in browser.cookies.jar), "the session cookie is not Secure"
        page = browser.get("/settings/tokens")
        assert page.status_code == 200 and "Sign out" in page.text
        csrf = CSRF.search(page.text)
        assert csrf
        created = browser.post(
            "/settings/tokens",
            data={
                "csrf_token": csrf.group(1),
                "name": "compose",
                "scopes": ["read", "submit"],
                "expires_in_days": "1",
            },
        )
        assert created.status_code == 201
        secret = SECRET.search(created.text)
        assert secret
    headers = {"Authorization": f"Bearer {secret.group(1)}"}
    with api(seeded, headers) as client:
        projects = client.get("/api/v1/projects").json()
    return secret.group(1), next(p["id"] for p in projects if p["name"] == "physics")


def api(stack: Stack, headers: dict[str, str]) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, verify=tls(stack), headers=headers, timeout=60)


def test_plain_http_is_refused_by_the_certificate_check(stack: Stack) -> None:
    with pytest.raises(httpx.ConnectError), httpx.Client(timeout=10) as client:
        client.get(f"{stack.base_url}/healthz")  # the system's CAs do not know this one


def test_a_job_submitted_through_the_proxy_runs_and_its_output_is_read(
    stack: Stack, alice: tuple[str, int]
) -> None:
    secret, project_id = alice
    body = {
        "script": "#!/bin/bash\necho hello from $(hostname)\n",
        "name": f"compose-{uuid.uuid4().hex[:8]}",
        "project_id": project_id,
        "time_limit_minutes": 1,
    }
    with api(stack, {"Authorization": f"Bearer {secret}"}) as client:
        submitted = client.post("/api/v1/jobs", json=body)
        assert submitted.status_code == 201, submitted.text
        job_id = submitted.json()["id"]
        job: dict[str, Any] = {}

        def finished() -> bool:
            job.update(client.get(f"/api/v1/jobs/{job_id}").json())
            return bool(job["is_finished"])

        wait_until(finished, 180, "the job to finish")
        assert job["state"] == "completed", job
        output = client.get(f"/api/v1/jobs/{job_id}/logs/stdout").json()
    assert output["data"] == "hello from c1\n"


@dataclass
class Load:
    sent: int = 0
    answered: int = 0
    lost: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    submits: dict[str, str] = field(default_factory=dict)  # Idempotency-Key -> job uuid
    retried_submits: int = 0
    killed: asyncio.Event = field(default_factory=asyncio.Event)


async def _read(client: httpx.AsyncClient, load: Load, on_answer: Any) -> None:
    load.sent += 1
    try:
        response = await client.get("/api/v1/jobs?limit=5")
    except httpx.HTTPError:
        load.lost += 1
        return
    load.statuses[response.status_code] = load.statuses.get(response.status_code, 0) + 1
    if response.status_code == 200:
        load.answered += 1
        on_answer()
    else:
        load.lost += 1


async def _submit(client: httpx.AsyncClient, load: Load, body: dict[str, Any]) -> None:
    key = uuid.uuid4().hex
    for attempt in range(5):
        load.sent += 1
        try:
            response = await client.post(
                "/api/v1/jobs", json=body, headers={"Idempotency-Key": key}
            )
        except httpx.HTTPError:
            response = None
        if response is not None and response.status_code in (200, 201):
            load.answered += 1
            load.submits[key] = response.json()["uuid"]
            return
        # The replica died under this POST (nginx retries no POST): the client sends it again
        # with the same key, and must get the same job back, never a second one.
        load.retried_submits += 1
        await asyncio.sleep(1 + attempt)
    load.lost += 1


async def _drive(stack: Stack, secret: str, project_id: int, victim: str) -> Load:
    load = Load()
    limit = asyncio.Semaphore(IN_FLIGHT)

    def on_answer() -> None:
        if load.answered >= KILL_AFTER_ANSWERED and not load.killed.is_set():
            load.killed.set()
            stack.docker("kill", victim)

    async with httpx.AsyncClient(
        base_url=stack.base_url,
        verify=tls(stack),
        timeout=60,
        headers={"Authorization": f"Bearer {secret}"},
    ) as client:

        async def one(index: int) -> None:
            async with limit:
                if index % ((READS + SUBMITS) // SUBMITS) == 0:
                    body = {
                        "script": "#!/bin/bash\ntrue\n",
                        "name": f"load-{index}",
                        "project_id": project_id,
                        "time_limit_minutes": 1,
                    }
                    await _submit(client, load, body)
                else:
                    await _read(client, load, on_answer)

        await asyncio.gather(*(one(i) for i in range(READS + SUBMITS)))
    return load


def test_killing_a_web_replica_mid_load_loses_no_request_and_duplicates_no_job(
    seeded: Stack, alice: tuple[str, int]
) -> None:
    secret, project_id = alice
    victim = seeded.containers("web")[0]
    try:
        load = asyncio.run(_drive(seeded, secret, project_id, victim))
    finally:
        seeded.docker("start", victim)
        wait_until(lambda: seeded.health(victim) == "healthy", 180, "the replica back")
        # The restarted replica may come back on another address: nginx resolves it anew.
        seeded.compose("restart", "proxy")
        wait_until(
            lambda: all(seeded.health(p) == "healthy" for p in seeded.containers("proxy")),
            60,
            "the proxy back",
        )
    uuids = list(load.submits.values())
    rows = seeded.psql("SELECT name FROM jobs WHERE name LIKE 'load-%'").split()
    slurm = seeded.compose(
        "exec",
        "-T",
        "slurmctld",
        "sacct",
        "-a",
        "-X",
        "-n",
        "-P",
        "-o",
        "JobName",
        "-S",
        "now-1hours",
    ).split()
    in_slurm = [name for name in slurm if name.startswith("load-")]
    duplicates = (len(rows) - len(set(rows))) + (len(in_slurm) - len(set(in_slurm)))
    report = {
        "sent": load.sent,
        "answered": load.answered,
        "lost": load.lost,
        "submissions retried by the client": load.retried_submits,
        "statuses": load.statuses,
        "portal jobs": len(rows),
        "Slurm jobs": len(in_slurm),
        "duplicate jobs": duplicates,
    }
    record(seeded, "kill a web replica", report)
    assert load.killed.is_set()
    assert load.lost == 0, report
    assert len(uuids) == SUBMITS and len(set(uuids)) == SUBMITS, report
    assert duplicates == 0 and len(set(rows)) == SUBMITS, report


def _lease_holder(stack: Stack) -> str | None:
    holder = stack.psql(
        "SELECT holder FROM poller_leases WHERE cluster = 'testcluster' AND expires_at > now()"
    )
    return holder.split(":")[0] if holder else None


def _metrics(stack: Stack, container: str) -> str:
    probe = (
        "import urllib.request; print(urllib.request.urlopen("
        "'http://127.0.0.1:9102/metrics', timeout=4).read().decode())"
    )
    return stack.docker("exec", container, "python", "-c", probe)


def test_killing_the_active_poller_hands_the_lease_to_the_other(stack: Stack) -> None:
    pollers = stack.containers("poller")
    assert len(pollers) == 2
    wait_until(lambda: _lease_holder(stack) is not None, 60, "a lease holder")
    holder = _lease_holder(stack)
    active = next(c for c in pollers if c.startswith(str(holder)))
    standby = next(c for c in pollers if c != active)
    assert LEASE_HELD.search(_metrics(stack, active))
    assert not LEASE_HELD.search(_metrics(stack, standby))
    killed_at = time.monotonic()
    stack.docker("kill", active)
    try:
        wait_until(lambda: _lease_holder(stack) == standby[:12], 90, "the standby to take over")
        takeover = time.monotonic() - killed_at
        wait_until(
            lambda: bool(LEASE_HELD.search(_metrics(stack, standby))), 30, "its metrics to say so"
        )
    finally:
        stack.docker("start", active)
    record(stack, "poller takeover seconds", round(takeover, 1))


def _mebibytes(usage: str) -> float:
    found = re.fullmatch(r"([\d.]+)\s*([kKMG]i?B|B)", usage.strip())
    assert found, usage
    number, unit = found.groups()
    scale = {
        "B": 1 / 2**20,
        "KiB": 1 / 1024,
        "MiB": 1,
        "GiB": 1024,
        "kB": 1 / 1024,
        "MB": 1,
        "GB": 1024,
    }
    return float(number) * scale[unit]


def test_start_times_and_memory_are_reported(stack: Stack) -> None:
    ids = stack.compose("ps", "-q").split()
    stats = stack.docker("stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}", *ids)
    memory = {}
    for line in stats.splitlines():
        name, usage = line.split("\t")
        memory[name] = round(_mebibytes(usage.split("/")[0]), 1)
    total = round(sum(memory.values()), 1)
    record(stack, "start seconds", {k: round(v, 1) for k, v in stack.timings.items()})
    record(stack, "memory MiB", {"total": total, **memory})
    # Twelve containers on a trial machine: the whole stack fits well under 4 GiB.
    assert 0 < total < 4096, memory


def record(stack: Stack, key: str, value: object) -> None:
    path = ROOT / "test-artifacts/compose-stack.json"
    path.parent.mkdir(exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[key] = value
    path.write_text(json.dumps(data, indent=2))
    print(f"\n[compose] {key}: {json.dumps(value)}")


def test_docker_leaves_the_hosts_other_bridges_forwarding(stack: Stack) -> None:
    # The development clusters' namespaces talk over bridges whose traffic passes the FORWARD
    # chain; dockerd's DROP policy would cut them off (scripts/compose-stack).
    rules = subprocess.run(
        ["iptables", "-S", "FORWARD"], capture_output=True, text=True, check=True
    ).stdout
    assert "-P FORWARD ACCEPT" in rules.splitlines()
