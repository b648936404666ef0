"""Why a cancel, hold or release was not done, one whole sentence per action."""

from __future__ import annotations

from app.i18n import _
from app.notifications.messages import state_words


def not_now(action: str, state: str) -> str:
    """The job's state does not allow ``action``."""
    shown = state_words(state)
    if action == "cancel":
        return _("A job that is %(state)s cannot be cancelled.", state=shown)
    if action == "hold":
        return _("A job that is %(state)s cannot be held.", state=shown)
    return _("A job that is %(state)s cannot be released.", state=shown)


def no_account(action: str, cluster: str) -> str:
    """The actor has no username on the job's cluster to ask Slurm with."""
    if action == "cancel":
        return _(
            "You have no account on cluster %(cluster)s, so Slurm cannot be asked to cancel "
            "this job on your behalf.",
            cluster=cluster,
        )
    if action == "hold":
        return _(
            "You have no account on cluster %(cluster)s, so Slurm cannot be asked to hold "
            "this job on your behalf.",
            cluster=cluster,
        )
    return _(
        "You have no account on cluster %(cluster)s, so Slurm cannot be asked to release "
        "this job on your behalf.",
        cluster=cluster,
    )


def refused(action: str, username: str) -> str:
    """Slurm refused ``username``: it decides who may act on a job."""
    if action == "cancel":
        return _(
            "Slurm refused to let %(username)s cancel this job: only its owner, a coordinator "
            "of its Slurm account or a Slurm operator may.",
            username=username,
        )
    if action == "hold":
        return _(
            "Slurm refused to let %(username)s hold this job: only its owner, a coordinator "
            "of its Slurm account or a Slurm operator may.",
            username=username,
        )
    return _(
        "Slurm refused to let %(username)s release this job: only its owner, a coordinator "
        "of its Slurm account or a Slurm operator may.",
        username=username,
    )
