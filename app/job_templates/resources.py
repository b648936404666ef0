"""Maps typed parameter values onto JobRequest resource fields, and cross-field limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.i18n import _, ngettext
from app.job_templates.coerce import GpuRequest
from app.job_templates.context import SubmitContext
from app.job_templates.schema import TemplateSchema
from app.job_templates.values import format_duration

# JobRequest field for each resource a parameter may map to.
_FIELDS = {
    "partition": "partition",
    "time_limit": "time_limit_minutes",
    "cpus_per_task": "cpus_per_task",
    "ntasks": "ntasks",
    "nodes": "nodes",
    "memory": "memory_mb",
    "gpus": "gpus",
    "gpu_type": "gpu_type",
    "array": "array_spec",
    "work_dir": "work_dir",
    "stdout": "stdout_path",
    "stderr": "stderr_path",
}


def apply_resources(schema: TemplateSchema, values: Mapping[str, Any]) -> dict[str, Any]:
    """JobRequest keyword arguments from every parameter that has ``maps_to``."""
    fields: dict[str, Any] = {}
    for parameter in schema.parameters:
        value = values.get(parameter.name)
        if parameter.maps_to is None or value is None:
            continue
        if isinstance(value, GpuRequest):
            fields["gpus"] = value.count
            if value.type:
                fields["gpu_type"] = value.type
            continue
        fields[_FIELDS[parameter.maps_to]] = value
    return fields


def _mapped(schema: TemplateSchema, resource: str) -> str | None:
    return next((p.name for p in schema.parameters if p.maps_to == resource), None)


def check_partition_time(
    schema: TemplateSchema,
    values: Mapping[str, Any],
    context: SubmitContext,
    errors: Mapping[str, str],
) -> dict[str, str]:
    """An error on the time field when it exceeds the chosen partition's maximum."""
    time_name = _mapped(schema, "time_limit")
    partition_name = _mapped(schema, "partition")
    if time_name is None or time_name in errors or values.get(time_name) is None:
        return {}
    chosen = values.get(partition_name) if partition_name else None
    partition = context.partition(chosen)
    limit = partition.max_time_minutes if partition else None
    if partition is None or limit is None or values[time_name] <= limit:
        return {}
    longest = format_duration(limit)
    return {
        time_name: _(
            "Partition %(partition)s allows at most %(limit)s.",
            partition=partition.name,
            limit=longest,
        )
    }


def check_nodes_tasks(
    schema: TemplateSchema, values: Mapping[str, Any], errors: Mapping[str, str]
) -> dict[str, str]:
    """An error on the nodes field when fewer tasks than nodes are asked for."""
    nodes_name = _mapped(schema, "nodes")
    tasks_name = _mapped(schema, "ntasks")
    if nodes_name is None or tasks_name is None or {nodes_name, tasks_name} & set(errors):
        return {}
    nodes, tasks = values.get(nodes_name), values.get(tasks_name)
    if nodes is None or tasks is None or tasks >= nodes:
        return {}
    # Slurm places at least one task on every node it allocates, so the extra nodes would
    # either be refused or sit idle while charged.
    message = ngettext(
        "%(nodes)s nodes need at least %(nodes)s tasks, one per node; "
        "ask for %(nodes)s tasks or for %(num)d node.",
        "%(nodes)s nodes need at least %(nodes)s tasks, one per node; "
        "ask for %(nodes)s tasks or for %(num)d nodes.",
        tasks,
        nodes=nodes,
    )
    return {nodes_name: message}
