"""The flow's ledger writes, one writer per action type, applied inside the step's transaction.

Every writer is idempotent on the step's natural key (see :mod:`ragq.ledger.steps`): a step
delivered twice finds its first writes. A :class:`Charge` returns the dimension the budget
refused (None when paid); every other writer returns None.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ragq.ledger.budgets import charge_many, open_job_budget
from ragq.ledger.jobs import finish_job, set_job_status
from ragq.ledger.models import JobRow, SubQueryRow
from ragq.ledger.results import build_result, review_summary
from ragq.ledger.reviews import queue_review
from ragq.ledger.stalls import record_next_step
from ragq.ledger.steps import (
    finish_sub_query,
    mark_in_context,
    record_answer,
    record_check,
    record_model_call,
    record_plan,
    record_reading,
    record_retrieval,
    record_sub_queries,
    record_verification,
    update_ask,
)
from ragq.orchestration.budgets import deadline_of, exhausted_dimension, limits_of
from ragq.orchestration.flow import (
    Action,
    Charge,
    FinishJob,
    FinishSubQuery,
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
    SetQueryText,
    SetStatus,
)
from ragq.schemas.statuses import BudgetDimension

Writer = Callable[[Session, str, Any], BudgetDimension | None]


def _set_status(session: Session, job_id: str, action: SetStatus) -> None:
    set_job_status(session, job_id=job_id, status=action.status)


def _open_budget(session: Session, job_id: str, action: OpenBudget) -> None:
    """Create the budget (deadline from now), or move an existing one to this profile (its
    deadline counted from when the budget was first opened)."""
    open_job_budget(session, job_id=job_id, limits=limits_of(action.budget),
                    profile=action.route, deadline=partial(deadline_of, action.budget))


def _charge(session: Session, job_id: str, action: Charge) -> BudgetDimension | None:
    outcome = charge_many(session, job_id=job_id, amounts=action.amounts,
                          idempotency_key=action.key, step=action.step, attempt=action.attempt,
                          force=action.force)
    return outcome.refused


def _record_model_call(session: Session, job_id: str, action: RecordModelCall) -> None:
    usage = action.usage
    if not usage.attempts:
        record_model_call(session, job_id=job_id, role=action.role, provider=action.provider,
                          model=usage.model, call_key=action.call_key,
                          prompt_tokens=usage.prompt_tokens,
                          completion_tokens=usage.completion_tokens,
                          latency_ms=int(usage.latency_ms), cost_usd=usage.cost_usd)
        return
    for n, attempt in enumerate(usage.attempts):
        record_model_call(session, job_id=job_id, role=action.role, provider=action.provider,
                          model=attempt.model, call_key=f"{action.call_key}#{n}",
                          prompt_tokens=attempt.prompt_tokens,
                          completion_tokens=attempt.completion_tokens,
                          latency_ms=int(attempt.latency_ms), status=attempt.status,
                          error=attempt.error, attempt=n, cost_usd=attempt.cost_usd)


def _record_reading(session: Session, job_id: str, action: RecordReading) -> None:
    reading = action.reading
    record_reading(session, job_id=job_id,
                   reading={"context": reading.context, "noise": reading.noise},
                   asks=[(a.text, a.reason) for a in reading.asks])


def _record_ask_route(session: Session, job_id: str, action: RecordAskRoute) -> None:
    update_ask(session, job_id=job_id, index=action.index,
               question_class=action.question_class.value, route=action.route,
               route_reason=action.reason)


def _record_ask_plan(session: Session, job_id: str, action: RecordAskPlan) -> None:
    update_ask(session, job_id=job_id, index=action.index,
               plan=action.plan.model_dump(mode="json"), repair_reason=action.repairs,
               cache_hit=action.cache_hit)


def _record_route(session: Session, job_id: str, action: RecordRoute) -> None:
    session.connection().execute(update(JobRow).where(JobRow.id == job_id).values(
        question_class=action.question_class.value, route=action.route,
        route_reason=action.reason))


def _record_plan(session: Session, job_id: str, action: RecordPlan) -> None:
    record_plan(session, job_id=job_id, round=0, plan=action.plan.model_dump(mode="json"),
                strategy=action.strategy.value, repair_reason=action.repairs,
                cache_hit=action.cache_hit)


def _record_sub_queries(session: Session, job_id: str, action: RecordSubQueries) -> None:
    record_sub_queries(session, job_id=job_id, round=action.round, items=action.items)


def _set_query_text(session: Session, job_id: str, action: SetQueryText) -> None:
    session.connection().execute(update(SubQueryRow)
                                 .where(SubQueryRow.id == action.sub_query_id)
                                 .values(final_text=action.text))


def _record_source_route(session: Session, job_id: str, action: RecordSourceRoute) -> None:
    """The sources a sub-query goes to, once (a redelivered step keeps the first choice)."""
    choice = action.choice
    row = session.get(SubQueryRow, action.sub_query_id)
    if row is not None and not row.sources:
        row.sources = list(choice.sources)
        row.source_route = {"scores": dict(choice.scores), "reason": choice.reason,
                            "by": action.provider}


def _record_retrieval(session: Session, job_id: str, action: RecordRetrieval) -> None:
    filters: dict[str, Any] = {"acl": list(action.acl)}
    if action.sources:
        filters["sources"] = list(action.sources)
    if action.metadata:
        filters["metadata"] = dict(action.metadata)
    record_retrieval(session, job_id=job_id, sub_query_id=action.sub_query_id,
                     attempt=action.attempt, query_text=action.query, normalized_key=action.key,
                     top_k=action.top_k, filters=filters, hits=action.hits,
                     latency_ms=action.latency_ms, dedup_of=action.dedup_of,
                     cache_hit=action.cache_hit)


def _record_check(session: Session, job_id: str, action: RecordCheck) -> None:
    record_check(session, job_id=job_id, sub_query_id=action.sub_query_id,
                 retrieval_request_id=action.request_id, attempt=action.attempt,
                 sufficient=action.sufficient, score=action.score, reason=action.reason,
                 rewrite=action.rewrite)


def _finish_sub_query(session: Session, job_id: str, action: FinishSubQuery) -> None:
    finish_sub_query(session, sub_query_id=action.sub_query_id, status=action.status,
                     finding=action.finding, alternatives=action.alternatives)


def _record_verification(session: Session, job_id: str, action: RecordVerification) -> None:
    verdict = action.verdict
    record_verification(session, job_id=job_id, round=action.round,
                        sufficient=verdict.sufficient, confidence=verdict.confidence,
                        missing_info=verdict.missing_info, follow_up_queries=action.follow_ups,
                        reason=verdict.reason, new_evidence_count=action.new_evidence)


def _mark_in_context(session: Session, job_id: str, action: MarkInContext) -> None:
    mark_in_context(session, job_id=job_id, evidence_ids=action.evidence_ids)


def _record_answer(session: Session, job_id: str, action: RecordAnswer) -> None:
    draft = action.draft
    record_answer(
        session, job_id=job_id, text=draft.answer, extractive=draft.extractive,
        contradictions=[c.model_dump(mode="json") for c in draft.contradictions],
        citations=[{**c.model_dump(mode="json"),
                    "evidence_item_id": action.evidence_by_chunk.get(c.chunk_id)}
                   for c in draft.citations],
        asks=[a.model_dump(mode="json") for a in draft.asks])


def _finish_job(session: Session, job_id: str, action: FinishJob) -> None:
    """End the job with its result line, rebuilt from the ledger in this same transaction; an
    escalated job enters the review queue with it."""
    error = dict(action.error) if action.error else None
    escalation = action.review
    review = review_summary(escalation.reasons, escalation.outcome) if escalation else None
    result = build_result(session, job_id=job_id, status=action.status, error=error,
                          stop_reason=action.stop_reason, context_tokens=action.context_tokens,
                          review=review)
    ran_out = exhausted_dimension(action.stop_reason)
    ended = finish_job(session, job_id=job_id, status=action.status, result=result,
                       stop_reason=action.stop_reason, error=error,
                       exhausted_dimension=ran_out.value if ran_out else None)
    if ended and escalation is not None:
        tenant = session.scalars(select(JobRow.tenant).where(JobRow.id == job_id)).one()
        queue_review(session, job_id=job_id, tenant=tenant, reasons=list(escalation.reasons),
                     outcome=escalation.outcome)


def _record_next_step(session: Session, job_id: str, action: RecordNextStep) -> None:
    record_next_step(session, job_id, action.step)


WRITERS: dict[type[Action], Writer] = {
    SetStatus: _set_status,
    OpenBudget: _open_budget,
    Charge: _charge,
    RecordModelCall: _record_model_call,
    RecordReading: _record_reading,
    RecordAskRoute: _record_ask_route,
    RecordAskPlan: _record_ask_plan,
    RecordRoute: _record_route,
    RecordPlan: _record_plan,
    RecordSubQueries: _record_sub_queries,
    SetQueryText: _set_query_text,
    RecordSourceRoute: _record_source_route,
    RecordRetrieval: _record_retrieval,
    RecordCheck: _record_check,
    FinishSubQuery: _finish_sub_query,
    RecordVerification: _record_verification,
    MarkInContext: _mark_in_context,
    RecordAnswer: _record_answer,
    FinishJob: _finish_job,
    RecordNextStep: _record_next_step,
}


def write(session: Session, job_id: str, action: Action) -> BudgetDimension | None:
    """Apply one ledger write; for a charge, the dimension it was refused on (None: paid)."""
    return WRITERS[type(action)](session, job_id, action)
