"""sbatch's value grammars for the options the portal stores, checks and shows.

Each parser raises ValueError with a sentence a researcher can act on, in the terms sbatch
uses (``Invalid --time specification``), so a script is refused before it reaches sbatch
only for what sbatch itself would refuse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TIME = re.compile(
    r"(?:(?P<days>\d+)-(?P<dh>\d+)(?::(?P<dm>\d+)(?::(?P<ds>\d+))?)?)"
    r"|(?P<a>\d+)(?::(?P<b>\d+)(?::(?P<c>\d+))?)?"
)
_MEMORY = re.compile(r"(?P<n>\d+)(?P<unit>[KMGT]?)B?", re.IGNORECASE)
_UNITS_MB = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 * 1024}
_GPU_SPEC = re.compile(r"(?:(?P<name>gpu)(?::(?P<type>[A-Za-z0-9_.-]+))?(?::(?P<count>\d+))?)")


def time_minutes(text: str) -> int:
    """``--time`` in whole minutes, rounded up as Slurm does.

    Forms: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``.
    """
    match = _TIME.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"Invalid --time specification {text!r} (e.g. 30, 2:00:00, 1-12:00)")
    if match["days"] is not None:
        seconds = (
            int(match["days"]) * 86400
            + int(match["dh"]) * 3600
            + int(match["dm"] or 0) * 60
            + int(match["ds"] or 0)
        )
    elif match["c"] is not None:
        seconds = int(match["a"]) * 3600 + int(match["b"]) * 60 + int(match["c"])
    else:
        seconds = int(match["a"]) * 60 + int(match["b"] or 0)
    return max(1, -(-seconds // 60))


def memory_mb(text: str) -> int:
    """``--mem`` / ``--mem-per-cpu`` in megabytes (``32000M``, ``4G``, ``1Gb``, ``512``)."""
    match = _MEMORY.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"Invalid memory specification {text!r} (e.g. 4G, 32000M)")
    return max(0, int(int(match["n"]) * _UNITS_MB[match["unit"].upper()]))


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """GPUs per node and their type (``""`` for any)."""

    count: int
    type: str = ""


def gpus(gres: str | None, gpus_per_node: str | None, gpus_total: str | None) -> GpuRequest | None:
    """GPUs asked for by ``--gres=gpu[:type][:n]``, ``--gpus-per-node`` or ``--gpus``."""
    if gres:
        for item in gres.split(","):
            match = _GPU_SPEC.fullmatch(item.strip())
            if match is not None:
                return GpuRequest(int(match["count"] or 1), match["type"] or "")
        return None
    for value in (gpus_per_node, gpus_total):
        if value:
            kind, _, count = value.rpartition(":")
            if not count.isdigit():
                raise ValueError(f"Invalid GPU count {value!r} (e.g. 2 or a100:2)")
            return GpuRequest(int(count), kind)
    return None


def node_count(text: str) -> int:
    """The minimum of ``--nodes`` (``2`` or ``1-4``)."""
    low = text.strip().split("-", 1)[0]
    if not low.isdigit() or int(low) < 1:
        raise ValueError(f"Invalid --nodes specification {text!r} (e.g. 2 or 1-4)")
    return int(low)


def whole_number(option: str, text: str) -> int:
    """A positive integer option (``--ntasks``, ``--cpus-per-task``)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"--{option} expects a whole number, not {text!r}")
    return int(text)


_ARRAY_RANGE = re.compile(r"(?P<start>\d{1,7})(?:-(?P<end>\d{1,7})(?::(?P<step>\d{1,7}))?)?")
ARRAY_HINT = "use task numbers like 1-10, 1,3,5 or 1-100%4"


def array_tasks(text: str) -> int:
    """How many tasks ``--array`` asks for; ValueError saying what sbatch would refuse.

    The throttle must let at least one task run, a range must count up, a step must move.
    """
    spec, percent, throttle = text.strip().partition("%")
    if percent and not (throttle.isdigit() and len(throttle) <= 7):
        raise ValueError(ARRAY_HINT)
    if percent and int(throttle) < 1:
        raise ValueError(
            f"%{throttle} would let no task run; write %1 or more, or leave it out for no limit"
        )
    count = 0
    for part in spec.split(","):
        match = _ARRAY_RANGE.fullmatch(part)
        if match is None:
            raise ValueError(ARRAY_HINT)
        start, end = int(match["start"]), int(match["end"] or match["start"])
        step = int(match["step"] or 1)
        if end < start:
            raise ValueError(f"{part} counts down; write the smaller number first ({end}-{start})")
        if step < 1:
            raise ValueError(f"{part} has a step of 0; use :1 or more")
        count += (end - start) // step + 1
    return count
