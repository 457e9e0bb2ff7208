"""Where a sub-query's hits come from.

In order: the ledger, when the job already made the same request (same normalized key) — no
embedding, a step; the ledger again, when a rewrite says the same as an earlier request that
fetched at least as many hits (near-duplicate by embedding); the evidence cache, when another
job cached this request and every chunk is still visible to this requester at its current
version; else a paid search. Every attempt pays a step; only a real search pays a retrieval
call and its price per collection it searches, and (for a key the job has not searched) a
unique query.

A job that may search several sources first sends each sub-query to its source(s): the
``source_router`` role chooses at the sub-query's first attempt (its rewrites search the same
sources), the choice is recorded, and the retrieval goes on in the same step. A search of
several sources neither reads nor fills the evidence cache (it is kept per collection).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ragq.orchestration.cache_check import shared_hits, usable
from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.flow.actions import (
    Action,
    CacheEvidence,
    Charge,
    Continue,
    DropCachedEvidence,
    FinishSubQuery,
    Probe,
    RecordRetrieval,
    RecordSourceRoute,
    Reply,
    Search,
    SetQueryText,
    SetStatus,
    SourceRouteRequest,
)
from ragq.orchestration.flow.calls import ask, settle
from ragq.orchestration.flow.events import Probed, Refused, RetrieveDue, RoleAnswered, Searched
from ragq.orchestration.flow.state import JobState, RequestState, SubQueryState
from ragq.orchestration.metadata_filters import filter_record, filters_label, request_filters
from ragq.orchestration.retrieval import fetch_width, search_width, spread_over_documents
from ragq.orchestration.retrieval_keys import retrieval_key
from ragq.orchestration.routing import RoutePath
from ragq.orchestration.sources import accept_choice
from ragq.orchestration.substitution import substitute
from ragq.schemas.cache import CachedHit
from ragq.schemas.flow import PlannedSubQuery, SourceChoice
from ragq.schemas.statuses import BudgetDimension, JobStatus, SubQueryStatus
from ragq.schemas.tasks import Task


def query_text(state: JobState, sq: SubQueryState,
               instead: Mapping[int, str] | None = None) -> str:
    """The planned text with the findings of its dependencies filled in (C5); ``instead``
    puts other answers in place of some dependencies' findings (dependency index -> text)."""
    if not sq.depends_on:
        return sq.text
    same_round = {s.index: s for s in state.round_sub_queries(sq.round)}
    deps = [i for i in sq.depends_on if i in same_round]
    filled = substitute(PlannedSubQuery(text=sq.text, depends_on=list(sq.depends_on)),
                        {i: same_round[i].finding for i in deps} | dict(instead or {}),
                        dependency_texts={i: same_round[i].text for i in deps})
    return filled.text


def summary(sq: SubQueryState, sufficient: bool | None, *, finding: str | None = None,
            skipped: bool = False) -> Reply:
    """What a pipeline hands its layer's chord body."""
    return Reply({"sub_query_id": sq.id, "index": sq.index, "sufficient": sufficient,
                  "finding": finding, "skipped": skipped})


def planned_filters(state: JobState, sq: SubQueryState) -> list[dict[str, Any]]:
    """The filters the job's plan gave sub-query ``sq`` (a model planner's proposals, checked
    at each search); none for a verifier's follow-up or a search beside the plan."""
    plan = state.plan
    if sq.round != 0 or plan is None or sq.index >= len(plan.sub_queries):
        return []
    return plan.sub_queries[sq.index].filters


class _Request:
    """One attempt of one sub-query, resolved: what it searches (which query, in which
    collections), how wide, under which key."""

    def __init__(self, state: JobState, due: RetrieveDue, query: str | None = None,
                 sources: tuple[str, ...] = ()):
        self.due = due
        self.sq = state.sub_query(due.round, due.index)
        self.query = query or due.text or query_text(state, self.sq)
        self.sources = sources or self.sq.sources or state.searchable
        config = state.config
        self.top_k = state.context_items if self.sq.is_ticket_window else \
            search_width(self.query, state.ask_text(self.sq.ask), top_k=config.search_top_k,
                         context_chunks=config.context_max_chunks)
        # A window of the whole ticket is the plain-search floor (C24): never filtered.
        self.filters, self.decisions = ((), ()) if self.sq.is_ticket_window else \
            request_filters(self.query, self.sources, state.schemas,
                            planned_filters(state, self.sq))
        self.key = retrieval_key(self.query, collection=",".join(self.sources), acl=state.acl,
                                 top_k=self.top_k, mode=config.search.label,
                                 filters=filters_label(self.filters))
        self.cache = self.sources[0] if len(self.sources) == 1 else None
        self.charge_key = f"retrieve:{self.sq.id}:{due.attempt}"
        # Requests the job searched (cache hits included), other than this very attempt, of
        # the same sources (another source's hits answer nothing here).
        # ... and under the same metadata filters (a filtered search answers only its own).
        label = filters_label(self.filters)
        self.earlier = [r for r in state.requests if r.dedup_of is None
                        and (r.sub_query_id, r.attempt) != (self.sq.id, due.attempt)
                        and (not state.routes_sources or r.sources == self.sources)
                        and r.filters == label]

    def record(self, state: JobState, hits: tuple[CachedHit, ...], *, latency_ms: int = 0,
               dedup_of: str | None = None, cache_hit: bool = False,
               fallback: str | None = None) -> RecordRetrieval:
        return RecordRetrieval(self.sq.id, self.due.attempt, self.query, self.key, self.top_k,
                               state.acl, hits, latency_ms, dedup_of, cache_hit, self.sources,
                               filter_record(self.filters, self.decisions, fallback))


#: A sub-query in one of these has ended its pipeline.
SETTLED = frozenset({SubQueryStatus.SUFFICIENT, SubQueryStatus.INSUFFICIENT,
                     SubQueryStatus.FAILED, SubQueryStatus.SKIPPED})


def on_retrieve_due(state: JobState, event: RetrieveDue) -> list[Action]:
    """A sub-query of a job with several sources not yet sent anywhere asks the source router
    first; otherwise it is retrieved. A sub-query that already settled (its layer sent again
    to resume a job whose chord was lost, or a message delivered twice) replies what it found
    at once: nothing of its pipeline runs or is paid twice."""
    sq = state.sub_query(event.round, event.index)
    if sq.status in SETTLED:
        sufficient = {SubQueryStatus.SUFFICIENT: True,
                      SubQueryStatus.INSUFFICIENT: False}.get(SubQueryStatus(sq.status))
        return [summary(sq, sufficient, finding=sq.finding,
                        skipped=sq.status == SubQueryStatus.SKIPPED)]
    if state.routes_sources and not sq.sources and not sq.is_ticket_window:
        query = event.text or query_text(state, sq)
        request = SourceRouteRequest(query, state.sources)
        reserve = estimate_tokens(" ".join([query, *(s.description for s in state.sources)]))
        context = {"round": event.round, "index": event.index, "attempt": event.attempt,
                   "text": event.text}
        return [SetStatus(JobStatus.RETRIEVING), SetQueryText(sq.id, query),
                *ask("source_router", f"sources:{sq.id}", reserve, request, context)]
    return _retrieve(state, _Request(state, event))


def on_source_router(state: JobState, event: RoleAnswered) -> list[Action]:
    """Record where the sub-query goes (a choice naming no offered source falls back to the
    offline one), then retrieve from there in the same step."""
    proposed = event.value
    assert isinstance(proposed, SourceChoice)
    due = due_of(event)
    sq = state.sub_query(due.round, due.index)
    query = due.text or query_text(state, sq)
    choice = accept_choice(proposed, query, state.sources)
    # A redelivered step searches where the first delivery's recorded choice sent it.
    req = _Request(state, due, sources=sq.sources or tuple(choice.sources))
    return [*settle(event), RecordSourceRoute(sq.id, choice, event.provider),
            *_retrieve(state, req)]


def on_source_router_refused(state: JobState, event: Refused) -> list[Action]:
    """The retrieval after the choice was refused: the sub-query is skipped (see
    :func:`on_refused`)."""
    assert isinstance(event.during, RoleAnswered)
    return on_refused(state, Refused(event.dimension, event.charge, due_of(event.during),
                                     event.dropped))


def due_of(event: RoleAnswered) -> RetrieveDue:
    """The retrieval a source router's answer continues."""
    context = event.call.context
    return RetrieveDue(int(context["round"]), int(context["index"]), int(context["attempt"]),
                       context.get("text"))


def _retrieve(state: JobState, req: _Request) -> list[Action]:
    """An exact repeat is answered before the query is embedded; anything else is probed, and
    what it searches is recorded with the probe's answer (one write transaction, not two, on
    the retrieval worker, whose writes queue behind every other worker's)."""
    repeat = next((r for r in req.earlier if r.key == req.key), None)
    if state.config.dedup_enabled and repeat is not None:
        return _searching(req) + _answered(state, req, hits_of(state, repeat),
                                           dedup_of=repeat.id)
    candidates = tuple((r.id, r.query) for r in req.earlier if r.top_k >= req.top_k) \
        if state.config.dedup_enabled else ()
    # The verifier is asked state.asked: each hit's cosine to it saves the offline verifier
    # embedding the evidence texts again.
    question = state.asked if state.config.question_scores else None
    return [Probe(req.due, req.query, req.key, candidates,
                  state.config.near_duplicate_similarity, req.cache, question)]


def _searching(req: _Request) -> list[Action]:
    """The job is retrieving, and this is what the sub-query's attempt searches."""
    return [SetStatus(JobStatus.RETRIEVING), SetQueryText(req.sq.id, req.query)]


def on_probed(state: JobState, event: Probed) -> list[Action]:
    """A near-duplicate or a usable cache entry answers for a step; otherwise pay and search.
    What embedding the query cost is settled first (it is already spent)."""
    req = _Request(state, event.request, event.query)
    spent = _searching(req) + _embedding_spend(state, req, event.billed_tokens)
    if event.near_duplicate_of is not None:
        earlier = next(r for r in state.requests if r.id == event.near_duplicate_of)
        return spent + _answered(state, req, hits_of(state, earlier), dedup_of=earlier.id)
    drop: list[Action] = []
    if event.cached is not None:
        verdict = usable(event.cached, requester_acl=state.acl, current_versions=event.versions)
        if verdict.ok:
            return spent + _answered(state, req, shared_hits(event.cached.hits),
                                     cache_hit=True)
        drop.append(DropCachedEvidence(req.key, verdict.reason, req.cache or ""))
    new_query = all(r.key != req.key for r in req.earlier)
    searches = len(req.sources)
    paid = Charge(req.charge_key, {
        BudgetDimension.STEPS: 1, BudgetDimension.RETRIEVAL_CALLS: searches,
        BudgetDimension.UNIQUE_QUERIES: int(new_query),
        BudgetDimension.COST_USD: state.config.retrieval_call_usd * searches,
    }, step="retrieve", attempt=event.request.attempt)
    return [*spent, paid, *drop,
            Search(event.request, req.query, event.vector,
                   fetch_width(req.top_k, state.config.search), req.sources,
                   event.question_vector, req.filters, state.config.expansion_min_top_score)]


def on_searched(state: JobState, event: Searched) -> list[Action]:
    """The search fetched :func:`fetch_width` hits; the request keeps its ``top_k`` of them,
    spread over documents (:func:`spread_over_documents`), and records and caches those."""
    req = _Request(state, event.request, event.query)
    hits = spread_over_documents(event.hits, req.top_k)
    writes, replies = _after_retrieval(state, req)
    cache: list[Action] = [] if req.cache is None else \
        [CacheEvidence(req.key, hits, state.acl, req.cache)]
    return [req.record(state, hits, latency_ms=event.latency_ms, fallback=event.fallback),
            *writes, *cache, *replies]


def on_refused(state: JobState, event: Refused) -> list[Action]:
    """Out of budget, the sub-query is skipped; its layer goes on without it."""
    due = event.during.request if isinstance(event.during, Probed | Searched) else event.during
    assert isinstance(due, RetrieveDue)
    sq = state.sub_query(due.round, due.index)
    drops = [a for a in event.dropped if isinstance(a, DropCachedEvidence)]
    return [FinishSubQuery(sq.id, SubQueryStatus.SKIPPED), *drops,
            summary(sq, None, skipped=True)]


def hits_of(state: JobState, request: RequestState) -> tuple[CachedHit, ...]:
    """An earlier request's hits, as the ledger recorded them."""
    return tuple(CachedHit(**e.model_dump(include=set(CachedHit.model_fields) - {"acl"}))
                 for e in state.evidence_of(request_id=request.id))


def _answered(state: JobState, req: _Request, hits: tuple[CachedHit, ...], *,
              dedup_of: str | None = None, cache_hit: bool = False) -> list[Action]:
    """Hits that need no search (an earlier request's, or the cache's): a step, nothing more."""
    paid = Charge(req.charge_key, {BudgetDimension.STEPS: 1}, step="retrieve",
                  attempt=req.due.attempt)
    writes, replies = _after_retrieval(state, req)
    return [paid, req.record(state, hits, dedup_of=dedup_of, cache_hit=cache_hit), *writes,
            *replies]


def _after_retrieval(state: JobState, req: _Request) -> tuple[list[Action], list[Action]]:
    """The simple route takes its one retrieval as it is, and so does a window of the whole
    ticket (the floor is a plain search: nothing to check or rewrite); every other route
    checks it."""
    if state.route == RoutePath.SIMPLE or req.sq.is_ticket_window:
        return ([FinishSubQuery(req.sq.id, SubQueryStatus.SUFFICIENT)],
                [summary(req.sq, None)])
    return [], [Continue(Task.CHECK, (req.due.round, req.due.index, req.due.attempt))]


def _embedding_spend(state: JobState, req: _Request, tokens: int) -> list[Action]:
    """Settle what embedding the query cost (forced: it is spent)."""
    cost = Decimal(tokens) * state.config.embedding_per_mtok_usd / 1_000_000
    if cost <= 0:
        return []
    return [Charge(f"{req.charge_key}:embed", {BudgetDimension.COST_USD: cost}, step="embed",
                   attempt=req.due.attempt, force=True)]
