"""``hpcportal clusters`` and ``hpcportal nodes CLUSTER``: where a job can run now."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli import output
from app.cli.client import PortalClient
from app.cli.exit_codes import ExitCode

NODE_COLUMNS = ("name", "state", "cpus", "memory_gb", "gpus", "partitions", "features", "reason")


def _free(resource: dict[str, Any], scale: float = 1.0) -> str:
    idle, total = resource["idle"] / scale, resource["total"] / scale
    return f"{idle:g}/{total:g}" if scale == 1.0 else f"{idle:.1f}/{total:.1f}"


def node_line(node: dict[str, Any]) -> dict[str, Any]:
    """One node as a table row: idle/total of each resource."""
    return {
        "name": node["name"],
        "state": node["state"],
        "cpus": _free(node["cpus"]),
        "memory_gb": _free(node["memory_mb"], 1024.0),
        "gpus": _free(node["gpus"]) if node["gpus"]["total"] else None,
        "partitions": ",".join(node["partitions"]),
        "features": ",".join(node["features"]) or None,
        "reason": node["reason"],
    }


def _show(body: dict[str, Any]) -> None:
    if body["read_at"] is None:
        print(f"the nodes of {body['cluster']} have not been read yet")
        return
    output.print_table([node_line(n) for n in body["nodes"]], NODE_COLUMNS)
    print(f"\nyour partitions: {', '.join(body['partitions']) or 'none'}; read {body['read_at']}")


def nodes(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    params = {"partition": args.partition, "available": "true" if args.available else None}
    body = client.get(f"/clusters/{args.cluster}/nodes", params)
    if args.json:
        output.print_json(body)
    else:
        _show(body)
    return ExitCode.OK


def clusters(client: PortalClient, args: argparse.Namespace) -> ExitCode:
    body = client.get("/clusters")
    if args.json:
        output.print_json(body)
    else:
        output.print_table(body, ("name", "scheduler", "username"))
    return ExitCode.OK


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], shared: argparse.ArgumentParser
) -> None:
    sub.add_parser(
        "clusters", parents=[shared], help="the clusters and your username on each"
    ).set_defaults(run=clusters)
    parser = sub.add_parser(
        "nodes", parents=[shared], help="nodes of the partitions you may use, with what is idle"
    )
    parser.add_argument("cluster")
    parser.add_argument("--partition", help="only this partition")
    parser.add_argument(
        "--available", action="store_true", help="only nodes that can start a job now"
    )
    parser.set_defaults(run=nodes)
