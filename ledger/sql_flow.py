"""The flow's ledger on SQL: snapshots in a read-only transaction, a step's writes in one
write transaction (SQLite: one ``BEGIN IMMEDIATE``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from ragq.ledger.db import make_session_factory, read_scope, session_scope
from ragq.ledger.documents import current_versions
from ragq.ledger.flow_state import load_state, refresh_state
from ragq.ledger.flow_writes import write
from ragq.ledger.jobs import get_job
from ragq.ledger.waiting_line import WaitingLine, claim_due
from ragq.ledger.webhooks import first_attempts
from ragq.orchestration.fair_share import Claimed
from ragq.orchestration.flow import Action, FlowConfig, JobState
from ragq.schemas.statuses import BudgetDimension


class SqlFlowWriter:
    """The writes of one SQL transaction."""

    def __init__(self, session: Session):
        self._session = session

    def write(self, job_id: str, action: Action) -> BudgetDimension | None:
        return write(self._session, job_id, action)


class SqlFlowLedger:
    """:class:`ragq.ledger.ports.FlowLedger` on a SQLAlchemy engine (built once per process).

    With a ``waiting_line`` a job's ending starts the next waiting jobs (the workers'); without
    one, whoever added the jobs starts each (tests and benches in one process)."""

    def __init__(self, engine: Engine, *, waiting_line: WaitingLine | None = None):
        self.engine = engine
        self._sessions = make_session_factory(engine)
        self._line = waiting_line

    def snapshot(self, job_id: str, config: FlowConfig) -> JobState:
        with read_scope(self.engine) as conn:
            return load_state(conn, job_id=job_id, config=config)

    def refresh(self, state: JobState) -> JobState:
        with read_scope(self.engine) as conn:
            return refresh_state(conn, state)

    @contextmanager
    def transaction(self) -> Iterator[SqlFlowWriter]:
        with session_scope(self._sessions) as session:
            yield SqlFlowWriter(session)

    def current_versions(self, collection: str, doc_ids: Sequence[str]) -> dict[str, str]:
        with session_scope(self._sessions, readonly=True) as session:
            return current_versions(session, collection=collection, doc_ids=doc_ids)

    def pending_webhooks(self, job_id: str) -> list[str]:
        with session_scope(self._sessions, readonly=True) as session:
            batch_id = get_job(session, job_id=job_id).batch_id
            return first_attempts(session, job_ids=[job_id], batch_id=batch_id)

    def claim_next(self) -> list[Claimed]:
        return [] if self._line is None else claim_due(self._sessions, self._line)
