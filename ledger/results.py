"""A job's result line (SPEC "Formats"), rebuilt from the ledger alone, so a result is always
what the ledger can justify."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragq.ledger.models import (
    AnswerRow,
    AskRow,
    EvidenceItemRow,
    JobBudgetRow,
    JobRow,
    ModelCallRow,
    RetrievalRequestRow,
    SubQueryRow,
    utcnow,
)
from ragq.schemas.statuses import BUDGET_STOP, JobStatus, ModelCallStatus, SubQueryStatus
from ragq.schemas.ticket import AskResult, JobResult, ResultCitation, ResultUsage

__all__ = ["ask_results", "build_result", "compose_result", "review_summary"]


def review_summary(reasons: Sequence[str], outcome: str) -> dict[str, Any]:
    """Why a job was escalated and the status it would have ended with, as its result's
    ``review`` shows it."""
    return {"reasons": list(reasons), "outcome": str(outcome)}


def _usage(session: Session, job: JobRow, context_tokens: int, context_chunks: int
           ) -> ResultUsage:
    fallback = ModelCallRow.status == ModelCallStatus.FALLBACK
    calls = session.execute(
        select(func.count().filter(~fallback),
               func.coalesce(func.sum(ModelCallRow.prompt_tokens), 0),
               func.coalesce(func.sum(ModelCallRow.completion_tokens), 0),
               func.coalesce(func.sum(ModelCallRow.cost_usd), 0), func.count().filter(fallback))
        .where(ModelCallRow.job_id == job.id)
    ).one()
    # Requests answered from the ledger (dedup) or the evidence cache searched nothing.
    # A search of several sources is one call per source, as the budget charged it.
    searched = session.execute(
        select(RetrievalRequestRow.normalized_key, RetrievalRequestRow.filters)
        .where(RetrievalRequestRow.job_id == job.id, RetrievalRequestRow.dedup_of.is_(None),
               RetrievalRequestRow.cache_hit.is_(False))
    ).all()
    by_source: Counter[str] = Counter()
    for _, filters in searched:
        by_source.update((filters or {}).get("sources") or [job.collection])
    retrievals = (sum(by_source.values()), len({key for key, _ in searched}))
    budget = session.get(JobBudgetRow, job.id, populate_existing=True)
    end = job.finished_at or utcnow()
    return ResultUsage(
        steps=budget.used_steps if budget else int(calls[0]) + int(retrievals[0]),
        llm_calls=int(calls[0]), fallbacks=int(calls[4]),
        prompt_tokens=int(calls[1]), completion_tokens=int(calls[2]),
        retrieval_calls=int(retrievals[0]), unique_queries=int(retrievals[1]),
        retrieval_calls_by_source=dict(sorted(by_source.items())),
        rerank_calls=budget.used_rerank_calls if budget else 0,
        context_tokens=context_tokens, context_chunks=context_chunks,
        # What the budget was charged: model calls and priced retrieval/rerank calls.
        cost_usd=float(budget.used_cost_usd if budget else calls[3]),
        latency_ms=int((end - job.created_at).total_seconds() * 1000),
    )


def build_result(session: Session, *, job_id: str, status: str | None = None,
                 error: dict[str, Any] | None = None, context_tokens: int = 0,
                 stop_reason: str | None = None, review: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """The result of ``job_id`` as a JSON-ready dict; ``status`` overrides the stored one (the
    caller is about to end the job with it); ``review`` says why it goes to review."""
    job = session.get(JobRow, job_id)
    if job is None:
        raise KeyError(job_id)
    evidence = session.execute(
        select(EvidenceItemRow.doc_id, EvidenceItemRow.in_context, EvidenceItemRow.chunk_id,
               EvidenceItemRow.source)
        .where(EvidenceItemRow.job_id == job_id)
        .order_by(EvidenceItemRow.created_at, EvidenceItemRow.rank)
    ).all()
    sources = {chunk: source for _, _, chunk, source in reversed(evidence) if source}
    answer = session.scalars(select(AnswerRow).where(AnswerRow.job_id == job_id)).first()
    contexts = len({chunk for _, used, chunk, _ in evidence if used})
    asks = session.execute(select(AskRow.index, AskRow.text).where(AskRow.job_id == job_id)
                           .order_by(AskRow.index)).all()
    unfinished = session.scalars(select(SubQueryRow.ask).where(
        SubQueryRow.job_id == job_id, SubQueryRow.status.in_(UNFINISHED))).all()
    stop_reason = stop_reason or job.stop_reason
    status = str(status or job.status)
    return compose_result(
        custom_id=job.custom_id, job_id=job.id, status=status,
        route=job.route, answer=answer, evidence=[(doc, used) for doc, used, _, _ in evidence],
        stop_reason=stop_reason, usage=_usage(session, job, context_tokens, contexts),
        error=error or job.error,
        asks=ask_results([(i, t) for i, t in asks], answer, status=status,
                         unfinished=set(unfinished), stop_reason=stop_reason, sources=sources),
        review=review, sources=sources)


UNFINISHED = (SubQueryStatus.SKIPPED, SubQueryStatus.PENDING)


def ask_results(asks: Sequence[tuple[int, str]], answer: Any | None, *, status: str,
                unfinished: set[int | None], stop_reason: str | None,
                sources: Mapping[str, str] | None = None) -> list[AskResult]:
    """Each ask's answer and status: ``incomplete`` when the budget stopped the job before
    one of its sub-queries ended, else ``insufficient_evidence`` or ``answered`` as its answer
    says. ``answer`` has ``text``, ``citations`` and ``asks`` (the per-ask answers, JSON); a
    job of one ask has none of those: the job's answer, and its status, are that ask's.
    ``sources`` maps a chunk id to the collection it was found in, for the citations."""
    sources = sources or {}
    per_ask = {a["index"]: a for a in (answer.asks if answer is not None else [])}
    budget_stop = bool(stop_reason and stop_reason.startswith(BUDGET_STOP))
    out = []
    for index, text in asks:
        mine = per_ask.get(index)
        if mine is None and len(asks) == 1 and answer is not None:
            mine = {"answer": answer.text,
                    "insufficient": status == JobStatus.INSUFFICIENT_EVIDENCE,
                    "citations": [{"doc_id": c.doc_id, "chunk_id": c.chunk_id, "quote": c.quote}
                                  for c in answer.citations]}
        if budget_stop and index in unfinished:
            verdict, reason = "incomplete", stop_reason
        elif mine is None or mine.get("insufficient") or not mine.get("citations"):
            verdict, reason = "insufficient_evidence", None
        else:
            verdict, reason = "answered", None
        out.append(AskResult(index=index, text=text, status=verdict,
                             answer=mine.get("answer") if mine else None,
                             citations=[ResultCitation(**{**c, "source": sources.get(
                                 c["chunk_id"])}) for c in (mine or {}).get("citations") or []],
                             reason=reason))
    return out


def compose_result(*, custom_id: str | None, job_id: str, status: str, route: str | None,
                   answer: Any | None, evidence: Sequence[tuple[str, bool]],
                   stop_reason: str | None, usage: ResultUsage,
                   error: dict[str, Any] | None,
                   asks: Sequence[AskResult] = (),
                   review: dict[str, Any] | None = None,
                   sources: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The result line from what a ledger holds: ``answer`` has ``text``, ``extractive``,
    ``citations`` (each ``doc_id``, ``chunk_id``, ``quote``) and ``contradictions``;
    ``evidence`` is (doc id, reached the context) per evidence item, oldest first; ``sources``
    maps a chunk id to the collection it was found in. ``review`` (why the job waits for a
    reviewer) is in the line only when there is one."""
    sources = sources or {}
    result = JobResult(
        custom_id=custom_id, job_id=job_id, status=status, route=route,
        answer=answer.text if answer else None,
        extractive=bool(answer and answer.extractive),
        citations=[ResultCitation(doc_id=c.doc_id, chunk_id=c.chunk_id, quote=c.quote,
                                  source=sources.get(c.chunk_id))
                   for c in (answer.citations if answer else [])],
        evidence_doc_ids=list(dict.fromkeys(doc for doc, _ in evidence)),
        context_doc_ids=list(dict.fromkeys(doc for doc, used in evidence if used)),
        contradictions=list(answer.contradictions) if answer else [],
        stop_reason=stop_reason, usage=usage, asks=list(asks), error=error, review=review,
    )
    return result.model_dump(mode="json", exclude={"review", "reviewed"} if review is None
                             else {"reviewed"})
