"""Job templates for an actor: listing by scope, versions, cloning and archiving.

Personal templates belong to their owner; project templates are used by the project's
members and edited by its managers; site templates are used by everyone and edited by site
administrators. A template an actor may not use is reported as not found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.service import SYSTEM, Origin, record_action
from app.errors import Forbidden, NotFound, ValidationFailed
from app.i18n import _
from app.job_templates import repository
from app.job_templates.checks import draft_problems
from app.job_templates.render import script_problem
from app.job_templates.schema import load_schema, schema_problems
from app.job_templates.script_language import parse
from app.models.job_templates import JobTemplate, TemplateVersion
from app.users.actor import Actor

ListScope = Literal["mine", "projects", "site"]
LIST_SCOPES: tuple[ListScope, ...] = ("mine", "projects", "site")
# The note a clone's first version gets, stored in English and translated when shown.
_CLONED = re.compile(r"Cloned from (?P<name>.+) v(?P<version>\d+)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class TemplateDraft:
    """What a create or update form submits."""

    name: str
    script: str
    parameter_schema: Mapping[str, Any]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    scope: str = "personal"
    project_id: int | None = None
    change_note: str = ""


def can_use(actor: Actor, template: JobTemplate) -> bool:
    if template.scope == "site" or actor.is_site_admin:
        return True
    if template.scope == "project":
        return actor.is_member_of(template.project_id)
    return template.owner_user_id == actor.user_id


def can_edit(actor: Actor, template: JobTemplate) -> bool:
    if template.scope == "site":
        return actor.is_site_admin
    if template.scope == "project":
        return actor.is_manager_of(template.project_id) or actor.is_site_admin
    return template.owner_user_id == actor.user_id


async def names_for_filter(session: AsyncSession, actor: Actor) -> list[tuple[int, str]]:
    """(id, name) of every template the actor may use, archived ones included (old jobs)."""
    if actor.is_site_admin:
        return await repository.names(session, None)
    return await repository.names_usable_by(session, actor.user_id, actor.project_roles)


async def submitted_from(session: AsyncSession, actor: Actor) -> list[tuple[int, str, int, int]]:
    """The templates the actor has submitted from: (id, name, jobs, newest job id)."""
    return await repository.submitted_from(session, actor.user_id)


async def list_templates(
    session: AsyncSession, actor: Actor, scope: ListScope
) -> list[JobTemplate]:
    if scope == "mine":
        return await repository.list_personal(session, actor.user_id)
    if scope == "projects":
        return await repository.list_for_projects(session, actor.project_roles)
    return await repository.list_site(session)


async def get(session: AsyncSession, actor: Actor, template_id: int) -> JobTemplate:
    template = await repository.get_by_id(session, template_id)
    if template is None or not can_use(actor, template):
        raise NotFound(_("No such template."))
    return template


async def get_for_edit(session: AsyncSession, actor: Actor, template_id: int) -> JobTemplate:
    template = await get(session, actor, template_id)
    if not can_edit(actor, template):
        raise Forbidden(_("You can use this template but not change it; clone it instead."))
    return template


async def current_version(
    session: AsyncSession, actor: Actor, template_id: int
) -> tuple[JobTemplate, TemplateVersion]:
    template = await get(session, actor, template_id)
    if template.current_version is None or template.is_archived:
        raise NotFound(_("This template has no usable version."))
    return template, template.current_version


async def pinned_version(
    session: AsyncSession, actor: Actor, template_id: int, number: int | None
) -> tuple[JobTemplate, TemplateVersion]:
    """Version ``number`` of the template (the current one when None).

    A submit form names the version it previewed, so a template edited meanwhile cannot
    change what is submitted behind the submitter's back.
    """
    if number is None:
        return await current_version(session, actor, template_id)
    template = await get(session, actor, template_id)
    if not template.is_archived:
        for version in await repository.list_versions(session, template_id):
            if version.version == number:
                return template, version
    raise NotFound(_("No such template version."))


async def versions(session: AsyncSession, actor: Actor, template_id: int) -> list[TemplateVersion]:
    await get(session, actor, template_id)
    return await repository.list_versions(session, template_id)


def _check_draft(draft: TemplateDraft, *, as_edited: bool = True) -> None:
    """Refuse a draft that could not be rendered; ``as_edited`` adds the checks that need
    its author (a clone copies a version as it is, to be fixed in the editor)."""
    problems: dict[str, str] = {}
    if not 1 <= len(draft.name.strip()) <= 200:
        problems["name"] = _("Give the template a name of at most %(limit)s characters.", limit=200)
    script = script_problem(draft.script)
    if script:
        problems["script"] = script
    schema = schema_problems(dict(draft.parameter_schema))
    if schema:
        problems["parameters"] = " ".join(schema)
    if as_edited and not (script or schema):
        parsed = load_schema(dict(draft.parameter_schema))
        problems.update(draft_problems(parse(draft.script), parsed))
    if problems:
        raise ValidationFailed(_("The template needs fixing."), fields=problems)


def _check_scope(actor: Actor, scope: str, project_id: int | None) -> None:
    if scope == "project" and project_id is None:
        raise ValidationFailed(fields={"scope": _("Choose the project whose members may use it.")})
    if scope == "site" and not actor.is_site_admin:
        raise Forbidden(_("Only site administrators can create site templates."))
    if scope == "project" and not (actor.is_manager_of(project_id) or actor.is_site_admin):
        raise Forbidden(_("Only the project's managers can create its templates."))
    if scope not in ("personal", "project", "site"):
        raise ValidationFailed(fields={"scope": _("Choose personal, project or site.")})


async def _add_version(
    session: AsyncSession, actor: Actor, template: JobTemplate, draft: TemplateDraft
) -> TemplateVersion:
    version = TemplateVersion(
        template_id=template.id,
        version=await repository.next_version_number(session, template.id),
        script=draft.script,
        parameter_schema=dict(draft.parameter_schema),
        defaults=dict(draft.defaults),
        created_by_user_id=actor.user_id,
        change_note=draft.change_note,
    )
    session.add(version)
    await session.flush()
    template.current_version_id = version.id
    template.current_version = version
    await session.flush()
    return version


async def create(
    session: AsyncSession, actor: Actor, draft: TemplateDraft, *, origin: Origin = SYSTEM
) -> JobTemplate:
    template = await _create(session, actor, draft)
    await _audit(session, actor, origin, "template.create", template, scope=template.scope)
    return template


async def _audit(
    session: AsyncSession,
    actor: Actor,
    origin: Origin,
    action: str,
    template: JobTemplate,
    **details: Any,
) -> None:
    target = ("job_template", template.id)
    await record_action(session, actor.user_id, origin, action, target, **details)


async def _create(
    session: AsyncSession, actor: Actor, draft: TemplateDraft, *, as_edited: bool = True
) -> JobTemplate:
    _check_scope(actor, draft.scope, draft.project_id)
    _check_draft(draft, as_edited=as_edited)
    template = JobTemplate(
        name=draft.name.strip(),
        description=draft.description.strip(),
        scope=draft.scope,
        owner_user_id=actor.user_id,
        project_id=draft.project_id if draft.scope == "project" else None,
    )
    session.add(template)
    await session.flush()
    await _add_version(session, actor, template, draft)
    return template


async def update(
    session: AsyncSession,
    actor: Actor,
    template_id: int,
    draft: TemplateDraft,
    *,
    origin: Origin = SYSTEM,
) -> TemplateVersion:
    """Saves ``draft`` as the template's next version, which becomes the current one."""
    template = await get_for_edit(session, actor, template_id)
    _check_draft(draft)
    details: dict[str, Any] = {}
    if _move(actor, template, draft):
        details = {"scope": template.scope, "project_id": template.project_id}
    template.name = draft.name.strip()
    template.description = draft.description.strip()
    version = await _add_version(session, actor, template, draft)
    await _audit(
        session, actor, origin, "template.update", template, version=version.version, **details
    )
    return version


def _move(actor: Actor, template: JobTemplate, draft: TemplateDraft) -> bool:
    """Give the template the draft's "who can use it", if the actor may; True if it moved."""
    project_id = draft.project_id if draft.scope == "project" else None
    if (draft.scope, project_id) == (template.scope, template.project_id):
        return False
    # Whoever may create a template where it goes may move one there they can edit.
    _check_scope(actor, draft.scope, project_id)
    template.scope, template.project_id = draft.scope, project_id
    return True


async def clone(
    session: AsyncSession, actor: Actor, template_id: int, *, origin: Origin = SYSTEM
) -> JobTemplate:
    """A personal copy of the template's current version, owned by the actor."""
    template, version = await current_version(session, actor, template_id)
    draft = TemplateDraft(
        # The copy's name is its owner's to change, so it is named in their language.
        name=_("%(name)s (copy)", name=template.name)[:200],
        description=template.description,
        script=version.script,
        parameter_schema=version.parameter_schema,
        defaults=version.defaults,
        change_note=f"Cloned from {template.name} v{version.version}",
    )
    copy = await _create(session, actor, draft, as_edited=False)
    await _audit(session, actor, origin, "template.clone", copy, copy_of=template.id)
    return copy


def shown_note(note: str) -> str:
    """A version's note as shown: the one a clone wrote in the reader's language."""
    match = _CLONED.fullmatch(note)
    if match is None:
        return note
    return _("Cloned from %(name)s v%(version)s", name=match["name"], version=match["version"])


async def archive(
    session: AsyncSession, actor: Actor, template_id: int, *, origin: Origin = SYSTEM
) -> JobTemplate:
    template = await get_for_edit(session, actor, template_id)
    template.is_archived = True
    await session.flush()
    await _audit(session, actor, origin, "template.archive", template)
    return template
