"""Why a queued job is not running yet, in plain words, keyed by Slurm's reason code."""

from __future__ import annotations

from app.i18n import _


def pending_reasons() -> dict[str, str]:
    """Slurm's reason code → the plain words the job page shows, in the reader's language."""
    return {
        "None": _("Just submitted; the scheduler has not looked at it yet."),
        "Resources": _("Waiting for enough free CPUs, memory or GPUs to become available."),
        "Priority": _("Other jobs with a higher priority are ahead of it in the queue."),
        "JobHeldUser": _("On hold by its owner or a manager. Release it to let it start."),
        "JobHeldAdmin": _("On hold by a cluster administrator."),
        "AssocGrpCpuLimit": _(
            "The project is already using all the CPUs it may use at once; "
            "it starts when some of the project's other jobs finish."
        ),
        "AssocGrpMemLimit": _("The project is already using all the memory it may use at once."),
        "AssocGrpGRES": _("The project is already using all the GPUs it may use at once."),
        "AssocGrpJobsLimit": _("The project has as many running jobs as it is allowed."),
        "AssocMaxJobsLimit": _("You have as many running jobs as you are allowed."),
        "QOSMaxWallDurationPerJobLimit": _(
            "The time limit is longer than this quality of service allows, so the job will "
            "never start. Cancel it and submit with a shorter time limit."
        ),
        "PartitionTimeLimit": _(
            "The time limit is longer than the partition allows, so the job will never start. "
            "Cancel it and submit with a shorter time limit."
        ),
        "QOSMaxCpuPerUserLimit": _(
            "You are already using all the CPUs this quality of service allows per user."
        ),
        "QOSGrpCpuLimit": _(
            "Everyone using this quality of service together has reached its CPU limit."
        ),
        "ReqNodeNotAvail": _("A node the job needs is unavailable (down, drained or reserved)."),
        "Dependency": _("Waiting for the jobs it depends on to finish."),
        "DependencyNeverSatisfied": _(
            "A job it depends on ended in a way its dependency does not accept, so it will "
            "never start. Cancel it, or resubmit a copy without the dependency."
        ),
        "BeginTime": _("It was asked to start later and that time has not come yet."),
        "Reservation": _("Waiting for its reservation to start."),
        "PartitionDown": _(
            "The partition is down; it starts when an administrator brings it back."
        ),
        "NodeDown": _("A node it needs is down."),
        "InvalidAccount": _("The account is not valid on this cluster; cancel and resubmit."),
        "InvalidQOS": _("The quality of service is not valid; cancel and resubmit."),
        "BadConstraints": _("No node matches the constraints it asks for."),
    }
