"""What every scheduler's adapter does the same way on the login node, as the user.

A job's log: the path is resolved on the cluster (links followed) and must still lie under the
cluster's log roots before a byte is read, so a user's symlink cannot make the portal read
elsewhere. Disk usage: the site's command, run as the user, never as the service identity:
quota tools report the caller, and a site script sees only what the user may see.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.scheduler.config import ClusterConfig
from app.scheduler.disk_usage import FilesystemUsage
from app.scheduler.disk_usage_parsing import read_disk_usage
from app.scheduler.errors import DiskUsageNotConfigured, FileUnavailable
from app.scheduler.slurm.commands import disk_usage_argv, read_chunk_argv, realpath_argv
from app.scheduler.slurm.parsing import parse_read_chunk
from app.scheduler.slurm.ssh import SshTransport
from app.scheduler.types import FileChunk
from app.scheduler.validation import is_under_roots, resolve_log_path


async def read_log_chunk(
    ssh: SshTransport, roots: Sequence[str], path: str, offset: int, limit: int, as_user: str
) -> FileChunk:
    """Up to ``limit`` bytes of ``path`` from ``offset``, read as ``as_user``."""
    clean = resolve_log_path(path, roots)
    real = await ssh.run(realpath_argv(clean), as_user=as_user)
    resolved = real.text.strip()
    if real.exit_status != 0 or not resolved:
        raise FileUnavailable(f"{clean} does not exist or cannot be read")
    if not is_under_roots(resolved, roots):
        raise FileUnavailable(f"{clean} points outside the allowed directories")
    result = await ssh.run(read_chunk_argv(resolved, offset, limit), as_user=as_user)
    if result.exit_status != 0:
        raise FileUnavailable(f"{clean} cannot be read: {result.stderr.strip()}")
    size, data = parse_read_chunk(result.stdout, offset)
    next_offset = offset + len(data)
    return FileChunk(data, offset, next_offset, next_offset >= size, size)


async def disk_usage_as(
    ssh: SshTransport, config: ClusterConfig, as_user: str
) -> list[FilesystemUsage]:
    """The cluster's disk usage command's report, run as ``as_user``."""
    command = config.disk_usage_command
    if not command:
        raise DiskUsageNotConfigured(f"no disk usage command for {config.name}")
    result = await ssh.run(disk_usage_argv(command, as_user), as_user=as_user)
    return read_disk_usage(result.text, result.stderr, result.exit_status, config.disk_usage_format)
