"""``/docs``: Swagger UI served from the files the ``swagger-ui-bundle-v2`` package installs.

FastAPI's own ``/docs`` page loads Swagger UI's script and stylesheet from a CDN, so on a machine
without internet it is a blank page. Here the page points at ``/docs/static/…``, a mount of the
installed ``swagger_ui_bundle`` files: the API documents itself with no network at all. ReDoc is
not offered (no package ships it with the same care), so ``/redoc`` is switched off rather than
left as a second blank page.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_PATH = "/docs"
STATIC_PATH = f"{DOCS_PATH}/static"
"""Where Swagger UI's own files (script, stylesheet, favicon) are served."""


def swagger_ui_dir() -> Path:
    """The folder of Swagger UI's distribution files inside the installed package."""
    from swagger_ui_bundle import swagger_ui_path

    return Path(str(swagger_ui_path))


def install(app: FastAPI) -> None:
    """Serve Swagger UI for ``app``'s OpenAPI document at :data:`DOCS_PATH` from local files.

    ``app`` must be built with ``docs_url=None`` and ``redoc_url=None`` so FastAPI's CDN pages do
    not shadow these routes.
    """
    openapi_url = app.openapi_url or "/openapi.json"
    redirect_url = app.swagger_ui_oauth2_redirect_url or f"{DOCS_PATH}/oauth2-redirect"
    app.mount(STATIC_PATH, StaticFiles(directory=swagger_ui_dir()), name="swagger-ui")

    @app.get(DOCS_PATH, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}", title=f"{app.title} — API",
            oauth2_redirect_url=f"{root}{redirect_url}",
            swagger_js_url=f"{root}{STATIC_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{STATIC_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{STATIC_PATH}/favicon-32x32.png",
            swagger_ui_parameters=app.swagger_ui_parameters)

    @app.get(redirect_url, include_in_schema=False)
    async def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()
