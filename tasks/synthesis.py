"""Synthesis: assemble the context under the token budget, answer from it, record the answer
and which evidence reached it (C11), then finalize."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from ledger import (
    job_evidence,
    job_sub_queries,
    mark_in_context,
    record_answer,
    session_scope,
)
from ledger.models import PlanRow
from orchestration.canvas import FINALIZE, step_signature
from orchestration.context import assemble_context, estimate_tokens, rerank_lexical
from schemas.flow import Evidence
from schemas.statuses import JobStatus
from tasks.flow_base import FlowTask, to_evidence
from workers.queues import Queue, task_name


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


@shared_task(base=FlowTask, name=task_name(Queue.MODELS, "synthesize"), bind=True)
def synthesize(self: FlowTask, job_id: str, stop_reason: str) -> str | None:
    """Answer from the assembled context, cite it, flag contradictions."""
    job = self.open_job(job_id, JobStatus.SYNTHESIZING)
    if job is None:
        return None
    with session_scope(self.res.engine) as session:
        evidence, first_row = _job_evidence(session, job_id)
        findings = [s.finding for s in job_sub_queries(session, job_id=job_id) if s.finding]
        plan = session.query(PlanRow).filter_by(job_id=job_id, round=0).first()
        strategy = plan.strategy if plan and plan.strategy else "single"
    context = assemble_context(rerank_lexical(evidence, job.question),
                               max_tokens=self.settings.context_max_tokens,
                               max_items=self.settings.context_max_chunks)
    provider = self.res.provider
    draft = self.model_call(job_id, "synthesizer", "synthesize", lambda: provider.synthesize(
        job.question, context, strategy=strategy, findings=findings))
    by_chunk = {c.chunk_id: first_row[c.chunk_id] for c in context}
    with session_scope(self.res.engine) as session:
        mark_in_context(session, job_id=job_id, evidence_ids=list(by_chunk.values()))
        record_answer(
            session, job_id=job_id, text=draft.answer, extractive=draft.extractive,
            contradictions=[c.model_dump(mode="json") for c in draft.contradictions],
            citations=[{**c.model_dump(mode="json"), "evidence_item_id": by_chunk.get(c.chunk_id)}
                       for c in draft.citations],
        )
    status = JobStatus.INSUFFICIENT_EVIDENCE if draft.insufficient or not context \
        else JobStatus.COMPLETED
    tokens = sum(estimate_tokens(c.text) for c in context)
    step_signature(self.app, FINALIZE, job_id, status.value, stop_reason, tokens).apply_async()
    return status.value
