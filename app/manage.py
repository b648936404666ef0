"""Operator commands: `python -m app.manage migrate`, `python -m app.manage create-admin LOGIN`.

Kept apart from the researchers' CLI (`hpcportal`), which talks only to the public API.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys

from app.config import load_settings
from app.db import create_engine, create_sessionmaker, migrate_to_head, unit_of_work
from app.users.bootstrap import BadAdmin, ensure_site_admin


def _migrate() -> int:
    settings = load_settings()
    migrate_to_head(settings.database_url)
    print(f"database migrated to head: {settings.database_url.split('@')[-1]}")
    return 0


def _password(args: argparse.Namespace) -> str | None:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    if args.no_password or not sys.stdin.isatty():
        return None
    first = getpass.getpass(f"password for {args.login}: ")
    if first != getpass.getpass("again: "):
        raise BadAdmin("the two passwords differ")
    return first


async def _create_admin(args: argparse.Namespace) -> None:
    settings = load_settings()
    engine = create_engine(settings.database_url)
    try:
        async with unit_of_work(create_sessionmaker(engine)) as session:
            made = await ensure_site_admin(session, args.login, args.name, _password(args))
            done = "created" if made.created else "made a site administrator"
            print(f"{made.user.login}: {done}")
    finally:
        await engine.dispose()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.manage")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="apply every database migration (alembic upgrade head)")
    admin = commands.add_parser(
        "create-admin",
        help="make LOGIN a site administrator, creating the account if needed (a new site's "
        "first administrator); asks for a password on a terminal",
    )
    admin.add_argument("login")
    admin.add_argument("--name", default="", help="the name shown (default: the login)")
    given = admin.add_mutually_exclusive_group()
    given.add_argument("--password-stdin", action="store_true", help="read the password's line")
    given.add_argument(
        "--no-password", action="store_true", help="signs in through single sign-on only"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "migrate":
        return _migrate()
    if args.command == "create-admin":
        try:
            asyncio.run(_create_admin(args))
        except BadAdmin as error:
            print(f"create-admin: {error}", file=sys.stderr)
            return 2
        return 0
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
