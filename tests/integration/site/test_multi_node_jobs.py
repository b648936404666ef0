"""Jobs that span the site cluster's two compute nodes, submitted as the portal submits them:
the "MPI across nodes" template, and the multi-node training template's launcher (srun, the
rendezvous on the first node from ``scontrol show hostnames``, the node rank) with a small
stand-in for torchrun and the training program."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import re
import time
import uuid
from pathlib import Path

import pytest

from app.job_templates.context import SubmitContext
from app.job_templates.render import render
from app.job_templates.site_templates import site_templates
from app.jobs.job_fields import spec_values
from app.models.job_templates import TemplateVersion
from app.models.projects import Project
from app.reports.efficiency import Usage, efficiency
from app.reports.records import accounting_row
from app.scheduler.config import ClusterConfig
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.types import JobInfo, JobSpec

pytestmark = pytest.mark.slurm
COMPUTE_NODES = {"sitenode1", "sitenode2"}
DEADLINE = 120.0
BUSY_SECONDS = 4

# Stands in for torchrun: the rendezvous the real one does at --rdzv_endpoint (node rank 0
# listens, every other node connects and says where it runs), then the program, once per node.
TORCHRUN = """\
#!/usr/bin/python3
import argparse, os, socket, subprocess, sys, time
p = argparse.ArgumentParser()
for option in ("--nnodes", "--node_rank", "--nproc_per_node", "--rdzv_backend", "--rdzv_endpoint"):
    p.add_argument(option)
p.add_argument("program")
a = p.parse_args()
host, port = a.rdzv_endpoint.rsplit(":", 1)
me, rank, nnodes = socket.gethostname(), int(a.node_rank), int(a.nnodes)
if rank == 0:
    with socket.create_server(("", int(port))) as server:
        peers = [me]
        for _ in range(nnodes - 1):
            conn, _ = server.accept()
            peers.append(conn.recv(256).decode())
            conn.close()
else:
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=5) as conn:
                conn.sendall(me.encode())
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    peers = None
joined = f" joined={','.join(sorted(peers))}" if peers else ""
print(f"node_rank={rank} host={me} master={host}{joined}", flush=True)
os.environ.update(NODE_RANK=str(rank), MASTER_ADDR=host)
sys.exit(subprocess.call([sys.executable, a.program]))
"""
# Stands in for the training program: keeps one CPU busy, so accounting has CPU time from
# every node to count.
TRAIN = f"""\
import os, socket, time
end = time.process_time() + {BUSY_SECONDS}
while time.process_time() < end:
    pass
print(f"trained on {{socket.gethostname()}} as node {{os.environ['NODE_RANK']}}", flush=True)
"""


def _request(site: ClusterConfig, template: str, values: dict[str, str]) -> JobSpec:
    found = next(t for t in site_templates() if t.name == template)
    version = TemplateVersion(
        id=1, script=found.script, parameter_schema=found.parameter_schema,
        defaults={"job_name": found.job_name},
    )  # fmt: skip
    project = Project(id=1, name="physics", slurm_account="physics", cluster=site.name)
    context = SubmitContext(cluster=site.name, accounts=("physics",), home="/home/alice")
    request = render(version, {"account": "physics", **values}, project, context)
    return JobSpec(account="physics", comment=str(uuid.uuid4()), **spec_values(request))


async def _finished(adapter: SlurmAdapter, job_id: str) -> JobInfo:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        found = [j for j in await adapter.accounting([job_id]) if j.job_id == job_id]
        # TotalCPU reaches accounting with the job's end; an ended record without it is early.
        if found and found[0].state.is_terminal and found[0].total_cpu_seconds is not None:
            return found[0]
        await asyncio.sleep(0.5)
    raise AssertionError(f"job {job_id} did not end within {DEADLINE} s")


async def _output(adapter: SlurmAdapter, path: str) -> str:
    return (await adapter.read_file(path, 0, 1 << 16, "alice")).data.decode()


async def test_mpi_template_runs_ranks_on_both_compute_nodes(
    site: ClusterConfig, adapter: SlurmAdapter
) -> None:
    folder = f"/home/alice/portal-site/mpi-{uuid.uuid4().hex[:8]}"
    spec = _request(site, "MPI across nodes", {"output": f"{folder}/mpi-%j.out"})
    job_id = await adapter.submit(spec, "alice")

    job = await _finished(adapter, job_id)
    output = await _output(adapter, f"{folder}/mpi-{job_id}.out")

    assert job.native_state == "COMPLETED", output
    ranks = re.findall(r"I am process (\d+) of 4 on (\S+)\.", output)
    assert sorted(int(rank) for rank, _ in ranks) == [0, 1, 2, 3], output
    assert {host for _, host in ranks} == COMPUTE_NODES
    assert "nodes: sitenode1 sitenode2 tasks: 4" in output


async def test_multi_node_launcher_meets_on_the_first_node_and_accounting_counts_both(
    site: ClusterConfig, adapter: SlurmAdapter
) -> None:
    folder = Path(f"/home/alice/portal-site/ddp-{uuid.uuid4().hex[:8]}")
    await adapter.ssh.run(["mkdir", "-p", f"{folder}/bin"], as_user="alice")
    for name, text in (("bin/torchrun", TORCHRUN), ("train.py", TRAIN)):
        await adapter.ssh.run(["tee", f"{folder}/{name}"], as_user="alice", stdin=text)
    await adapter.ssh.run(["chmod", "+x", f"{folder}/bin/torchrun"], as_user="alice")
    port = str(random.randint(20000, 29999))
    values = {"work_dir": str(folder), "script_file": "train.py", "nodes": "2", "tasks": "2",
              "port": port, "output": f"{folder}/ddp-%j.out"}  # fmt: skip
    spec = _request(site, "Multi-node training (srun + torchrun)", values)
    # The stand-in is found first, as a site's module would put the real one on PATH.
    path = f"{folder}/bin:/usr/local/bin:/usr/bin:/bin"
    spec = dataclasses.replace(spec, environment={**spec.environment, "PATH": path})
    job_id = await adapter.submit(spec, "alice")

    job = await _finished(adapter, job_id)
    output = await _output(adapter, f"{folder}/ddp-{job_id}.out")

    assert job.native_state == "COMPLETED", output
    assert "nodes=2 tasks=2 master=sitenode1" in output
    assert {f"ready on {node}" for node in COMPUTE_NODES} <= set(output.splitlines())
    assert "node_rank=0 host=sitenode1 master=sitenode1 joined=sitenode1,sitenode2" in output
    assert "node_rank=1 host=sitenode2 master=sitenode1" in output
    assert {"trained on sitenode1 as node 0", "trained on sitenode2 as node 1"} <= set(
        output.splitlines()
    )
    # Usage charges both nodes' CPUs, and efficiency sets both nodes' CPU time against them
    # (one node's alone would be at most BUSY_SECONDS and a little).
    row = accounting_row(site.name, job)
    assert job.nodes == "sitenode[1-2]" and row["alloc_cpus"] == 2
    assert job.total_cpu_seconds is not None and job.total_cpu_seconds >= 1.5 * BUSY_SECONDS
    elapsed = job.elapsed_seconds or 0
    usage = Usage(elapsed, row["alloc_cpus"], job.total_cpu_seconds, None, None, None)
    assert efficiency(usage).cpu == pytest.approx(job.total_cpu_seconds / (2 * elapsed))
