"""The flow's ledger in memory: the same snapshot and writes as the SQL ledger, for tests that
drive whole jobs in milliseconds and for in-process benches.

It keeps the SQL ledger's promises that the flow relies on: writes keyed on the step are made
once, a charge is paid whole or refused (and replays its first outcome), a job ends once. One
lock serialises transactions, as SQLite's write lock does; a transaction that raises leaves no
trace (its writes are applied only when it ends).
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from ragq.ledger.results import AnswerView, ask_results, compose_result, review_summary
from ragq.orchestration.budgets import blocking_dimension, deadline_of, limits_of
from ragq.orchestration.fair_share import Claimed
from ragq.orchestration.flow import (
    Action,
    AskState,
    BudgetState,
    Charge,
    Enqueue,
    EnqueueLayer,
    Escalation,
    EvidenceState,
    FinishJob,
    FinishSubQuery,
    FlowConfig,
    JobState,
    MarkInContext,
    OpenBudget,
    RecordAnswer,
    RecordAskPlan,
    RecordAskRoute,
    RecordCheck,
    RecordModelCall,
    RecordNextStep,
    RecordPlan,
    RecordReading,
    RecordRetrieval,
    RecordRoute,
    RecordSourceRoute,
    RecordSubQueries,
    RecordVerification,
    RequestState,
    SetQueryText,
    SetStatus,
    SubQueryState,
    VerificationState,
)
from ragq.schemas.flow import Evidence, Plan, SourceProfile, Strategy
from ragq.schemas.metadata import MetadataSchema
from ragq.schemas.statuses import (
    TERMINAL_JOB_STATUSES,
    BudgetDimension,
    JobStatus,
    ModelCallStatus,
    SubQueryStatus,
)
from ragq.schemas.ticket import Priority, ResultUsage

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class MemoryCharge:
    """One charge: what it was refused on (None: paid), the amounts it recorded, and whether it
    settled spend that already happened (``force``)."""

    refused: BudgetDimension | None
    rows: tuple[tuple[BudgetDimension, Any], ...]
    forced: bool


@dataclass
class MemoryJob:
    """Everything the in-memory ledger holds of one job."""

    id: str
    question: str
    collection: str
    acl: tuple[str, ...]
    meta: dict[str, Any]
    created_at: datetime
    custom_id: str | None = None
    batch_budget: dict[str, Any] | None = None
    priority: Priority = Priority.BULK
    status: JobStatus = JobStatus.QUEUED
    route: str | None = None
    question_class: str | None = None
    route_reason: str | None = None
    stop_reason: str | None = None
    result: dict[str, Any] | None = None
    finished_at: datetime | None = None
    budget: BudgetState | None = None
    budget_opened_at: datetime | None = None
    deadline: datetime | None = None
    charges: dict[str, MemoryCharge] = field(default_factory=dict)
    reading: dict[str, Any] | None = None
    asks: dict[int, AskState] = field(default_factory=dict)
    plan: tuple[Plan, Strategy] | None = None
    sub_queries: dict[tuple[int, int], SubQueryState] = field(default_factory=dict)
    requests: dict[tuple[str, int], RequestState] = field(default_factory=dict)
    evidence: list[EvidenceState] = field(default_factory=list)
    checks: dict[tuple[str, int], RecordCheck] = field(default_factory=dict)
    verifications: dict[int, VerificationState] = field(default_factory=dict)
    # call key -> (role, prompt tokens, completion tokens, cost, a fallback rather than a request)
    model_calls: dict[str, tuple[str, int, int, float, bool]] = field(default_factory=dict)
    answer: RecordAnswer | None = None
    in_context: set[str] = field(default_factory=set)
    endings: int = 0
    review: Escalation | None = None
    source_routes: dict[str, RecordSourceRoute] = field(default_factory=dict)
    next_step: Enqueue | EnqueueLayer | None = None


class MemoryLedger:
    """In-process ledger for the flow (:class:`ragq.ledger.ports.FlowLedger`)."""

    def __init__(self, clock: Clock | None = None):
        from ragq.ledger.models import utcnow

        self._clock = clock or utcnow
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.jobs: dict[str, MemoryJob] = {}
        self.documents: dict[tuple[str, str], str] = {}
        self.sources: dict[str, str] = {}  # source name -> description (one tenant)
        self.schemas: dict[str, MetadataSchema] = {}  # source name -> its metadata schema
        self.filter_log: list[dict[str, Any]] = []  # every request's metadata filters, in order
        self.transactions = 0

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def add_job(self, question: str, *, collection: str = "default",
                acl: Sequence[str] = ("public",), meta: Mapping[str, Any] | None = None,
                custom_id: str | None = None,
                batch_budget: Mapping[str, Any] | None = None,
                priority: Priority = Priority.BULK) -> str:
        """A queued job, as a submission records it; returns its id."""
        job_id = self.new_id("job")
        self.jobs[job_id] = MemoryJob(job_id, question, collection, tuple(acl), dict(meta or {}),
                                      self._clock(), custom_id,
                                      dict(batch_budget) if batch_budget else None, priority)
        return job_id

    # --- the flow's port -------------------------------------------------------------------

    def snapshot(self, job_id: str, config: FlowConfig) -> JobState:
        with self._lock:
            job = self.jobs[job_id]
            plan, strategy = job.plan if job.plan else (None, None)
            return JobState(
                job_id=job.id, question=job.question, collection=job.collection, acl=job.acl,
                status=job.status, config=config, route=job.route, meta=dict(job.meta),
                batch_budget=job.batch_budget, budget=job.budget, plan=plan, strategy=strategy,
                read=job.reading is not None,
                ticket_context=(job.reading or {}).get("context", ""),
                asks=tuple(job.asks[i] for i in sorted(job.asks)),
                sub_queries=tuple(sorted(job.sub_queries.values(),
                                         key=lambda s: (s.round, s.index))),
                requests=tuple(job.requests.values()), evidence=tuple(job.evidence),
                verifications=tuple(sorted(job.verifications.values(), key=lambda v: v.round)),
                sources=self._profiles(job.meta.get("sources") or ()),
                schemas={n: self.schemas[n] for n in job.meta.get("sources") or (job.collection,)
                         if n in self.schemas},
                priority=job.priority)

    def refresh(self, state: JobState) -> JobState:
        with self._lock:
            job = self.jobs[state.job_id]
            return replace(state, status=job.status, budget=job.budget)

    def _profiles(self, names: Sequence[str]) -> tuple[SourceProfile, ...]:
        """The named sources with their descriptions and past hits (in-context evidence of
        every job, from that source), as the SQL ledger loads them."""
        hits = {n: sum(1 for j in self.jobs.values() for e in j.evidence
                       if e.id in j.in_context and e.item.source == n) for n in names}
        return tuple(SourceProfile(name=n, description=self.sources.get(n, ""), hits=hits[n])
                     for n in names)

    @contextmanager
    def transaction(self) -> Iterator[_MemoryWriter]:
        with self._lock:
            writer = _MemoryWriter(self)
            yield writer
            writer.commit()
            self.transactions += 1

    def current_versions(self, collection: str, doc_ids: Sequence[str]) -> dict[str, str]:
        with self._lock:
            return {d: self.documents[(collection, d)] for d in doc_ids
                    if (collection, d) in self.documents}

    def pending_webhooks(self, job_id: str) -> list[str]:
        return []  # the in-memory ledger records no webhook endpoints

    def claim_next(self) -> list[Claimed]:
        return []  # its jobs are started by whoever added them; none wait unsent

    def now(self) -> datetime:
        return self._clock()


class _MemoryWriter:
    """One transaction: writes are staged on copies of the touched jobs and swapped in at the
    end, so a transaction that raises changes nothing."""

    def __init__(self, ledger: MemoryLedger):
        self._ledger = ledger
        self._staged: dict[str, MemoryJob] = {}

    def _job(self, job_id: str) -> MemoryJob:
        if job_id not in self._staged:
            self._staged[job_id] = _copy(self._ledger.jobs[job_id])
        return self._staged[job_id]

    def commit(self) -> None:
        self._ledger.jobs.update(self._staged)

    def write(self, job_id: str, action: Action) -> BudgetDimension | None:
        return _WRITERS[type(action)](self, self._job(job_id), action)

    # --- writers ------------------------------------------------------------------------------

    def set_status(self, job: MemoryJob, action: SetStatus) -> None:
        if job.status not in TERMINAL_JOB_STATUSES:
            job.status = action.status

    def open_budget(self, job: MemoryJob, action: OpenBudget) -> None:
        limits = limits_of(action.budget)
        now = self._ledger.now()
        if job.budget is None:
            job.budget = BudgetState(action.route, limits, dict.fromkeys(BudgetDimension, 0))
            job.budget_opened_at, job.deadline = now, deadline_of(action.budget, now)
        elif job.budget.profile != action.route:
            job.budget = replace(job.budget, profile=action.route, limits=limits)
            assert job.budget_opened_at is not None
            job.deadline = deadline_of(action.budget, job.budget_opened_at)

    def charge(self, job: MemoryJob, action: Charge) -> BudgetDimension | None:
        """Pay every dimension or none (see ``ledger.budgets.charge_many``)."""
        if action.key in job.charges:
            return job.charges[action.key].refused
        assert job.budget is not None, f"job {job.id} has no budget"
        refused: BudgetDimension | None = None
        if not action.force:
            late = job.deadline is not None and self._ledger.now() >= job.deadline
            refused = BudgetDimension.LATENCY_MS if late else blocking_dimension(
                job.budget.limits, job.budget.used, action.amounts)
        if refused is None:
            used = dict(job.budget.used)
            for dim, amount in action.amounts.items():
                used[dim] = used.get(dim, 0) + amount
            job.budget = replace(job.budget, used=used)
            rows = tuple((d, a) for d, a in action.amounts.items() if a)
        else:
            rows = ((refused, action.amounts.get(refused, 0)),)
            if job.budget.first_refused is None:
                job.budget = replace(job.budget, first_refused=refused)
        job.charges[action.key] = MemoryCharge(refused, rows, action.force)
        return refused

    def record_model_call(self, job: MemoryJob, action: RecordModelCall) -> None:
        usage = action.usage
        attempts = [(f"{action.call_key}#{n}", a.prompt_tokens, a.completion_tokens, a.cost_usd,
                     a.status == ModelCallStatus.FALLBACK)
                    for n, a in enumerate(usage.attempts)] or \
            [(action.call_key, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd,
              False)]
        for key, prompt, completion, cost, fallback in attempts:
            job.model_calls.setdefault(key, (action.role, prompt, completion, cost, fallback))

    def record_reading(self, job: MemoryJob, action: RecordReading) -> None:
        if job.reading is None:
            job.reading = {"context": action.reading.context, "noise": action.reading.noise}
        for index, ask in enumerate(action.reading.asks):
            job.asks.setdefault(index, AskState(index, ask.text))

    def record_ask_route(self, job: MemoryJob, action: RecordAskRoute) -> None:
        job.asks[action.index] = replace(job.asks[action.index], route=action.route,
                                         question_class=action.question_class,
                                         route_reason=action.reason)

    def record_ask_plan(self, job: MemoryJob, action: RecordAskPlan) -> None:
        job.asks[action.index] = replace(job.asks[action.index], plan=action.plan,
                                         plan_cache_hit=action.cache_hit)

    def record_route(self, job: MemoryJob, action: RecordRoute) -> None:
        job.question_class, job.route, job.route_reason = (action.question_class.value,
                                                           action.route, action.reason)

    def record_plan(self, job: MemoryJob, action: RecordPlan) -> None:
        if job.plan is None:
            job.plan = (action.plan, action.strategy)

    def record_sub_queries(self, job: MemoryJob, action: RecordSubQueries) -> None:
        for item in action.items:
            job.sub_queries.setdefault((action.round, item.index), SubQueryState(
                id=self._ledger.new_id("sq"), round=action.round, index=item.index,
                text=item.text, depends_on=tuple(item.depends_on), origin=item.origin,
                ask=item.ask, reason=item.reason))

    def set_query_text(self, job: MemoryJob, action: SetQueryText) -> None:
        self._update_sub_query(job, action.sub_query_id, final_text=action.text)

    def record_source_route(self, job: MemoryJob, action: RecordSourceRoute) -> None:
        for key, sq in job.sub_queries.items():
            if sq.id == action.sub_query_id and not sq.sources:
                job.sub_queries[key] = replace(sq, sources=tuple(action.choice.sources))
                job.source_routes[sq.id] = action

    def record_retrieval(self, job: MemoryJob, action: RecordRetrieval) -> None:
        key = (action.sub_query_id, action.attempt)
        if key in job.requests:
            return
        request = RequestState(self._ledger.new_id("rr"), action.sub_query_id, action.attempt,
                               action.query, action.key, action.top_k, action.dedup_of,
                               action.cache_hit, action.sources,
                               str(action.metadata.get("label", "")))
        job.requests[key] = request
        if action.metadata:
            self._ledger.filter_log.append({"job_id": job.id, "request_id": request.id,
                                            "sub_query_id": action.sub_query_id,
                                            "query": action.query, **action.metadata})
        job.evidence.extend(
            EvidenceState(self._ledger.new_id("ev"), request.id, action.sub_query_id,
                          Evidence(**hit.model_dump(exclude={"acl"})))
            for hit in action.hits)

    def record_check(self, job: MemoryJob, action: RecordCheck) -> None:
        job.checks.setdefault((action.sub_query_id, action.attempt), action)

    def finish_sub_query(self, job: MemoryJob, action: FinishSubQuery) -> None:
        self._update_sub_query(job, action.sub_query_id, status=action.status,
                               finding=action.finding, alternatives=action.alternatives)

    def record_verification(self, job: MemoryJob, action: RecordVerification) -> None:
        verdict = action.verdict
        job.verifications.setdefault(action.round, VerificationState(
            action.round, verdict.sufficient, verdict.confidence, action.new_evidence,
            verdict.reason))

    def mark_in_context(self, job: MemoryJob, action: MarkInContext) -> None:
        job.in_context = set(action.evidence_ids)

    def record_answer(self, job: MemoryJob, action: RecordAnswer) -> None:
        if job.answer is None:
            job.answer = action

    def finish_job(self, job: MemoryJob, action: FinishJob) -> None:
        if job.status in TERMINAL_JOB_STATUSES:
            return
        job.status, job.stop_reason, job.endings = action.status, action.stop_reason, \
            job.endings + 1
        job.finished_at = self._ledger.now()
        job.review = action.review
        job.result = _result(job, action)

    def record_next_step(self, job: MemoryJob, action: RecordNextStep) -> None:
        job.next_step = action.step

    def _update_sub_query(self, job: MemoryJob, sub_query_id: str, **values: Any) -> None:
        for key, sq in job.sub_queries.items():
            if sq.id == sub_query_id:
                job.sub_queries[key] = replace(sq, **values)


_WRITERS: dict[type[Action], Callable[[_MemoryWriter, MemoryJob, Any], BudgetDimension | None]] = {
    SetStatus: _MemoryWriter.set_status,
    OpenBudget: _MemoryWriter.open_budget,
    Charge: _MemoryWriter.charge,
    RecordModelCall: _MemoryWriter.record_model_call,
    RecordReading: _MemoryWriter.record_reading,
    RecordAskRoute: _MemoryWriter.record_ask_route,
    RecordAskPlan: _MemoryWriter.record_ask_plan,
    RecordRoute: _MemoryWriter.record_route,
    RecordPlan: _MemoryWriter.record_plan,
    RecordSubQueries: _MemoryWriter.record_sub_queries,
    SetQueryText: _MemoryWriter.set_query_text,
    RecordSourceRoute: _MemoryWriter.record_source_route,
    RecordRetrieval: _MemoryWriter.record_retrieval,
    RecordCheck: _MemoryWriter.record_check,
    FinishSubQuery: _MemoryWriter.finish_sub_query,
    RecordVerification: _MemoryWriter.record_verification,
    MarkInContext: _MemoryWriter.mark_in_context,
    RecordAnswer: _MemoryWriter.record_answer,
    FinishJob: _MemoryWriter.finish_job,
    RecordNextStep: _MemoryWriter.record_next_step,
}


def _copy(job: MemoryJob) -> MemoryJob:
    """A copy whose containers can change without touching ``job`` (their items are frozen)."""
    return replace(job, meta=dict(job.meta), charges=dict(job.charges), asks=dict(job.asks),
                   sub_queries=dict(job.sub_queries), requests=dict(job.requests),
                   evidence=list(job.evidence), checks=dict(job.checks),
                   verifications=dict(job.verifications), model_calls=dict(job.model_calls),
                   in_context=set(job.in_context), source_routes=dict(job.source_routes))


def _result(job: MemoryJob, action: FinishJob) -> dict[str, Any]:
    used = job.budget.used if job.budget else {}
    searched = [r for r in job.requests.values() if r.searched]
    by_source = Counter(s for r in searched for s in (r.sources or (job.collection,)))
    draft = job.answer.draft if job.answer else None
    usage = ResultUsage(
        steps=int(used.get(BudgetDimension.STEPS, 0)),
        llm_calls=sum(not call[4] for call in job.model_calls.values()),
        fallbacks=sum(call[4] for call in job.model_calls.values()),
        prompt_tokens=sum(call[1] for call in job.model_calls.values()),
        completion_tokens=sum(call[2] for call in job.model_calls.values()),
        retrieval_calls=sum(by_source.values()),
        retrieval_calls_by_source=dict(sorted(by_source.items())),
        unique_queries=len({r.key for r in searched}),
        rerank_calls=int(used.get(BudgetDimension.RERANK_CALLS, 0)),
        context_tokens=action.context_tokens,
        context_chunks=len({e.item.chunk_id for e in job.evidence if e.id in job.in_context}),
        cost_usd=float(Decimal(used.get(BudgetDimension.COST_USD, 0))),
        latency_ms=int(((job.finished_at or job.created_at) - job.created_at).total_seconds()
                       * 1000))
    answer = None if draft is None else AnswerView(
        draft.answer, draft.extractive, draft.citations,
        [c.model_dump(mode="json") for c in draft.contradictions],
        [a.model_dump(mode="json") for a in draft.asks])
    unfinished = {s.ask for s in job.sub_queries.values()
                  if s.status in (SubQueryStatus.SKIPPED, SubQueryStatus.PENDING)}
    sources = {e.item.chunk_id: e.item.source for e in reversed(job.evidence) if e.item.source}
    asks = ask_results([(i, a.text) for i, a in sorted(job.asks.items())], answer,
                       status=action.status.value, unfinished=unfinished,
                       stop_reason=action.stop_reason, sources=sources)
    return compose_result(
        custom_id=job.custom_id, job_id=job.id, status=action.status.value, route=job.route,
        answer=answer, evidence=[(e.item.doc_id, e.id in job.in_context) for e in job.evidence],
        stop_reason=action.stop_reason, usage=usage,
        error=dict(action.error) if action.error else None, asks=asks, sources=sources,
        review=review_summary(action.review.reasons, action.review.outcome)
        if action.review else None)
