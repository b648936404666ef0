"""Files in a real browser on the real cluster: a 200 MB upload with its progress bar, the job
that used it, the download with the same checksum, and a folder of 10,000 files page by page."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.test_jobs_flow import STATUS_BADGE, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slurm, pytest.mark.slow]

BIG_BYTES = 200 * 1000 * 1000
CHECKSUM_JOB = """#!/bin/bash
#SBATCH --job-name=files-{tag}
#SBATCH --time=00:05:00
#SBATCH --mem=100M
#SBATCH --chdir={folder}
#SBATCH --output={folder}/%x-%j.out
sha256sum data.bin
"""


def as_alice(*argv: str) -> None:
    subprocess.run(["runuser", "-u", "alice", "--", *argv], check=True, capture_output=True)


@pytest.fixture
def folder() -> Iterator[str]:
    path = f"/home/alice/portal-e2e-files-{uuid.uuid4().hex[:8]}"
    as_alice("mkdir", path)
    yield path
    as_alice("rm", "-rf", "--", path)


@pytest.fixture
def big_file(tmp_path: Path) -> tuple[Path, str]:
    """200 MB of random bytes, written and hashed 8 MiB at a time."""
    path, digest = tmp_path / "data.bin", hashlib.sha256()
    with path.open("wb") as handle:
        for start in range(0, BIG_BYTES, 8 << 20):
            piece = os.urandom(min(8 << 20, BIG_BYTES - start))
            digest.update(piece)
            handle.write(piece)
    return path, digest.hexdigest()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while piece := handle.read(8 << 20):
            digest.update(piece)
    return digest.hexdigest()


def test_a_200_mb_upload_is_used_by_a_job_and_downloaded_unchanged(
    page: Any, screenshots: Path, folder: str, big_file: tuple[Path, str]
) -> None:
    path, checksum = big_file
    sign_in(page)
    page.get_by_role("link", name="Files").click()
    page.goto(f"/files/testcluster?path={folder}")
    page.set_input_files("#upload-file", str(path))
    page.get_by_role("button", name="Upload").click()
    expect(page.locator("#upload-progress")).to_be_visible()
    expect(page.locator("#upload-status")).to_contain_text("Uploading data.bin")
    # Once in place, the folder is listed again with the new file marked and the words on top.
    expect(page.locator("#files-message")).to_have_text("Uploaded data.bin.", timeout=60_000)
    expect(page.locator("#marked-entry")).to_contain_text("data.bin")
    shot(page, screenshots, "files-01-uploaded")

    page.goto("/submit/script")
    page.fill("#script", CHECKSUM_JOB.format(tag=folder[-8:], folder=folder))
    page.get_by_role("button", name="Submit job").click()
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=30_000)
    expect(page.locator(STATUS_BADGE)).to_have_text("Completed", timeout=60_000)
    expect(page.locator("#log-stdout")).to_contain_text(checksum, timeout=20_000)

    page.locator(".job-files").get_by_role("link", name="Working folder").click()
    page.get_by_role("link", name="data.bin", exact=True).click()
    expect(page.locator(".notice")).to_have_text(
        "This file is 190.7 MiB; the portal shows files up to 1.0 MiB. Download it instead."
    )
    shot(page, screenshots, "files-02-from-the-job")
    with page.expect_download(timeout=60_000) as started:
        page.get_by_role("link", name="Download").click()
    assert sha256_of(Path(started.value.path())) == checksum


def test_a_folder_of_10000_files_is_browsed_page_by_page(
    page: Any, screenshots: Path, folder: str
) -> None:
    as_alice("sh", "-c", 'cd "$1" && seq -f "f%05g" 0 9999 | xargs touch', "-", folder)
    sign_in(page)
    page.goto(f"/files/testcluster?path={folder}")
    rows = page.locator("table tbody tr")
    expect(page.locator("#listing-count")).to_contain_text("1 to 200 of 10,000")
    expect(rows).to_have_count(200)
    expect(rows.first).to_contain_text("f00000")
    for shown, first in (("201 to 400", "f00200"), ("401 to 600", "f00400")):
        page.get_by_role("link", name="Next page").click()
        expect(page.locator("#listing-count")).to_contain_text(f"{shown} of 10,000")
        expect(rows.first).to_contain_text(first)
    page.get_by_role("link", name="Previous page").click()
    expect(rows.first).to_contain_text("f00200")
    page.goto(f"/files/testcluster?path={folder}&offset=9800")
    expect(rows.last).to_contain_text("f09999")
    expect(page.get_by_role("link", name="Next page")).to_have_count(0)
    shot(page, screenshots, "files-03-last-page")
