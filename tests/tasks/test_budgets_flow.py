"""Budgets through real workers: a job that runs out ends cleanly with what it found (C9)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from ragq.ingestion.submit import ingest_path
from ragq.ledger import session_scope
from ragq.ledger.models import BudgetChargeRow, JobBudgetRow, JobRow, RetrievalRequestRow
from ragq.schemas.statuses import ChargeOutcome
from ragq.submission import results, submit_file, wait
from ragq.workers.wiring import build_ledger_engine
from tests.tasks.test_flow import BRIDGE_DOCS, BRIDGE_QUESTION, write_jsonl


def _run(stack, collection, tmp_path, ticket: dict) -> dict:
    ingest_path(stack.settings, write_jsonl(tmp_path / "docs.jsonl", BRIDGE_DOCS),
                collection=collection)
    sent = submit_file(stack.settings, write_jsonl(tmp_path / "t.jsonl", [ticket]),
                       collection=collection)
    wait(stack.settings, sent.batch_id, timeout_s=180)
    (result,) = results(stack.settings, sent.batch_id)
    return result


def test_a_tiny_budget_ends_budget_exhausted_with_a_partial_answer(stack, collection, tmp_path):
    result = _run(stack, collection, tmp_path, {
        "custom_id": "tiny", "question": BRIDGE_QUESTION, "route": "full",
        "budget": {"max_retrieval_calls": 1}})
    assert result["status"] == "budget_exhausted"
    assert result["stop_reason"] == "budget:retrieval_calls"
    assert result["usage"]["retrieval_calls"] == 1
    assert result["evidence_doc_ids"] and result["answer"]  # what the one search found
    with session_scope(build_ledger_engine(stack.settings)) as session:
        budget = session.get(JobBudgetRow, result["job_id"])
        job = session.get(JobRow, result["job_id"])
        assert job is not None and job.exhausted_dimension == "retrieval_calls"
        refused = session.scalars(select(BudgetChargeRow).where(
            BudgetChargeRow.job_id == result["job_id"],
            BudgetChargeRow.outcome == ChargeOutcome.REFUSED)).all()
        searched = session.scalars(select(RetrievalRequestRow).where(
            RetrievalRequestRow.job_id == result["job_id"],
            RetrievalRequestRow.dedup_of.is_(None),
            RetrievalRequestRow.cache_hit.is_(False))).all()
    assert budget is not None and budget.used_retrieval_calls == budget.limit_retrieval_calls == 1
    assert refused and {r.dimension for r in refused} == {"retrieval_calls"}
    assert len(searched) == 1  # no search ran without being paid for (repeats come from the ledger)


@pytest.mark.parametrize(("budget", "dimension"), [
    ({"max_steps": 1}, "steps"),  # the router's step is the only one paid
    ({"max_latency_ms": 1}, "latency_ms"),  # the deadline passes before any work
])
def test_a_budget_that_allows_no_search_ends_with_nothing_found(
        stack, collection, tmp_path, budget, dimension):
    result = _run(stack, collection, tmp_path, {
        "custom_id": dimension, "question": BRIDGE_QUESTION, "route": "full", "budget": budget})
    assert result["status"] == "budget_exhausted"
    assert result["stop_reason"] == f"budget:{dimension}"
    assert result["evidence_doc_ids"] == [] and result["answer"]  # says it found nothing
