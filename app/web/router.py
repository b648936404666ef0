"""All pages of this package, for ``app.include_router``."""

from fastapi import APIRouter

from app.web import (
    array_pages,
    disk_usage,
    files,
    files_changes,
    job_detail,
    language,
    notifications,
    script_pages,
    signin,
    submit_pages,
    template_pages,
)

router = APIRouter()
router.include_router(signin.router)
# Submit routes first: "/templates/{id}/submit" must not be read as a template page.
router.include_router(submit_pages.router)
router.include_router(script_pages.router)
router.include_router(template_pages.router)
# Before the job pages' "/jobs/{id}/{action}"; a job's page takes numeric ids only, so
# "/jobs/rows" still reaches the job list.
router.include_router(array_pages.router)
router.include_router(job_detail.router)
# Before the job pages' "/jobs/{id}/{action}" too: "/jobs/{id}/notify" is its own page.
router.include_router(notifications.router)
router.include_router(disk_usage.router)
router.include_router(files.router)
router.include_router(files_changes.router)
router.include_router(language.router)
