"""Slurm's filename patterns (``%j``, ``%x``, ``%u``...) and the paths they become.

A path is checked after expansion, because that is the path Slurm writes: a job named
``..`` turns ``/home/alice/%x/%x/tmp/out`` into ``/tmp/out``. Patterns whose value is only
known on the node (node name, step, task) expand to a stand-in of the same shape: digits or
a host name, which can hold neither ``/`` nor ``..``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.scheduler.errors import InvalidSpec
from app.scheduler.types import JobSpec
from app.scheduler.validation import resolve_log_path

# sbatch's default for %a outside an array (NO_VAL).
NOT_AN_ARRAY_TASK = "4294967294"


@dataclass(frozen=True, slots=True)
class PatternValues:
    """What each pattern stands for, for one job."""

    job_id: str
    name: str
    user: str
    array_job_id: str = ""
    array_task_id: str = ""

    def table(self) -> Mapping[str, str]:
        return {
            "j": self.job_id,
            "J": self.job_id,
            "A": self.array_job_id or self.job_id,
            "a": self.array_task_id or NOT_AN_ARRAY_TASK,
            "b": (self.array_task_id or "0")[-1:],
            "x": self.name,
            "u": self.user,
            "N": "node",
            "n": "0",
            "s": "0",
            "t": "0",
            "%": "%",
        }


def expand(template: str, values: PatternValues) -> str:
    """``template`` with every known ``%`` pattern replaced, as Slurm does."""
    table = values.table()
    out: list[str] = []
    index = 0
    while index < len(template):
        char = template[index]
        if char == "%" and index + 1 < len(template) and template[index + 1] in table:
            out.append(table[template[index + 1]])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def check_expanded_paths(spec: JobSpec, user: str, roots: Iterable[str]) -> None:
    """InvalidSpec when a log path leaves ``roots`` once Slurm has filled in its patterns."""
    allowed = tuple(roots)
    stand_in = PatternValues(job_id="1", name=spec.name, user=user)
    for field, path in (("stdout", spec.stdout), ("stderr", spec.stderr)):
        if path is None or "%" not in path:
            continue
        try:
            resolve_log_path(expand(path, stand_in), allowed)
        except InvalidSpec as error:
            raise InvalidSpec(
                field,
                f"{error.message} once Slurm fills in the job name and user (%x, %u)",
            ) from None
