"""``hpcportal workflows``: save a graph of steps from a file, run it, follow and rerun its runs.

A workflow file is the API's body in JSON or TOML. A step may name its script with
``script_file`` (a path relative to the workflow file): the client reads it and sends its
bytes as ``script``, so a researcher keeps each step's script where it already lives.
"""

from __future__ import annotations

import argparse
import json
import time
import tomllib
from pathlib import Path
from typing import Any

from app.cli import output
from app.cli.client import CliError, PortalClient
from app.cli.exit_codes import ExitCode
from app.scheduler.states import JobState
from app.vocabulary.job_states import JobStateName

WORKFLOW_COLUMNS = ("id", "name", "project_id", "steps", "is_shared")
STEP_COLUMNS = ("name", "after", "state", "slurm_job_id", "job_id", "attempts", "waiting")
# The API's names of the states a step's job ends in.
ENDED = frozenset(
    {JobStateName.SUBMIT_FAILED.value} | {state.value for state in JobState if state.is_terminal}
)
POLL_SECONDS = 3.0


def _file_body(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read {path}: {error}", ExitCode.USAGE) from error
    try:
        body = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        kind = "TOML" if path.suffix == ".toml" else "JSON"
        raise CliError(f"{path} is not valid {kind}: {error}", ExitCode.USAGE) from error
    if not isinstance(body, dict):
        raise CliError(f"{path} must hold one workflow (an object)", ExitCode.USAGE)
    return body


def _read_script(step: dict[str, Any], folder: Path) -> dict[str, Any]:
    named = step.get("script_file")
    if named is None:
        return step
    if "script" in step:
        raise CliError(f"step {step.get('name')!r} has both script and script_file", ExitCode.USAGE)
    path = folder / str(named)
    try:
        script = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        message = f"step {step.get('name')!r}: cannot read {path}: {error}"
        raise CliError(message, ExitCode.USAGE) from error
    return {**{k: v for k, v in step.items() if k != "script_file"}, "script": script}


def workflow_body(path: Path, project: int | None) -> dict[str, Any]:
    """The API body for the workflow file at ``path``, its scripts read beside it."""
    body = _file_body(path)
    steps = body.get("steps")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise CliError(f"{path} needs a list of steps", ExitCode.USAGE)
    body["steps"] = [_read_script(step, path.parent) for step in steps]
    if project is not None:
        body["project_id"] = project
    return body


def _summary(workflow: dict[str, Any]) -> dict[str, Any]:
    return {**workflow, "steps": len(workflow["steps"])}


def _step_row(step: dict[str, Any]) -> dict[str, Any]:
    return {
        **step,
        "after": ",".join(step["after"]) or None,
        "state": step["state"] or "not submitted",
        "waiting": step.get("waiting_explanation"),
    }


def _show_run(args: argparse.Namespace, run: dict[str, Any]) -> None:
    if getattr(args, "json", False):
        output.print_json(run)
        return
    print(f"run {run['id']} of workflow {run['workflow_id']}")
    output.print_table([_step_row(step) for step in run["steps"]], STEP_COLUMNS)


def _settled(step: dict[str, Any]) -> bool:
    """Ended, or waiting for ever on a step that will not end as it needs (Slurm keeps it)."""
    return step["state"] in ENDED or step.get("waiting_explanation") is not None


def _run_result(run: dict[str, Any]) -> ExitCode:
    """OK when every step completed; the failure when one did not."""
    states = [step["state"] for step in run["steps"]]
    return ExitCode.OK if all(state == "completed" for state in states) else ExitCode.JOB_FAILED


def _wait(client: PortalClient, run: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    deadline = None if timeout is None else time.monotonic() + timeout
    while not all(_settled(step) for step in run["steps"]):
        if deadline is not None and time.monotonic() > deadline:
            raise CliError(f"run {run['id']} has not ended yet", ExitCode.WAIT_TIMEOUT)
        time.sleep(POLL_SECONDS)
        run = client.get(f"/workflows/runs/{run['id']}")
    return run


def workflows_list(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    found = client.get("/workflows")
    if args.json:
        output.print_json(found)
    else:
        output.print_table([_summary(w) for w in found], WORKFLOW_COLUMNS)
    return ExitCode.OK


def workflows_show(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    found = client.get(f"/workflows/{args.workflow}")
    if args.json:
        output.print_json(found)
        return ExitCode.OK
    output.print_fields(_summary(found), WORKFLOW_COLUMNS)
    rows = [{**step, "after": ",".join(step["after"]) or None} for step in found["steps"]]
    output.print_table(rows, ("name", "after", "kind", "template_id"))
    return ExitCode.OK


def workflows_create(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    created = client.post("/workflows", workflow_body(Path(args.file), args.project))
    if args.json:
        output.print_json(created)
    else:
        print(f"workflow {created['id']} saved: {created['name']} ({len(created['steps'])} steps)")
    return ExitCode.OK


def _after_start(client: PortalClient, args: argparse.Namespace, run: dict[str, Any]) -> ExitCode:
    if args.wait:
        run = _wait(client, run, args.timeout)
    _show_run(args, run)
    return _run_result(run) if args.wait else ExitCode.OK


def workflows_run(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    return _after_start(client, args, client.post(f"/workflows/{args.workflow}/runs"))


def workflows_rerun(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    return _after_start(client, args, client.post(f"/workflows/runs/{args.run_id}/rerun"))


def workflows_status(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    _show_run(args, client.get(f"/workflows/runs/{args.run_id}"))
    return ExitCode.OK


def _waiting(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wait", action="store_true", help="wait until every step has ended")
    parser.add_argument("--timeout", type=float, help="with --wait: give up after N seconds")


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], shared: argparse.ArgumentParser
) -> None:
    actions = sub.add_parser("workflows", help="steps that wait for each other").add_subparsers(
        dest="action", required=True
    )
    actions.add_parser("list", parents=[shared], help="yours and your projects' shared ones")
    actions.choices["list"].set_defaults(run=workflows_list)
    show = actions.add_parser("show", parents=[shared], help="one workflow's steps")
    show.add_argument("workflow", type=int)
    show.set_defaults(run=workflows_show)
    create = actions.add_parser(
        "create", parents=[shared], help="save a workflow from a JSON or TOML file"
    )
    create.add_argument("file", help="steps may name their script with script_file")
    create.add_argument("--project", type=int, help="project id (overrides the file's)")
    create.set_defaults(run=workflows_create)
    start = actions.add_parser("run", parents=[shared], help="submit every step")
    start.add_argument("workflow", type=int)
    _waiting(start)
    start.set_defaults(run=workflows_run)
    status = actions.add_parser("status", parents=[shared], help="a run's steps and states")
    status.add_argument("run_id", type=int)
    status.set_defaults(run=workflows_status)
    rerun = actions.add_parser(
        "rerun", parents=[shared], help="submit again the steps that did not succeed"
    )
    rerun.add_argument("run_id", type=int)
    _waiting(rerun)
    rerun.set_defaults(run=workflows_rerun)
