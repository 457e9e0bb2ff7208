"""The schema itself refuses bad rows: uniques, checks, foreign keys, cascades (both backends)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session

from ragq.ledger import BatchRow, JobRow, LedgerError, LedgerIntegrityError, session_scope
from ragq.ledger.models import BudgetChargeRow, EvidenceItemRow, JobBudgetRow, RetrievalRequestRow
from ragq.schemas.statuses import ChargeOutcome


def _job(session: Session, **overrides: object) -> JobRow:
    values: dict[str, object] = {"tenant": "t", "collection": "c", "question": "why?"}
    values.update(overrides)
    job = JobRow(**values)
    session.add(job)
    session.flush()
    return job


def _charge(job_id: str, key: str) -> BudgetChargeRow:
    return BudgetChargeRow(
        job_id=job_id,
        dimension="steps",
        amount=Decimal(1),
        idempotency_key=key,
        outcome=ChargeOutcome.GRANTED,
    )


def test_duplicate_idempotency_key_is_rejected(engine: Engine) -> None:
    with session_scope(engine) as session:
        job_id = _job(session).id
        session.add(_charge(job_id, "step:1"))
    with (
        pytest.raises(LedgerIntegrityError, match="idempotency_key"),
        session_scope(engine) as session,
    ):
        session.add(_charge(job_id, "step:1"))
    with session_scope(engine) as session:  # same key on another job is fine
        other = _job(session).id
        session.add(_charge(other, "step:1"))


def test_custom_id_is_unique_within_a_batch_only(engine: Engine) -> None:
    with session_scope(engine) as session:
        batch_a = BatchRow(tenant="t", collection="c")
        batch_b = BatchRow(tenant="t", collection="c")
        session.add_all([batch_a, batch_b])
        session.flush()
        _job(session, batch_id=batch_a.id, custom_id="t-1")
        _job(session, batch_id=batch_b.id, custom_id="t-1")
        _job(session, custom_id="t-1")
        _job(session, custom_id="t-1")  # single jobs have no batch; NULLs never collide
    with pytest.raises(LedgerIntegrityError), session_scope(engine) as session:
        _job(session, batch_id=batch_a.id, custom_id="t-1")


def test_evidence_chunk_is_unique_per_retrieval_request(engine: Engine) -> None:
    def evidence(job_id: str, request_id: str) -> EvidenceItemRow:
        return EvidenceItemRow(
            job_id=job_id,
            retrieval_request_id=request_id,
            doc_id="d",
            chunk_id="d#0",
            score=0.9,
            rank=0,
            source_version="v1",
            text="x",
        )

    with session_scope(engine) as session:
        job_id = _job(session).id
        request = RetrievalRequestRow(job_id=job_id, query_text="q", normalized_key="k", top_k=5)
        session.add(request)
        session.flush()
        session.add(evidence(job_id, request.id))
    with pytest.raises(LedgerIntegrityError), session_scope(engine) as session:
        session.add(evidence(job_id, request.id))


def test_status_check_rejects_unknown_values_written_as_raw_sql(engine: Engine) -> None:
    with session_scope(engine) as session:
        job_id = _job(session).id
    with pytest.raises(LedgerIntegrityError), session_scope(engine) as session:
        session.execute(text("UPDATE jobs SET status = 'sleeping' WHERE id = :id"), {"id": job_id})


def test_status_is_stored_as_its_value(engine: Engine) -> None:
    with session_scope(engine) as session:
        job_id = _job(session).id
        stored = session.scalar(text("SELECT status FROM jobs WHERE id = :id"), {"id": job_id})
    assert stored == "queued"


def test_foreign_keys_are_enforced(engine: Engine) -> None:
    with pytest.raises(LedgerIntegrityError), session_scope(engine) as session:
        _job(session, batch_id="bat_missing")


def test_deleting_a_batch_cascades_to_its_jobs_and_their_trail(engine: Engine) -> None:
    with session_scope(engine) as session:
        batch = BatchRow(tenant="t", collection="c")
        session.add(batch)
        session.flush()
        job_id = _job(session, batch_id=batch.id).id
        session.add_all([JobBudgetRow(job_id=job_id, limit_steps=3), _charge(job_id, "k")])
    with session_scope(engine) as session:
        session.execute(text("DELETE FROM batches WHERE id = :id"), {"id": batch.id})
    with session_scope(engine, readonly=True) as session:
        assert session.get(JobRow, job_id) is None
        assert session.get(JobBudgetRow, job_id) is None
        assert session.scalars(select(BudgetChargeRow)).all() == []


def test_timestamps_read_back_as_aware_utc(engine: Engine) -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    with session_scope(engine) as session:
        job_id = _job(session, started_at=moment).id
    with session_scope(engine, readonly=True) as session:
        job = session.get(JobRow, job_id)
        assert job is not None
        assert job.started_at == moment
        assert job.started_at.tzinfo is not None
        assert job.created_at.utcoffset() is not None
        assert abs((datetime.now(UTC) - job.created_at).total_seconds()) < 60


def test_naive_timestamps_are_refused(engine: Engine) -> None:
    with pytest.raises(LedgerError, match="naive"), session_scope(engine) as session:
        _job(session, started_at=datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("acl", ["support", "public"]),
        ("meta", {"priority": 2, "tags": ["a"], "nested": {"ok": True}}),
        ("result", {"answer": "x", "citations": [{"doc_id": "d", "chunk_id": "d#1"}]}),
    ],
)
def test_json_columns_round_trip(engine: Engine, column: str, value: object) -> None:
    with session_scope(engine) as session:
        job_id = _job(session, **{column: value}).id
    with session_scope(engine, readonly=True) as session:
        job = session.get(JobRow, job_id)
        assert getattr(job, column) == value


def test_money_round_trips_exactly(engine: Engine) -> None:
    with session_scope(engine) as session:
        job_id = _job(session).id
        session.add(JobBudgetRow(job_id=job_id, limit_cost_usd=Decimal("0.12345678")))
    with session_scope(engine, readonly=True) as session:
        budget = session.get(JobBudgetRow, job_id)
        assert budget is not None
        assert budget.limit_cost_usd == Decimal("0.12345678")
        assert budget.used_cost_usd == 0
