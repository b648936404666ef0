"""The portal mints no credential for root, the Slurm user or the service user, whatever the
user-to-cluster-username mapping in the database says."""

from __future__ import annotations

import pytest

from app.scheduler.config import load_clusters
from app.scheduler.errors import PermissionDenied
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.certificates import UserCertificates
from app.scheduler.slurm.rest import RestTokens
from app.scheduler.types import JobSpec
from tests.portal import CLUSTERS_FILE

pytestmark = pytest.mark.slurm


@pytest.fixture
def config():  # type: ignore[no-untyped-def]
    return load_clusters(CLUSTERS_FILE)["testcluster"]


@pytest.mark.parametrize("username", ["root", "slurm", "hpcsvc"])
def test_no_ssh_certificate_for_privileged_accounts(config, username: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PermissionDenied):
        UserCertificates(config).credentials_for(username)


@pytest.mark.parametrize("username", ["root", "slurm"])
def test_no_jwt_for_privileged_accounts(config, username: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PermissionDenied):
        RestTokens(config).token_for(username)


@pytest.mark.parametrize("transport", ["ssh", "rest"])
@pytest.mark.parametrize("username", ["root", "slurm"])
async def test_submit_as_privileged_account_is_refused_before_reaching_slurm(
    config,
    transport: str,
    username: str,  # type: ignore[no-untyped-def]
) -> None:
    adapter = build_adapter(config, transport)  # type: ignore[arg-type]
    spec = JobSpec(script="#!/bin/bash\ntouch /tmp/pwned-root\n", name="root", account="physics")
    try:
        with pytest.raises(PermissionDenied, match="refusing"):
            await adapter.submit(spec, username)
    finally:
        await adapter.close()
