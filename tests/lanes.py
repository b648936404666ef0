"""Lanes: which kind of test each item is, and how pytest-xdist may spread them.

- ``unit``: ``tests/unit``, pure code, no database.
- ``db``: the rest that needs neither a cluster nor a browser (services, routes, pages on
  real databases).
- ``slurm``: marked ``slurm`` or ``lsf`` (the real development clusters), browsers excepted.
- ``browser``: marked ``browser`` (Debian's Chromium through Playwright).
- ``faults``: ``tests/faults``, which stop cluster daemons and kill processes; they wait on
  clocks, not on the cores, so ``scripts/test`` runs them after the other lanes beside the
  minimum-versions run (which uses neither a cluster nor this lane's databases).
- ``compose``: ``tests/compose``, the docker-compose stack started for real (Docker's engine,
  images built from Debian packages, a dozen containers); ``scripts/test`` runs it after the
  faults lane and before ``alone``, on its own, since building and starting the stack takes
  both cores.
- ``alone``: tests marked ``alone``, which time the portal against the whole machine (a
  200 ms bound shared with busy workers would measure them, not the portal) or load it
  (200 users for 90 s), or restart the PostgreSQL every other run uses, and tests marked
  ``all_clusters``, which use every cluster at once; ``scripts/test`` runs them last, with
  the machine to themselves.

``pytest --lane slurm,browser`` keeps those lanes' tests. Under ``--dist loadgroup``
(``tests/lane_groups.py``) a test that uses a cluster joins the group ``slurm-<version>``
(``lsf`` for the LSF cluster) and a browser test without a cluster the group ``browser``:
each group runs in one worker, one test after another, so a cluster's two CPUs are never
shared by two tests (a job would wait behind another test's jobs), while the versions, the
browser and the CPU-bound lanes run side by side. A test marked ``no_jobs`` uses a cluster
without running a job on it (a shell on the login node), so it stays out of the cluster's
group and any free worker takes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slurm_versions import HOST_VERSION

LANES = ("unit", "db", "slurm", "browser", "faults", "compose", "alone")
# Markers naming a cluster run by another scheduler: each is a group of its own.
OTHER_SCHEDULERS = ("pbs", "lsf")
TESTS = Path(__file__).resolve().parent


def add_lane_option(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lane",
        default="",
        help=f"comma-separated lanes to run, of {', '.join(LANES)} (default: every test)",
    )


def lane_of(item: pytest.Item) -> str:
    path = Path(str(item.path))
    # A test that uses every cluster at once would run beside each cluster's own tests, whose
    # portals would then see its jobs as theirs (submitted outside the portal).
    if item.get_closest_marker("alone") or item.get_closest_marker("all_clusters"):
        return "alone"
    if path.is_relative_to(TESTS / "faults"):
        return "faults"
    if path.is_relative_to(TESTS / "compose"):
        return "compose"
    if item.get_closest_marker("browser"):
        return "browser"
    if item.get_closest_marker("slurm") or slurm_version_of(item) or other_scheduler_of(item):
        return "slurm"
    if path.is_relative_to(TESTS / "unit"):
        return "unit"
    return "db"


def slurm_version_of(item: pytest.Item) -> str | None:
    params = getattr(getattr(item, "callspec", None), "params", {})
    version = params.get("slurm_version")
    return str(version) if version is not None else None


def other_scheduler_of(item: pytest.Item) -> str | None:
    return next((name for name in OTHER_SCHEDULERS if item.get_closest_marker(name)), None)


def group_of(item: pytest.Item) -> str | None:
    """The pytest-xdist group whose tests must run one after another, if any."""
    if item.get_closest_marker("no_jobs"):
        # It only reads the cluster (and never waits for its CPUs): any worker may take it.
        return "browser" if item.get_closest_marker("browser") else None
    if (scheduler := other_scheduler_of(item)) is not None:
        return scheduler
    version = slurm_version_of(item)
    if version is None and item.get_closest_marker("slurm"):
        version = HOST_VERSION
    if version is not None:
        return f"slurm-{version}"
    if item.get_closest_marker("browser"):
        return "browser"
    return None


def _wanted(config: pytest.Config) -> set[str]:
    names = {name.strip() for name in str(config.getoption("lane")).split(",") if name.strip()}
    unknown = names - set(LANES)
    if unknown:
        raise pytest.UsageError(f"--lane: unknown {sorted(unknown)}; lanes are {LANES}")
    return names


def select_lanes(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = _wanted(config)
    if wanted:
        dropped = [item for item in items if lane_of(item) not in wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if lane_of(item) in wanted]
