"""One function per command: ``(client, args) -> ExitCode``; printing goes through output."""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from app.cli import output, script_submit
from app.cli.client import CliError, PortalClient
from app.cli.exit_codes import ExitCode, for_final_state

JOB_COLUMNS = ("id", "name", "state", "cluster", "slurm_job_id", "exit_code", "submitted_at")
JOB_FIELDS = (
    *JOB_COLUMNS,
    "uuid",
    "project_id",
    "reason",
    "expected_start_at",
    "started_at",
    "ended_at",
    "end_cause",
    "end_explanation",
)
TEMPLATE_COLUMNS = ("id", "name", "scope", "current_version", "description")
WAIT_INTERVAL = 2.0
MAX_WAIT_INTERVAL = 15.0
FOLLOW_RECONNECTS = 5

Command = Callable[[PortalClient, argparse.Namespace], ExitCode]


def _emit(args: argparse.Namespace, value: Any, show: Callable[[Any], None]) -> ExitCode:
    if args.json:
        output.print_json(value)
    else:
        show(value)
    return ExitCode.OK


def me(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    fields = ("login", "display_name", "email", "is_site_admin", "scopes")
    return _emit(args, client.get("/me"), lambda body: output.print_fields(body, fields))


def templates_list(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    body = client.get("/templates")
    return _emit(args, body, lambda b: output.print_table(b["items"], TEMPLATE_COLUMNS))


def _show_template(body: dict[str, Any]) -> None:
    output.print_fields(body, (*TEMPLATE_COLUMNS, "project_id"))
    version = body.get("version") or {}
    print("\nparameters:")
    for spec in (version.get("parameter_schema") or {}).get("parameters", []):
        shown = {key: value for key, value in spec.items() if key != "name"}
        print(f"  {spec.get('name')}: {json.dumps(shown, sort_keys=True)}")
    print("\nscript:")
    print(version.get("script", ""))


def templates_show(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    template_id = resolve_template(client, args.template)
    return _emit(args, client.get(f"/templates/{template_id}"), _show_template)


def resolve_template(client: PortalClient, reference: str) -> int:
    """A template id from an id or an exact name among the templates the user can see."""
    if reference.isdigit():
        return int(reference)
    matches = [t for t in client.get("/templates")["items"] if t["name"] == reference]
    if len(matches) != 1:
        problem = "no template" if not matches else "several templates"
        raise CliError(f"{problem} named {reference!r}; use its id", ExitCode.NOT_FOUND)
    return int(matches[0]["id"])


def parse_parameters(pairs: list[str]) -> dict[str, str]:
    parameters: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CliError(f"parameter {pair!r} is not key=value", ExitCode.USAGE)
        parameters[name.strip()] = value
    return parameters


def submit(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    body: dict[str, Any] = {
        "template_id": resolve_template(client, args.template),
        "template_version": args.version,
        "parameters": parse_parameters(args.parameter),
        "project_id": args.project,
        "depends_on": script_submit.depends_on(args.dependency),
    }
    # A key per invocation lets a retried request (lost answer) return the same job.
    key = args.idempotency_key or str(uuid.uuid4())
    job = client.post("/jobs", body, headers={"Idempotency-Key": key})
    if not args.wait:
        return _emit(args, job, lambda j: print(f"submitted job {j['id']} ({j['state']})"))
    if not args.json:
        print(f"submitted job {job['id']}; waiting", file=sys.stderr)
    return _wait_and_report(client, args, int(job["id"]))


def submit_script(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    job = script_submit.submit_script(client, args)
    if not args.wait:
        return _emit(args, job, lambda j: print(f"submitted job {j['id']} ({j['state']})"))
    if not args.json:
        print(f"submitted job {job['id']}; waiting", file=sys.stderr)
    return _wait_and_report(client, args, int(job["id"]))


def jobs_list(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    params = {"state": args.state, "project_id": args.project, "limit": args.limit}
    params |= {"q": args.search, "template_id": args.template, "cluster": args.cluster}
    params |= {"since": args.since, "until": args.until}
    params["mine"] = "false" if args.projects else "true"
    body = client.get("/jobs", params)
    return _emit(args, body, lambda b: output.print_table(b["items"], JOB_COLUMNS))


def jobs_show(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    job = client.get(f"/jobs/{args.job}")
    return _emit(args, job, lambda j: output.print_fields(j, JOB_FIELDS))


def jobs_script(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    """The job's script byte for byte (``> job.sh`` keeps it), Slurm's for a job submitted
    outside the portal; NOT_FOUND once Slurm has forgotten that one."""
    found = client.get(f"/jobs/{args.job}/script")
    if found["source"] == "gone" and not args.json:
        print("Slurm no longer keeps the script of this job (submitted outside the portal).")
        return ExitCode.NOT_FOUND
    return _emit(args, found, lambda body: print(body["script"], end=""))


def jobs_cancel(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    job = client.post(f"/jobs/{args.job}/cancel")
    return _emit(args, job, lambda j: print(f"cancel requested for job {j['id']}"))


TASK_COLUMNS = ("array_task_id", "id", "state", "exit_code", "slurm_job_id", "ended_at")


def tasks(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    """Every task of an array (all pages), then how many are in each state."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = {"state": args.state, "cursor": cursor, "limit": 200}
        page = client.get(f"/jobs/{args.job}/tasks", params)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    body = {"items": items, "counts": page["counts"], "usage": page.get("usage")}

    def show(listing: dict[str, Any]) -> None:
        output.print_table(listing["items"], TASK_COLUMNS)
        if listing["usage"]:
            print(_task_usage(listing["usage"]))
        print(", ".join(f"{n} {state}" for state, n in sorted(listing["counts"].items())))

    return _emit(args, body, show)


def _task_usage(usage: dict[str, Any]) -> str:
    """One line: the longest task, CPU efficiency and the most memory a task used."""
    longest, rss = usage.get("longest_task_seconds"), usage.get("max_rss_bytes")
    efficiency = usage.get("cpu_efficiency_percent")
    return "; ".join(
        [
            f"longest task {'—' if longest is None else f'{longest} s'}",
            f"CPU efficiency {'—' if efficiency is None else f'{efficiency} %'}",
            f"most memory {'—' if rss is None else f'{rss / 2**20:.0f} MiB'}",
        ]
    )


def retry_failed(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    job = client.post(f"/jobs/{args.job}/retry-failed")
    return _emit(
        args, job, lambda j: print(f"job {j['id']} runs tasks {j['array_spec']} of job {args.job}")
    )


def logs(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    stream = "stderr" if args.stderr else "stdout"
    path = f"/jobs/{args.job}/logs/{stream}"
    if args.follow:
        return _follow(client, path)
    offset = 0
    while True:
        page = client.get(path, {"offset": offset})
        sys.stdout.write(page["data"])
        offset = int(page["next_offset"])
        if page["eof"]:
            sys.stdout.flush()
            return ExitCode.OK


def _stream_error(body: dict[str, str]) -> CliError:
    """The error a log stream ended with, with the exit status its kind calls for."""
    unreachable = body.get("error") == "ServiceUnavailable"
    code = ExitCode.UNREACHABLE if unreachable else ExitCode.ERROR
    return CliError(body.get("detail") or "the output could not be read", code)


def _follow(client: PortalClient, path: str) -> ExitCode:
    last_id: str | None = None
    for attempt in range(FOLLOW_RECONNECTS + 1):
        try:
            for event in client.events(f"{path}/follow", last_id):
                if event.event == "end":
                    return ExitCode.OK
                if event.event == "error":
                    raise _stream_error(json.loads(event.data))
                last_id = event.id or last_id
                sys.stdout.write(json.loads(event.data)["data"])
                sys.stdout.flush()
            # The server closed the stream without saying the job ended: resume.
        except CliError as error:
            if error.exit_code != ExitCode.UNREACHABLE or attempt == FOLLOW_RECONNECTS:
                raise
        time.sleep(min(2**attempt, MAX_WAIT_INTERVAL))
    raise CliError("the log stream kept closing; giving up", ExitCode.UNREACHABLE)


def wait(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    return _wait_and_report(client, args, int(args.job))


def wait_for_job(client: PortalClient, job_id: int, timeout: float | None) -> dict[str, Any] | None:
    """Poll the job until it has finished; None when ``timeout`` seconds passed first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    interval = WAIT_INTERVAL
    while True:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}")
        if job["is_finished"]:
            return job
        if deadline is not None and time.monotonic() >= deadline:
            return None
        pause = interval if deadline is None else min(interval, deadline - time.monotonic())
        time.sleep(max(pause, 0.0))
        interval = min(interval * 1.5, MAX_WAIT_INTERVAL)


def _wait_and_report(client: PortalClient, args: argparse.Namespace, job_id: int) -> ExitCode:
    job = wait_for_job(client, job_id, args.timeout)
    if job is None:
        print(f"job {job_id} has not ended after {args.timeout:g} s", file=sys.stderr)
        return ExitCode.WAIT_TIMEOUT
    _emit(args, job, _print_ending)
    return for_final_state(str(job["state"]))


def _print_ending(job: dict[str, Any]) -> None:
    print(f"job {job['id']} {job['state']} (exit code {job['exit_code']})")
    if job.get("end_explanation") and job["state"] != "completed":
        print(f"  {job['end_cause']}: {job['end_explanation']}")
