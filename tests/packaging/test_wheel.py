"""An installed portal carries its page templates and static files and serves them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns("__pycache__")


def _data_files_in_checkout() -> set[str]:
    """Every file under app/ that is not Python, through the links to templates and static."""
    found = set()
    for folder, _, files in os.walk(ROOT / "app", followlinks=True):
        for name in files:
            path = Path(folder) / name
            if path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts:
                found.add(path.relative_to(ROOT).as_posix())
    return found


def test_the_wheel_carries_every_template_static_and_data_file(tmp_path: Path) -> None:
    # Built from a copy: the build leaves build/ and *.egg-info behind in its source.
    source = tmp_path / "source"
    for name in ("app", "templates", "static"):
        shutil.copytree(ROOT / name, source / name, symlinks=True, ignore=IGNORED)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), "."]
    subprocess.run(build, cwd=source, check=True, env={**os.environ, "PIP_NO_INPUT": "1"})
    (wheel,) = tmp_path.glob("hpc_portal-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())

    data = _data_files_in_checkout()
    assert {"app/_templates/base.html", "app/_static/css/portal.css"} <= data
    assert {
        "app/job_templates/site/hello-world.toml",
        "app/interactive/apps/jupyterlab.toml",
    } <= data
    assert sorted(data - names) == []

    target = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "-t", str(target)]
    subprocess.run([*install, str(wheel)], check=True)
    probe = (
        "from app.templating import TEMPLATES_DIR; from app.main import STATIC_DIR; "
        "print(TEMPLATES_DIR.resolve()); print((STATIC_DIR / 'css' / 'portal.css').is_file())"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert shown == [str((target / "app" / "_templates").resolve()), "True"]
