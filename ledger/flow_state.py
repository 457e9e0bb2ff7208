"""A job's snapshot for the flow's decisions, read from the ledger in one read-only transaction.

Everything a decision may look at is loaded: the job, its budget (with the first refused
charge), its plan, sub-queries, requests, evidence and verdicts, oldest first. Every step reads
one, so the reads are Core statements built once at import (bound by job id), run on a Core
connection (:func:`ragq.ledger.db.read_scope`): the ORM's per-query compile and identity-map
work was a quarter of a model worker's CPU, and a snapshot needs none of it (it builds plain
values, never rows to change).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import BindParameter, bindparam, select
from sqlalchemy.engine import Connection, Row

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
    table_of,
)
from ragq.ledger.sources import source_descriptions, source_hits, source_schemas
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
from ragq.schemas.metadata import MetadataSchema
from ragq.schemas.statuses import BudgetDimension, ChargeOutcome, JobStatus
from ragq.schemas.ticket import Priority

_JOB_ID: BindParameter[str] = bindparam("job_id")
_JOBS, _BATCHES, _PLANS = table_of(JobRow), table_of(BatchRow), table_of(PlanRow)
_BUDGETS, _CHARGES = table_of(JobBudgetRow), table_of(BudgetChargeRow)
_ASKS, _SUB_QUERIES = table_of(AskRow), table_of(SubQueryRow)
_REQUESTS, _EVIDENCE = table_of(RetrievalRequestRow), table_of(EvidenceItemRow)
_VERDICTS = table_of(VerificationRow)

_JOB = (select(_JOBS.c.id, _JOBS.c.question, _JOBS.c.collection, _JOBS.c.acl, _JOBS.c.status,
               _JOBS.c.route, _JOBS.c.metadata.label("meta"), _JOBS.c.reading, _JOBS.c.tenant,
               _JOBS.c.priority,
               _BATCHES.c.budget.label("batch_budget"), _PLANS.c.plan.label("plan"),
               _PLANS.c.strategy)
        .outerjoin(_BATCHES, _BATCHES.c.id == _JOBS.c.batch_id)
        .outerjoin(_PLANS, (_PLANS.c.job_id == _JOBS.c.id) & (_PLANS.c.round == 0))
        .where(_JOBS.c.id == _JOB_ID))
_FIRST_REFUSED = (select(_CHARGES.c.dimension)
                  .where(_CHARGES.c.job_id == _JOB_ID,
                         _CHARGES.c.outcome == ChargeOutcome.REFUSED)
                  .order_by(_CHARGES.c.created_at).limit(1).scalar_subquery())
_BUDGET = (select(_BUDGETS, _FIRST_REFUSED.label("first_refused"))
           .where(_BUDGETS.c.job_id == _JOB_ID))
_FRESH = (select(_JOBS.c.status.label("job_status"), _BUDGETS,
                 _FIRST_REFUSED.label("first_refused"))
          .outerjoin(_BUDGETS, _BUDGETS.c.job_id == _JOBS.c.id)
          .where(_JOBS.c.id == _JOB_ID))
_ASK_ROWS = (select(_ASKS.c.index, _ASKS.c.text, _ASKS.c.route, _ASKS.c.question_class,
                    _ASKS.c.route_reason, _ASKS.c.plan, _ASKS.c.cache_hit)
             .where(_ASKS.c.job_id == _JOB_ID).order_by(_ASKS.c.index))
_SUB_QUERY_ROWS = (select(_SUB_QUERIES.c.id, _SUB_QUERIES.c.round, _SUB_QUERIES.c.index,
                          _SUB_QUERIES.c.original_text, _SUB_QUERIES.c.depends_on,
                          _SUB_QUERIES.c.final_text, _SUB_QUERIES.c.status,
                          _SUB_QUERIES.c.finding, _SUB_QUERIES.c.finding_alternatives,
                          _SUB_QUERIES.c.origin, _SUB_QUERIES.c.ask, _SUB_QUERIES.c.sources,
                          _SUB_QUERIES.c.reason)
                   .where(_SUB_QUERIES.c.job_id == _JOB_ID)
                   .order_by(_SUB_QUERIES.c.round, _SUB_QUERIES.c.index))
_REQUEST_ROWS = (select(_REQUESTS.c.id, _REQUESTS.c.sub_query_id, _REQUESTS.c.attempt,
                        _REQUESTS.c.query_text, _REQUESTS.c.normalized_key, _REQUESTS.c.top_k,
                        _REQUESTS.c.dedup_of, _REQUESTS.c.cache_hit, _REQUESTS.c.filters)
                 .where(_REQUESTS.c.job_id == _JOB_ID)
                 .order_by(_REQUESTS.c.created_at, _REQUESTS.c.id))
_EVIDENCE_ROWS = (select(_EVIDENCE.c.id, _EVIDENCE.c.retrieval_request_id,
                         _EVIDENCE.c.sub_query_id, _EVIDENCE.c.chunk_id, _EVIDENCE.c.doc_id,
                         _EVIDENCE.c.title, _EVIDENCE.c.text, _EVIDENCE.c.score,
                         _EVIDENCE.c.text_score, _EVIDENCE.c.question_score,
                         _EVIDENCE.c.source_version, _EVIDENCE.c.authority_tier,
                         _EVIDENCE.c.source)
                  .where(_EVIDENCE.c.job_id == _JOB_ID)
                  .order_by(_EVIDENCE.c.created_at, _EVIDENCE.c.rank))
_VERDICT_ROWS = (select(_VERDICTS.c.round, _VERDICTS.c.sufficient, _VERDICTS.c.confidence,
                        _VERDICTS.c.new_evidence_count)
                 .where(_VERDICTS.c.job_id == _JOB_ID).order_by(_VERDICTS.c.round))


def load_state(conn: Connection, *, job_id: str, config: FlowConfig) -> JobState:
    """The job's snapshot. Raises :class:`LedgerNotFoundError` for an unknown job."""
    bound = {"job_id": job_id}
    job = conn.execute(_JOB, bound).first()
    if job is None:
        raise LedgerNotFoundError(f"no job {job_id!r}", table="jobs", key=job_id)
    meta = dict(job.meta or {})
    return JobState(
        job_id=job.id, question=job.question, collection=job.collection, acl=tuple(job.acl),
        status=JobStatus(job.status), config=config, route=job.route, meta=meta,
        batch_budget=job.batch_budget, budget=_budget(conn, bound),
        read=job.reading is not None, ticket_context=(job.reading or {}).get("context", ""),
        asks=_asks(conn, bound),
        plan=Plan.model_validate(job.plan) if job.plan is not None else None,
        strategy=Strategy(job.strategy) if job.strategy else None,
        sub_queries=_sub_queries(conn, bound), requests=_requests(conn, bound),
        evidence=_evidence(conn, bound), verifications=_verifications(conn, bound),
        sources=_sources(conn, job.tenant, meta.get("sources") or ()),
        schemas=_schemas(conn, job.tenant, meta.get("sources") or (job.collection,)),
        priority=Priority(job.priority),
    )


def refresh_state(conn: Connection, state: JobState) -> JobState:
    """``state`` with the job's status and budget read again, in one statement (see
    :meth:`ragq.ledger.ports.FlowLedger.refresh`)."""
    row = conn.execute(_FRESH, {"job_id": state.job_id}).first()
    if row is None:
        raise LedgerNotFoundError(f"no job {state.job_id!r}", table="jobs", key=state.job_id)
    budget = _budget_of(row) if row.job_id is not None else None
    return replace(state, status=JobStatus(row.job_status), budget=budget)


def _sources(conn: Connection, tenant: str, names: Sequence[str]) -> tuple[SourceProfile, ...]:
    """The job's sources, in its order, with their descriptions and their past hits (evidence
    of the tenant's jobs from that source that reached an answer)."""
    if not names:
        return ()
    described = source_descriptions(conn, tenant=tenant, names=names)
    hits = source_hits(conn, tenant=tenant, names=names)
    return tuple(SourceProfile(name=n, description=described.get(n, ""), hits=hits.get(n, 0))
                 for n in names)


def _schemas(conn: Connection, tenant: str, names: Sequence[str]
             ) -> dict[str, MetadataSchema]:
    """The metadata schemas the job's collections declare (issue 37)."""
    return {name: MetadataSchema.model_validate(schema)
            for name, schema in source_schemas(conn, tenant=tenant, names=names).items()}


def _budget(conn: Connection, bound: dict[str, Any]) -> BudgetState | None:
    row = conn.execute(_BUDGET, bound).first()
    return None if row is None else _budget_of(row)


def _budget_of(row: Row[Any]) -> BudgetState:
    values = row._mapping
    return BudgetState(
        profile=row.profile,
        limits={d: values[f"limit_{d.value}"] for d in BudgetDimension},
        used={d: values[f"used_{d.value}"] for d in BudgetDimension},
        first_refused=(BudgetDimension(row.first_refused)
                       if row.first_refused is not None else None),
    )


# A Row is a tuple, so ``row.index`` is tuple's method to a type checker: the column named
# ``index`` is read through the row's mapping.
def _asks(conn: Connection, bound: dict[str, Any]) -> tuple[AskState, ...]:
    return tuple(AskState(
        index=r._mapping["index"], text=r.text, route=r.route,
        question_class=QuestionClass(r.question_class) if r.question_class else None,
        route_reason=r.route_reason or "", plan=Plan.model_validate(r.plan) if r.plan else None,
        plan_cache_hit=r.cache_hit) for r in conn.execute(_ASK_ROWS, bound))


def _sub_queries(conn: Connection, bound: dict[str, Any]) -> tuple[SubQueryState, ...]:
    return tuple(SubQueryState(id=r.id, round=r.round, index=r._mapping["index"],
                               text=r.original_text,
                               depends_on=tuple(r.depends_on or ()), final_text=r.final_text,
                               status=r.status, finding=r.finding,
                               alternatives=tuple(r.finding_alternatives or ()), origin=r.origin,
                               ask=r.ask, sources=tuple(r.sources or ()),
                               reason=r.reason or "")
                 for r in conn.execute(_SUB_QUERY_ROWS, bound))


def _requests(conn: Connection, bound: dict[str, Any]) -> tuple[RequestState, ...]:
    return tuple(RequestState(id=r.id, sub_query_id=r.sub_query_id, attempt=r.attempt,
                              query=r.query_text, key=r.normalized_key, top_k=r.top_k,
                              dedup_of=r.dedup_of, cache_hit=r.cache_hit,
                              sources=tuple((r.filters or {}).get("sources") or ()),
                              filters=str(((r.filters or {}).get("metadata") or {})
                                          .get("label", "")))
                 for r in conn.execute(_REQUEST_ROWS, bound))


def _evidence(conn: Connection, bound: dict[str, Any]) -> tuple[EvidenceState, ...]:
    # model_construct: these rows were validated on the way in, and a job's evidence is read
    # again at every step of it.
    return tuple(EvidenceState(
        id=r.id, request_id=r.retrieval_request_id, sub_query_id=r.sub_query_id,
        item=Evidence.model_construct(
            chunk_id=r.chunk_id, doc_id=r.doc_id, title=r.title or "", text=r.text,
            score=r.score, text_score=r.text_score, question_score=r.question_score,
            source_version=r.source_version, authority_tier=r.authority_tier,
            source=r.source or "")) for r in conn.execute(_EVIDENCE_ROWS, bound))


def _verifications(conn: Connection, bound: dict[str, Any]) -> tuple[VerificationState, ...]:
    return tuple(VerificationState(r.round, r.sufficient, r.confidence,
                                   r.new_evidence_count or 0)
                 for r in conn.execute(_VERDICT_ROWS, bound))
