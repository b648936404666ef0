"""``/api/docs``: Swagger UI from the portal's own static files.

FastAPI's page loads Swagger from a CDN and starts it with an inline script, both of which
the portal's Content-Security-Policy refuses, so the page was blank. The assets are vendored
under ``static/vendor/swagger-ui`` and started by ``static/js/api-docs.js``.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from app.security import CONTENT_SECURITY_POLICY

router = APIRouter(include_in_schema=False)
OPENAPI_URL = "/api/openapi.json"
# Swagger UI sets style attributes on its elements; scripts stay limited to 'self'.
DOCS_POLICY = CONTENT_SECURITY_POLICY.replace(
    "style-src 'self'", "style-src 'self' 'unsafe-inline'"
)
PAGE = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>HPC Portal API</title>
  <link rel="stylesheet" href="/static/vendor/swagger-ui/swagger-ui.css">
  <link rel="icon" type="image/png" href="/static/vendor/swagger-ui/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui" data-openapi-url="{OPENAPI_URL}"></div>
  <script src="/static/vendor/swagger-ui/swagger-ui-bundle.js"></script>
  <script src="/static/js/api-docs.js"></script>
</body>
</html>
"""


@router.get("/api/docs")
async def api_docs() -> HTMLResponse:
    return HTMLResponse(PAGE, headers={"Content-Security-Policy": DOCS_POLICY})
