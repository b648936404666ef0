"""JupyterLab on the dev clusters' compute nodes, for tests that launch interactive sessions.

``scripts/test`` starts ``scripts/dev-cluster apps --version V`` for every version in one
background job once the clusters are up (``start_apps_installs`` in ``scripts/lib/setup.sh``).
Per version it writes ``apps-V.log`` under :data:`STATE_DIR`, then ``apps-V.ready`` on success
or ``apps-V.failed`` (holding the exit status) on failure; ``apps.pid`` names the background
job (``PID START-TIME VERSION...``) while it runs. :func:`wait_for_jupyterlab` waits for that
version's outcome, and when nothing is installing it (pytest run without ``scripts/test``)
installs it itself. A failed or late install fails the test; it is never skipped.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

STATE_DIR = Path("/var/lib/hpcportal-dev")
DEV_CLUSTER = Path(__file__).resolve().parent.parent / "scripts" / "dev-cluster"
LOG_TAIL_LINES = 40


def log_path(version: str) -> Path:
    return STATE_DIR / f"apps-{version}.log"


def ready_marker(version: str) -> Path:
    return STATE_DIR / f"apps-{version}.ready"


def failed_marker(version: str) -> Path:
    return STATE_DIR / f"apps-{version}.failed"


def _log_tail(version: str) -> str:
    try:
        lines = log_path(version).read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return f"(no log at {log_path(version)})"
    return "\n".join(lines[-LOG_TAIL_LINES:]) or "(empty log)"


def _start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/PID/stat`` of a live process (None once it has ended).

    The start time tells the background job from a later process with the same pid. A job
    that ended stays a zombie until its parent reaps it, and its parent is pytest itself
    (``scripts/test`` execs pytest), which never does: a zombie counts as ended.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def background_install_pending(version: str) -> bool:
    """Whether ``scripts/test``'s background job is alive and has ``version`` still to do."""
    try:
        pid_text, start, *versions = (STATE_DIR / "apps.pid").read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False
    return version in versions and _start_time(pid) == start


def _outcome(version: str) -> bool:
    """True once the install succeeded; raises once it failed; False while undecided."""
    if ready_marker(version).exists():
        return True
    failed = failed_marker(version)
    if failed.exists():
        status = failed.read_text().strip() or "?"
        raise AssertionError(
            f"installing JupyterLab for Slurm {version} failed (exit {status}); "
            f"after fixing it, remove {failed} (the next wait installs it again). "
            f"End of {log_path(version)}:\n{_log_tail(version)}"
        )
    return False


def _install_now(version: str, timeout: float) -> None:
    """Run the install in the foreground, writing the same log and markers as scripts/test."""
    STATE_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    with log_path(version).open("w") as log:
        try:
            done = subprocess.run(
                [str(DEV_CLUSTER), "apps", "--version", version],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=max(timeout, 1.0),
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"installing JupyterLab for Slurm {version} took more than {timeout:.0f} s. "
                f"End of {log_path(version)}:\n{_log_tail(version)}"
            ) from None
    if done.returncode == 0:
        ready_marker(version).touch()
        return
    new = failed_marker(version).with_suffix(".failed.new")
    new.write_text(f"{done.returncode}\n")
    new.replace(failed_marker(version))
    _outcome(version)


def wait_for_jupyterlab(version: str, timeout: float = 900) -> None:
    """Return once JupyterLab is installed on ``version``'s compute node.

    Waits for the background install of ``scripts/test``; when none is running or due for this
    version (and it has no outcome yet), runs ``scripts/dev-cluster apps`` itself. Raises
    ``AssertionError`` with the end of the install log when the install failed or did not
    finish within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while not _outcome(version):
        if not background_install_pending(version):
            # The job may have written the outcome just before it ended.
            if _outcome(version):
                return
            _install_now(version, deadline - time.monotonic())
            return
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"JupyterLab for Slurm {version} not installed after {timeout:.0f} s. "
                f"End of {log_path(version)}:\n{_log_tail(version)}"
            )
        time.sleep(1)
