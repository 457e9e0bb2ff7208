"""A job's snapshot for the flow's decisions, read from the ledger in one read-only transaction.

Everything a decision may look at is loaded: the job, its budget (with the first refused
charge), its plan, sub-queries, requests, evidence and verdicts, oldest first. A job's rows are
few (tens), so one snapshot per step costs a handful of indexed reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragq.ledger.errors import LedgerNotFoundError
from ragq.ledger.models import (
    AskRow,
    BatchRow,
    BudgetChargeRow,
    EvidenceItemRow,
    JobBudgetRow,
    JobRow,
    PlanRow,
    RetrievalRequestRow,
    SubQueryRow,
    VerificationRow,
)
from ragq.ledger.sources import source_descriptions, source_hits
from ragq.orchestration.flow import (
    AskState,
    BudgetState,
    EvidenceState,
    FlowConfig,
    JobState,
    RequestState,
    SubQueryState,
    VerificationState,
)
from ragq.schemas.flow import Evidence, Plan, QuestionClass, SourceProfile, Strategy
from ragq.schemas.statuses import BudgetDimension, ChargeOutcome, JobStatus


def load_state(session: Session, *, job_id: str, config: FlowConfig) -> JobState:
    """The job's snapshot. Raises :class:`LedgerNotFoundError` for an unknown job."""
    job = session.get(JobRow, job_id)
    if job is None:
        raise LedgerNotFoundError(f"no job {job_id!r}", table="jobs", key=job_id)
    batch = session.get(BatchRow, job.batch_id) if job.batch_id else None
    plan = session.scalars(select(PlanRow).where(PlanRow.job_id == job_id,
                                                 PlanRow.round == 0)).first()
    return JobState(
        job_id=job.id, question=job.question, collection=job.collection, acl=tuple(job.acl),
        status=JobStatus(job.status), config=config, route=job.route, meta=dict(job.meta or {}),
        batch_budget=batch.budget if batch else None, budget=_budget(session, job_id),
        read=job.reading is not None, ticket_context=(job.reading or {}).get("context", ""),
        asks=_asks(session, job_id),
        plan=Plan.model_validate(plan.plan) if plan else None,
        strategy=Strategy(plan.strategy) if plan and plan.strategy else None,
        sub_queries=_sub_queries(session, job_id), requests=_requests(session, job_id),
        evidence=_evidence(session, job_id), verifications=_verifications(session, job_id),
        sources=_sources(session, job.tenant, (job.meta or {}).get("sources") or ()),
    )


def _sources(session: Session, tenant: str, names: Sequence[str]) -> tuple[SourceProfile, ...]:
    """The job's sources, in its order, with their descriptions and their past hits (evidence
    of the tenant's jobs from that source that reached an answer)."""
    if not names:
        return ()
    described = source_descriptions(session, tenant=tenant, names=names)
    hits = source_hits(session, tenant=tenant, names=names)
    return tuple(SourceProfile(name=n, description=described.get(n, ""), hits=hits.get(n, 0))
                 for n in names)


def _budget(session: Session, job_id: str) -> BudgetState | None:
    row = session.get(JobBudgetRow, job_id)
    if row is None:
        return None
    refused = session.scalars(
        select(BudgetChargeRow.dimension)
        .where(BudgetChargeRow.job_id == job_id, BudgetChargeRow.outcome == ChargeOutcome.REFUSED)
        .order_by(BudgetChargeRow.created_at).limit(1)).first()
    return BudgetState(
        profile=row.profile,
        limits={d: getattr(row, f"limit_{d.value}") for d in BudgetDimension},
        used={d: getattr(row, f"used_{d.value}") for d in BudgetDimension},
        first_refused=BudgetDimension(refused) if refused is not None else None,
    )


def _asks(session: Session, job_id: str) -> tuple[AskState, ...]:
    rows = session.scalars(select(AskRow).where(AskRow.job_id == job_id).order_by(AskRow.index))
    return tuple(AskState(
        index=r.index, text=r.text, route=r.route,
        question_class=QuestionClass(r.question_class) if r.question_class else None,
        route_reason=r.route_reason or "", plan=Plan.model_validate(r.plan) if r.plan else None,
        plan_cache_hit=r.cache_hit) for r in rows)


def _sub_queries(session: Session, job_id: str) -> tuple[SubQueryState, ...]:
    t = SubQueryRow
    rows = session.execute(select(t.id, t.round, t.index, t.original_text, t.depends_on,
                                  t.final_text, t.status, t.finding, t.finding_alternatives,
                                  t.origin, t.ask, t.sources)
                           .where(t.job_id == job_id).order_by(t.round, t.index))
    return tuple(SubQueryState(id=r.id, round=r.round, index=r.index, text=r.original_text,
                               depends_on=tuple(r.depends_on or ()), final_text=r.final_text,
                               status=r.status, finding=r.finding,
                               alternatives=tuple(r.finding_alternatives or ()), origin=r.origin,
                               ask=r.ask, sources=tuple(r.sources or ()))
                 for r in rows)


def _requests(session: Session, job_id: str) -> tuple[RequestState, ...]:
    t = RetrievalRequestRow
    rows = session.execute(select(t.id, t.sub_query_id, t.attempt, t.query_text,
                                  t.normalized_key, t.top_k, t.dedup_of, t.cache_hit, t.filters)
                           .where(t.job_id == job_id).order_by(t.created_at, t.id))
    return tuple(RequestState(id=r.id, sub_query_id=r.sub_query_id, attempt=r.attempt,
                              query=r.query_text, key=r.normalized_key, top_k=r.top_k,
                              dedup_of=r.dedup_of, cache_hit=r.cache_hit,
                              sources=tuple((r.filters or {}).get("sources") or ()))
                 for r in rows)


def _evidence(session: Session, job_id: str) -> tuple[EvidenceState, ...]:
    t = EvidenceItemRow
    rows = session.execute(select(t.id, t.retrieval_request_id, t.sub_query_id, t.chunk_id,
                                  t.doc_id, t.title, t.text, t.score, t.text_score,
                                  t.question_score, t.source_version, t.authority_tier,
                                  t.source)
                           .where(t.job_id == job_id).order_by(t.created_at, t.rank))
    # model_construct: these rows were validated on the way in, and a job's evidence is read
    # again at every step of it.
    return tuple(EvidenceState(
        id=r.id, request_id=r.retrieval_request_id, sub_query_id=r.sub_query_id,
        item=Evidence.model_construct(
            chunk_id=r.chunk_id, doc_id=r.doc_id, title=r.title or "", text=r.text,
            score=r.score, text_score=r.text_score, question_score=r.question_score,
            source_version=r.source_version, authority_tier=r.authority_tier,
            source=r.source or "")) for r in rows)


def _verifications(session: Session, job_id: str) -> tuple[VerificationState, ...]:
    rows = session.scalars(select(VerificationRow).where(VerificationRow.job_id == job_id)
                           .order_by(VerificationRow.round))
    return tuple(VerificationState(r.round, r.sufficient, r.confidence,
                                   r.new_evidence_count or 0) for r in rows)
