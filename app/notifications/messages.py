"""What a notification says: the e-mail and the webhook's JSON body."""

from __future__ import annotations

import json
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from app.notifications.outbox import Claimed

_SUBJECT_VERB = {"started": "started", "ended": "ended", "failed": "failed"}


def job_label(claimed: Claimed) -> str:
    job = claimed.job
    slurm = f" (Slurm job {job['slurm_job_id']})" if job["slurm_job_id"] else ""
    return f"“{job['name']}”{slurm} on {job['cluster']}"


def email_message(claimed: Claimed, sender: str) -> EmailMessage:
    job = claimed.job
    state = claimed.job_state.replace("_", " ")
    message = EmailMessage()
    message["From"] = sender
    message["To"] = claimed.email or ""
    message["Subject"] = f"Job {job['name']} {_SUBJECT_VERB[claimed.event]}: {state}"
    message["Date"] = formatdate(usegmt=True)
    # One Message-ID per notification: a mail client shows a rare second delivery as the
    # same message.
    message["Message-ID"] = make_msgid(idstring=f"notification-{claimed.id}", domain="hpc-portal")
    lines = [
        f"Your job {job_label(claimed)} is now {state}.",
        "",
        f"Portal job: {job['id']} (/jobs/{job['id']})",
    ]
    if job["exit_code"] is not None and claimed.event != "started":
        lines.append(f"Exit code: {job['exit_code']}")
    lines += [
        "",
        "You get this because of a notification rule of yours; change it under "
        "Notifications in the portal.",
    ]
    message.set_content("\n".join(lines))
    return message


def webhook_body(claimed: Claimed, timestamp: int) -> bytes:
    """The JSON body; the timestamp is inside it, so the signature covers it too."""
    payload = {
        "id": claimed.id,
        "event": claimed.event,
        "timestamp": timestamp,
        "job": claimed.job,
    }
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
