"""Templates for route tests, created through the service as their owners would."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates.service import TemplateDraft, create
from app.models.job_templates import JobTemplate
from app.models.users import User
from app.users.service import actor_for

SCHEMA: dict[str, Any] = {
    "parameters": [
        {"name": "message", "label": "Message", "type": "text", "default": "hi"},
        {
            "name": "partition",
            "label": "Partition",
            "type": "partition",
            "maps_to": "partition",
            "default": "debug",
        },
        {
            "name": "time_limit",
            "label": "Time limit",
            "type": "duration",
            "maps_to": "time_limit",
            "default": "0:10:00",
            "help": "How long the job may run.",
        },
        {
            "name": "output",
            "label": "Output file",
            "type": "path",
            "maps_to": "stdout",
            "default": "~/portal-jobs/%x-%j.out",
        },
    ]
}
SCRIPT = "#!/bin/bash\necho {{ message }}\n"


async def make_template(
    sessionmaker: async_sessionmaker[AsyncSession],
    owner: User,
    name: str,
    scope: str = "personal",
    project_id: int | None = None,
) -> JobTemplate:
    async with sessionmaker() as session:
        actor = await actor_for(session, owner)
        draft = TemplateDraft(
            name=name,
            script=SCRIPT,
            parameter_schema=SCHEMA,
            defaults={"job_name": "demo"},
            scope=scope,
            project_id=project_id,
        )
        template = await create(session, actor, draft)
        await session.commit()
        return template
