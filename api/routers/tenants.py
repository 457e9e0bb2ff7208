"""``/v1/tenants``: tenants' shares of the waiting line (weight, max open jobs) and their open
and waiting jobs. Any key reads its own tenant; a key of an admin tenant (RAGQ_ADMIN_TENANTS)
reads all and sets them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from ragq.api.deps import CallerDep, SettingsDep
from ragq.schemas.api import (
    TENANT_PATH,
    TENANTS_PATH,
    ErrorOut,
    TenantList,
    TenantOut,
    TenantShareIn,
)
from ragq.submission.tenants import set_share, tenant_views

router = APIRouter(tags=["tenants"], responses={401: {"model": ErrorOut}})


@router.get(TENANTS_PATH, response_model=TenantList)
async def list_tenants(settings: SettingsDep, caller: CallerDep) -> TenantList:
    """The caller's tenant (an admin tenant: every tenant with a share set or jobs in line)."""
    views = await run_in_threadpool(tenant_views, settings, caller=caller)
    return TenantList(data=[TenantOut(**v) for v in views])


@router.put(TENANT_PATH, response_model=TenantOut,
            responses={403: {"model": ErrorOut}, 422: {"model": ErrorOut}})
async def put_tenant(tenant: str, body: TenantShareIn, settings: SettingsDep,
                     caller: CallerDep) -> TenantOut:
    """Set a tenant's weight and/or max open jobs (fields left out keep their value); the
    next claim of the waiting line uses them. 403 unless the key is an admin tenant's."""
    given: dict[str, Any] = body.model_dump(exclude_unset=True)
    if given.get("weight", 1) is None:
        del given["weight"]  # no weight is no change: every tenant has one
    view = await run_in_threadpool(lambda: set_share(settings, tenant, caller=caller, **given))
    return TenantOut(**view)
