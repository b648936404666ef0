"""Operator commands: `python -m app.manage migrate`.

Kept apart from the researchers' CLI (`hpcportal`), which talks only to the public API.
"""

from __future__ import annotations

import argparse
import sys

from app.config import load_settings
from app.db import migrate_to_head


def _migrate() -> int:
    settings = load_settings()
    migrate_to_head(settings.database_url)
    print(f"database migrated to head: {settings.database_url.split('@')[-1]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.manage")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="apply every database migration (alembic upgrade head)")
    args = parser.parse_args(argv)
    if args.command == "migrate":
        return _migrate()
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
