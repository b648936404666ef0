"""What a caller asks the jobs service to submit.

Both surfaces build a `JobRequest`: from a template version plus parameters (the templates
package renders the script and resources) or from a raw script where site policy allows.
The jobs service validates it against the cluster, records it and hands it to the adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.jobs.dependencies import After


@dataclass(frozen=True)
class JobRequest:
    """A fully rendered job, ready for validation and submission.

    Resources are the portal's own units: minutes, megabytes per node, whole GPUs.
    `None` means "the partition's or cluster's default".
    """

    project_id: int
    script: str
    name: str
    partition: str | None = None
    qos: str | None = None
    time_limit_minutes: int | None = None
    nodes: int | None = None
    ntasks: int | None = None
    cpus_per_task: int | None = None
    memory_mb: int | None = None
    gpus: int | None = None
    gpu_type: str | None = None
    array_spec: str | None = None
    work_dir: str | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    template_version_id: int | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    """Arguments the script receives (``sbatch job.sh ARG…``)."""
    retry_of_id: int | None = None
    """The array whose failed tasks this request runs again."""
    after: tuple[After, ...] = ()
    """Earlier jobs of the submitter this one waits for (sent as ``--dependency``)."""
    warnings: tuple[str, ...] = ()
    """What sbatch would do silently with this script (ignored lines…), kept on the job."""
