"""What an idle warning says: an interactive session nobody uses will soon be ended."""

from __future__ import annotations

from datetime import datetime
from email.message import EmailMessage
from typing import Any

from app.i18n import _


def _clock(moment: str | None) -> str:
    """A stored time as a reader far from the portal still reads it: ``14:02 UTC``."""
    if not moment:
        return "—"
    return datetime.fromisoformat(moment).strftime("%H:%M UTC")


def session_subject(job: dict[str, Any], session: dict[str, Any]) -> str:
    return _(
        "Your %(app)s session will be ended at %(end)s: nobody has used it since %(since)s",
        app=job["name"],
        end=_clock(session["ends_at"]),
        since=_clock(session["idle_since"]),
    )


def session_lines(job: dict[str, Any], session: dict[str, Any]) -> list[str]:
    return [
        _(
            "Your %(app)s session (Slurm job %(slurm_id)s on %(cluster)s) has been idle since "
            "%(since)s and will be ended at %(end)s, as the portal ends sessions nobody uses. "
            "To keep it, press “Keep it” on your sessions page: %(path)s",
            app=job["name"],
            slurm_id=job["slurm_job_id"] or "—",
            cluster=job["cluster"],
            since=_clock(session["idle_since"]),
            end=_clock(session["ends_at"]),
            path="/apps",
        ),
        "",
        _(
            "You get this because of a notification rule of yours; change it under "
            "Notifications in the portal."
        ),
    ]


def fill_session_idle(message: EmailMessage, job: dict[str, Any], session: dict[str, Any]) -> None:
    message["Subject"] = session_subject(job, session)
    message.set_content("\n".join(session_lines(job, session)))
