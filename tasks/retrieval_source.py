"""Where a sub-query's hits come from (SPEC C6, C9): the ledger when the job already made the
same request (or a near-duplicate of it), else a paid search of the vector store.

Every attempt pays a step; only a real search pays a retrieval call, its price, and (for a
query the job has not seen) a unique query. A refused charge is returned, not raised, so the
caller can settle the sub-query with what it has.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from decimal import Decimal

from sqlalchemy import select

from ragq.ledger import EvidenceHit, current_versions, job_evidence, session_scope
from ragq.ledger.models import RetrievalRequestRow
from ragq.orchestration.cache_check import evidence_entry, usable
from ragq.orchestration.retrieval import cosine
from ragq.schemas.cache import CachedHit
from ragq.schemas.statuses import BudgetDimension
from ragq.tasks.budget_guard import charge
from ragq.tasks.flow_base import FlowTask, JobView
from ragq.vectorstore.base import SearchFilter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """One attempt of one sub-query, as the retrieve task resolved it."""

    sub_query_id: str
    attempt: int
    query: str
    key: str
    top_k: int

    @property
    def charge_key(self) -> str:
        return f"retrieve:{self.sub_query_id}:{self.attempt}"


@dataclass(frozen=True)
class Found:
    """The hits of a request and how they were obtained."""

    hits: list[EvidenceHit]
    latency_ms: int
    dedup_of: str | None = None
    cache_hit: bool = False


def find(task: FlowTask, job: JobView, request: Request) -> Found | BudgetDimension:
    """The request's hits, or the budget dimension that refused the search."""
    started = time.perf_counter()
    earlier = _earlier_requests(task, job.id, request)
    dedup = task.settings.dedup_enabled
    repeat = _same_request(request, earlier) if dedup else None
    if repeat is not None:  # answered before any embedding
        return _answered(task, job, request, started, dedup_of=repeat)
    vector = task.res.embedder.embed([request.query])[0]
    repeat = _near_duplicate(task, request, earlier, vector) if dedup else None
    if repeat is not None:
        return _answered(task, job, request, started, dedup_of=repeat)
    if (cached := _from_cache(task, job, request)) is not None:
        return _answered(task, job, request, started, hits=cached)
    new_query = all(e.key != request.key for e in earlier)
    refused = charge(task, job.id, request.charge_key, {
        BudgetDimension.STEPS: 1, BudgetDimension.RETRIEVAL_CALLS: 1,
        BudgetDimension.UNIQUE_QUERIES: int(new_query),
        BudgetDimension.COST_USD: _price(task)}, step="retrieve", attempt=request.attempt)
    if refused is not None:
        return refused
    found = task.res.vector_store.search(job.collection, vector, request.top_k,
                                         SearchFilter(acl=job.acl))
    task.res.evidence_cache.put(job.collection, request.key, evidence_entry(
        [_cached(h.score, h.payload) for h in found], requester_acl=job.acl))
    return Found([_hit(h.score, h.payload) for h in found], _ms(started))


def _answered(task: FlowTask, job: JobView, request: Request, started: float, *,
              dedup_of: str | None = None, hits: list[EvidenceHit] | None = None
              ) -> Found | BudgetDimension:
    """Hits that need no search (an earlier request's, or the cache's): a step, nothing more."""
    refused = charge(task, job.id, request.charge_key, {BudgetDimension.STEPS: 1},
                     step="retrieve", attempt=request.attempt)
    if refused is not None:
        return refused
    if dedup_of is None:
        return Found(hits or [], _ms(started), cache_hit=True)
    with session_scope(task.res.engine, readonly=True) as session:
        hits = [EvidenceHit.of(r) for r in
                job_evidence(session, job_id=job.id, retrieval_request_id=dedup_of)]
    return Found(hits, _ms(started), dedup_of=dedup_of)


def _from_cache(task: FlowTask, job: JobView, request: Request) -> list[EvidenceHit] | None:
    """The hits another job cached for this request, when this requester may see every one of
    them and no document they rest on has changed version; a stale entry is dropped."""
    cache = task.res.evidence_cache
    entry = cache.get(job.collection, request.key)
    if entry is None:
        return None
    with session_scope(task.res.engine, readonly=True) as session:
        versions = current_versions(session, collection=job.collection, doc_ids=entry.doc_ids)
    verdict = usable(entry, requester_acl=job.acl, current_versions=versions)
    if not verdict.ok:
        log.info("job=%s evidence cache entry refused: %s", job.id, verdict.reason)
        cache.delete(job.collection, request.key)
        return None
    return [EvidenceHit(**h.model_dump(exclude={"acl"})) for h in entry.hits]


@dataclass(frozen=True)
class _Earlier:
    id: str
    query: str
    key: str
    top_k: int


def _earlier_requests(task: FlowTask, job_id: str, request: Request) -> list[_Earlier]:
    """The job's searched requests, other than this very attempt."""
    with session_scope(task.res.engine, readonly=True) as session:
        rows = session.execute(
            select(RetrievalRequestRow.id, RetrievalRequestRow.query_text,
                   RetrievalRequestRow.normalized_key, RetrievalRequestRow.top_k,
                   RetrievalRequestRow.sub_query_id, RetrievalRequestRow.attempt)
            .where(RetrievalRequestRow.job_id == job_id, RetrievalRequestRow.dedup_of.is_(None))
            .order_by(RetrievalRequestRow.created_at)).all()
    return [_Earlier(r.id, r.query_text, r.normalized_key, r.top_k) for r in rows
            if (r.sub_query_id, r.attempt) != (request.sub_query_id, request.attempt)]


def _same_request(request: Request, earlier: list[_Earlier]) -> str | None:
    """The earlier request with the same normalized key, if any."""
    return next((other.id for other in earlier if other.key == request.key), None)


def _near_duplicate(task: FlowTask, request: Request, earlier: list[_Earlier],
                    vector: list[float]) -> str | None:
    """An earlier request whose query embedding is within the near-duplicate threshold (a
    rewrite that says the same thing) and that fetched at least as many hits."""
    wide_enough = [e for e in earlier if e.top_k >= request.top_k]
    if not wide_enough:
        return None
    vectors = task.res.embedder.embed([e.query for e in wide_enough])
    threshold = task.settings.near_duplicate_similarity
    for other, other_vector in zip(wide_enough, vectors, strict=True):
        if cosine(vector, other_vector) >= threshold:
            return other.id
    return None


def _price(task: FlowTask) -> Decimal:
    return Decimal(str(task.settings.prices.retrieval_call_usd))


def _hit(score: float, payload: dict[str, object]) -> EvidenceHit:
    return EvidenceHit(doc_id=str(payload["doc_id"]), chunk_id=str(payload["chunk_id"]),
                       score=score, source_version=str(payload.get("source_version", "")),
                       authority_tier=int(payload.get("authority_tier", 2)),  # type: ignore[call-overload]
                       title=str(payload.get("title", "")), text=str(payload.get("text", "")))


def _cached(score: float, payload: dict[str, object]) -> CachedHit:
    """The hit as the evidence cache keeps it: with the ACL labels it was stored under."""
    acl = payload.get("acl") or []
    return CachedHit(**asdict(_hit(score, payload)),
                     acl=[str(a) for a in acl])  # type: ignore[union-attr]


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
