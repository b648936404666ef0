"""Array task ids as each scheduler writes them, read back into (array id, task index).

Slurm names a task ``12_3`` and its array ``12``; PBS names it ``12[3].server`` and its array
``12[].server``; LSF names it ``12[3]`` and its array ``12``. The array id returned is the one
the scheduler's own records carry in ``JobInfo.array_job_id``, so a task's id leads to the
array's not-yet-started record whichever scheduler wrote both.
"""

from __future__ import annotations

import re

_SLURM_TASK = re.compile(r"(?P<array>\d+)_(?P<task>\d+)")
# PBS always adds the server's name after a dot; LSF never does.
_BRACKET_TASK = re.compile(r"(?P<array>\d+)\[(?P<task>\d+)\](?P<server>\..+)?")


def array_task_of(job_id: str) -> tuple[str, int] | None:
    """(array id, task index) of an array task's id; None for any other id."""
    if match := _SLURM_TASK.fullmatch(job_id):
        return match["array"], int(match["task"])
    if match := _BRACKET_TASK.fullmatch(job_id):
        server = match["server"]
        array = f"{match['array']}[]{server}" if server else match["array"]
        return array, int(match["task"])
    return None
