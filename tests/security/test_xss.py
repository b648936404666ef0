"""Markup in job names, template names, descriptions and scripts, log output and query strings.

Rows are written straight to the database, past the services' validation, as an older
version or an import might have left them. Every page and htmx fragment that shows them
must escape them; in Chromium the job page, its live log and the history list open with
no dialog and no injected handler.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import create_engine, create_sessionmaker
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.factories import (
    DEFAULT_CLUSTER,
    fake_registry,
    make_job,
    make_template,
    seeded_user_and_project,
)
from tests.integration.web.conftest import sign_in
from tests.portal import PortalProcess
from tests.world import World

PAYLOADS = (
    "<script>alert(1)</script>",
    '" onmouseover="alert(1)',
    "'><img src=x onerror=alert(1)>",
)
LOG = "\n".join(f"line {p}" for p in PAYLOADS) + "\n"
LOG_PATH = "/home/alice/xss.out"


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


async def _hostile_rows(session: AsyncSession, people: World, fake: FakeScheduler) -> list[str]:
    name = " ".join(PAYLOADS)
    template = await make_template(
        session, people.alice, name=name, script=f"#!/bin/bash\necho '{PAYLOADS[0]}'\n"
    )
    template.description = name
    running = await make_job(session, people.alice, people.physics, name=name, state="running")
    done = await make_job(
        session,
        people.alice,
        people.physics,
        name=name,
        state="completed",
        slurm_job_id="4242",
        stdout_path=LOG_PATH,
    )
    await session.commit()
    fake.files[LOG_PATH] = LOG.encode()
    pages = ["/", "/jobs", "/jobs/rows", "/templates", "/templates?scope=mine"]
    for job in (running, done):
        pages += [f"/jobs/{job.id}", f"/jobs/{job.id}/status", f"/jobs/{job.id}/resubmit"]
        pages += [f"/jobs/{job.id}/cancel"]
    pages += [f"/jobs/{done.id}/logs/stdout", f"/jobs/{done.id}/logs/stdout/stream"]
    pages += [f"/templates/{template.id}", f"/templates/{template.id}/submit"]
    pages += [f"/templates/{template.id}/edit"]
    for payload in PAYLOADS:
        pages += [f"/jobs?q={payload}", f"/jobs/rows?q={payload}&state={payload}"]
        pages += [f"/templates?q={payload}", f"/signin?next={payload}"]
    return pages


async def test_every_page_and_fragment_escapes_hostile_text(
    client: httpx.AsyncClient, people: World, session: AsyncSession, fake: FakeScheduler
) -> None:
    pages = await _hostile_rows(session, people, fake)
    await sign_in(client, "alice")
    shown = 0
    for url in pages:
        for headers in ({}, {"HX-Request": "true"}):
            answer = await client.get(url, headers=headers)
            assert answer.status_code < 500, (url, answer.status_code)
            for payload in PAYLOADS:
                assert payload not in answer.text, (url, headers, payload)
            shown += "alert(1)" in answer.text
    # The escaped text must really be on the pages, or the test proves nothing.
    assert shown >= len(pages), shown


async def _browser_rows(url: str, path: str) -> tuple[int, str]:
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            alice, project = await seeded_user_and_project(session)
            name = f"xss-{uuid.uuid4().hex[:6]} " + " ".join(PAYLOADS)
            job = Job(
                uuid=str(uuid.uuid4()),
                owner_user_id=alice.id,
                project_id=project.id,
                cluster=DEFAULT_CLUSTER,
                script="#!/bin/bash\ntrue\n",
                name=name,
                state="completed",
                slurm_job_id="8800001",
                stdout_path=path,
            )
            session.add(job)
            await session.commit()
            return job.id, name
    finally:
        await engine.dispose()


@pytest.fixture
def alice_log() -> Iterator[str]:
    path = f"/home/alice/portal-jobs/xss-{uuid.uuid4().hex}.out"
    subprocess.run(
        ["runuser", "-u", "alice", "--", "sh", "-c", f"mkdir -p ~/portal-jobs && cat > {path}"],
        input=LOG.encode(),
        check=True,
    )
    try:
        yield path
    finally:
        subprocess.run(["rm", "-f", path], check=False)


def _injected(tab: Any) -> int:
    count: int = tab.evaluate(
        """() => document.querySelectorAll('[onmouseover], [onerror], img[src="x"]').length
             + [...document.scripts].filter(s => s.textContent.includes('alert(1)')).length"""
    )
    return count


@pytest.mark.slurm
@pytest.mark.browser
def test_chromium_shows_the_payloads_as_text(live_portal: PortalProcess, alice_log: str) -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.a11y import Audit, AuditedBrowser

    job_id, name = asyncio.run(_browser_rows(live_portal.database_url, alice_log))
    dialogs: list[str] = []
    audit = Audit()
    with sync_playwright() as playwright:
        chromium = AuditedBrowser(
            playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS), audit
        )
        try:
            context = chromium.new_context(base_url=live_portal.base_url)
            tab = context.new_page()

            def seen(dialog: Any) -> None:
                dialogs.append(dialog.message)
                dialog.dismiss()

            tab.on("dialog", seen)
            tab.goto("/signin")
            tab.fill("input[name=login]", "alice")
            tab.fill("input[name=password]", "alice-demo")
            tab.click("button[type=submit]")
            tab.wait_for_url("**/templates")
            tab.goto(f"/jobs/{job_id}")
            # The live log (server-sent events swapped in by htmx) has arrived.
            tab.locator("pre", has_text=f"line {PAYLOADS[2]}").first.wait_for(timeout=30_000)
            tab.hover("h1")
            assert _injected(tab) == 0
            tab.goto("/jobs")
            tab.get_by_text(name[:10]).first.wait_for(timeout=30_000)
            tab.hover("table")
            assert _injected(tab) == 0
            context.close()
        finally:
            chromium.close()
    assert dialogs == []
    # Hostile names and log lines leave the pages as accessible as any other.
    found = audit.failure()
    assert found is None, found
