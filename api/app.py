"""The FastAPI application: ``create_api(settings)`` wires settings, ledger, metrics, routes."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from ragq.api import docs, errors
from ragq.api.metrics import build_registry
from ragq.api.routers import batches, jobs, ops, review, sources, tenants
from ragq.schemas.api import REF_TEMPLATE, BatchCreate, JobCreate
from ragq.settings import Settings
from ragq.workers.resources import resources_for

DESCRIPTION = """Submit questions and JSONL ticket batches, follow them, fetch results with
their evidence and cost. Authenticate with `Authorization: Bearer <key>` (`ragq keys create`).
Webhooks follow Standard Webhooks; verify them with `ragq.webhooks.verify_signature` or
`ragq webhooks verify`."""


BODY_MODELS = (BatchCreate, JobCreate)


def create_api(settings: Settings) -> FastAPI:
    """An app serving ``settings``' stack; several may live in one process (tests). Its ledger
    engine is the process's (:func:`resources_for`), the one the submission core its routes
    call borrows too."""
    # docs_url/redoc_url off: FastAPI's pages load Swagger UI from a CDN; docs.install serves
    # it from the installed swagger-ui-bundle-v2 files instead.
    app = FastAPI(title="ragq", version="1", description=DESCRIPTION, docs_url=None,
                  redoc_url=None)
    app.state.settings = settings
    app.state.engine = resources_for(settings).engine
    app.state.registry = build_registry(settings, app.state.engine)
    errors.install(app)
    docs.install(app)
    for router in (batches.router, jobs.router, review.router, sources.router,
                   tenants.router, ops.router):
        app.include_router(router)
    _document_bodies(app)
    return app


def _document_bodies(app: FastAPI) -> None:
    """Add the request bodies the ticket routes read themselves (by the one ticket parser, not
    by FastAPI's validation) to the document's components, where their ``$ref`` points."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = build()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in BODY_MODELS:
            body = model.model_json_schema(ref_template=REF_TEMPLATE)
            components.update(body.pop("$defs", {}))
            components[model.__name__] = body
        return schema

    # FastAPI's documented way to extend the schema ("Extending OpenAPI") replaces the app's
    # method; mypy refuses assigning to a method.
    app.openapi = openapi  # type: ignore[method-assign]
