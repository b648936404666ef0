"""Counts the imports that run from a lower floor of the portal up to a higher one.

The floors are those of the layers contract in pyproject.toml (highest first), so the figure
and the contract cannot drift apart. A direct import is counted once per importing module and
imported module; lazy imports inside functions count too, as they do for import-linter.

    .venv/bin/python scripts/layer_report.py          # the count, then each upward import
    .venv/bin/python scripts/layer_report.py --quiet  # the count alone
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
LAYERS_CONTRACT = "layers"


@dataclass(frozen=True)
class UpwardImport:
    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} -> {self.imported}"


def declared_floors(pyproject: Path = ROOT / "pyproject.toml") -> tuple[str, list[list[str]]]:
    """The container and its floors, highest first, each a list of package tails."""
    config = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]
    for contract in config["contracts"]:
        if contract["type"] == LAYERS_CONTRACT:
            floors = [
                [tail.strip() for tail in layer.replace(":", "|").split("|")]
                for layer in contract["layers"]
            ]
            return str(contract["containers"][0]), floors
    raise LookupError("pyproject.toml declares no layers contract")


def _floor_of(module: str, container: str, floors: list[list[str]]) -> int | None:
    parts = module.split(".")
    if parts[0] != container or len(parts) < 2:
        return None
    for depth, floor in enumerate(floors):
        if parts[1] in floor:
            return depth
    return None


def upward_imports() -> list[UpwardImport]:
    container, floors = declared_floors()
    # The tree this script belongs to, not whichever one the virtualenv installed.
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(container, cache_dir=None)
    found: list[UpwardImport] = []
    for importer in sorted(graph.modules):
        below = _floor_of(importer, container, floors)
        if below is None:
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            above = _floor_of(imported, container, floors)
            if above is None or above >= below:
                continue
            details = graph.get_import_details(importer=importer, imported=imported)
            line = min((int(item["line_number"]) for item in details), default=0)
            found.append(UpwardImport(importer, imported, line))
    return found


def main(argv: list[str]) -> int:
    found = upward_imports()
    print(f"{len(found)} imports run from a lower floor up to a higher one")
    if "--quiet" not in argv:
        for item in found:
            print(f"  {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
