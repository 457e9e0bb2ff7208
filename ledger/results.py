"""A job's result line (docs/formats.md), rebuilt from the ledger alone, so a result is always
what the ledger can justify."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BindParameter, Row, bindparam, func, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from ragq.ledger.models import (
    AnswerRow,
    AskRow,
    CitationRow,
    EvidenceItemRow,
    JobBudgetRow,
    JobRow,
    ModelCallRow,
    RetrievalRequestRow,
    SubQueryRow,
    table_of,
    utcnow,
)
from ragq.schemas.statuses import BUDGET_STOP, JobStatus, ModelCallStatus, SubQueryStatus
from ragq.schemas.ticket import AskResult, JobResult, ResultCitation, ResultUsage

__all__ = ["AnswerView", "ask_results", "build_result", "compose_result", "review_summary"]


def review_summary(reasons: Sequence[str], outcome: str) -> dict[str, Any]:
    """Why a job was escalated and the status it would have ended with, as its result's
    ``review`` shows it."""
    return {"reasons": list(reasons), "outcome": str(outcome)}


UNFINISHED = (SubQueryStatus.SKIPPED, SubQueryStatus.PENDING)

# Every job's ending reads these inside its write transaction, which holds SQLite's one write
# lock: prebuilt Core statements bound by job id, run on the session's connection, with no ORM
# row built (the ORM's look-ups were two thirds of the ending's time under that lock).
_JOB_ID: BindParameter[str] = bindparam("job_id")
_JOBS, _EVIDENCE, _ANSWERS = table_of(JobRow), table_of(EvidenceItemRow), table_of(AnswerRow)
_CITATIONS, _ASKS = table_of(CitationRow), table_of(AskRow)
_SUB_QUERIES, _CALLS = table_of(SubQueryRow), table_of(ModelCallRow)
_REQUESTS, _BUDGETS = table_of(RetrievalRequestRow), table_of(JobBudgetRow)
_FALLBACK = _CALLS.c.status == ModelCallStatus.FALLBACK

_JOB = select(_JOBS.c.id, _JOBS.c.custom_id, _JOBS.c.status, _JOBS.c.route,
              _JOBS.c.stop_reason, _JOBS.c.error, _JOBS.c.collection, _JOBS.c.created_at,
              _JOBS.c.finished_at).where(_JOBS.c.id == _JOB_ID)
_EVIDENCE_ROWS = (select(_EVIDENCE.c.doc_id, _EVIDENCE.c.in_context, _EVIDENCE.c.chunk_id,
                         _EVIDENCE.c.source)
                  .where(_EVIDENCE.c.job_id == _JOB_ID)
                  .order_by(_EVIDENCE.c.created_at, _EVIDENCE.c.rank))
_ANSWER = select(_ANSWERS.c.id, _ANSWERS.c.text, _ANSWERS.c.extractive,
                 _ANSWERS.c.contradictions, _ANSWERS.c.asks).where(_ANSWERS.c.job_id == _JOB_ID)
_CITATION_ROWS = (select(_CITATIONS.c.doc_id, _CITATIONS.c.chunk_id, _CITATIONS.c.quote)
                  .where(_CITATIONS.c.answer_id == bindparam("answer_id"))
                  .order_by(_CITATIONS.c.position))
_ASK_ROWS = (select(_ASKS.c.index, _ASKS.c.text).where(_ASKS.c.job_id == _JOB_ID)
             .order_by(_ASKS.c.index))
_UNFINISHED_ASKS = select(_SUB_QUERIES.c.ask).where(
    _SUB_QUERIES.c.job_id == _JOB_ID, _SUB_QUERIES.c.status.in_(UNFINISHED))
_CALL_TOTALS = select(
    func.count().filter(~_FALLBACK), func.coalesce(func.sum(_CALLS.c.prompt_tokens), 0),
    func.coalesce(func.sum(_CALLS.c.completion_tokens), 0),
    func.coalesce(func.sum(_CALLS.c.cost_usd), 0), func.count().filter(_FALLBACK),
).where(_CALLS.c.job_id == _JOB_ID)
# Requests answered from the ledger (dedup) or the evidence cache searched nothing.
_SEARCHED = select(_REQUESTS.c.normalized_key, _REQUESTS.c.filters).where(
    _REQUESTS.c.job_id == _JOB_ID, _REQUESTS.c.dedup_of.is_(None),
    _REQUESTS.c.cache_hit.is_(False))
_BUDGET_USED = select(_BUDGETS.c.used_steps, _BUDGETS.c.used_rerank_calls,
                      _BUDGETS.c.used_cost_usd).where(_BUDGETS.c.job_id == _JOB_ID)


@dataclass(frozen=True)
class AnswerView:
    """An answer as :func:`compose_result` reads it (from the ledger, or a draft in memory)."""

    text: str
    extractive: bool
    citations: Sequence[Any]
    contradictions: Sequence[Any]
    asks: Sequence[Any]


@dataclass(frozen=True)
class _Cited:
    doc_id: str
    chunk_id: str
    quote: str | None


def _answer(conn: Connection, bound: dict[str, Any]) -> AnswerView | None:
    row = conn.execute(_ANSWER, bound).first()
    if row is None:
        return None
    cited = [_Cited(c.doc_id, c.chunk_id, c.quote)
             for c in conn.execute(_CITATION_ROWS, {"answer_id": row.id})]
    return AnswerView(row.text, bool(row.extractive), cited, list(row.contradictions or []),
                      list(row.asks or []))


def _usage(conn: Connection, job: Row[*tuple[Any, ...]], bound: dict[str, Any],
           context_tokens: int, context_chunks: int) -> ResultUsage:
    calls = conn.execute(_CALL_TOTALS, bound).one()
    # A search of several sources is one call per source, as the budget charged it.
    searched = conn.execute(_SEARCHED, bound).all()
    by_source: Counter[str] = Counter()
    for _, filters in searched:
        by_source.update((filters or {}).get("sources") or [job.collection])
    retrievals = (sum(by_source.values()), len({key for key, _ in searched}))
    budget = conn.execute(_BUDGET_USED, bound).first()
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
    caller is about to end the job with it); ``review`` says why it goes to review. Reads what
    the session has written too (it is flushed first)."""
    session.flush()
    conn = session.connection()
    bound = {"job_id": job_id}
    job = conn.execute(_JOB, bound).first()
    if job is None:
        raise KeyError(job_id)
    evidence = conn.execute(_EVIDENCE_ROWS, bound).all()
    sources = {chunk: source for _, _, chunk, source in reversed(evidence) if source}
    answer = _answer(conn, bound)
    contexts = len({chunk for _, used, chunk, _ in evidence if used})
    asks = conn.execute(_ASK_ROWS, bound).all()
    unfinished = set(conn.execute(_UNFINISHED_ASKS, bound).scalars())
    stop_reason = stop_reason or job.stop_reason
    status = str(status or job.status)
    return compose_result(
        custom_id=job.custom_id, job_id=job.id, status=status, route=job.route, answer=answer,
        evidence=[(doc, bool(used)) for doc, used, _, _ in evidence],
        stop_reason=stop_reason, usage=_usage(conn, job, bound, context_tokens, contexts),
        error=error or job.error,
        asks=ask_results([(i, t) for i, t in asks], answer, status=status,
                         unfinished=unfinished, stop_reason=stop_reason, sources=sources),
        review=review, sources=sources)


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
