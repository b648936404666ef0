"""Reading Slurm associations and account coordinators with the service identity (pure parsing
plus one fetch), for the import and for the GrpTRESMins limits the usage page shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.errors import ServiceUnavailable
from app.i18n import _
from app.scheduler.base import SchedulerAdapter
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.limits import parse_tres_minutes

ASSOC_FIELDS = ("Cluster", "Account", "User", "Partition", "GrpTRESMins")


@dataclass(frozen=True, slots=True)
class SlurmAssociation:
    account: str
    user: str
    limits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SlurmState:
    """Accounts with their users, coordinators and limits, as Slurm has them."""

    associations: list[SlurmAssociation]
    coordinators: dict[str, set[str]]

    def accounts(self) -> set[str]:
        return {a.account for a in self.associations if a.account != "root"}

    def users_of(self, account: str) -> set[str]:
        return {a.user for a in self.associations if a.account == account and a.user}


def parse_associations(text: str, cluster: str) -> list[SlurmAssociation]:
    found = []
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) < len(ASSOC_FIELDS) or cells[0] != cluster:
            continue
        _, account, user, _partition, minutes = (cell.strip() for cell in cells[:5])
        found.append(SlurmAssociation(account, user, parse_tres_minutes(minutes)))
    return found


def parse_coordinators(text: str) -> dict[str, set[str]]:
    """``sacctmgr show account withcoord format=Account,Coordinators`` lines."""
    coordinators: dict[str, set[str]] = {}
    for line in text.splitlines():
        account, _, names = line.partition("|")
        users = {name.strip() for name in names.split(",") if name.strip()}
        if account.strip() and users:
            coordinators.setdefault(account.strip(), set()).update(users)
    return coordinators


def _sacctmgr(*words: str) -> list[str]:
    return ["sacctmgr", "--noheader", "--parsable2", *words]


async def fetch_slurm_state(adapter: SchedulerAdapter, cluster: str) -> SlurmState:
    """Two read-only sacctmgr calls as the service identity."""
    if not isinstance(adapter, SlurmAdapter):
        raise ServiceUnavailable(_("This cluster's scheduler cannot list its associations."))
    assoc = await adapter.ssh.run(
        _sacctmgr("show", "associations", f"format={','.join(ASSOC_FIELDS)}")
    )
    coord = await adapter.ssh.run(
        _sacctmgr("show", "account", "withcoord", "format=Account,Coordinators")
    )
    if assoc.exit_status != 0 or coord.exit_status != 0:
        raise ServiceUnavailable(
            _("sacctmgr failed: %(error)s", error=(assoc.stderr or coord.stderr).strip())
        )
    return SlurmState(parse_associations(assoc.text, cluster), parse_coordinators(coord.text))
