"""Tenants' shares of the waiting line (issue 36): set by an operator, shown with who holds
the window and who waits. The CLI (``ragq tenants``) and ``/v1/tenants`` call these."""

from __future__ import annotations

from typing import Any

from ragq.errors import ForbiddenError, InputError
from ragq.ledger import jobs_by_tenant, session_scope, set_tenant_share, tenant_shares
from ragq.orchestration.fair_share import TenantShare
from ragq.settings import Settings
from ragq.submission.access import Caller
from ragq.workers.resources import resources_for

__all__ = ["set_share", "tenant_views"]

_KEEP = object()  # an option not given: keep what is set


def _view(name: str, share: TenantShare, counts: tuple[int, int]) -> dict[str, Any]:
    return {"tenant": name, "weight": share.weight, "max_open_jobs": share.max_open_jobs,
            "open_jobs": counts[0], "waiting_jobs": counts[1]}


def tenant_views(settings: Settings, *, caller: Caller | None = None) -> list[dict[str, Any]]:
    """Every tenant with a share set or a job open or waiting: its weight, max open jobs, and
    open and waiting jobs. A caller that is no admin tenant sees its own only."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        shares, counts = tenant_shares(session), jobs_by_tenant(session)
    names = sorted(set(shares) | set(counts))
    if caller is not None and caller.tenant not in settings.admin_tenants:
        names = [caller.tenant]
    return [_view(n, shares.get(n, TenantShare()), counts.get(n, (0, 0))) for n in names]


def set_share(settings: Settings, tenant: str, *, weight: Any = _KEEP,
              max_open_jobs: Any = _KEEP, caller: Caller | None = None) -> dict[str, Any]:
    """Set ``tenant``'s weight and/or max open jobs (None: no limit of its own); an option not
    given keeps its value. Returns the tenant's view. Raises ForbiddenError when ``caller`` (an API
    key) is not of an admin tenant (RAGQ_ADMIN_TENANTS), InputError for a weight below 1 or a
    negative limit."""
    if caller is not None and caller.tenant not in settings.admin_tenants:
        raise ForbiddenError("only an admin tenant's key may set shares (RAGQ_ADMIN_TENANTS)")
    if not tenant.strip():
        raise InputError("tenant must not be blank", source="tenant")
    with session_scope(resources_for(settings).engine) as session:
        current = tenant_shares(session).get(tenant, TenantShare())
        try:
            share = TenantShare(
                current.weight if weight is _KEEP else weight,
                current.max_open_jobs if max_open_jobs is _KEEP else max_open_jobs)
        except ValueError as exc:
            raise InputError(str(exc), source="tenant share") from exc
        set_tenant_share(session, tenant=tenant, share=share)
        counts = jobs_by_tenant(session).get(tenant, (0, 0))
    return _view(tenant, share, counts)
