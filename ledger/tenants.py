"""Tenants' shares of the waiting line (issue 36): weight and maximum open jobs, set by an
operator (``ragq tenants set``, ``PUT /v1/tenants/{name}``) and read by every claim."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragq.ledger.models import TenantRow, utcnow
from ragq.orchestration.fair_share import TenantShare

__all__ = ["set_tenant_share", "tenant_share", "tenant_shares"]


def set_tenant_share(session: Session, *, tenant: str, share: TenantShare) -> TenantRow:
    """Record ``tenant``'s weight and max open jobs (replacing what was set); the next claim
    of the waiting line uses them."""
    row = session.get(TenantRow, tenant)
    if row is None:
        row = TenantRow(name=tenant)
        session.add(row)
    row.weight, row.max_open_jobs, row.updated_at = share.weight, share.max_open_jobs, utcnow()
    session.flush()
    return row


def tenant_shares(session: Session) -> dict[str, TenantShare]:
    """Every tenant with a share set; the others have the default :class:`TenantShare`."""
    return {row.name: TenantShare(row.weight, row.max_open_jobs)
            for row in session.scalars(select(TenantRow))}


def tenant_share(session: Session, *, tenant: str) -> TenantShare:
    """``tenant``'s share: the one set, or the default."""
    row = session.get(TenantRow, tenant)
    return TenantShare() if row is None else TenantShare(row.weight, row.max_open_jobs)
