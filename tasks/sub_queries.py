"""The sub-query pipeline: retrieve (on the vector worker) -> check (on a model worker) ->
rewrite and retrieve again, each hop a task that *replaces* itself with the next, so the layer's
chord waits for the whole pipeline without any task waiting on another."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from ragq.errors import BudgetExhaustedError
from ragq.ledger import (
    SubQueryRow,
    SubQueryStatus,
    finish_sub_query,
    job_evidence,
    job_sub_queries,
    record_check,
    record_retrieval,
    session_scope,
)
from ragq.ledger.models import RetrievalRequestRow
from ragq.orchestration.canvas import check_signature, retrieve_signature
from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.retrieval import search_width, weak_pass
from ragq.orchestration.retrieval_keys import retrieval_key
from ragq.orchestration.routing import RoutePath, budget_for
from ragq.orchestration.substitution import substitute
from ragq.schemas.flow import Evidence, PlannedSubQuery, SufficiencyVerdict
from ragq.schemas.statuses import BudgetDimension, JobStatus
from ragq.schemas.tasks import Task
from ragq.tasks.flow_base import FlowTask, to_evidence
from ragq.tasks.retrieval_source import Request, find


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


@shared_task(base=FlowTask, name=Task.RETRIEVE, bind=True)
def retrieve(self: FlowTask, job_id: str, sub_query_id: str, attempt: int = 0,
             text: str | None = None) -> dict[str, Any]:
    """Search for one attempt of a sub-query and record the request and its evidence; a
    request the job already made is answered from the ledger, not searched or paid again."""
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
    key = retrieval_key(query, collection=job.collection, acl=job.acl, top_k=top_k)
    found = find(self, job, Request(sub_query_id, attempt, query, key, top_k))
    with session_scope(self.res.engine) as session:
        if isinstance(found, BudgetDimension):
            finish_sub_query(session, sub_query_id=sub_query_id,
                             status=SubQueryStatus.SKIPPED, finding=None)
            sq = session.get(SubQueryRow, sub_query_id)
            return _summary(sq, None, skipped=True)  # type: ignore[arg-type]
        record_retrieval(
            session, job_id=job_id, sub_query_id=sub_query_id, attempt=attempt, query_text=query,
            normalized_key=key, top_k=top_k, filters={"acl": list(job.acl)}, hits=found.hits,
            latency_ms=found.latency_ms, dedup_of=found.dedup_of, cache_hit=found.cache_hit,
        )
        if job.route == RoutePath.SIMPLE:  # the fast path: one retrieval, no check
            finish_sub_query(session, sub_query_id=sub_query_id, status=SubQueryStatus.SUFFICIENT,
                             finding=None)
            sq = session.get(SubQueryRow, sub_query_id)
            return _summary(sq, None)  # type: ignore[arg-type]
    raise self.replace(check_signature(self.app, job_id, sub_query_id, attempt))


@shared_task(base=FlowTask, name=Task.CHECK, bind=True)
def check(self: FlowTask, job_id: str, sub_query_id: str, attempt: int) -> dict[str, Any]:
    """Sufficiency check of the latest attempt; rewrite and search again when the pass was
    weak, or settle (C6, C7). Out of budget, the sub-query settles with what it has."""
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
    reserve = estimate_tokens(" ".join([query, *(e.text for e in latest)]))
    try:
        verdict = self.model_call(job_id, "sufficiency", f"check:{key}",
                                  lambda: provider.check_sufficiency(query, latest),
                                  reserve=reserve)
    except BudgetExhaustedError as exc:
        return _settle(self, sub_query_id, request.id, attempt, None, f"budget: {exc}", None)
    expand = _expansion(self, job.route, attempt, verdict.sufficient, latest)
    reason = f"{verdict.reason}; {expand}" if expand else verdict.reason
    if not expand.startswith(EXPAND):
        try:
            finding = self.model_call(job_id, "finder", f"find:{key}",
                                      lambda: provider.find(query, everything),
                                      reserve=estimate_tokens(query)).text or None
        except BudgetExhaustedError:
            finding = None
        return _settle(self, sub_query_id, request.id, attempt, verdict, reason, finding)
    try:
        rewrite = self.model_call(
            job_id, "rewriter", f"rewrite:{key}",
            lambda: provider.rewrite(query, everything, attempt=attempt + 1, previous=tried),
            reserve=estimate_tokens(query))
    except BudgetExhaustedError:
        return _settle(self, sub_query_id, request.id, attempt, verdict, reason, None)
    with session_scope(self.res.engine) as session:
        record_check(session, job_id=job_id, sub_query_id=sub_query_id,
                     retrieval_request_id=request.id, attempt=attempt, sufficient=False,
                     score=verdict.score, reason=reason, rewrite=rewrite.text)
    raise self.replace(retrieve_signature(self.app, job_id, sub_query_id, attempt + 1,
                                          rewrite.text))


EXPAND = "expand:"


def _expansion(task: FlowTask, route: str | None, attempt: int, sufficient: bool,
               latest: list[Evidence]) -> str:
    """Whether to rewrite and search again, as a reason for the ledger: ``expand: <why the
    pass was weak>``, or why not (empty when the check was satisfied)."""
    if sufficient:
        return ""
    if attempt + 1 >= budget_for(route or RoutePath.FULL).max_retrieval_attempts:
        return "attempts used up"
    settings = task.settings
    if not settings.adaptive_expansion:
        return f"{EXPAND} adaptive expansion off"
    weak = weak_pass([e.score for e in latest], min_top_score=settings.expansion_min_top_score,
                     min_margin=settings.expansion_min_margin)
    return f"{EXPAND} {weak}" if weak else "no expansion: the pass was strong"


def _settle(task: FlowTask, sub_query_id: str, request_id: str, attempt: int,
            verdict: SufficiencyVerdict | None, reason: str, finding: str | None
            ) -> dict[str, Any]:
    sufficient = bool(verdict and verdict.sufficient)
    with session_scope(task.res.engine) as session:
        record_check(session, job_id=_job_of(session, sub_query_id), sub_query_id=sub_query_id,
                     retrieval_request_id=request_id, attempt=attempt, sufficient=sufficient,
                     score=verdict.score if verdict else 0.0, reason=reason, rewrite=None)
        finish_sub_query(session, sub_query_id=sub_query_id,
                         status=SubQueryStatus.SUFFICIENT if sufficient
                         else SubQueryStatus.INSUFFICIENT, finding=finding)
        sq = session.get(SubQueryRow, sub_query_id)
        return _summary(sq, sufficient)  # type: ignore[arg-type]


def _job_of(session: Any, sub_query_id: str) -> str:
    sq = session.get(SubQueryRow, sub_query_id)
    assert sq is not None, sub_query_id
    return str(sq.job_id)
