"""GrpTRESMins limits of every association, read with one sacctmgr call as the service
identity: the argv and the parsing are pure, ``fetch`` runs the one call."""

from __future__ import annotations

from app.scheduler.errors import SchedulerUnavailable
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.types import TresMinutesLimit

LIMIT_FIELDS = ("Cluster", "Account", "User", "GrpTRESMins")


def account_limits_argv() -> list[str]:
    """argv listing ``cluster|account|user|cpu=N,gres/gpu=M`` for every association."""
    return [
        "sacctmgr",
        "--noheader",
        "--parsable2",
        "show",
        "associations",
        f"format={','.join(LIMIT_FIELDS)}",
    ]


def parse_tres_minutes(text: str) -> dict[str, int]:
    """``cpu=6000,gres/gpu=120`` -> {"cpu": 6000, "gres/gpu": 120}; unset ones are left out."""
    limits: dict[str, int] = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        if key.strip() and value.strip().isdigit():
            limits[key.strip()] = int(value)
    return limits


def parse_account_limits(text: str, cluster: str) -> list[TresMinutesLimit]:
    """The associations of ``cluster`` that carry a GrpTRESMins limit."""
    found = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) < len(LIMIT_FIELDS) or cells[0] != cluster:
            continue
        _cluster, account, user, minutes = cells[:4]
        limits = parse_tres_minutes(minutes)
        if account and limits:
            found.append(TresMinutesLimit(account, user, limits))
    return found


async def fetch(ssh: SshTransport, cluster: str) -> list[TresMinutesLimit]:
    result = await ssh.run(account_limits_argv())
    if result.exit_status != 0:
        raise SchedulerUnavailable(f"sacctmgr failed: {result.stderr.strip()}")
    return parse_account_limits(result.text, cluster)
