"""The layering the design rests on, as import-linter contracts (pyproject.toml)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from layer_report import upward_imports  # noqa: E402


def test_every_layering_contract_is_kept() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "8 kept, 0 broken" in done.stdout


def test_no_import_climbs_a_floor() -> None:
    # The layers contract can be given exceptions (ignore_imports); this count cannot.
    assert [str(found) for found in upward_imports()] == []


def test_package_init_files_import_nothing() -> None:
    """Importing a package runs no code of its own, so a module's imports say all it needs."""
    importing = []
    for init in sorted((ROOT / "app").rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Import | ast.ImportFrom) for node in ast.walk(tree)):
            importing.append(str(init.relative_to(ROOT)))
    assert importing == []
