"""The read side the front doors need beyond single rows: a batch's cost so far, a job's ledger
trail and evidence as plain records, the figures behind ``/metrics``, and a liveness ping.

Queries only; shaping the output (views, JSON, Prometheus families) stays with the front door.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import func, inspect, select, text
from sqlalchemy.orm import Session

from ragq.ledger.models import (
    AnswerRow,
    BatchRow,
    BudgetChargeRow,
    JobRow,
    ModelCallRow,
    PlanRow,
    RetrievalRequestRow,
    ReviewRow,
    SubQueryRow,
    SufficiencyCheckRow,
    VerificationRow,
    WebhookDeliveryRow,
    WebhookEndpointRow,
    table_of,
)
from ragq.ledger.steps import job_evidence
from ragq.ledger.webhooks import SENDING
from ragq.schemas.statuses import BatchStatus

__all__ = [
    "TRAIL_TABLES",
    "MetricsSnapshot",
    "batch_cost",
    "evidence_records",
    "job_trail",
    "metrics_snapshot",
    "ping",
]

_TRAIL = [PlanRow, SubQueryRow, RetrievalRequestRow, SufficiencyCheckRow, VerificationRow,
          ModelCallRow, BudgetChargeRow, AnswerRow, ReviewRow, WebhookDeliveryRow]
TRAIL_TABLES = tuple(model.__tablename__ for model in _TRAIL)
"""The tables of a job's trail, in the order :func:`job_trail` returns them."""


def _record(row: Any) -> dict[str, Any]:
    """A row's column values by attribute name; money (``Decimal``) as float, for JSON."""
    values = {}
    for attr in inspect(row).mapper.column_attrs:
        value = getattr(row, attr.key)
        values[attr.key] = float(value) if isinstance(value, Decimal) else value
    return values


def batch_cost(session: Session, *, batch_id: str) -> float:
    """Model spend of the batch's jobs so far, in USD (0.0 before any call)."""
    total = session.scalar(select(func.coalesce(func.sum(ModelCallRow.cost_usd), 0))
                           .join(JobRow, JobRow.id == ModelCallRow.job_id)
                           .where(JobRow.batch_id == batch_id))
    return float(total or 0)


def job_trail(session: Session, *, job_id: str) -> dict[str, list[dict[str, Any]]]:
    """Every plan, sub-query, retrieval, check, verification, model call, budget charge, answer,
    review (escalation and resolution) and webhook delivery of the job, as column records,
    oldest first, keyed by table name (all of :data:`TRAIL_TABLES`, empty lists included). An
    unknown job has an empty trail."""
    return {model.__tablename__: [_record(r) for r in session.scalars(
                select(model).where(table_of(model).c.job_id == job_id)
                .order_by(table_of(model).c.created_at))]
            for model in _TRAIL}


def evidence_records(session: Session, *, job_id: str) -> list[dict[str, Any]]:
    """The job's evidence items as column records (document, chunk, score, version, sub-query,
    ``in_context``), oldest request first, best rank first."""
    return [_record(r) for r in job_evidence(session, job_id=job_id)]


@dataclass(frozen=True)
class MetricsSnapshot:
    """The ledger's figures at one moment, for ``/metrics``."""

    jobs_by_status: dict[str, int]
    """Jobs per status; statuses without a job are absent."""
    batches_in_progress: int
    cost_usd: float
    """Model spend recorded over all jobs."""
    failed_webhook_attempts: int
    """Attempts answered without a 2xx, or not at all (in-flight ones excluded)."""
    disabled_webhook_endpoints: int


def metrics_snapshot(session: Session) -> MetricsSnapshot:
    """Counts and sums over the whole ledger: a handful of aggregate queries, none per row."""
    by_status = session.execute(select(JobRow.status, func.count()).group_by(JobRow.status))
    running = session.scalar(select(func.count()).select_from(BatchRow).where(
        BatchRow.status == BatchStatus.IN_PROGRESS))
    cost = session.scalar(select(func.coalesce(func.sum(ModelCallRow.cost_usd), 0)))
    failed = session.scalar(select(func.count()).select_from(WebhookDeliveryRow).where(
        WebhookDeliveryRow.status_code.is_(None) | (WebhookDeliveryRow.status_code >= 300),
        WebhookDeliveryRow.error.is_not(None), WebhookDeliveryRow.error != SENDING))
    disabled = session.scalar(select(func.count()).select_from(WebhookEndpointRow)
                              .where(WebhookEndpointRow.disabled_at.is_not(None)))
    return MetricsSnapshot(
        jobs_by_status={str(status): int(n) for status, n in by_status},
        batches_in_progress=int(running or 0), cost_usd=float(cost or 0),
        failed_webhook_attempts=int(failed or 0), disabled_webhook_endpoints=int(disabled or 0))


def ping(session: Session) -> None:
    """Raises (a LedgerError, through :func:`session_scope`) when the database does not answer
    ``SELECT 1``: the health check of the ledger."""
    session.execute(text("SELECT 1"))
