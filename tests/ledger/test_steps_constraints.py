"""Ledger rows written once: a row that breaks a constraint (not a racing duplicate of itself)
is refused as an integrity error naming it, a duplicate delivery finds the first row, on SQLite
(no savepoint) and PostgreSQL (savepoint) alike."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from ragq.ledger import LedgerIntegrityError, session_scope
from ragq.ledger.models import EvidenceItemRow, PlanRow
from ragq.ledger.results import build_result
from ragq.ledger.steps import record_answer, record_plan, record_retrieval
from ragq.schemas.cache import CachedHit
from tests.ledger.conftest import Race, new_job


def test_a_plan_of_a_job_that_does_not_exist_is_refused_as_an_integrity_error(
        engine: Engine) -> None:
    with pytest.raises(LedgerIntegrityError, match=r"(?i)foreign key"), \
            session_scope(engine) as session:
        record_plan(session, job_id="no-such-job", round=0, plan={"sub_queries": []},
                    strategy="single", repair_reason=None)


def test_a_plan_recorded_twice_is_one_row(engine: Engine) -> None:
    job_id = new_job(engine)
    ids = []
    for _ in range(2):
        with session_scope(engine) as session:
            ids.append(record_plan(session, job_id=job_id, round=0, plan={"sub_queries": []},
                                   strategy="single", repair_reason=None))
    assert ids[0] == ids[1]


def test_a_retrieval_without_a_sub_query_recorded_twice_is_one_request_with_its_hits_once(
        engine: Engine) -> None:
    # The key's sub-query is NULL: the look-up must ask IS NULL, or every delivery inserts.
    job_id = new_job(engine)
    hits = [CachedHit(doc_id=f"d{i}", chunk_id=f"d{i}::0", score=0.9 - i / 10, title="T",
                      text=f"text {i}") for i in range(3)]
    recorded = []
    for _ in range(2):
        with session_scope(engine) as session:
            recorded.append(record_retrieval(
                session, job_id=job_id, sub_query_id=None, attempt=0, query_text="q",
                normalized_key="q", top_k=3, filters={}, hits=hits, latency_ms=1))
    assert recorded[0][0] == recorded[1][0] and [c for _, c in recorded] == [True, False]
    with session_scope(engine, readonly=True) as session:
        rows = session.scalars(select(EvidenceItemRow).where(EvidenceItemRow.job_id == job_id)
                               .order_by(EvidenceItemRow.rank)).all()
    assert [(r.chunk_id, r.retrieval_request_id) for r in rows] == [
        (h.chunk_id, recorded[0][0]) for h in hits]


def test_racing_deliveries_of_one_plan_agree_on_one_row(engine: Engine, race: Race) -> None:
    job_id = new_job(engine)

    def deliver(_: int) -> str:
        with session_scope(engine) as session:
            return record_plan(session, job_id=job_id, round=0, plan={"sub_queries": []},
                               strategy="single", repair_reason=None)

    ids = race(4, deliver)
    with session_scope(engine, readonly=True) as session:
        stored = session.scalars(select(PlanRow.id).where(PlanRow.job_id == job_id)).all()
    assert set(ids) == set(stored) and len(stored) == 1


def test_a_result_built_in_the_answers_transaction_has_the_answer_and_its_citations(
        engine: Engine) -> None:
    job_id = new_job(engine)
    with session_scope(engine) as session:
        record_answer(session, job_id=job_id, text="Refunds take 5 days.", extractive=False,
                      contradictions=[], citations=[
                          {"doc_id": "refunds", "chunk_id": "refunds::0", "quote": "5 days"},
                          {"doc_id": "billing", "chunk_id": "billing::2", "quote": None}])
        result = build_result(session, job_id=job_id, status="completed")
    assert result["answer"] == "Refunds take 5 days." and result["status"] == "completed"
    assert [(c["doc_id"], c["chunk_id"], c["quote"]) for c in result["citations"]] == [
        ("refunds", "refunds::0", "5 days"), ("billing", "billing::2", None)]
    assert result["asks"] == [] and result["usage"]["llm_calls"] == 0
