"""Ingest runs and their progress counters, bumped by many ingest tasks in parallel."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import literal, update
from sqlalchemy.orm import Session

from ragq.ledger.db import rows_changed
from ragq.ledger.errors import LedgerNotFoundError
from ragq.ledger.models import IngestRunRow, IngestStatus, table_of, utcnow
from ragq.ledger.models.base import MONEY_QUANTUM

__all__ = ["add_ingest_counts", "close_stale_ingest_runs", "create_ingest_run",
           "finish_ingest_run", "get_ingest_run"]

_RUNS = table_of(IngestRunRow)


def create_ingest_run(
    session: Session, *, collection: str, source_path: str, documents_total: int = 0
) -> IngestRunRow:
    """Insert a running ingest run; its ``id`` is set on return (the row is flushed)."""
    row = IngestRunRow(
        collection=collection, source_path=source_path, documents_total=documents_total
    )
    session.add(row)
    session.flush()
    return row


def add_ingest_counts(
    session: Session,
    *,
    run_id: str,
    documents_total: int = 0,
    documents_ingested: int = 0,
    documents_unchanged: int = 0,
    documents_replaced: int = 0,
    chunks: int = 0,
    bad_lines: int = 0,
    embedding_tokens: int = 0,
    cost_usd: float | Decimal = 0,
) -> None:
    """Add to the run's counters (and to its ``cost_usd``, in US dollars) in one
    ``UPDATE … SET x = x + n``.

    Increments are computed by the database, so parallel tasks never overwrite each other's
    counts (a read-modify-write in Python would lose them). Raises :class:`LedgerNotFoundError`
    for an unknown run.
    """
    deltas: dict[str, int | Decimal] = {
        "documents_total": documents_total,
        "documents_ingested": documents_ingested,
        "documents_unchanged": documents_unchanged,
        "documents_replaced": documents_replaced,
        "chunks": chunks,
        "bad_lines": bad_lines,
        "embedding_tokens": embedding_tokens,
        "cost_usd": Decimal(str(cost_usd)).quantize(MONEY_QUANTUM),
    }
    # Bind each delta with its column's type, whose processor converts Decimal for SQLite.
    values = {_RUNS.c[name]: _RUNS.c[name] + literal(delta, _RUNS.c[name].type)
              for name, delta in deltas.items() if delta}
    if not values:
        values = {_RUNS.c.id: _RUNS.c.id}  # still check that the run exists
    result = session.execute(
        update(_RUNS).where(_RUNS.c.id == run_id).values(values)
    )
    if rows_changed(result) == 0:
        raise LedgerNotFoundError(f"no ingest run {run_id}", table="ingest_runs", key=run_id)


def finish_ingest_run(
    session: Session,
    *,
    run_id: str,
    status: IngestStatus = IngestStatus.COMPLETED,
    error: str | None = None,
) -> bool:
    """Mark a running run finished; returns ``False`` if it had already finished.

    The first finisher wins, so a redelivered "finish" task cannot overwrite a failure with a
    success. Raises ``ValueError`` for ``status=RUNNING`` and :class:`LedgerNotFoundError` for
    an unknown run.
    """
    if IngestStatus(status) is IngestStatus.RUNNING:
        raise ValueError("finish_ingest_run needs a final status: completed, failed or cancelled")
    result = session.execute(
        update(_RUNS)
        .where(_RUNS.c.id == run_id, _RUNS.c.status == IngestStatus.RUNNING)
        .values(status=status, error=error, finished_at=utcnow())
    )
    if rows_changed(result) == 1:
        return True
    if session.get(IngestRunRow, run_id) is None:
        raise LedgerNotFoundError(f"no ingest run {run_id}", table="ingest_runs", key=run_id)
    return False


def get_ingest_run(session: Session, *, run_id: str) -> IngestRunRow | None:
    """The run as the database has it now (fresh counters), or ``None``."""
    return session.get(IngestRunRow, run_id, populate_existing=True)


def close_stale_ingest_runs(session: Session, *, started_before: datetime, reason: str) -> int:
    """Mark every run still ``running`` that started before ``started_before`` as failed with
    ``reason`` (no front door follows it any more: its process died); returns how many."""
    result = session.execute(
        update(_RUNS)
        .where(_RUNS.c.status == IngestStatus.RUNNING, _RUNS.c.created_at < started_before)
        .values(status=IngestStatus.FAILED, error=reason, finished_at=utcnow())
    )
    return rows_changed(result)
