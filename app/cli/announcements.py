"""``hpcportal announcements``: what administrators announce and when clusters stop for
maintenance, and dismissing one."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli import output
from app.cli.client import PortalClient
from app.cli.exit_codes import ExitCode

COLUMNS = ("id", "source", "shown_until", "text")


def announcements_list(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    params: dict[str, Any] = {"limit": 200, "dismissed": "false" if args.new else "true"}
    body = client.get("/announcements", params)
    if getattr(args, "json", False):
        output.print_json(body)
    else:
        output.print_table(body["items"], COLUMNS)
    return ExitCode.OK


def announcements_dismiss(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    client.post(f"/announcements/{args.announcement}/dismiss")
    if not getattr(args, "json", False):
        print(f"dismissed announcement {args.announcement}")
    return ExitCode.OK


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], shared: argparse.ArgumentParser
) -> None:
    commands = sub.add_parser(
        "announcements", help="announcements and maintenance windows"
    ).add_subparsers(dest="action", required=True)
    listing = commands.add_parser("list", parents=[shared], help="what is announced now")
    listing.add_argument("--new", action="store_true", help="only those you have not dismissed")
    listing.set_defaults(run=announcements_list)
    dismiss = commands.add_parser("dismiss", parents=[shared], help="stop showing one to you")
    dismiss.add_argument("announcement", type=int)
    dismiss.set_defaults(run=announcements_dismiss)
