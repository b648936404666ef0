"""The job pages in French: the list and its filters, a job's page in every way a job can end,
an array's tasks, the log pages, resubmit and the confirmations, for the owner, a project
member and a site administrator, with no English message of the catalogue left."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs import event_notes, repository
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import JobSpec
from tests.factories import fake_registry, make_array, make_job
from tests.i18n_check import english_left, visible_text
from tests.integration.web.conftest import sign_in
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
FRENCH = {"Accept-Language": "fr-CA,fr;q=0.9"}
REFUSAL = "sbatch: error: Batch job submission failed: Invalid account or account/partition"
LOG = "/home/alice/calcul/%j.out"


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


def _ended(**fields: Any) -> dict[str, Any]:
    started = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    return {
        "submitted_at": started - timedelta(minutes=5),
        "started_at": started,
        "ended_at": started + timedelta(minutes=50),
        "elapsed_seconds": 3000,
        "time_limit_minutes": 60,
        "memory_mb": 2048,
        "cpus": 4,
        "total_cpu_seconds": 6000,
        "max_rss_bytes": 1500 * 2**20,
        "partition": "debug",
        "node_list": "c[1-2]",
        **fields,
    }


JOBS: dict[str, dict[str, Any]] = {
    "attente": {"state": "pending", "reason": "Resources"},
    "inconnue": {"state": "pending", "reason": "QOSGrpNodeLimit"},
    "retenue": {"state": "held", "reason": "JobHeldUser"},
    "bloquee": {
        "state": "pending",
        "reason": "DependencyNeverSatisfied",
        "dependency": "afterok:41",
    },
    "calcul": {"state": "running", "elapsed_seconds": 600, "time_limit_minutes": 60},
    "reussie": _ended(state="completed", exit_code=0),
    "code": _ended(state="failed", exit_code=2),
    "introuvable": _ended(state="failed", exit_code=127),
    "signal": _ended(state="failed", exit_signal=11),
    "lancement": _ended(state="failed", exit_signal=53),
    "memoire": _ended(state="out_of_memory", max_rss_bytes=4000 * 2**20),
    "duree": _ended(state="timeout", elapsed_seconds=3600),
    "annulee": _ended(state="cancelled"),
    "panne": _ended(state="node_fail"),
    "preemptee": _ended(state="preempted"),
    "echeance": _ended(state="deadline"),
    "refusee": {"state": "submit_failed", "submit_error": REFUSAL},
    "perdue": {"state": "submit_failed", "submit_error": event_notes.NO_SLURM_JOB},
    "disparue": {"state": "undetermined"},
}
NOTES = [
    event_notes.SUBMISSION_STARTED,
    f"{event_notes.WARNING_PREFIX}line 3: #SBATCH --mem-per-gpu is ignored",
    event_notes.submitted_as("42"),
    "Resources",
    "None",
    event_notes.requested("cancel", "alice"),
    event_notes.requested("hold", "carol"),
    event_notes.requested("release", "alice"),
    event_notes.FOUND_BY_SUBMISSION_ID,
    event_notes.SUBMITTED_OUTSIDE,
    event_notes.MISSING,
]


async def _jobs(sessionmaker: Maker, people: World, fake: FakeScheduler) -> dict[str, Job]:
    made: dict[str, Job] = {}
    async with sessionmaker() as session:
        for index, (name, fields) in enumerate(JOBS.items()):
            slurm = None if fields["state"] == "submit_failed" else str(700 + index)
            made[name] = await make_job(
                session, people.alice, people.physics, name=name, slurm_job_id=slurm,
                stdout_path=LOG, expected_start_at=datetime(2031, 1, 1, tzinfo=UTC), **fields,
            )  # fmt: skip
        for note in NOTES:
            repository.add_event(
                session, made["disparue"].id, None, "pending", reason=note, source="poller"
            )
        made["vecteur"] = await make_array(
            session, people.alice, people.physics, {1: "completed", 2: "failed", 3: "running"},
            name="vecteur", state="running", slurm_job_id="900", array_spec="1-3",
            time_limit_minutes=10, memory_mb=1024, cpus=1, stdout_path=LOG,
        )  # fmt: skip
        # The poller's note when an array's last task ended, stored in English.
        repository.add_event(
            session, made["vecteur"].id, "running", "failed",
            reason=event_notes.tasks_ended(3, 1), source="poller",
        )  # fmt: skip
        slurm_id = await fake.submit(JobSpec(script="#!/bin/bash\nsleep 60\n"), "alice")
        made["active"] = await make_job(
            session, people.alice, people.physics, name="active", slurm_job_id=slurm_id
        )
        made["dehors"] = await make_job(
            session, people.alice, people.physics, name="dehors", slurm_job_id="999999",
            script="", submitted_outside=True, state="completed",
        )  # fmt: skip
        await session.commit()
    return made


def _french(page: httpx.Response, status: int = 200) -> list[str]:
    """What is still English on ``page``, named by its address; nothing when all is French."""
    if page.status_code != status:
        return [f"{page.request.url}: status {page.status_code}"]
    return [f"{page.request.url}: {found}" for found in english_left(page.text)]


def _text(page: httpx.Response) -> str:
    return visible_text(page.text)


async def _signed_in(client: httpx.AsyncClient, login: str) -> str:
    csrf = await sign_in(client, login)
    client.headers.update(FRENCH)
    return csrf


async def test_the_owner_reads_every_job_page_in_french(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    jobs = await _jobs(sessionmaker, people, fake)
    fake.files["/home/alice/calcul/700.out"] = b"une ligne\n" * 10
    await _signed_in(client, "alice")
    vecteur = jobs["vecteur"].id
    pages = [
        await client.get("/jobs"),
        await client.get("/jobs", params={"whose": "projects", "state": "failed"}),
        await client.get("/jobs/rows", params={"q": "rien-de-tel"}),
        await client.get(f"/jobs/{vecteur}"),
        await client.get(f"/jobs/{vecteur}", params={"task_state": "failed_any"}),
        await client.get(f"/jobs/{vecteur}/tasks-table"),
        await client.get(f"/jobs/{jobs['active'].id}/status"),
        await client.get(f"/jobs/{jobs['attente'].id}/logs/stdout"),
        await client.get(f"/jobs/{jobs['reussie'].id}/logs/stderr"),
        await client.get(f"/jobs/{jobs['dehors'].id}/script"),
    ]
    pages += [await client.get(f"/jobs/{job.id}") for job in jobs.values()]
    pages += [
        await client.get(f"/jobs/{jobs['active'].id}/{action}")
        for action in ("cancel", "hold", "release")
    ]
    pages += [await client.get(f"/jobs/{jobs[name].id}/resubmit") for name in ("memoire", "duree")]
    assert [problem for page in pages for problem in _french(page)] == []
    listing = _text(pages[0])
    assert "Travaux, les plus récents d'abord" in listing and "Durée dépassée" in listing
    # (visible_text writes every kind of space as a plain one)
    assert "3 tâches finies ; 1 terminée" in _text(pages[3])
    # A task is feminine where a job is not: its filters and badges agree with « tâche ».
    assert "En cours (1) Terminée (1) Échouée (1)" in _text(pages[3])
    assert "1 Terminée" in _text(pages[5]) and "2 Échouée" in _text(pages[5])
    stuck = _text(await client.get(f"/jobs/{jobs['bloquee'].id}"))
    assert (
        "Pourquoi il attend : Il ne devait démarrer qu'une fois que le travail 41 s'est "
        "terminé avec succès, et cela ne peut plus arriver : il ne démarrera donc jamais"
    ) in stuck
    assert "Soumettre à nouveau sans la dépendance" in stuck and "Annuler le travail" in stuck


async def test_the_actions_answer_in_french(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    jobs = await _jobs(sessionmaker, people, fake)
    csrf = await _signed_in(client, "alice")
    htmx = {"HX-Request": "true"}
    cancelled = await client.post(
        f"/jobs/{jobs['active'].id}/cancel", data={"csrf_token": csrf}, headers=htmx
    )
    refused = await client.post(
        f"/jobs/{jobs['reussie'].id}/resubmit",
        data={"csrf_token": csrf, "name": "reussie", "time_limit": "jamais", "cpus": "x"},
    )
    not_now = await client.post(f"/jobs/{jobs['reussie'].id}/hold", data={"csrf_token": csrf})
    nothing_failed = await client.post(
        f"/jobs/{jobs['reussie'].id}/retry-failed", data={"csrf_token": csrf}
    )
    missing = await client.get("/jobs/999999")

    assert _french(cancelled) + _french(refused, 422) + _french(missing, 404) == []
    assert "Annulation demandée." in _text(cancelled)
    assert "entrez un nombre entier" in _text(refused)
    assert _french(not_now, 409) + _french(nothing_failed, 404) == []
    assert "ne peut pas être retenu" in _text(not_now)
    assert "Ce travail n'existe pas." in _text(missing)


async def test_a_member_and_an_administrator_read_someone_elses_job_in_french(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    jobs = await _jobs(sessionmaker, people, fake)
    csrf = await _signed_in(client, "carol")
    member = [
        await client.get("/jobs", params={"whose": "projects"}),
        await client.get(f"/jobs/{jobs['memoire'].id}"),
        await client.get(f"/jobs/{jobs['memoire'].id}/resubmit"),
        await client.get(f"/jobs/{jobs['vecteur'].id}"),
    ]
    refused = await client.post(f"/jobs/{jobs['active'].id}/cancel", data={"csrf_token": csrf})
    await _signed_in(client, "admin")
    admin = [
        await client.get("/jobs", params={"whose": "projects"}),
        await client.get(f"/jobs/{jobs['refusee'].id}"),
        await client.get(f"/jobs/{jobs['disparue'].id}"),
    ]
    problems = [problem for page in member + admin for problem in _french(page)]
    assert problems + _french(refused, 403) == []
    assert "appartient à quelqu'un d'autre" in _text(member[2])
    assert "Seule la personne propriétaire du travail" in _text(refused)
