"""The dashboard's disk usage panel, loaded by htmx as a fragment of its own."""

from __future__ import annotations

import httpx
import pytest

from app.scheduler.disk_usage import FilesystemUsage, QuotaFigures
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from tests.factories import fake_registry
from tests.integration.web.conftest import sign_in
from tests.world import World

GiB = 1024**3
HTMX = {"HX-Request": "true"}


def usage(name: str, used: QuotaFigures, files: QuotaFigures) -> FilesystemUsage:
    return FilesystemUsage(name, used, files, f"{name} ...")


@pytest.fixture
def scheduler() -> FakeScheduler:
    return FakeScheduler(
        disk_usages={
            "alice": [
                usage(
                    "/home (user alice)",
                    QuotaFigures(41 * GiB, hard=50 * GiB),
                    QuotaFigures(12_034, hard=500_000),
                ),
                usage(
                    "/scratch (user alice)",
                    QuotaFigures(
                        11 * GiB, soft=10 * GiB, hard=12 * GiB, grace="6days", is_marked_over=True
                    ),
                    QuotaFigures(5, hard=1_000_000),
                ),
            ],
            "bob": [
                usage(
                    "/home (user bob)",
                    QuotaFigures(GiB, hard=50 * GiB),
                    QuotaFigures(9, hard=500_000),
                )
            ],
        }
    )


@pytest.fixture
def registry(scheduler: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(scheduler)


async def test_the_dashboard_loads_my_figures_after_the_page_with_their_warning_levels(
    client: httpx.AsyncClient, people: World, scheduler: FakeScheduler
) -> None:
    await sign_in(client, "alice")

    page = await client.get("/dashboard")
    assert 'hx-get="/dashboard/disk-usage" hx-trigger="load"' in page.text
    assert "Measuring your disk usage" in page.text and "disk_usage" not in scheduler.calls
    panel = await client.get("/dashboard/disk-usage", headers=HTMX)

    assert panel.status_code == 200 and "<html" not in panel.text
    _, home, scratch = panel.text.split('<li class="disk-fs')
    assert "/home (user alice)" in home and "41 GiB of 50 GiB (82 %)" in home
    assert home.startswith(' usage-warning"') and "Near the limit" in home
    assert "12,034 of 500,000 (2 %)" in home
    assert "11 GiB of 10 GiB (110 %)" in scratch and "Over quota" in scratch
    assert scratch.startswith(' usage-critical"')
    assert "hard limit 12 GiB, grace 6days" in scratch
    assert "hx-get" not in panel.text and "user bob" not in panel.text


async def test_a_failing_command_is_told_in_the_panel(
    client: httpx.AsyncClient, people: World, scheduler: FakeScheduler
) -> None:
    scheduler.disk_usage_failure = "quota: Cannot stat() mounted device /dev/sdb1"
    await sign_in(client, "bob")

    panel = await client.get("/dashboard/disk-usage", headers=HTMX)

    assert panel.status_code == 200
    assert (
        "Disk usage is not available: quota: Cannot stat() mounted device /dev/sdb1" in panel.text
    )


@pytest.mark.parametrize("registry", [fake_registry(FakeScheduler())])
async def test_without_a_command_the_panel_says_so(
    client: httpx.AsyncClient, people: World
) -> None:
    await sign_in(client, "alice")

    panel = await client.get("/dashboard/disk-usage", headers=HTMX)

    assert "No cluster reports disk usage for you." in panel.text
