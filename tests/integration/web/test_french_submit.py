"""The template and script submission pages in French: no English sentence is left on them,
refusals included, while Slurm's words and the script's own lines stay as written."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates import choices
from app.job_templates.service import TemplateDraft, create
from app.models.job_templates import JobTemplate
from app.models.users import User
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import PartitionInfo
from app.users.service import actor_for
from tests.factories import fake_registry
from tests.i18n_check import WORD, english_left, visible_text
from tests.integration.web.conftest import sign_in
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
FRENCH = {"Accept-Language": "fr-CA,fr;q=0.9"}
FRAGMENT = FRENCH | {"HX-Request": "true"}
# What a French-speaking author would write: the template's words are theirs.
SCHEMA: dict[str, Any] = {
    "parameters": [
        {"name": "message", "label": "Salutation", "type": "text", "default": "bonjour"},
        {
            "name": "partition",
            "label": "Partition",
            "type": "partition",
            "maps_to": "partition",
            "default": "debug",
        },
        {
            "name": "duree",
            "label": "Durée",
            "type": "duration",
            "maps_to": "time_limit",
            "default": "0:10:00",
            "help": "Combien de temps la tâche peut durer.",
        },
        {
            "name": "sortie",
            "label": "Fichier de sortie",
            "type": "path",
            "maps_to": "stdout",
            "default": "~/portal-jobs/%x-%j.out",
        },
        {
            "name": "taches",
            "label": "Tâches",
            "type": "integer",
            "maps_to": "ntasks",
            "required": False,
        },
        {
            "name": "noeuds",
            "label": "Nœuds",
            "type": "integer",
            "maps_to": "nodes",
            "required": False,
        },
    ]
}
SCRIPT = "#!/bin/bash\necho {{ message }}\n"
# Code quoted in a sentence (an option, a path, a template tag, a schema location) is no
# English word; nor is the value a <button> sends, which is never shown.
CODE = re.compile(
    r"\{\{.*?\}\}|\{%.*?%\}|(?<![\w])--?[A-Za-z][\w-]*|~?/[\w./~%+-]*|\bparameters(?:\.\w+)+"
)
BUTTON_VALUE = re.compile(r'(<button\b[^>]*?)\svalue="[^"]*"')


def _partition(name: str, hours: int, is_default: bool) -> PartitionInfo:
    return PartitionInfo(
        name=name,
        max_time=timedelta(hours=hours),
        default_time=None,
        is_default=is_default,
        state="up",
        total_nodes=1,
        idle_nodes=1,
        total_cpus=2,
        idle_cpus=2,
    )


@pytest.fixture
def fake() -> FakeScheduler:
    choices._cache.clear()
    # carol may not charge physics on the cluster: her checks come back refused.
    return FakeScheduler(
        accounts={"alice": ["physics"], "carol": []},
        partitions=[_partition("debug", 1, True), _partition("long", 168, False)],
    )


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


async def _template(sessionmaker: Maker, owner: User, name: str, scope: str) -> JobTemplate:
    async with sessionmaker() as session:
        actor = await actor_for(session, owner)
        draft = TemplateDraft(
            name=name,
            description="Dit bonjour.",
            script=SCRIPT,
            parameter_schema=SCHEMA,
            defaults={"job_name": "demo"},
            scope=scope,
        )
        template = await create(session, actor, draft)
        await session.commit()
        return template


def _english_left(page: str) -> list[str]:
    """english_left, less the words that only occur inside quoted code."""
    page = BUTTON_VALUE.sub(r"\1", page)
    words = {word.lower() for word in WORD.findall(CODE.sub(" ", visible_text(page)))}
    left = english_left(page)
    return [item for item in left if not item.startswith("word: ") or item[6:] in words]


def _all_french(response: httpx.Response, status: int = 200) -> str:
    assert response.status_code == status, response.text
    left = _english_left(response.text)
    assert not left, f"{response.request.url}: {left}"
    return html.unescape(response.text)


def _submit_form(csrf: str, **changes: str) -> dict[str, str]:
    form = {
        "csrf_token": csrf,
        "idempotency_key": "k-1",
        "job_name": "demo",
        "account": "physics",
        "message": "bonjour",
        "partition": "debug",
        "duree": "0:10:00",
        "sortie": "~/portal-jobs/%x-%j.out",
        "taches": "",
        "noeuds": "",
    }
    return form | changes


async def test_template_pages_are_in_french_for_a_manager(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    site = await _template(sessionmaker, people.admin, "Salutations", "site")
    csrf = await sign_in(client, "alice")
    cloned = await client.post(
        f"/templates/{site.id}/clone", data={"csrf_token": csrf}, headers=FRENCH
    )
    copy_id = cloned.headers["location"].split("/")[2]
    for scope in ("site", "mine", "projects"):
        _all_french(await client.get(f"/templates?scope={scope}", headers=FRENCH))
    listed = _all_french(await client.get("/templates?scope=site", headers=FRAGMENT))
    assert "Modèle du site · version 1" in listed
    viewed = _all_french(await client.get(f"/templates/{copy_id}", headers=FRENCH))
    assert "Cloné de Salutations v1" in viewed and "Salutations (copie)" in viewed
    _all_french(await client.get(f"/templates/{site.id}", headers=FRENCH))
    edit = _all_french(await client.get(f"/templates/{copy_id}/edit", headers=FRENCH))
    assert ">durée maximale</option>" in edit and ">entier</option>" in edit
    _all_french(await client.get("/templates/new", headers=FRENCH))


async def test_template_editor_refusals_are_in_french(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")
    broken = {
        "csrf_token": csrf,
        "name": "",
        "scope": "personal",
        "job_name": "demo",
        "script": "#!/bin/bash\necho {{ qui }} {% if x %}\n",
        "params-0-name": "Mauvais",
        "params-0-label": "x" * 130,
        "params-0-type": "integer",
        "params-0-min": "beaucoup",
    }
    page = _all_french(await client.post("/templates/new", data=broken, headers=FRENCH), 422)
    assert "Donnez au modèle un nom" in page and "Le texte doit correspondre au motif" in page
    assert "ligne 2\u00a0: ce {% if %} n'a pas de {% endif %}" in page
    unknown = broken | {"name": "Essai", "script": "#!/bin/bash\necho {{ qui }}\n"}
    unknown |= {"params-0-name": "autre", "params-0-label": "Autre", "params-0-min": ""}
    page = _all_french(await client.post("/templates/new", data=unknown, headers=FRENCH), 422)
    assert "Le script utilise {{ qui }}" in page and "Utilisé nulle part\u00a0: autre." in page
    arithmetic = unknown | {"script": "#!/bin/bash\necho $(( {{ autre }} + 1 ))\n"}
    arithmetic |= {"params-0-type": "text"}
    preview = await client.post("/templates/preview", data=arithmetic, headers=FRAGMENT)
    assert "seuls des nombres peuvent y aller" in _all_french(preview)


async def test_submit_form_and_its_refusals_are_in_french(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    site = await _template(sessionmaker, people.admin, "Salutations", "site")
    url = f"/templates/{site.id}/submit"
    csrf = await sign_in(client, "alice")
    form = _all_french(await client.get(url, headers=FRENCH))
    assert "Comme sbatch le lit\u00a0: 90 vaut 90 minutes" in form
    refusals = {
        "duree": ("2:00:00", "La partition debug permet au plus 1:00:00."),
        "partition": ("nulle", "'nulle' n'est pas une partition de testcluster\u202f; choisissez"),
        "sortie": ("/etc/x", "Doit se trouver sous /home ou /scratch."),
        "message": ("", "Ce champ est obligatoire."),
        "noeuds": ("3", "3 nœuds demandent au moins 3 tâches"),
    }
    for field, (value, french) in refusals.items():
        changes = {field: value} | ({"taches": "1"} if field == "noeuds" else {})
        answer = await client.post(url, data=_submit_form(csrf, **changes), headers=FRENCH)
        assert french in _all_french(answer, 422), field
    preview = await client.post(
        f"{url}/preview", data=_submit_form(csrf, duree="1:99"), headers=FRAGMENT
    )
    assert "Utilisez des minutes ou H:MM:SS" in _all_french(preview)
    assert fake.specs == {}


async def test_someone_without_a_project_is_told_why_in_french(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    site = await _template(sessionmaker, people.admin, "Salutations", "site")
    await sign_in(client, "admin")
    page = _all_french(await client.get(f"/templates/{site.id}/submit", headers=FRENCH))
    assert "aucun compte à facturer" in page
    assert "aucun compte à facturer" in _all_french(
        await client.get("/submit/script", headers=FRENCH)
    )
    _all_french(await client.get("/templates?scope=site", headers=FRENCH))
    _all_french(await client.get(f"/templates/{site.id}", headers=FRENCH))
    _all_french(await client.get(f"/templates/{site.id}/edit", headers=FRENCH))


def _script_form(csrf: str, project_id: int, script: str) -> dict[str, str]:
    return {"csrf_token": csrf, "project_id": str(project_id), "script": script, "args": ""}


async def test_the_script_reading_is_in_french_and_slurms_words_are_kept(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    csrf = await sign_in(client, "alice")
    _all_french(await client.get("/submit/script", headers=FRENCH))
    script = (
        "#!/bin/bash\n#SBATCH --ntaks-per-node=2\n#SBATCH --time\n#SBATCH -y\n"
        "#SBATCH --job-name 'a\n#SBATCH --hold=oui\n#SBATCH --no\necho bonjour\n"
        "#SBATCH --mem=4G\n"
    )
    data = _script_form(csrf, people.physics.id, script)
    reading = _all_french(await client.post("/submit/script/check", data=data, headers=FRAGMENT))
    for french in (
        "ligne 2\u00a0: sbatch n'a pas d'option --ntaks-per-node (vouliez-vous dire",
        "ligne 3\u00a0: --time demande une valeur",
        "ligne 4\u00a0: sbatch n'a pas d'option -y",
        "ligne 5\u00a0: un guillemet ' n'est jamais fermé",
        "ligne 6\u00a0: --hold ne prend pas de valeur",
        "ligne 7\u00a0: --no est ambiguë\u00a0: --no-kill ou --no-requeue ou --nodefile",
        "ligne 9\u00a0: <code>#SBATCH --mem=4G</code>",
    ):
        assert french in reading, french
    refused = await client.post("/submit/script", data=data, headers=FRENCH)
    page = _all_french(refused, 422)
    assert "ligne 2\u00a0: sbatch n'a pas d'option --ntaks-per-node" in page
    assert "ligne 3\u00a0: --time demande une valeur" in page
    bad_time = _script_form(csrf, people.physics.id, "#!/bin/bash\n#SBATCH --time=demain\n")
    page = _all_french(await client.post("/submit/script", data=bad_time, headers=FRENCH), 422)
    assert "Valeur de --time invalide\u00a0: 'demain'" in page
    countdown = _script_form(csrf, people.physics.id, "#!/bin/bash\n#SBATCH --array=5-1\n")
    verdict = await client.post("/submit/script/preflight", data=countdown, headers=FRAGMENT)
    assert "5-1 est décroissant" in _all_french(verdict)
    assert fake.specs == {}


async def test_the_clusters_verdict_is_in_french(
    client: httpx.AsyncClient, people: World, fake: FakeScheduler
) -> None:
    data = _script_form("", people.physics.id, "#!/bin/bash\n#SBATCH --time=5\necho oui\n")
    data["csrf_token"] = await sign_in(client, "alice")
    accepted = await client.post("/submit/script/preflight", data=data, headers=FRAGMENT)
    assert "La grappe accepterait ce travail tel quel." in _all_french(accepted)
    data["csrf_token"] = await sign_in(client, "carol")
    refused = await client.post("/submit/script/preflight", data=data, headers=FRAGMENT)
    assert "Le compte n'existe pas ou vous n'en êtes pas membre." in _all_french(refused)
    submitted = await client.post("/submit/script", data=data, headers=FRENCH)
    assert "Le compte n'existe pas" in _all_french(submitted, 422)
    assert fake.specs == {}
