"""Reading and following a job's stdout/stderr on its cluster.

Files are read through the scheduler adapter as the job owner's cluster username, not as the
person looking. The portal has already decided who may see the job (``authz.get_visible_job``:
the owner, members of its project, site admins); the owner is the only cluster identity that
is sure to be allowed to read the file. Reading as the owner also keeps the cluster's own
permissions as a second barrier: a bug in the portal's authorization can at worst show a file
the *owner* may read, never one under some other account. A colleague reading as themselves
would fail on 0600 files, and granting them rights over the owner's home is not the portal's
business.

The database session is used only to authorize and to fetch the job row; it is closed before
any SSH traffic, so no transaction stays open across a slow cluster.
"""

from __future__ import annotations

import asyncio
import posixpath
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import NotFound, ServiceUnavailable, ValidationFailed
from app.i18n import _
from app.jobs import authz, repository
from app.jobs.service import AdapterLookup
from app.jobs.states import is_terminal
from app.models.jobs import Job
from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import FileUnavailable, InvalidSpec, SchedulerUnavailable
from app.scheduler.log_paths import PatternValues, expand
from app.users.actor import Actor

LogStream = Literal["stdout", "stderr"]
STREAMS: tuple[LogStream, ...] = ("stdout", "stderr")
LOG_PAGE_BYTES = 64 * 1024
MAX_PAGE_BYTES = 1024 * 1024
FOLLOW_INTERVAL = 0.3
# The state is re-read from the database at most this often while following.
STATE_RECHECK_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class LogSource:
    """Where a job's stream lives and whose identity reads it."""

    job_id: int
    cluster: str
    path: str
    as_user: str
    is_finished: bool


@dataclass(frozen=True, slots=True)
class LogChunk:
    """A slice of a log file; ``next_offset`` continues the read, ``size`` is the file size."""

    stream: LogStream
    data: bytes
    offset: int
    next_offset: int
    size: int
    eof: bool
    is_missing: bool = False

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def expand_log_path(template: str, job: Job, username: str) -> str:
    """Replace Slurm's filename patterns (%j, %A, %a, %x, %u, %%) with this job's values."""
    job_id = job.slurm_job_id or ""
    array_id, _sep, task_id = job_id.partition("_")
    # A task row seen before its own number was recorded falls back to its array's.
    values = PatternValues(job.slurm_raw_id or array_id, job.name, username, array_id, task_id)
    return expand(template, values)


def is_array_parent(job: Job) -> bool:
    """An array job as a whole, whose output is its tasks' files, one each."""
    return job.array_spec is not None and job.array_parent_id is None


def default_log_path(job: Job, stream: LogStream, paths: Job | None = None) -> str | None:
    """The file a job writes ``stream`` to, following sbatch's defaults when none was set.

    ``paths`` is the row holding the paths when it is not ``job`` itself (an array task
    recorded before task rows carried their array's paths).
    """
    paths = paths or job
    explicit = paths.stdout_path if stream == "stdout" else paths.stderr_path or paths.stdout_path
    if explicit:
        return explicit
    if not paths.work_dir:
        return None
    name = "slurm-%A_%a.out" if job.array_task_id is not None else "slurm-%j.out"
    return posixpath.join(paths.work_dir, name)


async def find_log_source(
    session: AsyncSession, actor: Actor, job_id: int, stream: LogStream
) -> LogSource:
    """Authorize ``actor`` on the job and say where its ``stream`` is; NotFound otherwise."""
    if stream not in STREAMS:
        raise NotFound()
    job = await authz.get_visible_job(session, actor, job_id)
    if is_array_parent(job):
        raise NotFound(_("An array has no output of its own: each task writes its own file."))
    username = await repository.get_cluster_username(session, job.owner_user_id, job.cluster)
    paths = job
    if job.array_parent_id is not None and not (job.stdout_path or job.work_dir):
        paths = await repository.get_by_id(session, job.array_parent_id) or job
    template = default_log_path(job, stream, paths)
    if username is None or template is None or not job.slurm_job_id:
        raise NotFound(_("This job has no log file yet."))
    path = expand_log_path(template, job, username)
    return LogSource(job.id, job.cluster, path, username, is_terminal(job.state))


async def _locate(
    sessionmaker: async_sessionmaker[AsyncSession],
    actor: Actor,
    job_id: int,
    stream: LogStream,
) -> LogSource:
    async with sessionmaker() as session:
        return await find_log_source(session, actor, job_id, stream)


async def _read(
    adapter: SchedulerAdapter, source: LogSource, stream: LogStream, offset: int, limit: int
) -> LogChunk:
    try:
        piece = await adapter.read_file(source.path, offset, limit, source.as_user)
    except (FileUnavailable, InvalidSpec):
        # A path with '..' or outside the roots reads as absent, like a symlink leading out:
        # the download and the stream have already started their response by now.
        return LogChunk(stream, b"", offset, offset, 0, True, is_missing=True)
    except SchedulerUnavailable as exc:
        raise ServiceUnavailable(_("The cluster did not answer; try again shortly.")) from exc
    return LogChunk(stream, piece.data, piece.offset, piece.next_offset, piece.size, piece.eof)


def _check_window(offset: int, limit: int) -> None:
    if offset < 0:
        raise ValidationFailed(fields={"offset": _("must not be negative")})
    if not 1 <= limit <= MAX_PAGE_BYTES:
        raise ValidationFailed(
            fields={"limit": _("must be between 1 and %(limit)s", limit=MAX_PAGE_BYTES)}
        )


async def read_log(
    sessionmaker: async_sessionmaker[AsyncSession],
    adapters: AdapterLookup,
    actor: Actor,
    job_id: int,
    stream: LogStream = "stdout",
    offset: int = 0,
    limit: int = LOG_PAGE_BYTES,
) -> LogChunk:
    """One bounded page of a job's log, read as the job's owner on its cluster."""
    _check_window(offset, limit)
    source = await _locate(sessionmaker, actor, job_id, stream)
    return await _read(adapters.get(source.cluster), source, stream, offset, limit)


async def _is_finished(sessionmaker: async_sessionmaker[AsyncSession], job_id: int) -> bool:
    async with sessionmaker() as session:
        state = (await session.execute(select(Job.state).where(Job.id == job_id))).scalar()
    return state is None or is_terminal(state)


async def follow_log(
    sessionmaker: async_sessionmaker[AsyncSession],
    adapters: AdapterLookup,
    actor: Actor,
    job_id: int,
    stream: LogStream = "stdout",
    offset: int = 0,
    interval: float = FOLLOW_INTERVAL,
) -> AsyncIterator[LogChunk]:
    """Yield what is appended to the log until the job has ended and the file is fully sent.

    Authorization happens once, before the first byte. The job's state is checked *before*
    reading to the end of the file, so whatever the job wrote before it finished is always
    delivered before the iterator stops.
    """
    _check_window(offset, LOG_PAGE_BYTES)
    source = await _locate(sessionmaker, actor, job_id, stream)
    adapter = adapters.get(source.cluster)
    finished = source.is_finished
    checked_at = time.monotonic()
    position = offset
    while True:
        chunk = await _read(adapter, source, stream, position, LOG_PAGE_BYTES)
        if chunk.data:
            position = chunk.next_offset
            yield chunk
            continue
        if finished:
            return
        await asyncio.sleep(interval)
        if time.monotonic() - checked_at >= STATE_RECHECK_SECONDS:
            finished = await _is_finished(sessionmaker, job_id)
            checked_at = time.monotonic()
