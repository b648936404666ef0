"""A job named, commented and started in a folder so as to break squeue's and sacct's
listings, submitted with sbatch outside the portal, on each Slurm version.

Its name holds the field separator, its folder a line feed, and its comment a whole
squeue line of its owner's making that says another job has completed. The poller's
readings (squeue over SSH with its marks in the environment, sacct with a marked
delimiter) still list every job, give that job its fields as typed, and let the forged
line pass for no job.
"""

from __future__ import annotations

import uuid

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.commands import SEP, SQUEUE_FIELDS, squeue_argv, squeue_format
from app.scheduler.slurm.marks import Marks
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.slurm.ssh_output import OutputTooLarge
from app.scheduler.states import JobState
from tests.contract.conftest import run_dir_for, wait_for_accounting
from tests.slurm_versions import cluster_config, run_on

pytestmark = pytest.mark.slurm

ALICE = "alice"


def _sbatch(version: str, *options: str) -> str:
    argv = ["runuser", "-u", ALICE, "--", "sbatch", "--parsable", "--account=physics"]
    done = run_on(version, [*argv, "--time=5", "--output=/dev/null", *options])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def _forged_line(job_id: str) -> str:
    """A squeue line, in the field order the portal asks for, saying ``job_id`` of bob's
    completed: what an attacker would print if the listing were plain."""
    values = {key: "N/A" for key, _ in SQUEUE_FIELDS}
    values.update(job_id=job_id, raw_job_id=job_id, state="COMPLETED", user="bob", name="q")
    return SEP.join(values[key] for key, _ in SQUEUE_FIELDS)


async def test_free_text_breaks_no_listing_and_forges_no_job(
    ssh_adapter: SchedulerAdapter, slurm_version: str, cleanup
) -> None:
    tag = uuid.uuid4().hex[:8]
    run_dir = run_dir_for("listings")
    folder = f"{run_dir}/d\n{SEP}q-{tag}"
    made = run_on(slurm_version, ["runuser", "-u", ALICE, "--", "mkdir", "-p", folder])
    assert made.returncode == 0, made.stderr
    try:
        victim = _sbatch(slurm_version, "--hold", f"--job-name=v-{tag}", "--wrap=sleep 60")
        cleanup.append((ssh_adapter, victim, ALICE))
        # No English word: other tests read alice's jobs on pages that must be all French.
        name = f"q{SEP}z{SEP}{tag}"
        comment = f"c{SEP}\n{_forged_line(victim)}\n{_forged_line('99999999')}"
        odd = _sbatch(
            slurm_version,
            "--hold",
            f"--job-name={name}",
            f"--comment={comment}",
            f"--chdir={folder}",
            "--wrap=sleep 60",
        )
        cleanup.append((ssh_adapter, odd, ALICE))

        listed = {info.job_id: info for info in await ssh_adapter.queue()}
        assert listed[victim].state is JobState.QUEUED_HELD and listed[victim].user == ALICE
        assert "99999999" not in listed
        assert (listed[odd].name, listed[odd].work_dir) == (name, folder)
        assert listed[odd].state is JobState.QUEUED_HELD
        # Slurm keeps the comment as typed, or with its line feeds dropped; never a second job.
        assert listed[odd].comment in (comment, comment.replace("\n", ""))

        await ssh_adapter.cancel([odd, victim], ALICE)
        # slurmdbd first holds a bare record ("allocation", no folder), completed a moment later.
        [ended] = await wait_for_accounting(
            ssh_adapter, odd, lambda r: r.state.is_terminal and r.work_dir is not None
        )
        assert (ended.name, ended.work_dir, ended.state) == (name, folder, JobState.CANCELLED)
        assert ended.comment in (comment, comment.replace("\n", ""))
        both = {info.job_id: info for info in await ssh_adapter.accounting([odd, victim])}
        assert set(both) == {odd, victim}
        assert both[victim].user == ALICE and both[victim].state is JobState.CANCELLED
    finally:
        run_on(slurm_version, ["rm", "-rf", "--", run_dir])


async def test_a_queue_listing_longer_than_any_command_output_is_read_whole(
    ssh_adapter: SchedulerAdapter, slurm_version: str, cleanup
) -> None:
    # The listing streams through the reader, so the transport's cap on what a command
    # prints (64 MiB: about 250,000 jobs) bounds no queue. Here the cap is 2 KiB, a few
    # records: squeue's whole answer is refused as a kept output, and read all the same,
    # in pieces that cut records, marks and characters anywhere.
    tag = uuid.uuid4().hex[:8]
    names = [f"ζ{SEP}✓-{index}-{tag}" for index in range(6)]
    jobs = [
        _sbatch(slurm_version, "--hold", f"--job-name={name}", "--wrap=sleep 60") for name in names
    ]
    cleanup.extend((ssh_adapter, job, ALICE) for job in jobs)
    config = cluster_config(slurm_version)
    capped = SlurmAdapter(config, SshTransport(config, output_cap=1024))
    marks = Marks.new()
    try:
        with pytest.raises(OutputTooLarge):
            await capped.ssh.run(squeue_argv(), stdin=squeue_format(marks.field, marks.end) + "\n")
        first = {info.job_id: info for info in await capped.queue()}
        again = {info.job_id: info for info in await capped.queue()}
    finally:
        await capped.close()
    assert [first[job].name for job in jobs] == names
    assert all(first[job].state is JobState.QUEUED_HELD for job in jobs)
    # The second read reuses the first one's records, as a poller's reads do.
    assert all(again[job] is first[job] for job in jobs)
    listed = {info.job_id: info for info in await ssh_adapter.queue()}
    assert {job: listed[job] for job in jobs} == {job: first[job] for job in jobs}
