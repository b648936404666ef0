"""``hpcportal submit job.sh [OPTIONS] [-- ARG…]``: a script of one's own, the way sbatch takes it.

Options override the script's ``#SBATCH`` lines as sbatch's command line does; the words after
``--`` reach the script as ``$1``, ``$2``…; ``-`` reads the script from standard input. The
script is sent unchanged. ``-p`` means the partition here, as in sbatch (with a template it
means a parameter), which is why a first argument naming a file chooses this form.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.cli.client import CliError, PortalClient
from app.cli.exit_codes import ExitCode
from app.scheduler import directive_values
from app.scheduler.dependencies import parse_dependency


def is_script_submission(argv: Sequence[str]) -> bool:
    """``submit`` followed by a file (or ``-``) rather than a template's id or name."""
    if len(argv) < 2 or argv[0] != "submit":
        return False
    first = next((word for word in argv[1:] if not word.startswith("-") or word == "-"), None)
    return first is not None and (first == "-" or os.path.isfile(first))


def build_parser(parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hpcportal submit",
        parents=[parent],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("script", help="the batch script (- for standard input)")
    parser.add_argument("-p", "--partition")
    parser.add_argument("-t", "--time", help="as sbatch: 30, 2:00:00, 1-12:00")
    parser.add_argument("--mem", help="memory per node, as sbatch: 4G, 32000M")
    parser.add_argument("-c", "--cpus-per-task", type=int)
    parser.add_argument("-J", "--job-name")
    parser.add_argument("-a", "--array", help="as sbatch: 1-10, 1-100%%4")
    parser.add_argument("-A", "--account", help="the project's Slurm account")
    parser.add_argument("-d", "--dependency", help=DEPENDENCY_HELP)
    parser.add_argument("--project", type=int, help="project id (default: your only project)")
    parser.add_argument("--idempotency-key", help="resending the same key never submits twice")
    parser.add_argument("--wait", action="store_true", help="wait and exit with the job's result")
    parser.add_argument("--timeout", type=float, help="with --wait: give up after N seconds")
    return parser


def parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Options before ``--``, the script's arguments after it."""
    words = list(argv[1:])
    split = words.index("--") if "--" in words else len(words)
    args = parser.parse_args(words[:split])
    args.script_args = words[split + 1 :]
    return args


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "script"
    try:
        return Path(path).read_text(), Path(path).name
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read {path}: {error}", ExitCode.USAGE) from error


def _project_for_account(client: PortalClient, account: str) -> int:
    projects = client.get("/projects")["items"]
    matches = [p for p in projects if p["slurm_account"] == account]
    if len(matches) != 1:
        yours = ", ".join(sorted(p["slurm_account"] for p in projects)) or "none"
        raise CliError(
            f"you are in no project with account {account} (yours: {yours})", ExitCode.NOT_FOUND
        )
    return int(matches[0]["id"])


def body_for(client: PortalClient, args: argparse.Namespace) -> dict[str, Any]:
    """The API submit body for a parsed ``hpcportal submit job.sh …`` command line."""
    script, name = _read(args.script)
    try:
        minutes = directive_values.time_minutes(args.time) if args.time else None
        memory = directive_values.memory_mb(args.mem) if args.mem else None
    except ValueError as error:
        raise CliError(str(error), ExitCode.USAGE) from error
    project = args.project
    if project is None and args.account:
        project = _project_for_account(client, args.account)
    body: dict[str, Any] = {
        "script": script,
        "script_name": name,
        "args": args.script_args,
        "project_id": project,
        "name": args.job_name,
        "partition": args.partition,
        "time_limit_minutes": minutes,
        "memory_mb": memory,
        "cpus_per_task": args.cpus_per_task,
        "array": args.array,
        "depends_on": depends_on(args.dependency) or None,
    }
    return {key: value for key, value in body.items() if value is not None}


def submit_script(client: PortalClient, args: argparse.Namespace) -> dict[str, Any]:
    """Submit; the job as the API returns it."""
    key = args.idempotency_key or str(uuid.uuid4())
    job: dict[str, Any] = client.post(
        "/jobs", body_for(client, args), headers={"Idempotency-Key": key}
    )
    return job


DEPENDENCY_HELP = (
    "wait for earlier jobs of yours (portal job ids), as sbatch: afterok:12:13, afterany:12, "
    "afternotok:12, singleton; clauses joined by commas must all hold"
)


def depends_on(text: str | None) -> list[dict[str, Any]]:
    """The API's ``depends_on`` for a ``--dependency`` value naming portal job ids."""
    if not text:
        return []
    try:
        clauses = parse_dependency(text)
        return [
            {"kind": clause.kind.value, "job_ids": [int(job_id) for job_id in clause.job_ids]}
            for clause in clauses
        ]
    except ValueError as error:
        raise CliError(
            f"--dependency {text}: expected e.g. afterok:12:13 or singleton", ExitCode.USAGE
        ) from error
