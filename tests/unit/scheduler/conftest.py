"""Access to the Slurm outputs recorded by scripts/capture-slurm-outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slurm" / "22.05"


class Recorded:
    """Recorded outputs plus the manifest saying which job id did what."""

    def __init__(self, root: Path) -> None:
        self.root = root
        manifest = json.loads((root / "manifest.json").read_text())
        self.jobs: dict[str, str] = manifest["jobs"]
        self.user: str = manifest["user"]
        self.log_dir: str = manifest["log_dir"]

    def text(self, name: str) -> str:
        return (self.root / name).read_text()

    def json(self, name: str) -> Any:
        return json.loads((self.root / name).read_text())


@pytest.fixture(scope="session")
def recorded() -> Recorded:
    return Recorded(FIXTURES)
