"""Cost reports from the ledger alone: a job's charges in order, a batch's totals.

Pure queries, no printing. A batch report is a handful of ``GROUP BY`` queries over the batch's
jobs (each grouped by route, joined through the ``jobs(batch_id, …)`` index), never one query per
job, so a 5,000-job batch costs the same few round trips as a small one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session

from ragq.ledger.jobs import get_batch, get_job
from ragq.ledger.models import (
    TERMINAL_JOB_STATUSES,
    BudgetChargeRow,
    BudgetDimension,
    ChargeOutcome,
    JobBudgetRow,
    JobRow,
    JobStatus,
    ModelCallRow,
    RetrievalRequestRow,
    ReviewRow,
    SubQueryRow,
    VerificationRow,
)
from ragq.schemas.reports import (
    UNROUTED,
    BatchReport,
    ChargeEntry,
    CostTotals,
    DimensionTotal,
    FilterEntry,
    JobLedger,
    ModelCallEntry,
    SourceRouteEntry,
    VerificationEntry,
)
from ragq.schemas.statuses import BUDGET_STOP

__all__ = ["batch_report", "exhausted_dimension_of", "job_ledger"]

_UNKNOWN_DIMENSION = "unknown"
_MONEY_PLACES = 8


def _money(value: Decimal | float | int | None) -> float:
    return round(float(value or 0), _MONEY_PLACES)


def _ratio(numerator: float, denominator: int) -> float | None:
    return round(numerator / denominator, _MONEY_PLACES) if denominator else None


# --- one job -------------------------------------------------------------------------------


def _charges(session: Session, job_id: str) -> list[BudgetChargeRow]:
    query = (select(BudgetChargeRow).where(BudgetChargeRow.job_id == job_id)
             .order_by(BudgetChargeRow.created_at, BudgetChargeRow.id))
    return list(session.scalars(query))


def _model_calls(session: Session, job_id: str) -> list[ModelCallEntry]:
    query = (select(ModelCallRow).where(ModelCallRow.job_id == job_id)
             .order_by(ModelCallRow.created_at, ModelCallRow.id))
    return [ModelCallEntry(at=c.created_at, role=c.role, provider=c.provider, model=c.model,
                           prompt_tokens=c.prompt_tokens, completion_tokens=c.completion_tokens,
                           cost_usd=_money(c.cost_usd), latency_ms=c.latency_ms,
                           status=str(c.status))
            for c in session.scalars(query)]


def _charge_entry(row: BudgetChargeRow) -> ChargeEntry:
    return ChargeEntry(at=row.created_at, step=row.step, dimension=str(row.dimension),
                       amount=_money(row.amount), outcome=str(row.outcome), attempt=row.attempt,
                       idempotency_key=row.idempotency_key)


def _dimensions(charges: Sequence[BudgetChargeRow], budget: JobBudgetRow | None
                ) -> list[DimensionTotal]:
    granted: dict[str, Decimal] = defaultdict(Decimal)
    refused: Counter[str] = Counter()
    for row in charges:
        if row.outcome == ChargeOutcome.GRANTED:
            granted[str(row.dimension)] += Decimal(row.amount)
        else:
            refused[str(row.dimension)] += 1
    out = []
    for dim in BudgetDimension:
        limit = getattr(budget, f"limit_{dim.value}") if budget is not None else None
        out.append(DimensionTotal(dimension=dim.value,
                                  limit=None if limit is None else _money(limit),
                                  granted=_money(granted[dim.value]),
                                  refused_charges=refused[dim.value]))
    return out


def _retrieval_counts(session: Session, job_id: str) -> tuple[int, int]:
    calls, hits = session.execute(
        select(func.count(), _count_true(RetrievalRequestRow.cache_hit))
        .where(RetrievalRequestRow.job_id == job_id)
    ).one()
    return int(calls), int(hits or 0)


def _source_routes(session: Session, job_id: str) -> list[SourceRouteEntry]:
    rows = session.scalars(select(SubQueryRow).where(SubQueryRow.job_id == job_id,
                                                     SubQueryRow.sources.is_not(None))
                           .order_by(SubQueryRow.round, SubQueryRow.index))
    out = []
    for row in rows:
        decision = row.source_route or {}
        out.append(SourceRouteEntry(
            round=row.round, index=row.index, text=row.final_text or row.original_text,
            sources=list(row.sources or ()), scores=dict(decision.get("scores") or {}),
            reason=str(decision.get("reason") or ""), by=str(decision.get("by") or "")))
    return [e for e in out if e.sources]


def _verifications(session: Session, job_id: str) -> list[VerificationEntry]:
    rows = session.scalars(select(VerificationRow).where(VerificationRow.job_id == job_id)
                           .order_by(VerificationRow.round))
    return [VerificationEntry(round=r.round, sufficient=r.sufficient, confidence=r.confidence,
                              reason=r.reason or "", follow_up_queries=list(r.follow_up_queries))
            for r in rows]


def _metadata_filters(session: Session, job_id: str) -> list[FilterEntry]:
    """Every request of the job that proposed metadata filters, in order."""
    rows = session.execute(
        select(RetrievalRequestRow, SubQueryRow.round, SubQueryRow.index)
        .outerjoin(SubQueryRow, SubQueryRow.id == RetrievalRequestRow.sub_query_id)
        .where(RetrievalRequestRow.job_id == job_id)
        .order_by(RetrievalRequestRow.created_at, RetrievalRequestRow.id))
    out = []
    for request, round_, index in rows:
        record = (request.filters or {}).get("metadata") or {}
        if record.get("decisions"):
            out.append(FilterEntry(round=round_, index=index, attempt=request.attempt,
                                   query=request.query_text, decisions=record["decisions"],
                                   fallback=record.get("fallback")))
    return out


def job_ledger(session: Session, job_id: str) -> JobLedger:
    """Every budget charge of ``job_id`` in the order it was made (granted and refused), its
    model calls in order, its budget limits and the granted total per dimension.

    Raises :class:`ledger.LedgerNotFoundError` for an unknown job.
    """
    job = get_job(session, job_id=job_id)
    charges = _charges(session, job_id)
    budget = session.get(JobBudgetRow, job_id)
    retrievals, cache_hits = _retrieval_counts(session, job_id)
    return JobLedger(
        job_id=job.id, batch_id=job.batch_id, custom_id=job.custom_id, status=str(job.status),
        route=job.route, stop_reason=job.stop_reason,
        exhausted_dimension=job.exhausted_dimension,
        profile=budget.profile if budget is not None else None,
        created_at=job.created_at, finished_at=job.finished_at,
        charges=[_charge_entry(row) for row in charges],
        model_calls=_model_calls(session, job_id),
        dimensions=_dimensions(charges, budget),
        retrieval_calls=retrievals, retrieval_cache_hits=cache_hits,
        source_routes=_source_routes(session, job_id),
        verifications=_verifications(session, job_id),
        metadata_filters=_metadata_filters(session, job_id),
    )


# --- one batch -----------------------------------------------------------------------------


@dataclass
class _Tally:
    """Running sums for one route; added together for the batch's totals."""

    by_status: Counter[str] = field(default_factory=Counter)
    exhausted: Counter[str] = field(default_factory=Counter)
    granted: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    model_cost: Decimal = Decimal(0)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    retrieval_calls: int = 0
    cache_hits: int = 0
    escalated: int = 0

    def add(self, other: _Tally) -> None:
        self.by_status.update(other.by_status)
        self.exhausted.update(other.exhausted)
        for dim, amount in other.granted.items():
            self.granted[dim] += amount
        self.model_cost += other.model_cost
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.model_calls += other.model_calls
        self.retrieval_calls += other.retrieval_calls
        self.cache_hits += other.cache_hits
        self.escalated += other.escalated

    def totals(self) -> CostTotals:
        jobs = sum(self.by_status.values())
        finished = sum(n for s, n in self.by_status.items() if s in TERMINAL_JOB_STATUSES)
        exhausted = self.by_status[JobStatus.BUDGET_EXHAUSTED]
        cost = _money(self.granted[BudgetDimension.COST_USD])
        return CostTotals(
            jobs=jobs, jobs_by_status=dict(sorted(self.by_status.items())), cost_usd=cost,
            model_cost_usd=_money(self.model_cost), prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens, model_calls=self.model_calls,
            retrieval_calls=self.retrieval_calls, retrieval_cache_hits=self.cache_hits,
            granted={d.value: _money(self.granted[d]) for d in BudgetDimension},
            finished_jobs=finished, budget_exhausted_jobs=exhausted,
            budget_exhaustion_rate=_ratio(exhausted, finished),
            exhausted_dimensions=dict(self.exhausted.most_common()),
            escalated_jobs=self.escalated, escalation_rate=_ratio(self.escalated, finished),
            cost_per_completed_job=_ratio(cost, self.by_status[JobStatus.COMPLETED]),
            cost_per_job_mean=_ratio(cost, jobs),
        )


def exhausted_dimension_of(stop_reason: str | None, exhausted_dimension: str | None) -> str:
    """The dimension a ``budget_exhausted`` job ran out of: from ``stop_reason``
    (``"budget:retrieval_calls"``), else the job's ``exhausted_dimension``, else ``"unknown"``."""
    if stop_reason and stop_reason.startswith(BUDGET_STOP):
        return stop_reason.removeprefix(BUDGET_STOP) or _UNKNOWN_DIMENSION
    return exhausted_dimension or _UNKNOWN_DIMENSION


def _count_true(column: ColumnElement[bool] | Any) -> ColumnElement[Any]:
    return func.coalesce(func.sum(case((column.is_(True), 1), else_=0)), 0)


_ROUTE = func.coalesce(JobRow.route, UNROUTED).label("route")


def _tally_jobs(session: Session, batch_id: str, tally: dict[str, _Tally]) -> None:
    rows = session.execute(
        select(_ROUTE, JobRow.status, func.count()).where(JobRow.batch_id == batch_id)
        .group_by(_ROUTE, JobRow.status))
    for route, status, n in rows:
        tally[route].by_status[str(status)] += int(n)


def _tally_exhaustion(session: Session, batch_id: str, tally: dict[str, _Tally]) -> None:
    rows = session.execute(
        select(_ROUTE, JobRow.stop_reason, JobRow.exhausted_dimension, func.count())
        .where(JobRow.batch_id == batch_id, JobRow.status == JobStatus.BUDGET_EXHAUSTED)
        .group_by(_ROUTE, JobRow.stop_reason, JobRow.exhausted_dimension))
    for route, stop_reason, dimension, n in rows:
        tally[route].exhausted[exhausted_dimension_of(stop_reason, dimension)] += int(n)


def _tally_charges(session: Session, batch_id: str, tally: dict[str, _Tally]) -> None:
    rows = session.execute(
        select(_ROUTE, BudgetChargeRow.dimension, func.sum(BudgetChargeRow.amount))
        .join(JobRow, JobRow.id == BudgetChargeRow.job_id)
        .where(JobRow.batch_id == batch_id, BudgetChargeRow.outcome == ChargeOutcome.GRANTED)
        .group_by(_ROUTE, BudgetChargeRow.dimension))
    for route, dimension, amount in rows:
        tally[route].granted[str(dimension)] += Decimal(str(amount or 0))


def _tally_model_calls(session: Session, batch_id: str, tally: dict[str, _Tally]) -> None:
    rows = session.execute(
        select(_ROUTE, func.count(), func.coalesce(func.sum(ModelCallRow.prompt_tokens), 0),
               func.coalesce(func.sum(ModelCallRow.completion_tokens), 0),
               func.coalesce(func.sum(ModelCallRow.cost_usd), 0))
        .join(JobRow, JobRow.id == ModelCallRow.job_id)
        .where(JobRow.batch_id == batch_id).group_by(_ROUTE))
    for route, calls, prompt, completion, cost in rows:
        entry = tally[route]
        entry.model_calls, entry.prompt_tokens = int(calls), int(prompt)
        entry.completion_tokens, entry.model_cost = int(completion), Decimal(str(cost))


def _tally_retrievals(session: Session, batch_id: str, tally: dict[str, _Tally]) -> None:
    rows = session.execute(
        select(_ROUTE, func.count(), _count_true(RetrievalRequestRow.cache_hit))
        .join(JobRow, JobRow.id == RetrievalRequestRow.job_id)
        .where(JobRow.batch_id == batch_id).group_by(_ROUTE))
    for route, calls, hits in rows:
        tally[route].retrieval_calls, tally[route].cache_hits = int(calls), int(hits)


def _tally_escalations(session: Session, batch_id: str, tally: dict[str, _Tally]) -> None:
    rows = session.execute(
        select(_ROUTE, func.count()).select_from(ReviewRow)
        .join(JobRow, JobRow.id == ReviewRow.job_id)
        .where(JobRow.batch_id == batch_id).group_by(_ROUTE))
    for route, n in rows:
        tally[route].escalated = int(n)


_TALLIES = (_tally_jobs, _tally_exhaustion, _tally_charges, _tally_model_calls, _tally_retrievals,
            _tally_escalations)


def _sum(tallies: Iterable[_Tally]) -> _Tally:
    total = _Tally()
    for tally in tallies:
        total.add(tally)
    return total


def batch_report(session: Session, batch_id: str) -> BatchReport:
    """Totals of ``batch_id`` and the same per route: jobs by status, granted cost and charges,
    tokens, model and retrieval calls, budget exhaustion rate (budget_exhausted / finished jobs)
    with the dimensions that ran out, jobs escalated to review (waiting or resolved) and their
    share of finished jobs, cost per completed job and mean cost per job.

    Costs are the granted ``cost_usd`` charges; refused charges paid nothing and count nowhere.
    Raises :class:`ledger.LedgerNotFoundError` for an unknown batch.
    """
    batch = get_batch(session, batch_id=batch_id)
    tally: dict[str, _Tally] = defaultdict(_Tally)
    for add in _TALLIES:
        add(session, batch_id, tally)
    return BatchReport(
        batch_id=batch.id, status=str(batch.status), created_at=batch.created_at,
        finished_at=batch.finished_at, totals=_sum(tally.values()).totals(),
        routes={route: tally[route].totals() for route in sorted(tally)},
    )
