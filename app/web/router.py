"""Every page of the web surface, registered here and nowhere else.

Path parameters are typed (``{job_id:int}``) and actions have routes of their own, so no two
routes match one address and the order below does not matter (tests/unit/
test_route_registry.py checks both). The application includes each of them itself
(``app.main.include_routers``): FastAPI matches an included router's routes once for the
router and once more for each router around it, so every level of nesting adds a pass over
every page's routes to every request.
"""

from app.web import (
    admin,
    admin_audit,
    allocation,
    announcements,
    app_proxy,
    app_viewers,
    appearance,
    apps,
    array_pages,
    dashboard,
    disk_usage,
    files,
    files_changes,
    home,
    job_detail,
    jobs,
    language,
    logs_stream,
    nodes,
    notifications,
    script_pages,
    shell,
    signin,
    sso,
    submit_pages,
    template_pages,
    tokens,
    usage,
    workflows,
)

ROUTERS = (
    home.router,
    signin.router,
    sso.router,
    language.router,
    appearance.router,
    announcements.router,
    dashboard.router,
    template_pages.router,
    submit_pages.router,
    script_pages.router,
    jobs.router,
    jobs.actions,
    job_detail.router,
    array_pages.router,
    logs_stream.router,
    notifications.router,
    files.router,
    files_changes.router,
    disk_usage.router,
    nodes.router,
    apps.router,
    app_proxy.router,
    shell.router,
    app_viewers.router,
    tokens.router,
    usage.router,
    allocation.router,
    workflows.router,
    admin.router,
    admin_audit.router,
)
