"""The bodies /api/v1/clusters answers with: a cluster, its partitions and the caller's
associations on it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.scheduler.capabilities import Capabilities


class PartitionOut(BaseModel):
    name: str
    is_default: bool
    state: str
    max_time_minutes: int | None
    default_time_minutes: int | None
    total_nodes: int
    idle_nodes: int
    total_cpus: int
    idle_cpus: int


class AssociationOut(BaseModel):
    account: str
    partition: str | None
    qos: list[str]


class CapabilitiesOut(BaseModel):
    """What the cluster's scheduler offers beyond what every scheduler does; a client leaves
    out what is false rather than showing a blank."""

    partition_word: Literal["partition", "queue"] = Field(
        description="What the scheduler calls the lines jobs wait in."
    )
    rest_api: bool = Field(description="The portal may reach the scheduler over a REST API.")
    expected_start: bool = Field(description="Pending jobs get an estimated start time.")
    accounts: bool = Field(description="Jobs charge accounts the user must belong to.")
    batch_script: bool = Field(description="A job's script can be read back from the scheduler.")
    reservations: bool
    account_limits: bool
    test_submission: bool = Field(description="A job can be judged without being queued.")
    script_arguments: bool = Field(description="Arguments after the script reach it as $1, $2…")
    qos: bool
    gpus: bool
    array_lists: bool = Field(description="An array may list its indices (1-3,7).")
    memory_kill_reported: bool = Field(
        description="A job killed for its memory is reported as such by the scheduler."
    )


class ClusterOut(BaseModel):
    name: str
    username: str | None = Field(description="Your username on this cluster, if you have one.")
    scheduler: str = Field(description="slurm, pbs or lsf.")
    capabilities: CapabilitiesOut


class ClusterDetailOut(ClusterOut):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "testcluster",
                    "username": "alice",
                    "scheduler": "slurm",
                    "capabilities": {
                        "partition_word": "partition",
                        "rest_api": True,
                        "expected_start": True,
                        "accounts": True,
                        "batch_script": True,
                        "reservations": True,
                        "account_limits": True,
                        "test_submission": True,
                        "script_arguments": True,
                        "qos": True,
                        "gpus": True,
                        "array_lists": True,
                        "memory_kill_reported": True,
                    },
                    "partitions": [
                        {
                            "name": "debug",
                            "is_default": True,
                            "state": "up",
                            "max_time_minutes": 60,
                            "default_time_minutes": 10,
                            "total_nodes": 1,
                            "idle_nodes": 1,
                            "total_cpus": 2,
                            "idle_cpus": 2,
                        }
                    ],
                    "associations": [{"account": "physics", "partition": None, "qos": []}],
                }
            ]
        }
    )

    partitions: list[PartitionOut]
    associations: list[AssociationOut]


def capabilities_out(capabilities: Capabilities) -> CapabilitiesOut:
    fields = {name: getattr(capabilities, name) for name in CapabilitiesOut.model_fields}
    return CapabilitiesOut.model_validate(fields)
