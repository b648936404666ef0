"""docker-compose.yml is consistent: everything it builds or mounts exists, and it starts in order.

Checked statically here, in a second; tests/compose starts the stack for real.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    result: dict[str, dict[str, Any]] = compose["services"]
    return result


def dependencies(service: dict[str, Any]) -> dict[str, str]:
    """Names this service waits for, with the condition it waits on."""
    depends_on = service.get("depends_on", {})
    if isinstance(depends_on, list):
        return {name: "service_started" for name in depends_on}
    return {name: spec.get("condition", "service_started") for name, spec in depends_on.items()}


def host_mounts(service: dict[str, Any]) -> list[str]:
    sources = []
    for volume in service.get("volumes", []):
        source = volume.split(":")[0] if isinstance(volume, str) else volume.get("source", "")
        if source.startswith((".", "/")):
            sources.append(source)
    return sources


def test_stack_has_the_portal_and_every_slurm_role(services: dict[str, dict[str, Any]]) -> None:
    expected = {"postgres", "migrate", "web", "poller", "mariadb", "slurmdbd", "slurmctld"}
    assert expected | {"slurmd", "slurmrestd"} <= set(services)


def test_every_build_context_and_dockerfile_exists(services: dict[str, dict[str, Any]]) -> None:
    builds = {name: spec["build"] for name, spec in services.items() if "build" in spec}

    assert builds, "the stack builds nothing"
    for name, build in builds.items():
        context = ROOT / build["context"]
        assert context.is_dir(), f"{name}: build context {context} is missing"
        assert (context / build.get("dockerfile", "Dockerfile")).is_file(), name


def test_every_mounted_host_file_exists(services: dict[str, dict[str, Any]]) -> None:
    mounts = [(name, source) for name, spec in services.items() for source in host_mounts(spec)]

    assert mounts, "no host files are mounted"
    for name, source in mounts:
        assert (ROOT / source).exists(), f"{name}: mounted {source} does not exist"


def test_files_copied_into_the_slurm_image_exist() -> None:
    dockerfile = (ROOT / "docker/slurm/Dockerfile").read_text().splitlines()
    copied = [line.split()[1] for line in dockerfile if line.startswith("COPY ")]

    assert copied
    for source in copied:
        assert (ROOT / "docker/slurm" / source).is_file(), source


def test_every_dependency_names_a_defined_service(services: dict[str, dict[str, Any]]) -> None:
    for name, spec in services.items():
        unknown = set(dependencies(spec)) - set(services)
        assert not unknown, f"{name} depends on undefined {unknown}"


def test_dependencies_form_no_cycle(services: dict[str, dict[str, Any]]) -> None:
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(name: str) -> None:
        assert name not in visiting, f"dependency cycle through {name}"
        if name in done:
            return
        visiting.add(name)
        for dependency in dependencies(services[name]):
            visit(dependency)
        visiting.discard(name)
        done.add(name)

    for name in services:
        visit(name)
    assert done == set(services)


@pytest.mark.parametrize(
    ("service", "dependency", "condition"),
    [
        ("migrate", "postgres", "service_healthy"),
        ("web", "migrate", "service_completed_successfully"),
        ("poller", "migrate", "service_completed_successfully"),
        ("poller", "slurmctld", "service_healthy"),
        ("slurmdbd", "mariadb", "service_healthy"),
        ("slurmctld", "slurmdbd", "service_healthy"),
        # The node's name must resolve before the controller can answer (docker-compose.yml).
        ("slurmd", "slurmctld", "service_started"),
        ("slurmrestd", "slurmctld", "service_healthy"),
    ],
)
def test_services_wait_for_what_they_need(
    services: dict[str, dict[str, Any]], service: str, dependency: str, condition: str
) -> None:
    assert dependencies(services[service]).get(dependency) == condition


def test_waited_on_health_has_a_healthcheck(services: dict[str, dict[str, Any]]) -> None:
    for name, spec in services.items():
        for dependency, condition in dependencies(spec).items():
            if condition == "service_healthy":
                assert "healthcheck" in services[dependency], f"{name} waits on {dependency}"


def test_portal_services_run_the_expected_commands(services: dict[str, dict[str, Any]]) -> None:
    assert services["migrate"]["command"] == ["alembic", "upgrade", "head"]
    assert services["web"]["command"][:3] == ["python", "-m", "app.serve"]
    assert services["poller"]["command"] == ["python", "-m", "app.poller"]


def test_the_poller_serves_metrics_to_the_compose_network(
    services: dict[str, dict[str, Any]],
) -> None:
    poller = services["poller"]["environment"]
    assert poller["PORTAL_POLLER_METRICS_HOST"] == "0.0.0.0"
    assert 0 < int(poller["PORTAL_POLLER_METRICS_PORT"]) < 65536
    # The merge keeps the shared settings: the poller still talks to the same database.
    assert poller["PORTAL_DATABASE_URL"] == services["web"]["environment"]["PORTAL_DATABASE_URL"]


def test_every_long_running_service_has_a_health_check(
    services: dict[str, dict[str, Any]],
) -> None:
    # One-shot services (keys, migrations) say restart: "no"; everything else stays up.
    long_running = [name for name, spec in services.items() if spec.get("restart") != "no"]
    assert {"postgres", "web", "poller", "slurmd", "slurmrestd"} <= set(long_running)
    for name in long_running:
        assert "test" in services[name].get("healthcheck", {}), name


def test_the_portal_image_installs_dependencies_before_the_code_it_copies() -> None:
    text = (ROOT / "docker/portal/Dockerfile").read_text().replace("\\\n", " ")
    steps = [line.split() for line in text.splitlines() if line.startswith(("COPY ", "RUN "))]
    first_code = next(i for i, step in enumerate(steps) if step[:2] == ["COPY", "app"])
    install = next(
        i for i, step in enumerate(steps) if "constraints.txt" in step and step[0] == "RUN"
    )
    assert install < first_code
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    copied = {source for step in steps if step[0] == "COPY" for source in step[1:-1]}
    assert copied and not copied & ignored
    assert all((ROOT / source).exists() for source in copied)


def test_two_web_replicas_and_two_pollers_run_behind_one_tls_proxy(
    services: dict[str, dict[str, Any]],
) -> None:
    assert services["web"]["scale"] == 2
    assert services["poller"]["scale"] == 2
    # Only the proxy is published, on loopback, and it waits for a healthy web replica.
    published = {name for name, spec in services.items() if spec.get("ports")}
    assert published == {"proxy"}
    assert all(p.startswith("127.0.0.1:") for p in services["proxy"]["ports"])
    assert dependencies(services["proxy"]) == {"web": "service_healthy"}
    config = (ROOT / "docker/nginx/portal.conf").read_text()
    assert "server web:8000" in config
    assert "proxy_next_upstream error timeout" in config
    # POSTs are never replayed on another replica: a submission is not sent twice by nginx.
    assert "non_idempotent" not in config


def _base_images() -> set[str]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    images = {spec["image"] for spec in compose["services"].values() if "build" not in spec}
    for dockerfile in ROOT.glob("docker/*/Dockerfile"):
        images |= set(re.findall(r"^FROM\s+(\S+)", dockerfile.read_text(), re.MULTILINE))
    return images


def test_every_public_base_image_has_a_debian_stand_in() -> None:
    listed = {
        line.split()[0]: line.split()[1]
        for line in (ROOT / "docker/standins/images").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    # Debian's own images are the root filesystem scripts/compose-stack makes with mmdebstrap.
    debian = {"debian:bookworm-slim", "debian:12-slim"}
    missing = _base_images() - set(listed) - debian
    assert not missing, f"no stand-in for {missing} in docker/standins/images"
    for name, folder in listed.items():
        dockerfile = (ROOT / "docker/standins" / folder / "Dockerfile").read_text()
        assert re.search(r"^FROM debian:bookworm-slim$", dockerfile, re.MULTILINE), name
