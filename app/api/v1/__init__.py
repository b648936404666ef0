"""Version 1 of the JSON API. Breaking changes go to a new ``/api/v2`` beside it."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.routing import APIRoute

from app.api.v1.routes import (
    clusters,
    files,
    jobs,
    logs,
    me,
    notifications,
    projects,
    scripts,
    sessions,
    tasks,
    templates,
    usage,
)

TAGS = [
    {"name": "me", "description": "Who the token belongs to, with its scopes."},
    {"name": "projects", "description": "Projects (Slurm accounts) you belong to, and members."},
    {"name": "clusters", "description": "Clusters, their partitions and whether they answer."},
    {"name": "templates", "description": "Job templates: versions, parameters, cloning."},
    {
        "name": "jobs",
        "description": "Submit, list, cancel, hold, release and resubmit jobs; array tasks; "
        "a job's script and state history.",
    },
    {
        "name": "files",
        "description": "Your files on a cluster over SFTP, as you: browse, download, upload "
        "in pieces, create folders, rename, delete; only under the cluster's roots.",
    },
    {"name": "logs", "description": "A job's output and errors, page by page or followed live."},
    {"name": "usage", "description": "Who used what, for managers and administrators (CSV too)."},
    {
        "name": "notifications",
        "description": "Rules that tell you by e-mail or signed webhook when jobs start, end "
        "or fail, and the log of their deliveries.",
    },
    {
        "name": "apps",
        "description": "Interactive apps (JupyterLab…) launched as jobs; a running session "
        "opens in a browser signed in to the portal.",
    },
]


def operation_id(route: APIRoute) -> str:
    """The route function's name (``submit_job``): what a generated client calls its method."""
    return route.name


router = APIRouter(prefix="/api/v1", generate_unique_id_function=operation_id)
MODULES = (me, projects, clusters, templates, jobs, tasks, scripts, logs, files, usage, sessions)
for module in (*MODULES, notifications):
    router.include_router(module.router)
router.include_router(sessions.apps)
