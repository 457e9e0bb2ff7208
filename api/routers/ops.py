"""``/healthz`` and ``/metrics``: for load balancers and Prometheus (no API key needed)."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool

from ragq.api.health import check_broker, check_database, check_vectors, run_checks
from ragq.schemas.api import HEALTH_PATH, METRICS_PATH, HealthOut

router = APIRouter(tags=["operations"])


@router.get(HEALTH_PATH, response_model=HealthOut, responses={503: {"model": HealthOut}})
async def healthz(request: Request) -> JSONResponse:
    """200 when broker, ledger database and vector store answer; 503 naming the one that
    does not."""
    settings, engine = request.app.state.settings, request.app.state.engine
    components = await run_in_threadpool(run_checks, {
        "broker": partial(check_broker, settings),
        "database": partial(check_database, engine),
        "vector_store": partial(check_vectors, settings),
    })
    ok = all(c.ok for c in components.values())
    body = HealthOut(status="ok" if ok else "degraded", components=components)
    return JSONResponse(body.model_dump(), status_code=200 if ok else 503)


@router.get(METRICS_PATH, response_class=Response)
async def metrics(request: Request) -> Response:
    """Prometheus text format: jobs by status, batches in progress, queue depth, budget
    exhaustion, cost, webhook failures."""
    data = await run_in_threadpool(generate_latest, request.app.state.registry)
    return Response(data, media_type=CONTENT_TYPE_LATEST)
