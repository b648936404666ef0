"""A submission makes its folders and runs sbatch in one command: the folders are data to a
constant shell program, sbatch runs only once they all exist, and the script still reaches
sbatch on stdin. The program is run here by the real ``sh``, with ``cat`` standing in for
sbatch."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from app.scheduler.errors import PreflightFailed
from app.scheduler.slurm import commands
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.ssh import CommandResult
from app.scheduler.types import JobSpec
from tests.unit.scheduler.slurm.test_slurm_preflight_cache import CONFIG

SCRIPT = "#!/bin/bash\necho 'the script'\n"


def run_with_cat(directories: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """submit_argv's program with sbatch's argv replaced by ``cat`` (which echoes stdin)."""
    argv = commands.submit_argv(JobSpec(script=SCRIPT), directories)
    program = argv[: argv.index("sbatch") if "sbatch" in argv else len(argv)]
    return subprocess.run([*program, "cat"], input=SCRIPT, capture_output=True, text=True)


def test_folders_are_made_then_the_command_reads_the_script(tmp_path: Path) -> None:
    wanted = [str(tmp_path / "logs" / "deep"), str(tmp_path / "work")]
    done = run_with_cat(wanted)
    assert (done.returncode, done.stdout) == (0, SCRIPT)
    assert all(Path(folder).is_dir() for folder in wanted)


@pytest.mark.parametrize(
    "name", ["--", "$(touch pwned)", "a b", "-n", "`id`", "; cat /etc/passwd", "x\ny", "*"]
)
def test_a_folder_name_is_never_code_nor_the_end_of_the_list(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = str(tmp_path / name)
    done = run_with_cat([folder, str(tmp_path / "second")])
    assert (done.returncode, done.stdout) == (0, SCRIPT)
    assert Path(folder).is_dir() and (tmp_path / "second").is_dir()
    assert not (tmp_path / "pwned").exists()


def test_a_folder_that_cannot_be_made_stops_the_command_before_it_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    wanted = [str(tmp_path / "fine"), str(blocker / "logs"), str(blocker)]
    done = run_with_cat(wanted)
    assert done.returncode == commands.FOLDERS_REFUSED
    assert done.stdout.splitlines() == [str(blocker / "logs"), str(blocker)]


def test_without_folders_it_is_sbatch_alone() -> None:
    spec = JobSpec(script=SCRIPT)
    assert commands.submit_argv(spec, []) == commands.sbatch_argv(spec)


class OneCommandSsh:
    """Answers the one command a submission sends with ``answer``; remembers each argv."""

    def __init__(self, answer: CommandResult) -> None:
        self.answer = answer
        self.sent: list[Sequence[str]] = []

    async def run(self, argv: Sequence[str], **options: Any) -> CommandResult:
        self.sent.append(argv)
        assert options["stdin"] == SCRIPT and options["repeatable"] is False
        return self.answer


SPEC = JobSpec(
    script=SCRIPT, name="run", stdout="/scratch/alice/%x/out-%j.txt", working_dir="/scratch/alice/w"
)


async def test_a_submission_with_folders_is_one_round_trip() -> None:
    ssh = OneCommandSsh(CommandResult(0, b"4242\n", ""))
    assert await SlurmAdapter(CONFIG, ssh).submit(SPEC, "alice") == "4242"  # type: ignore[arg-type]
    (argv,) = ssh.sent
    assert argv[:3] == ["sh", "-c", commands._MKDIR_THEN_RUN_SCRIPT]
    assert argv[4:7] == ["2", "/scratch/alice/run", "/scratch/alice/w"]
    assert argv[7:] == commands.sbatch_argv(SPEC)


async def test_a_folder_refused_at_submission_names_its_field() -> None:
    ssh = OneCommandSsh(CommandResult(commands.FOLDERS_REFUSED, b"/scratch/alice/run\n", ""))
    with pytest.raises(PreflightFailed) as caught:
        await SlurmAdapter(CONFIG, ssh).submit(SPEC, "alice")  # type: ignore[arg-type]
    assert caught.value.problems == [
        ("stdout", "directory /scratch/alice/run cannot be created or is not writable")
    ]
