"""The sub-query pipeline: retrieve (on the vector worker) -> check (on a model worker) ->
rewrite and retrieve again, each hop a task that *replaces* itself with the next, so the layer's
chord waits for the whole pipeline without any task waiting on another."""

from __future__ import annotations

import time
from typing import Any

from celery import shared_task

from ledger import (
    EvidenceHit,
    SubQueryRow,
    SubQueryStatus,
    finish_sub_query,
    job_evidence,
    job_sub_queries,
    record_check,
    record_retrieval,
    session_scope,
)
from ledger.models import RetrievalRequestRow
from orchestration.canvas import check_signature, retrieve_signature
from orchestration.retrieval import search_width
from orchestration.retrieval_keys import retrieval_key
from orchestration.routing import RoutePath, budget_for
from orchestration.substitution import substitute
from schemas.flow import Evidence, PlannedSubQuery
from schemas.statuses import JobStatus
from tasks.flow_base import FlowTask, JobView, to_evidence
from vectorstore.base import SearchFilter
from workers.queues import Queue, task_name


def _summary(sq: SubQueryRow, sufficient: bool | None, skipped: bool = False) -> dict[str, Any]:
    return {"sub_query_id": sq.id, "index": sq.index, "sufficient": sufficient,
            "finding": sq.finding, "skipped": skipped}


def _query_text(session: Any, sq: SubQueryRow) -> str:
    """The planned text with the findings of its dependencies filled in (C5)."""
    if not sq.depends_on:
        return sq.original_text
    same_round = {s.index: s for s in job_sub_queries(session, job_id=sq.job_id, round=sq.round)}
    planned = PlannedSubQuery(text=sq.original_text, depends_on=list(sq.depends_on))
    filled = substitute(
        planned, {i: same_round[i].finding for i in sq.depends_on if i in same_round},
        dependency_texts={i: same_round[i].original_text for i in sq.depends_on
                          if i in same_round},
    )
    return filled.text


def _evidence(rows: list[Any], index: int | None = None) -> list[Evidence]:
    return [to_evidence(r, index) for r in rows]


@shared_task(base=FlowTask, name=task_name(Queue.RETRIEVAL, "retrieve"), bind=True)
def retrieve(self: FlowTask, job_id: str, sub_query_id: str, attempt: int = 0,
             text: str | None = None) -> dict[str, Any]:
    """Search for one attempt of a sub-query and record the request and its evidence."""
    job = self.open_job(job_id, JobStatus.RETRIEVING)
    with session_scope(self.res.engine) as session:
        sq = session.get(SubQueryRow, sub_query_id)
        assert sq is not None, sub_query_id
        if job is None:
            return _summary(sq, None, skipped=True)
        query = text or _query_text(session, sq)
        sq.final_text = query
    top_k = search_width(query, job.question, top_k=self.settings.search_top_k,
                         context_chunks=self.settings.context_max_chunks)
    hits, latency = _search(self, job, query, top_k)
    with session_scope(self.res.engine) as session:
        record_retrieval(
            session, job_id=job_id, sub_query_id=sub_query_id, attempt=attempt, query_text=query,
            normalized_key=retrieval_key(query, collection=job.collection, acl=job.acl,
                                         top_k=top_k),
            top_k=top_k, filters={"acl": list(job.acl)}, hits=hits,
            latency_ms=latency,
        )
        if job.route == RoutePath.SIMPLE:  # the fast path: one retrieval, no check
            finish_sub_query(session, sub_query_id=sub_query_id, status=SubQueryStatus.SUFFICIENT,
                             finding=None)
            sq = session.get(SubQueryRow, sub_query_id)
            return _summary(sq, None)  # type: ignore[arg-type]
    raise self.replace(check_signature(self.app, job_id, sub_query_id, attempt))


def _search(task: FlowTask, job: JobView, query: str, top_k: int
            ) -> tuple[list[EvidenceHit], int]:
    started = time.perf_counter()
    vector = task.res.embedder.embed([query])[0]
    found = task.res.vector_store.search(job.collection, vector, top_k, SearchFilter(acl=job.acl))
    hits = [EvidenceHit(doc_id=h.payload["doc_id"], chunk_id=h.payload["chunk_id"],
                        score=h.score, source_version=h.payload.get("source_version", ""),
                        authority_tier=int(h.payload.get("authority_tier", 2)),
                        title=h.payload.get("title", ""), text=h.payload.get("text", ""))
            for h in found]
    return hits, int((time.perf_counter() - started) * 1000)


@shared_task(base=FlowTask, name=task_name(Queue.MODELS, "check"), bind=True)
def check(self: FlowTask, job_id: str, sub_query_id: str, attempt: int) -> dict[str, Any]:
    """Sufficiency check of the latest attempt; rewrite and search again, or settle (C7)."""
    job = self.open_job(job_id)
    with session_scope(self.res.engine) as session:
        sq = session.get(SubQueryRow, sub_query_id)
        assert sq is not None, sub_query_id
        if job is None:
            return _summary(sq, None, skipped=True)
        request = session.query(RetrievalRequestRow).filter_by(
            job_id=job_id, sub_query_id=sub_query_id, attempt=attempt).one()
        latest = _evidence(job_evidence(session, job_id=job_id,
                                        retrieval_request_id=request.id), sq.index)
        everything = _evidence(job_evidence(session, job_id=job_id, sub_query_id=sq.id), sq.index)
        tried = [r.query_text for r in session.query(RetrievalRequestRow)
                 .filter_by(job_id=job_id, sub_query_id=sub_query_id)]
        query, key = sq.final_text or sq.original_text, f"{sq.round}.{sq.index}.{attempt}"
    provider = self.res.provider
    verdict = self.model_call(job_id, "sufficiency", f"check:{key}",
                              lambda: provider.check_sufficiency(query, latest))
    attempts = budget_for(job.route or RoutePath.FULL).max_retrieval_attempts
    if verdict.sufficient or attempt + 1 >= attempts:
        finding = self.model_call(job_id, "finder", f"find:{key}",
                                  lambda: provider.find(query, everything))
        with session_scope(self.res.engine) as session:
            record_check(session, job_id=job_id, sub_query_id=sub_query_id,
                         retrieval_request_id=request.id, attempt=attempt,
                         sufficient=verdict.sufficient, score=verdict.score,
                         reason=verdict.reason, rewrite=None)
            finish_sub_query(session, sub_query_id=sub_query_id,
                             status=SubQueryStatus.SUFFICIENT if verdict.sufficient
                             else SubQueryStatus.INSUFFICIENT, finding=finding.text or None)
            sq = session.get(SubQueryRow, sub_query_id)
            return _summary(sq, verdict.sufficient)  # type: ignore[arg-type]
    rewrite = self.model_call(
        job_id, "rewriter", f"rewrite:{key}",
        lambda: provider.rewrite(query, everything, attempt=attempt + 1, previous=tried))
    with session_scope(self.res.engine) as session:
        record_check(session, job_id=job_id, sub_query_id=sub_query_id,
                     retrieval_request_id=request.id, attempt=attempt, sufficient=False,
                     score=verdict.score, reason=verdict.reason, rewrite=rewrite.text)
    raise self.replace(retrieve_signature(self.app, job_id, sub_query_id, attempt + 1,
                                          rewrite.text))
