"""Pure argv builder and parser for Slurm reservations (``scontrol show reservation``).

One line per reservation (``--oneliner``) of ``Key=Value`` pairs, printed under ``TZ=UTC``.
Slurm 22.05, 24.11 and 26.05 print the same keys for what the portal reads (newer versions
add ``AllowedPartitions``, ``QOS``; 22.05 adds ``Watts``), so one builder and one parser
serve every supported version; ``tests/fixtures/slurm/<version>/scontrol-reservations*.txt``
are their recorded outputs. ``scontrol --json`` is not used: 22.05 has no such option.
"""

from __future__ import annotations

import re
from datetime import datetime

from app.scheduler.slurm.parsing import is_absent, parse_time
from app.scheduler.types import Reservation

_UTC = ["env", "TZ=UTC"]
# A key starts each field; values may hold spaces (a comment), never " Key=".
_FIELD = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_]*)=")
_NONE = "No reservations in the system"


def reservations_argv() -> list[str]:
    """argv listing every reservation, one per line, times in UTC."""
    return [*_UTC, "scontrol", "show", "reservation", "--oneliner"]


def _fields(line: str) -> dict[str, str]:
    matches = list(_FIELD.finditer(line))
    fields: dict[str, str] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(line)
        fields[match.group(1)] = line[match.end() : end].strip()
    return fields


def _reservation(fields: dict[str, str]) -> Reservation | None:
    start = _time(fields.get("StartTime"))
    if not fields.get("ReservationName") or start is None:
        return None
    partition = fields.get("PartitionName")
    flags = fields.get("Flags", "")
    return Reservation(
        name=fields["ReservationName"],
        start=start,
        end=_time(fields.get("EndTime")),
        flags=frozenset(f.strip().upper() for f in flags.split(",") if f.strip()),
        nodes="" if is_absent(fields.get("Nodes")) else fields.get("Nodes", ""),
        partition=None if is_absent(partition) else partition,
        state=fields.get("State", ""),
        native=fields,
    )


def _time(text: str | None) -> datetime | None:
    try:
        return parse_time(text)
    except ValueError:
        return None  # "Unknown", or an unlimited reservation's end: not a moment.


def parse_reservations(text: str) -> list[Reservation]:
    """Parse ``reservations_argv()`` output; lines that are not a reservation are skipped."""
    found = []
    for line in text.splitlines():
        if not line.strip() or line.strip() == _NONE:
            continue
        reservation = _reservation(_fields(line.strip()))
        if reservation is not None:
            found.append(reservation)
    return found
