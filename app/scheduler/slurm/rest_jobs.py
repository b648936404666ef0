"""Job operations over slurmrestd, in whichever API version the server and library share.

Every answer is read through ``rest.read_response`` (errors, per-job ``status[]`` failures
and warnings) and every job record through the one canonical mapping in ``rest_parsing``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from app.scheduler.errors import RejectKind, SubmitRejected
from app.scheduler.slurm.commands import check_job_ids
from app.scheduler.slurm.rest import RestRequestFailed, RestTransport
from app.scheduler.slurm.rest_parsing import submit_payload
from app.scheduler.slurm.rest_queue import RestQueue
from app.scheduler.slurm.rest_versions import API_VERSIONS, reports_cancel_failures, upgrade_ping
from app.scheduler.types import JobInfo, JobSpec

# v0.0.38 (22.05) has no dependable job update for holds; those go over SSH there.
_HOLD_FROM = "v0.0.40"


class RestJobs:
    """Submit, list, cancel, hold and release jobs through one RestTransport."""

    def __init__(self, transport: RestTransport) -> None:
        self.transport = transport
        self.listing = RestQueue()

    async def submit(self, spec: JobSpec, as_user: str) -> str:
        """Submit as ``as_user``; the job id, or SubmitRejected in Slurm's words."""
        version = await self.transport.version()
        body = submit_payload(spec, f"/home/{as_user}", version, now=time.time())
        try:
            answer = await self.transport.call("POST", "job/submit", as_user=as_user, body=body)
        except RestRequestFailed as exc:
            # v0.0.38 reports a held submission as an "error" that still carries the job id.
            if exc.status != 200 or not isinstance(exc.payload.get("job_id"), int):
                raise exc.as_submit_error() from exc
            answer = dict(exc.payload)
        job_id = answer.get("job_id")
        if not isinstance(job_id, int):
            raise SubmitRejected(RejectKind.OTHER, "slurmrestd returned no job id", str(answer))
        return str(job_id)

    async def queue(self) -> list[JobInfo]:
        """Every job slurmctld holds, from one ``GET jobs`` (empty when none changed)."""
        version = await self.transport.version()

        async def fetch(query: Mapping[str, str] | None) -> dict[str, Any]:
            return await self.transport.call("GET", "jobs", params=query)

        return await self.listing.read(fetch, version)

    async def cancel(self, job_ids: Sequence[str], as_user: str) -> None:
        """DELETE each job as the user; a refusal inside a 200 answer is a failure too."""
        for job_id in check_job_ids(job_ids):
            try:
                await self.transport.call("DELETE", f"job/{job_id}", as_user=as_user)
            except RestRequestFailed as exc:
                raise exc.as_control_error() from exc

    async def takes_script_args(self) -> bool:
        """Whether submissions may carry script arguments (``argv``) in this API.

        slurmrestd 22.05 (v0.0.38) drops the connection and exits on a submission with
        ``argv``: such jobs go over SSH there.
        """
        return await self.transport.version() != "v0.0.38"

    async def reports_cancel_failures(self) -> bool:
        """Whether this server's DELETE says when a job was not cancelled."""
        return reports_cancel_failures(await self.transport.version())

    async def supports_holds(self) -> bool:
        """Whether this server's API holds and releases jobs through a job update."""
        # API_VERSIONS runs newest first.
        return API_VERSIONS.index(await self.transport.version()) <= API_VERSIONS.index(_HOLD_FROM)

    async def set_held(self, job_ids: Sequence[str], as_user: str, *, held: bool) -> None:
        """Hold (or release) each job with ``POST job/{id}`` ``{"hold": …}`` as the user."""
        for job_id in check_job_ids(job_ids):
            try:
                await self.transport.call(
                    "POST", f"job/{job_id}", as_user=as_user, body={"hold": held}
                )
            except RestRequestFailed as exc:
                raise exc.as_control_error() from exc

    async def ping(self) -> tuple[bool, str]:
        """Whether a slurmctld answers slurmrestd's ping, and the raw answer."""
        version = await self.transport.version()
        raw = (await self.transport.call("GET", "ping")).get("pings", [])
        pings = [upgrade_ping(p, version) for p in raw if isinstance(p, dict)]
        return any(p.get("responding") is True for p in pings), str(raw)
