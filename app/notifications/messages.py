"""What a notification says: the e-mail (in the current language) and the webhook's JSON body
(English values, for programs)."""

from __future__ import annotations

import json
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from app.i18n import _
from app.notifications.allocation_messages import fill_allocation
from app.notifications.outbox import Claimed
from app.notifications.session_messages import fill_session_idle


def state_words(state: str) -> str:
    """A job state as a sentence says it ("out of memory")."""
    words = {
        "submitting": _("submitting"),
        "submit_failed": _("submit failed"),
        "pending": _("pending"),
        "held": _("held"),
        "running": _("running"),
        "suspended": _("suspended"),
        "completing": _("completing"),
        "completed": _("completed"),
        "failed": _("failed"),
        "cancelled": _("cancelled"),
        "timeout": _("timeout"),
        "out_of_memory": _("out of memory"),
        "node_fail": _("node fail"),
        "preempted": _("preempted"),
        "boot_fail": _("boot fail"),
        "deadline": _("deadline"),
        "undetermined": _("undetermined"),
    }
    return words.get(state, state.replace("_", " "))


def _subject(claimed: Claimed, state: str) -> str:
    name = claimed.job["name"]
    if claimed.event == "started":
        return _("Job %(name)s started: %(state)s", name=name, state=state)
    if claimed.event == "failed":
        return _("Job %(name)s failed: %(state)s", name=name, state=state)
    return _("Job %(name)s ended: %(state)s", name=name, state=state)


def _now_line(claimed: Claimed, state: str) -> str:
    job = claimed.job
    facts = {"name": job["name"], "cluster": job["cluster"], "state": state}
    if job["slurm_job_id"]:
        return _(
            "Your job “%(name)s” (Slurm job %(slurm_id)s) on %(cluster)s is now %(state)s.",
            slurm_id=job["slurm_job_id"],
            **facts,
        )
    return _("Your job “%(name)s” on %(cluster)s is now %(state)s.", **facts)


def email_message(claimed: Claimed, sender: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = claimed.email or ""
    message["Date"] = formatdate(usegmt=True)
    # One Message-ID per notification: a mail client shows a rare second delivery as the
    # same message.
    message["Message-ID"] = make_msgid(idstring=f"notification-{claimed.id}", domain="hpc-portal")
    if claimed.project is not None:
        fill_allocation(message, claimed.project)
        return message
    if claimed.session is not None:
        fill_session_idle(message, claimed.job, claimed.session)
        return message
    job = claimed.job
    state = state_words(claimed.job_state)
    message["Subject"] = _subject(claimed, state)
    lines = [
        _now_line(claimed, state),
        "",
        _("Portal job: %(id)s (%(path)s)", id=job["id"], path=f"/jobs/{job['id']}"),
    ]
    if job["exit_code"] is not None and claimed.event != "started":
        lines.append(_("Exit code: %(code)s", code=job["exit_code"]))
    lines += [
        "",
        _(
            "You get this because of a notification rule of yours; change it under "
            "Notifications in the portal."
        ),
    ]
    message.set_content("\n".join(lines))
    return message


def webhook_body(claimed: Claimed, timestamp: int) -> bytes:
    """The JSON body; the timestamp is inside it, so the signature covers it too."""
    payload: dict[str, object] = {"id": claimed.id, "event": claimed.event, "timestamp": timestamp}
    if claimed.project is not None:
        payload["project"] = claimed.project
    else:
        payload["job"] = claimed.job
    if claimed.session is not None:
        payload["session"] = claimed.session
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
