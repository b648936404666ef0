"""Body of GET /api/v1/clusters/{cluster}/disk-usage, from the storage service's figures."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures
from app.storage.service import ClusterDiskUsage, level_of, percent_used

LevelName = Literal["ok", "warning", "critical"]


class QuotaFiguresOut(BaseModel):
    used: int
    soft_limit: int | None = Field(description="The soft quota; null when there is none.")
    hard_limit: int | None = Field(description="The hard limit; null when there is none.")
    limit: int | None = Field(description="The limit met first: the soft quota, else the hard.")
    percent: float | None = Field(description="Share of ``limit`` used; null without a limit.")
    level: LevelName = Field(
        description="critical when over quota or from 95 %, warning from 80 %, else ok."
    )
    is_over: bool
    grace: str | None = Field(
        description="Time left to get back under the soft quota, as the cluster's tool "
        "wrote it (e.g. 6days), or 'expired'; null when not over it."
    )


class FilesystemUsageOut(BaseModel):
    filesystem: str = Field(description="As the cluster's tool names it (device, mount, path).")
    quota_of: str = Field(description="Whose quota when the tool says, e.g. 'group physics'.")
    space: QuotaFiguresOut = Field(description="In bytes.")
    files: QuotaFiguresOut = Field(description="Numbers of files (inodes).")
    is_over: bool
    raw: str = Field(description="The line(s) of the tool's output the figures come from.")


class DiskUsageOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "cluster": "testcluster",
                    "username": "alice",
                    "measured_at": "2026-11-25T10:00:00Z",
                    "filesystems": [
                        {
                            "filesystem": "/home (user alice)",
                            "quota_of": "",
                            "space": {"used": 2254857830, "limit": 53687091200, "level": "ok"},
                            "files": {"used": 12000, "limit": 500000, "level": "ok"},
                            "is_over": False,
                            "raw": "/home (user alice)   2.1GiB/50GiB   12k/500k",
                        }
                    ],
                }
            ]
        }
    )

    cluster: str
    username: str = Field(description="Your username on the cluster, whose usage this is.")
    measured_at: datetime = Field(description="When the cluster was asked (kept a minute).")
    filesystems: list[FilesystemUsageOut] = Field(
        description="One per filesystem; empty when no quota applies to you."
    )


def figures_out(figures: QuotaFigures) -> QuotaFiguresOut:
    percent = percent_used(figures)
    return QuotaFiguresOut(
        used=figures.used,
        soft_limit=figures.soft,
        hard_limit=figures.hard,
        limit=figures.limit,
        percent=None if percent is None else round(percent, 1),
        level=level_of(figures),
        is_over=figures.is_over,
        grace=figures.grace,
    )


def filesystem_out(usage: FilesystemUsage) -> FilesystemUsageOut:
    return FilesystemUsageOut(
        filesystem=usage.filesystem,
        quota_of=usage.quota_of,
        space=figures_out(usage.space),
        files=figures_out(usage.files),
        is_over=usage.is_over,
        raw=usage.raw,
    )


def disk_usage_out(found: ClusterDiskUsage) -> DiskUsageOut:
    return DiskUsageOut(
        cluster=found.cluster,
        username=found.username,
        measured_at=found.measured_at,
        filesystems=[filesystem_out(usage) for usage in found.filesystems],
    )
