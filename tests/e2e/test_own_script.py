"""A researcher pastes the script they already have, in a real browser, on the real cluster."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.test_jobs_flow import STATUS_BADGE, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slurm, pytest.mark.slow]

TUTORIAL = """#!/bin/bash
#SBATCH --job-name=paste-{tag}
#SBATCH --time=00:05:00
#SBATCH --mem=200M
#SBATCH --output=/home/alice/portal-web-{tag}/logs/%x-%j.out

arr=(one two three)
echo "${{#arr[@]}} items, {{{{ braces }}}} kept, first argument: $1"
"""


def test_a_pasted_script_is_checked_then_runs_as_written(page: Any, screenshots: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    sign_in(page)
    page.get_by_role("link", name="Submit a script").click()
    page.fill("#script", TUTORIAL.format(tag=tag).replace("--time", "--tiem"))
    expect(page.locator("#directive-errors")).to_contain_text(
        "sbatch has no option --tiem (did you mean --time?)"
    )
    shot(page, screenshots, "script-01-typo-found")
    page.fill("#script", TUTORIAL.format(tag=tag))
    expect(page.locator("#directives")).to_contain_text(f"paste-{tag}")
    expect(page.locator("#directive-errors")).to_have_count(0)
    page.fill("#args", "hello world")
    page.get_by_role("button", name="Check with the cluster").click()
    expect(page.locator("#verdict")).to_contain_text("The cluster would accept this job as it is.")
    shot(page, screenshots, "script-02-read")
    page.get_by_role("button", name="Submit job").click()
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=60_000)
    expect(page.locator(STATUS_BADGE)).to_have_text("Completed", timeout=120_000)
    expect(page.locator("#log-stdout")).to_contain_text(
        "3 items, {{ braces }} kept, first argument: hello world", timeout=30_000
    )
    expect(page.locator(".script-args")).to_contain_text("hello world")
    shot(page, screenshots, "script-03-completed")


def test_a_refused_script_keeps_the_text_and_says_why(page: Any, screenshots: Path) -> None:
    sign_in(page)
    page.goto("/submit/script")
    page.fill("#script", "#!/bin/bash\n#SBATCH --partition=gpu-a100\nhostname\n")
    page.get_by_role("button", name="Check with the cluster").click()
    expect(page.locator("#verdict")).to_contain_text(
        "partition gpu-a100 does not exist (this cluster has: debug, long)"
    )
    page.get_by_role("button", name="Submit job").click()
    errors = page.locator("#form-errors")
    expect(errors).to_contain_text("The job was not submitted")
    expect(errors).to_contain_text(
        "partition gpu-a100 does not exist (this cluster has: debug, long)"
    )
    expect(page.locator("#script")).to_have_value(
        "#!/bin/bash\n#SBATCH --partition=gpu-a100\nhostname\n"
    )
    shot(page, screenshots, "script-04-refused")


SWEEP = """#!/bin/bash
#SBATCH --job-name=sweep-{tag}
#SBATCH --array=1-6
#SBATCH --time=2
#SBATCH --output=/home/alice/portal-web-{tag}/%A_%a.out
echo "task $SLURM_ARRAY_TASK_ID"
case $SLURM_ARRAY_TASK_ID in 2|5) exit 1 ;; esac
"""


def test_an_array_page_shows_every_task_and_retries_the_failed_ones(
    page: Any, screenshots: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    sign_in(page)
    page.goto("/submit/script")
    page.fill("#script", SWEEP.format(tag=tag))
    page.get_by_role("button", name="Submit job").click()
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=60_000)
    array_url = page.url
    expect(page.locator(STATUS_BADGE)).to_have_text("Failed", timeout=180_000)
    # No reload: the task table refreshes itself until the array has ended.
    expect(page.locator(".array-tasks")).to_contain_text(
        "6 tasks, 2 ended without completing.", timeout=15_000
    )
    expect(page.locator(".task-table tbody tr")).to_have_count(6)
    expect(page.locator(".array-tasks")).to_have_attribute("data-polling", "off", timeout=15_000)
    expect(page.locator(".usage")).to_contain_text("longest task")
    shot(page, screenshots, "array-01-tasks")
    # The array's own output is its tasks' files: the link leads to them, not to a path
    # with Slurm's "no task" number in it.
    slurm_id = page.locator("h1 .subtle").inner_text().split()[1]
    page.get_by_role("link", name="Each task's output").click()
    expect(page).to_have_url(re.compile(r".*#array-tasks$"))
    expect(page.locator(".job-files")).not_to_contain_text("Output file")
    page.get_by_role("link", name="Not completed (2)").click()
    expect(page.locator(".task-table tbody tr")).to_have_count(2)
    page.locator("#task-5").get_by_role("link", name="output").click()
    expect(page.locator("body")).to_contain_text("task 5")
    expect(page.locator(".breadcrumbs")).to_contain_text(f"({slurm_id}_5) \u203a Standard output")
    page.goto(array_url)
    page.get_by_role("button", name="Retry the 2 failed tasks").click()
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=60_000)
    expect(page.locator(".facts").first).to_contain_text(f"the failed tasks of job {slurm_id}")
    expect(page.locator(STATUS_BADGE)).to_have_text("Failed", timeout=180_000)
    expect(page.locator(".facts").first).to_contain_text("debug (the cluster's default)")
    shot(page, screenshots, "array-02-retry")
    page.goto("/jobs?whose=projects")
    expect(page.locator("#job-results")).to_contain_text(f"sweep-{tag}")
    shot(page, screenshots, "job-list-projects")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(array_url)
    shot(page, screenshots, "array-03-phone")
