"""What a preflight finds in a job before it is sent: pure checks of its account, QOS and
folders (the adapter asks the cluster for what they need)."""

from __future__ import annotations

import posixpath
import re

from app.scheduler.types import Association, JobSpec


def association_problems(spec: JobSpec, associations: list[Association]) -> list[tuple[str, str]]:
    """The account and QOS ``spec`` asks for against the user's associations."""
    accounts = {a.account for a in associations}
    if spec.account is not None and spec.account not in accounts:
        choices = ", ".join(sorted(accounts)) or "none"
        return [("account", f"you cannot charge account {spec.account} (yours: {choices})")]
    if spec.qos is None:
        return []
    usable = {q for a in associations if spec.account in (None, a.account) for q in a.qos}
    if spec.qos in usable:
        return []
    choices = ", ".join(sorted(usable)) or "none"
    return [("qos", f"QOS {spec.qos} does not exist or is not yours to use (yours: {choices})")]


def needed_folders(spec: JobSpec, user: str) -> dict[str, str]:
    """The folders the job's logs and working directory need, each with the field naming it."""
    wanted: dict[str, str] = {}
    for field, path in (("stdout", spec.stdout), ("stderr", spec.stderr)):
        if path is not None:
            wanted.setdefault(posixpath.dirname(path), field)
    if spec.working_dir is not None:
        wanted.setdefault(spec.working_dir, "working_dir")
    # %x and %u are known before submission; a folder naming the job id is not, and is
    # left to Slurm (which creates it since 23.02).
    known = {name_and_user(d, spec.name, user): field for d, field in wanted.items()}
    return {d: field for d, field in known.items() if "%" not in d}


def unmade_folders(folders: dict[str, str], printed: str) -> list[tuple[str, str]]:
    """The problems for the folders a mkdir program printed as missing or not writable."""
    bad = [line for line in printed.splitlines() if line in folders]
    return [(folders[d], f"directory {d} cannot be created or is not writable") for d in bad]


def name_and_user(path: str, name: str, user: str) -> str:
    """``path`` with Slurm's %x (job name) and %u (user) filled in, as slurmstepd will."""
    return re.sub(r"%([xu%])", lambda m: {"x": name, "u": user, "%": "%%"}[m[1]], path)
