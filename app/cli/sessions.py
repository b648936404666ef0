"""``hpcportal apps`` and ``hpcportal sessions``: interactive apps launched as jobs."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from app.cli import output
from app.cli.client import CliError, PortalClient
from app.cli.exit_codes import ExitCode

SESSION_COLUMNS = (
    "id", "app", "state", "job_id", "node", "seconds_left", "idle_ends_at", "connect_url",
)  # fmt: skip
APP_COLUMNS = ("name", "title", "description")
POLL_SECONDS = 3.0


def _emit(args: argparse.Namespace, value: Any, columns: tuple[str, ...]) -> ExitCode:
    if getattr(args, "json", False):
        output.print_json(value)
    elif isinstance(value, list):
        output.print_table(value, columns)
    else:
        output.print_fields(value, columns)
    return ExitCode.OK


def apps_list(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    return _emit(args, client.get("/apps"), APP_COLUMNS)


def sessions_list(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    return _emit(args, client.get("/sessions"), SESSION_COLUMNS)


def _project(client: PortalClient, chosen: int | None) -> int:
    if chosen is not None:
        return chosen
    projects = client.get("/projects")
    if len(projects) != 1:
        raise CliError("you are in several projects (or none): name one with --project")
    return int(projects[0]["id"])


def _wait_until_running(client: PortalClient, session: dict[str, Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while session["state"] in ("queued", "starting"):
        if time.monotonic() > deadline:
            raise CliError(
                f"session {session['id']} is still {session['state']}", ExitCode.WAIT_TIMEOUT
            )
        time.sleep(POLL_SECONDS)
        session = client.get(f"/sessions/{session['id']}")
    if session["state"] != "running":
        raise CliError(f"session {session['id']} ended before it ran", ExitCode.JOB_FAILED)
    return session


def sessions_launch(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    body = {
        "app": args.app,
        "project_id": _project(client, args.project),
        "cores": args.cores,
        "memory_gb": args.memory_gb,
        "time_minutes": args.time_minutes,
        "partition": args.partition,
    }
    session = client.post("/sessions", {k: v for k, v in body.items() if v is not None})
    if args.wait:
        if not args.json:
            print(f"launched session {session['id']}; waiting for it to run", file=sys.stderr)
        session = _wait_until_running(client, session, args.timeout)
    return _emit(args, session, SESSION_COLUMNS)


def sessions_connect(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    session = client.get(f"/sessions/{args.session}")
    if session["connect_url"] is None:
        raise CliError(f"session {args.session} is {session['state']}, not running")
    print(session["connect_url"])
    return ExitCode.OK


def sessions_end(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    session = client.request("DELETE", f"/sessions/{args.session}")
    return _emit(args, session, SESSION_COLUMNS)


def sessions_keep(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    session = client.post(f"/sessions/{args.session}/keep", {})
    return _emit(args, session, SESSION_COLUMNS)


VIEWER_COLUMNS = ("id", "login", "display_name")


def sessions_viewers(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    return _emit(args, client.get(f"/sessions/{args.session}/viewers"), VIEWER_COLUMNS)


def sessions_share(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    viewer = client.post(f"/sessions/{args.session}/viewers", {"login": args.login})
    return _emit(args, viewer, VIEWER_COLUMNS)


def sessions_unshare(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    client.request("DELETE", f"/sessions/{args.session}/viewers/{args.viewer}")
    if not getattr(args, "json", False):
        print(f"viewer {args.viewer} can no longer watch session {args.session}")
    return ExitCode.OK


def _add_viewer_commands(
    sessions: argparse._SubParsersAction[argparse.ArgumentParser], shared: argparse.ArgumentParser
) -> None:
    viewers = sessions.add_parser("viewers", parents=[shared], help="who may watch your desktop")
    viewers.add_argument("session", type=int)
    viewers.set_defaults(run=sessions_viewers)
    share = sessions.add_parser(
        "share", parents=[shared], help="let a portal user watch your desktop (view only)"
    )
    share.add_argument("session", type=int)
    share.add_argument("login", help="their portal login")
    share.set_defaults(run=sessions_share)
    unshare = sessions.add_parser("unshare", parents=[shared], help="revoke a viewer")
    unshare.add_argument("session", type=int)
    unshare.add_argument("viewer", type=int, help="the viewer's id (see: sessions viewers)")
    unshare.set_defaults(run=sessions_unshare)


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], shared: argparse.ArgumentParser
) -> None:
    sub.add_parser("apps", parents=[shared], help="interactive apps you can launch").set_defaults(
        run=apps_list
    )
    sessions = sub.add_parser("sessions", help="your interactive sessions").add_subparsers(
        dest="action", required=True
    )
    sessions.add_parser("list", parents=[shared]).set_defaults(run=sessions_list)
    launch = sessions.add_parser("launch", parents=[shared], help="launch an app as a job")
    launch.add_argument("app", help="e.g. jupyterlab (see: hpcportal apps)")
    launch.add_argument("--project", type=int, help="project id (default: your only project)")
    launch.add_argument("--cores", type=int)
    launch.add_argument("--memory-gb", type=int)
    launch.add_argument("--time-minutes", type=int)
    launch.add_argument("--partition")
    launch.add_argument("--wait", action="store_true", help="wait until it runs")
    launch.add_argument("--timeout", type=float, default=600, help="with --wait (seconds)")
    launch.set_defaults(run=sessions_launch)
    for name, run, text in (
        ("connect", sessions_connect, "print the address to open in your browser"),
        ("end", sessions_end, "end a session: its job is cancelled"),
        ("keep", sessions_keep, "keep a session nobody has used lately from being ended"),
    ):
        parser = sessions.add_parser(name, parents=[shared], help=text)
        parser.add_argument("session", type=int)
        parser.set_defaults(run=run)
    _add_viewer_commands(sessions, shared)
