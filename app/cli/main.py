"""Entry point of the ``hpcportal`` console script: argument parsing and exit statuses."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.cli import announcements, commands, nodes, script_submit, sessions, workflows
from app.cli.client import CliError, PortalClient
from app.cli.config import ClientConfig, ConfigMissing, load_config, save_config
from app.cli.exit_codes import EXIT_CODE_HELP, ExitCode


def _json_flag() -> argparse.ArgumentParser:
    # SUPPRESS keeps a subcommand's default from hiding a --json given before it.
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output"
    )
    return shared


def _add_job_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    shared = _json_flag()
    jobs = sub.add_parser("jobs", help="list, show and cancel jobs").add_subparsers(
        dest="action", required=True
    )
    listing = jobs.add_parser("list", parents=[shared], help="your jobs, newest first")
    listing.add_argument("--state", help="only jobs in this state")
    listing.add_argument("--project", type=int, help="only jobs of this project id")
    listing.add_argument(
        "--projects", action="store_true", help="your projects' jobs too, not only yours"
    )
    listing.add_argument("--search", help="name contains this, or this Slurm id (169, 169_2)")
    listing.add_argument("--template", type=int, help="only jobs of this template id")
    listing.add_argument("--cluster", help="only jobs on this cluster")
    listing.add_argument("--since", help="submitted on or after this day (YYYY-MM-DD)")
    listing.add_argument("--until", help="submitted on or before this day (YYYY-MM-DD)")
    listing.add_argument("--limit", type=int, default=50)
    listing.set_defaults(run=commands.jobs_list)
    actions = {"show": commands.jobs_show, "script": commands.jobs_script}
    actions["cancel"] = commands.jobs_cancel
    for name, run in actions.items():
        parser = jobs.add_parser(name, parents=[shared], help=f"{name} one job")
        parser.add_argument("job", type=int)
        parser.set_defaults(run=run)
    logs = sub.add_parser("logs", parents=[shared], help="print a job's output")
    logs.add_argument("job", type=int)
    logs.add_argument("--stderr", action="store_true", help="the error stream instead of stdout")
    logs.add_argument("--follow", "-f", action="store_true", help="keep printing until it ends")
    logs.set_defaults(run=commands.logs)
    wait = sub.add_parser("wait", parents=[shared], help="wait until a job has ended")
    wait.add_argument("job", type=int)
    wait.add_argument("--timeout", type=float, help="give up after this many seconds")
    wait.set_defaults(run=commands.wait)
    tasks = sub.add_parser("tasks", parents=[shared], help="an array job's tasks")
    tasks.add_argument("job", type=int)
    tasks.add_argument("--state", action="append", help="only tasks in this state (repeatable)")
    tasks.set_defaults(run=commands.tasks)
    retry = sub.add_parser("retry", parents=[shared], help="submit an array's failed tasks again")
    retry.add_argument("job", type=int)
    retry.add_argument(
        "--failed", action="store_true", required=True, help="exactly the tasks that failed"
    )
    retry.set_defaults(run=commands.retry_failed)


def _add_template_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    shared = _json_flag()
    templates = sub.add_parser("templates", help="job templates").add_subparsers(
        dest="action", required=True
    )
    templates.add_parser("list", parents=[shared]).set_defaults(run=commands.templates_list)
    show = templates.add_parser("show", parents=[shared], help="parameters and script")
    show.add_argument("template", help="template id or name")
    show.set_defaults(run=commands.templates_show)
    submit = sub.add_parser(
        "submit",
        parents=[shared],
        help="submit a job from a template (or a script: hpcportal submit job.sh --help)",
    )
    submit.add_argument("template", help="template id or name")
    submit.add_argument("-p", "--parameter", action="append", default=[], metavar="KEY=VALUE")
    submit.add_argument("--version", type=int, help="template version (default: current)")
    submit.add_argument("--project", type=int, help="project id (default: your only project)")
    submit.add_argument("-d", "--dependency", help=script_submit.DEPENDENCY_HELP)
    submit.add_argument("--idempotency-key", help="resending the same key never submits twice")
    submit.add_argument("--wait", action="store_true", help="wait and exit with the job's result")
    submit.add_argument("--timeout", type=float, help="with --wait: give up after N seconds")
    submit.set_defaults(run=commands.submit)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hpcportal",
        description="Command-line client for the HPC portal's API.",
        epilog=EXIT_CODE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", default=False, help="machine output")
    sub = parser.add_subparsers(dest="command", required=True)
    configure = sub.add_parser("configure", help="store the portal URL and your token")
    configure.add_argument("--url", required=True)
    configure.add_argument("--token", required=True)
    sub.add_parser("me", parents=[_json_flag()], help="who the token belongs to").set_defaults(
        run=commands.me
    )
    _add_template_commands(sub)
    _add_job_commands(sub)
    sessions.add_commands(sub, _json_flag())
    announcements.add_commands(sub, _json_flag())
    nodes.add_commands(sub, _json_flag())
    workflows.add_commands(sub, _json_flag())
    return parser


def _configure(args: argparse.Namespace) -> ExitCode:
    path = save_config(ClientConfig(url=args.url.rstrip("/"), token=args.token))
    print(f"saved to {path}")
    return ExitCode.OK


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    words = list(argv)
    json_first = words[:1] == ["--json"]
    rest = words[1:] if json_first else words
    if not script_submit.is_script_submission(rest):
        return build_parser().parse_args(words)
    args = script_submit.parse(script_submit.build_parser(_json_flag()), rest)
    args.json = getattr(args, "json", False) or json_first
    args.command, args.run = "submit", commands.submit_script
    return args


def run(argv: Sequence[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.command == "configure":
        return _configure(args)
    try:
        client = PortalClient(load_config())
    except ConfigMissing as error:
        print(f"hpcportal: {error}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        code: ExitCode = args.run(client, args)
        return code
    except CliError as error:
        print(f"hpcportal: {error.message}", file=sys.stderr)
        return error.exit_code
    finally:
        client.close()


def main() -> None:
    try:
        sys.exit(run())
    except KeyboardInterrupt:
        sys.exit(130)
