"""What an allocation notification says: a project used 80 % or 95 % of its allocation."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

from app.i18n import _


def allocation_subject(project: dict[str, Any]) -> str:
    return _(
        "Project %(name)s has used %(threshold)s %% of its allocation",
        name=project["name"],
        threshold=project["threshold"],
    )


def allocation_lines(project: dict[str, Any]) -> list[str]:
    return [
        _(
            "Project “%(name)s” (account %(account)s on %(cluster)s) has used %(threshold)s %% "
            "of its allocation of CPU minutes. Its burn-down shows the date it runs out at "
            "the current rate: %(path)s",
            name=project["name"],
            account=project["account"],
            cluster=project["cluster"],
            threshold=project["threshold"],
            path=f"/projects/{project['id']}/allocation",
        ),
        "",
        _(
            "You get this because you manage this project and a notification rule of yours "
            "asks for allocation warnings; change it under Notifications in the portal."
        ),
    ]


def fill_allocation(message: EmailMessage, project: dict[str, Any]) -> None:
    message["Subject"] = allocation_subject(project)
    message.set_content("\n".join(allocation_lines(project)))
