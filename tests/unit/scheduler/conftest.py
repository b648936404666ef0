"""Access to the Slurm outputs recorded by scripts/capture-slurm-outputs, one folder a version."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.scheduler.slurm.marks import Marks

# The marks scripts/capture-slurm-outputs records squeue with (the portal draws its own).
RECORDED_MARKS = Marks("recordedmark")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slurm"
VERSIONS = sorted(
    (p.name for p in FIXTURES.iterdir() if (p / "manifest.json").exists()),
    key=lambda v: tuple(int(n) for n in v.split(".")),
)


class Recorded:
    """Recorded outputs of one Slurm version plus the manifest saying which job id did what."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.version = root.name
        manifest = json.loads((root / "manifest.json").read_text())
        self.jobs: dict[str, str] = manifest["jobs"]
        self.user: str = manifest["user"]
        self.log_dir: str = manifest["log_dir"]
        self.marks = RECORDED_MARKS

    @property
    def release(self) -> tuple[int, int]:
        major, minor = self.version.split(".")
        return int(major), int(minor)

    def text(self, name: str) -> str:
        return (self.root / name).read_text()

    def json(self, name: str) -> Any:
        return json.loads((self.root / name).read_text())

    def rest(self, stem: str) -> dict[str, Any]:
        """``{api version: payload}`` for every ``<stem>-<api version>.json`` recorded."""
        found = {}
        for path in self.root.glob(f"{stem}-v*.json"):
            match = re.fullmatch(rf"{re.escape(stem)}-(v\d+\.\d+\.\d+)\.json", path.name)
            if match:
                found[match[1]] = json.loads(path.read_text())
        return found


@pytest.fixture(scope="session", params=VERSIONS)
def recorded(request: pytest.FixtureRequest) -> Recorded:
    return Recorded(FIXTURES / request.param)


@pytest.fixture(scope="session")
def recorded_2205() -> Recorded:
    """The 22.05 recording, for behaviour only that version has (dbv0.0.38, raw wait status)."""
    return Recorded(FIXTURES / "22.05")
