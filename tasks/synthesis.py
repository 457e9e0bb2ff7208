"""Synthesis: assemble the context under the token budget, answer from it, record the answer
and which evidence reached it (C11), then finalize."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from celery import shared_task

from ragq.errors import BudgetExhaustedError
from ragq.ledger import (
    job_evidence,
    job_sub_queries,
    mark_in_context,
    record_answer,
    session_scope,
)
from ragq.ledger.models import PlanRow
from ragq.orchestration.budgets import budget_stop, exhausted_dimension
from ragq.orchestration.canvas import FINALIZE, step_signature
from ragq.orchestration.context import assemble_context, rerank_lexical
from ragq.providers.offline import synthesizer as extractive
from ragq.schemas.flow import DraftAnswer, Evidence
from ragq.schemas.statuses import BudgetDimension, JobStatus
from ragq.schemas.tasks import Task
from ragq.tasks.budget_guard import charge, exhausted, remaining
from ragq.tasks.flow_base import FlowTask, to_evidence


def _job_evidence(session: Any, job_id: str) -> tuple[list[Evidence], dict[str, str]]:
    """All evidence of the job, tagged by sub-query, and the first ledger row id per chunk."""
    # Plan sub-queries each get a slot of their own for diversity; a verify round's follow-ups
    # share one, so a round of many follow-ups cannot crowd the plan's evidence out.
    slot = {s.id: s.index if s.round == 0 else s.round * 1000
            for s in job_sub_queries(session, job_id=job_id)}
    rows = job_evidence(session, job_id=job_id)
    first_row: dict[str, str] = {}
    items = []
    for r in rows:
        first_row.setdefault(r.chunk_id, r.id)
        items.append(to_evidence(r, slot.get(r.sub_query_id or "", 0)))
    return items, first_row


@shared_task(base=FlowTask, name=Task.SYNTHESIZE, bind=True)
def synthesize(self: FlowTask, job_id: str, stop_reason: str) -> str | None:
    """Answer from the assembled context, cite it, flag contradictions.

    Synthesis always runs, also for a job out of budget: it answers from what the job found.
    Out of budget the rerank is skipped, the context shrinks to the tokens left, and the answer
    is extractive (no model call)."""
    job = self.open_job(job_id, JobStatus.SYNTHESIZING)
    if job is None:
        return None
    with session_scope(self.res.engine) as session:
        evidence, first_row = _job_evidence(session, job_id)
        findings = [s.finding for s in job_sub_queries(session, job_id=job_id) if s.finding]
        plan = session.query(PlanRow).filter_by(job_id=job_id, round=0).first()
        strategy = plan.strategy if plan and plan.strategy else "single"
    context, tokens = _context(self, job_id, job.question, evidence)
    draft = _draft(self, job_id, job.question, context, strategy, findings, tokens)
    by_chunk = {c.chunk_id: first_row[c.chunk_id] for c in context}
    with session_scope(self.res.engine) as session:
        mark_in_context(session, job_id=job_id, evidence_ids=list(by_chunk.values()))
        record_answer(
            session, job_id=job_id, text=draft.answer, extractive=draft.extractive,
            contradictions=[c.model_dump(mode="json") for c in draft.contradictions],
            citations=[{**c.model_dump(mode="json"), "evidence_item_id": by_chunk.get(c.chunk_id)}
                       for c in draft.citations],
        )
    ran_out = exhausted_dimension(stop_reason) or exhausted(self, job_id)
    if ran_out is not None:
        status, stop_reason = JobStatus.BUDGET_EXHAUSTED, budget_stop(ran_out)
    elif draft.insufficient or not context:
        status = JobStatus.INSUFFICIENT_EVIDENCE
    else:
        status = JobStatus.COMPLETED
    step_signature(self.app, FINALIZE, job_id, status.value, stop_reason, tokens).apply_async()
    return status.value


def _context(task: FlowTask, job_id: str, question: str, evidence: list[Evidence]
             ) -> tuple[list[Evidence], int]:
    """The context under the token budget, counted with the real tokenizer, and its size."""
    count = task.res.count_tokens
    price = Decimal(str(task.settings.prices.rerank_call_usd))
    if charge(task, job_id, "synthesize:rerank", {BudgetDimension.RERANK_CALLS: 1,
                                                  BudgetDimension.COST_USD: price},
              step="rerank") is None:
        evidence = rerank_lexical(evidence, question)
    left = remaining(task, job_id, BudgetDimension.CONTEXT_TOKENS)
    limit = task.settings.context_max_tokens if left is None \
        else min(task.settings.context_max_tokens, left)
    context = assemble_context(evidence, max_tokens=limit, count_tokens=count,
                               max_items=task.settings.context_max_chunks)
    tokens = sum(count(c.text) for c in context)
    if charge(task, job_id, "synthesize:context", {BudgetDimension.CONTEXT_TOKENS: tokens},
              step="context") is not None:
        return [], 0  # the budget changed under us (a racing charge); answer from nothing
    return context, tokens


def _draft(task: FlowTask, job_id: str, question: str, context: list[Evidence], strategy: str,
           findings: list[str], context_tokens: int) -> DraftAnswer:
    """The provider's answer; out of budget, the extractive one (no model call). The call
    reserves the context's tokens, already counted."""
    provider = task.res.provider
    try:
        return task.model_call(
            job_id, "synthesizer", "synthesize",
            lambda: provider.synthesize(question, context, strategy=strategy,
                                        findings=findings),
            reserve=context_tokens)
    except BudgetExhaustedError:
        return extractive.synthesize(question, context, strategy=strategy, findings=findings)
