"""The bodies /api/v1/clusters answers with: a cluster, its partitions and the caller's
associations on it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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


class ClusterOut(BaseModel):
    name: str
    username: str | None = Field(description="Your username on this cluster, if you have one.")


class ClusterDetailOut(ClusterOut):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "testcluster",
                    "username": "alice",
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
