"""Pure argv builder and parser for PBS reservations (``pbs_rstat -f``).

``pbs_rstat`` has no JSON output: ``-f`` prints a ``Resv ID: <id>`` line, then one
``name = value`` line per attribute, then a blank line. Times are the server's ctime strings,
printed under ``TZ=UTC``. A maintenance reservation (``pbs_rsub --hosts``, managers only) has
an id starting with ``M``; it is marked with Slurm's ``MAINT`` flag, the canonical shape's word
for "these nodes are down for maintenance in this window".
"""

from __future__ import annotations

import re

from app.scheduler.pbs.parsing import parse_time
from app.scheduler.types import Reservation

_ID_LINE = "Resv ID: "
# resv_nodes: (pbshead:ncpus=2)+(node2:ncpus=1:mem=1gb)
_HOST = re.compile(r"\(([^:()+]+)")


def rstat_argv() -> list[str]:
    """argv listing every reservation in full, times in UTC."""
    return ["env", "TZ=UTC", "pbs_rstat", "-f"]


def _blocks(text: str) -> list[dict[str, str]]:
    blocks: list[dict[str, str]] = []
    for line in text.splitlines():
        if line.startswith(_ID_LINE):
            blocks.append({"Resv ID": line.removeprefix(_ID_LINE).strip()})
        elif blocks and " = " in line:
            name, _, value = line.partition(" = ")
            blocks[-1][name.strip()] = value.strip()
    return blocks


def _reservation(fields: dict[str, str]) -> Reservation | None:
    resv_id = fields["Resv ID"]
    start = parse_time(fields.get("reserve_start"))
    if not resv_id or start is None:
        return None
    name = fields.get("Reserve_Name", "")
    return Reservation(
        name=resv_id if name in ("", "NULL") else name,
        start=start,
        end=parse_time(fields.get("reserve_end")),
        flags=frozenset({"MAINT"}) if resv_id.startswith("M") else frozenset(),
        nodes=",".join(dict.fromkeys(_HOST.findall(fields.get("resv_nodes", "")))),
        partition=None,
        state=fields.get("reserve_state", ""),
        native=fields,
    )


def parse_reservations(text: str) -> list[Reservation]:
    """Every reservation ``pbs_rstat -f`` printed; one without a start is left out."""
    return [r for block in _blocks(text) if (r := _reservation(block)) is not None]
