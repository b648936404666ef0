"""The acting user, as every service sees it when deciding what is allowed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is acting: identity, site role, project roles and cluster usernames.

    Built once per request from the database, so a role change applies on the next request.
    """

    user_id: int
    login: str
    is_site_admin: bool = False
    # project id -> "member" | "manager"
    project_roles: Mapping[int, str] = field(default_factory=dict)
    # cluster name -> Unix/Slurm username on that cluster
    cluster_usernames: Mapping[str, str] = field(default_factory=dict)
    # The interface language the user chose ("en", "fr"); None follows the browser.
    locale: str | None = None
    # The colour scheme the user chose ("light", "dark"); None follows the browser.
    theme: str | None = None

    def role_in(self, project_id: int | None) -> str | None:
        if project_id is None:
            return None
        return self.project_roles.get(project_id)

    def is_member_of(self, project_id: int | None) -> bool:
        return self.role_in(project_id) is not None

    def is_manager_of(self, project_id: int | None) -> bool:
        return self.role_in(project_id) == "manager"

    def username_on(self, cluster: str) -> str | None:
        return self.cluster_usernames.get(cluster)
