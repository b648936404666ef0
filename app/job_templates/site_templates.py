"""Templates shipped with the portal, one TOML file each, installed as site templates."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SITE_DIR = Path(__file__).resolve().parent / "site"


@dataclass(frozen=True, slots=True)
class SiteTemplate:
    name: str
    description: str
    job_name: str
    script: str
    parameter_schema: dict[str, Any]


def _load(path: Path) -> SiteTemplate:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    return SiteTemplate(
        name=raw["name"],
        description=raw["description"],
        job_name=raw["job_name"],
        # TOML's ''' strings keep the newline after the opening quotes; the shebang must lead.
        script=raw["script"].lstrip("\n"),
        parameter_schema={"parameters": raw.get("parameters", [])},
    )


def site_templates() -> list[SiteTemplate]:
    return [_load(path) for path in sorted(SITE_DIR.glob("*.toml"))]
