"""The API's OpenAPI document is one a client generator turns into a usable client."""

from __future__ import annotations

import re
from typing import Any

import httpx

from app.jobs.states import TERMINAL_STATES
from app.models.jobs import JOB_STATES


async def _spec(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/api/openapi.json")
    assert response.status_code == 200
    spec: dict[str, Any] = response.json()
    return spec


async def test_every_operation_has_a_short_unique_id_and_one_described_tag(
    client: httpx.AsyncClient,
) -> None:
    spec = await _spec(client)
    operations = [op for ops in spec["paths"].values() for op in ops.values()]
    ids = [op["operationId"] for op in operations]
    assert len(ids) == len(set(ids))
    for operation_id in ids:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", operation_id), operation_id
        assert "api_v1" not in operation_id
    described = {tag["name"] for tag in spec["tags"] if tag.get("description")}
    for op in operations:
        assert len(op["tags"]) == 1 and op["tags"][0] in described, op["operationId"]
    assert {"submit_job", "list_jobs", "get_job", "cancel_job", "read_job_log"} <= set(ids)


async def test_job_states_are_one_enum_with_the_databases_values(
    client: httpx.AsyncClient,
) -> None:
    schemas = (await _spec(client))["components"]["schemas"]
    assert schemas["JobStateName"]["enum"] == list(JOB_STATES)
    assert schemas["JobOut"]["properties"]["state"] == {"$ref": "#/components/schemas/JobStateName"}
    events = schemas["JobEventOut"]["properties"]
    assert events["to_state"] == {"$ref": "#/components/schemas/JobStateName"}
    assert set(TERMINAL_STATES) <= set(JOB_STATES)


async def test_each_operation_names_only_the_errors_it_can_answer_with(
    client: httpx.AsyncClient,
) -> None:
    paths = (await _spec(client))["paths"]

    def codes(path: str, method: str) -> set[str]:
        return {code for code in paths[path][method]["responses"] if code[0] in "45"}

    assert codes("/api/v1/me", "get") == {"401", "403"}
    assert codes("/api/v1/jobs/{job_id}", "get") == {"401", "403", "404", "422"}
    assert codes("/api/v1/jobs", "post") == {"400", "401", "403", "404", "409", "422", "503"}
    assert codes("/api/v1/jobs/{job_id}/cancel", "post") >= {"404", "409", "503"}
    assert "503" not in codes("/api/v1/jobs/{job_id}/events", "get")
    for path, operations in paths.items():
        for method, operation in operations.items():
            for code in codes(path, method):
                schema = operation["responses"][code]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (path, method, code)


async def test_every_request_body_and_binary_answer_has_a_schema(
    client: httpx.AsyncClient,
) -> None:
    """A body without a schema is skipped by generators ("Missing schema"): its operation
    could not send its bytes."""
    spec = await _spec(client)
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            contents = [op.get("requestBody", {}).get("content", {})]
            contents += [answer.get("content", {}) for answer in op["responses"].values()]
            for content in contents:
                for media_type, described in content.items():
                    if media_type == "text/event-stream":
                        continue
                    assert "schema" in described, f"{method.upper()} {path} {media_type}"
    upload = spec["paths"]["/api/v1/files/{cluster}/uploads/{upload_id}"]["put"]
    binary = upload["requestBody"]["content"]["application/octet-stream"]["schema"]
    assert binary == {"type": "string", "format": "binary"}
