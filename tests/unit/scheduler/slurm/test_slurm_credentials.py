"""Certificate and token minting, with throw-away keys."""

import time
from pathlib import Path

import asyncssh
import jwt
import pytest
from asyncssh.public_key import CERT_TYPE_USER

from app.scheduler.config import ClusterConfig
from app.scheduler.errors import PermissionDenied
from app.scheduler.slurm.certificates import UserCertificates
from app.scheduler.slurm.rest import RestTokens


@pytest.fixture
def config(tmp_path: Path) -> ClusterConfig:
    ca = asyncssh.generate_private_key("ssh-ed25519")
    ca.write_private_key(str(tmp_path / "ca"))
    (tmp_path / "jwt").write_bytes(b"k" * 32)
    return ClusterConfig(
        name="c",
        transport="ssh",
        login_host="127.0.0.1",
        login_port=22,
        service_user="hpcsvc",
        service_key=str(tmp_path / "svc"),
        user_ca_key=str(tmp_path / "ca"),
        jwt_key=str(tmp_path / "jwt"),
        rest_url="http://x",
    )


def test_certificate_is_valid_for_the_user_only(config: ClusterConfig) -> None:
    _key, cert = UserCertificates(config, lifetime=300).credentials_for("alice")
    assert cert.principals == ["alice"]
    cert.validate(CERT_TYPE_USER, "alice")
    with pytest.raises(ValueError):
        cert.validate(CERT_TYPE_USER, "bob")


def test_certificates_are_cached_per_user(config: ClusterConfig) -> None:
    certs = UserCertificates(config)
    assert certs.credentials_for("alice") is not None
    assert certs.credentials_for("alice")[1] is certs.credentials_for("alice")[1]
    assert certs.credentials_for("bob")[1] is not certs.credentials_for("alice")[1]


@pytest.mark.parametrize("user", ["root", "slurm", "hpcsvc", "alice;id", ""])
def test_no_certificate_for_privileged_or_odd_users(config: ClusterConfig, user: str) -> None:
    with pytest.raises(Exception) as info:
        UserCertificates(config).credentials_for(user)
    assert info.type.__name__ in {"PermissionDenied", "InvalidSpec"}


def test_token_carries_the_user_and_expires(config: ClusterConfig) -> None:
    token = RestTokens(config, lifetime=120).token_for("bob")
    claims = jwt.decode(token, b"k" * 32, algorithms=["HS256"])
    assert claims["sun"] == "bob"
    assert 0 < claims["exp"] - time.time() <= 120


@pytest.mark.parametrize("user", ["root", "slurm"])
def test_no_token_for_root_or_the_slurm_user(config: ClusterConfig, user: str) -> None:
    with pytest.raises(PermissionDenied):
        RestTokens(config).token_for(user)
