"""Every route of version 1 of the JSON API, and the tags its documentation groups them by."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.routing import APIRoute

from app.api.v1.routes import (
    announcements,
    clusters,
    files,
    job_checks,
    jobs,
    logs,
    me,
    notifications,
    projects,
    scripts,
    session_viewers,
    sessions,
    tasks,
    templates,
    usage,
    workflows,
)

TAGS = [
    {"name": "me", "description": "Who the token belongs to, with its scopes."},
    {"name": "projects", "description": "Projects (Slurm accounts) you belong to, and members."},
    {"name": "clusters", "description": "Clusters, their partitions and whether they answer."},
    {"name": "templates", "description": "Job templates: versions, parameters, cloning."},
    {
        "name": "jobs",
        "description": "Submit (or only check), list, cancel, hold, release and resubmit "
        "jobs; array tasks; a job's script and state history.",
    },
    {
        "name": "files",
        "description": "Your files on a cluster over SFTP, as you: browse, download, upload "
        "in pieces, create folders, rename, delete; only under the cluster's roots.",
    },
    {
        "name": "workflows",
        "description": "Named graphs of steps submitted together with their dependencies, "
        "each run's step states, and re-running from a failed step.",
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
    {
        "name": "announcements",
        "description": "What administrators announce, and when clusters stop for maintenance "
        "(read from their schedulers' maintenance reservations).",
    },
]


def operation_id(route: APIRoute) -> str:
    """The route function's name (``submit_job``): what a generated client calls its method."""
    return route.name


PREFIX = "/api/v1"
MODULES = (
    me,
    projects,
    clusters,
    templates,
    job_checks,
    jobs,
    tasks,
    scripts,
    logs,
    files,
    usage,
    sessions,
    session_viewers,
    workflows,
)
# Included by the application itself, each under PREFIX (see app/web/router.py for why).
ROUTERS: tuple[APIRouter, ...] = (
    *(module.router for module in (*MODULES, notifications, announcements)),
    sessions.apps,
)
