"""The two ledgers of the flow keep the same books: the same seeded job run on the SQL ledger
and on the in-memory one ends the same way, with the same spend, sub-queries and result."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from ragq.ledger import make_engine, register_source, session_scope
from ragq.ledger.jobs import add_job
from ragq.ledger.memory import MemoryLedger
from ragq.ledger.models import EvidenceItemRow, JobBudgetRow, JobRow, ModelCallRow, SubQueryRow
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.orchestration.flow.actions import FinishJob, RecordModelCall
from ragq.schemas.flow import CallAttempt, Usage
from ragq.schemas.statuses import BudgetDimension, JobStatus, ModelCallStatus
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world
from tests.ledger_template import migrated

QUESTIONS = ["Who founded the company that makes the camera lens?",
             "Hi,\n\nWe sell lenses.\n\n1. What is the refund limit?\n2. How do I rotate a key?"
             "\n\nBest,\nKim"]

DESCRIPTIONS = {COLLECTION: "refunds plans and limits", "kb2": "keys, cameras and lenses"}


@pytest.fixture(scope="module")
def sql_ledger(tmp_path_factory: pytest.TempPathFactory) -> SqlFlowLedger:
    url = f"sqlite:///{tmp_path_factory.mktemp('flow') / 'ledger.db'}"
    migrated(url)
    return SqlFlowLedger(make_engine(url))


def _run(ledger: Any, seed: int, job_id: str) -> None:
    runner = Runner(ledger, seeded_world(seed, failure_rate=0.03), config())
    InlineDispatcher(runner).run(job_id)


def _finished_memory_job(seed: int, meta: dict[str, Any], question: str) -> Any:
    """The job, run to its end on a fresh in-memory ledger."""
    ledger = MemoryLedger()
    ledger.sources.update(DESCRIPTIONS)
    job_id = ledger.add_job(question, collection=COLLECTION, meta=meta)
    _run(ledger, seed, job_id)
    return ledger.jobs[job_id]


def _memory_books(seed: int, meta: dict[str, Any], question: str) -> dict[str, Any]:
    job = _finished_memory_job(seed, meta, question)
    assert job.budget is not None
    return {"result": _comparable(job.result),
            "used": {d: float(job.budget.used[d]) for d in BudgetDimension
                     if d is not BudgetDimension.LATENCY_MS},
            "sub_queries": sorted((s.round, s.index, str(s.status), s.final_text, s.finding,
                                   list(s.alternatives), list(s.sources))
                                  for s in job.sub_queries.values()),
            "evidence_sources": sorted(e.item.source for e in job.evidence),
            "evidence_text_scores": sorted(round(e.item.text_score, 6) for e in job.evidence
                                           if e.item.text_score is not None),
            "evidence_question_scores": _scores(e.item.question_score for e in job.evidence),
            "calls": sorted(role for role, *_ in job.model_calls.values())}


def _scores(scores: Any) -> list[float | None]:
    """Scores rounded, None (no score) first: comparable between the ledgers."""
    rounded = [None if s is None else round(s, 6) for s in scores]
    return sorted(rounded, key=lambda s: (s is not None, s or 0.0))


def _served_from_cache(seed: int, meta: dict[str, Any], question: str) -> tuple[int, int]:
    """(evidence items, of which served from the evidence cache) of the job in memory."""
    job = _finished_memory_job(seed, meta, question)
    cached = {r.id for r in job.requests.values() if r.cache_hit}
    return len(job.evidence), sum(e.request_id in cached for e in job.evidence)


def _sql_books(ledger: SqlFlowLedger, seed: int, meta: dict[str, Any], question: str
               ) -> dict[str, Any]:
    tenant = uuid.uuid4().hex  # no past hits: the sources' priors start at zero, as in memory
    with session_scope(ledger.engine) as session:
        for name, description in DESCRIPTIONS.items():
            register_source(session, tenant=tenant, name=name, description=description)
        job_id = add_job(session, batch_id=None, custom_id=None, position=None, tenant=tenant,
                         collection=COLLECTION, question=question, acl=["public"],
                         metadata=meta).id
    _run(ledger, seed, job_id)
    with session_scope(ledger.engine, readonly=True) as session:
        job = session.get(JobRow, job_id)
        budget = session.get(JobBudgetRow, job_id)
        subs = session.scalars(select(SubQueryRow).where(SubQueryRow.job_id == job_id)).all()
        calls = session.scalars(select(ModelCallRow.role)
                                .where(ModelCallRow.job_id == job_id)).all()
        sources = session.scalars(select(EvidenceItemRow.source)
                                  .where(EvidenceItemRow.job_id == job_id)).all()
        text_scores = session.scalars(select(EvidenceItemRow.text_score)
                                      .where(EvidenceItemRow.job_id == job_id)).all()
        question_scores = session.scalars(select(EvidenceItemRow.question_score)
                                          .where(EvidenceItemRow.job_id == job_id)).all()
        assert job is not None and budget is not None
        return {"result": _comparable(job.result),
                "used": {d: float(getattr(budget, f"used_{d.value}")) for d in BudgetDimension
                         if d is not BudgetDimension.LATENCY_MS},
                "sub_queries": sorted((s.round, s.index, str(s.status), s.final_text,
                                       s.finding, list(s.finding_alternatives or ()),
                                       list(s.sources or ())) for s in subs),
                "evidence_sources": sorted(s or "" for s in sources),
                "evidence_text_scores": sorted(round(s, 6) for s in text_scores
                                               if s is not None),
                "evidence_question_scores": _scores(question_scores),
                "calls": sorted(calls)}


def _comparable(result: dict[str, Any] | None) -> dict[str, Any]:
    """The result line without what names this ledger's rows or measures wall time."""
    assert result is not None
    usage = {k: v for k, v in result["usage"].items() if k != "latency_ms"}
    out = {k: v for k, v in result.items() if k not in ("job_id", "usage", "error")}
    return out | {"usage": usage, "error": (result["error"] or {}).get("message")}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1),
       route=st.sampled_from([None, "simple", "bounded", "full"]),
       steps=st.sampled_from([None, 4, 12, 40]), question=st.sampled_from(QUESTIONS),
       sources=st.sampled_from([None, [COLLECTION, "kb2"]]))
def test_sql_and_memory_ledgers_keep_the_same_books(sql_ledger, seed, route, steps, question,
                                                    sources):
    meta = {"route": route, "budget": {"max_steps": steps} if steps else None,
            "sources": sources}
    books = _memory_books(seed, meta, question)
    assert _sql_books(sql_ledger, seed, meta, question) == books
    # every item keeps the search's text cosine, for the sufficiency check to read
    assert len(books["evidence_text_scores"]) == len(books["evidence_sources"])
    # and its question's cosine, for the verifier, unless the evidence cache served it
    items, cached = _served_from_cache(seed, meta, question)
    assert sum(s is not None for s in books["evidence_question_scores"]) == items - cached


def _sql_job(ledger: SqlFlowLedger) -> str:
    with session_scope(ledger.engine) as session:
        return add_job(session, batch_id=None, custom_id=None, position=None, tenant="t",
                       collection=COLLECTION, question="q", acl=["public"], metadata={}).id


def _memory_job(ledger: MemoryLedger) -> str:
    return ledger.add_job("q", collection=COLLECTION, meta={})


@pytest.mark.parametrize("kind", ["sql", "memory"])
def test_llm_calls_count_requests_sent_and_a_fallback_apart(sql_ledger, kind):
    """Two requests the server saw (one answer rejected), then the role's fallback: the result
    reports 2 model calls and 1 fallback, not 3 calls."""
    ledger: Any = sql_ledger if kind == "sql" else MemoryLedger()
    job_id = _sql_job(ledger) if kind == "sql" else _memory_job(ledger)
    usage = Usage(model="m", attempts=[
        CallAttempt(model="m", prompt_tokens=10, status=ModelCallStatus.ERROR, error="invalid"),
        CallAttempt(model="m", prompt_tokens=12, completion_tokens=3),
        CallAttempt(model="fallback", status=ModelCallStatus.FALLBACK, error="gave up")])
    with ledger.transaction() as writer:
        writer.write(job_id, RecordModelCall(role="planner", call_key="plan", usage=usage,
                                             provider="openai"))
        writer.write(job_id, FinishJob(status=JobStatus.COMPLETED, stop_reason="answered"))
    if kind == "sql":
        with session_scope(ledger.engine, readonly=True) as session:
            job = session.get(JobRow, job_id)
            result = job.result if job else None
    else:
        result = ledger.jobs[job_id].result
    assert result is not None
    assert (result["usage"]["llm_calls"], result["usage"]["fallbacks"]) == (2, 1)
    assert result["usage"]["prompt_tokens"] == 22
