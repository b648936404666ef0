"""A workflow in Chromium on the real cluster: saved from the form, run, its failed middle
step shown in the graph with the waiting step's explanation, at desktop and phone width and in
French; and a project's allocation page with its burn-down chart."""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from app.models.allocations import ProjectAllocation
from app.models.projects import Project
from tests.e2e.conftest import LiveServer
from tests.e2e.shots import shot
from tests.e2e.test_jobs_flow import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slurm]
PHONE = {"width": 390, "height": 844}
HEADER = (
    "#!/bin/bash\n#SBATCH --time=2\n#SBATCH --mem=100\n"
    "#SBATCH --output=/scratch/alice/e2e-wf-%j.out\n"
)


@pytest.fixture(autouse=True)
def _no_stuck_job_left() -> Iterator[None]:
    """The run's last step waits for ever on its failed dependency: cancelled afterwards, or
    every later test would see alice with a job still pending."""
    yield
    listed = subprocess.run(
        ["squeue", "-h", "-u", "alice", "-t", "PENDING", "-o", "%i %r"],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    stuck = [line.split()[0] for line in listed.splitlines() if "DependencyNeverSatisfied" in line]
    if stuck:
        subprocess.run(["scancel", *stuck], check=False)


def _fill_steps(page: Any) -> None:
    steps = [
        ("prepare", "true", ""),
        ("compute", "exit 1", "prepare"),
        ("report", "true", "compute"),
    ]
    for index, (name, command, after) in enumerate(steps):
        page.fill(f"#step-{index}-name", name)
        page.fill(f"#step-{index}-script", HEADER + command + "\n")
        page.fill(f"#step-{index}-after", after)


def test_a_failed_middle_step_shows_in_the_graph_with_the_waiting_steps_explanation(
    page: Any, browser: Any, live_server: LiveServer, screenshots: Path
) -> None:
    sign_in(page)
    page.goto("/workflows")
    page.fill("#wf-name", f"chain-{uuid.uuid4().hex[:6]}")
    _fill_steps(page)
    page.get_by_role("button", name="Save the workflow").click()
    page.get_by_role("button", name="Run the workflow").click()
    page.wait_for_url(re.compile(r".*/workflows/runs/\d+$"))
    steps = page.locator("#run-steps")
    expect(steps).to_contain_text("can no longer happen", timeout=90_000)
    expect(page.get_by_role("button", name="Re-run from the failed step")).to_be_visible()
    shot(page, screenshots, "workflow-run-desktop")
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, screenshots, "workflow-run-phone")
    run_url = page.url
    french = browser.new_context(base_url=live_server.base_url, locale="fr-FR")
    tab = french.new_page()
    sign_in(tab)
    tab.goto(run_url)
    expect(tab.locator("#run-steps")).to_contain_text("et cela ne peut plus arriver")
    expect(tab.get_by_role("button", name="Relancer à partir de l'étape en échec")).to_be_visible()
    shot(tab, screenshots, "workflow-run-fr")
    tab.locator("#run-steps a").last.click()
    expect(tab.locator("#stuck")).to_contain_text("Soumettre à nouveau sans la dépendance")
    shot(tab, screenshots, "job-stuck-fr")
    french.close()


def test_the_allocation_page_draws_the_burndown(
    page: Any, live_server: LiveServer, screenshots: Path
) -> None:
    engine = create_engine(live_server.database_url)
    try:
        with Session(engine) as session:
            project = session.scalars(select(Project).where(Project.name == "physics")).one()
            if session.get(ProjectAllocation, project.id) is None:
                session.add(ProjectAllocation(project_id=project.id, cpu_minutes=20))
                session.commit()
            project_id = project.id
    finally:
        engine.dispose()
    sign_in(page)
    page.goto(f"/projects/{project_id}/allocation")
    expect(page.locator("svg.burndown-chart")).to_be_visible()
    expect(page.locator("#burndown-summary")).to_contain_text("of 20 CPU minutes used")
    shot(page, screenshots, "allocation-desktop")
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(page, screenshots, "allocation-phone")
