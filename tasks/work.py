"""The work a step asks for, done through the adapters: a model role, a probe, a search, a
plan-cache lookup. Each returns the event that the step decides on next.

A model role that fails for good has its attempts recorded (through the flow, so they are
settled too) before the error leaves the step and fails the job.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from ragq.errors import ProviderError
from ragq.orchestration.flow import (
    Action,
    AnswerExtractively,
    CallRole,
    DecideLocally,
    Event,
    JobState,
    LookUpPlan,
    PlanLookedUp,
    Probe,
    Probed,
    RoleAnswered,
    RoleFailed,
    Search,
    Searched,
)
from ragq.orchestration.flow.actions import (
    CheckRequest,
    PlanRequest,
    ReadRequest,
    RerankRequest,
    RouteRequest,
    SourceRouteRequest,
    SynthesizeRequest,
    VerifyRequest,
)
from ragq.orchestration.metadata_filters import fallback_reason
from ragq.orchestration.retrieval import cosine
from ragq.orchestration.sparse_terms import query_terms
from ragq.providers import local
from ragq.providers.base import ModelProvider
from ragq.providers.offline import synthesizer as extractive
from ragq.schemas.cache import CachedHit
from ragq.schemas.flow import Usage
from ragq.tasks.turns import StepTurns
from ragq.vectorstore.base import Hit, SearchFilter

if TYPE_CHECKING:
    from ragq.caches import EvidenceCache, PlanCache
    from ragq.ledger.ports import FlowLedger
    from ragq.schemas.embedder import Embedder
    from ragq.vectorstore.base import VectorStore


class Adapters(Protocol):
    """The adapters a step may use (built lazily, once per process, by the resources)."""

    @property
    def provider(self) -> ModelProvider: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def vector_store(self) -> VectorStore: ...

    @property
    def evidence_cache(self) -> EvidenceCache: ...

    @property
    def plan_cache(self) -> PlanCache: ...

    @property
    def query_vectors(self) -> QueryVectors: ...

    @property
    def step_turns(self) -> StepTurns: ...


class QueryVectors:
    """Query embeddings this process made, so a near-duplicate check does not embed a job's
    earlier queries again. Bounded, least recently used first out; safe across threads."""

    def __init__(self, embedder: Embedder, *, size: int = 4096):
        self._embedder = embedder
        self._size = size
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> tuple[list[list[float]], int]:
        """The vectors of ``texts`` and the tokens billed for the ones embedded now."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        billed = 0
        if missing:
            fresh = self._embedder.embed(missing)
            billed = self._embedder.billed_tokens(missing)
            with self._lock:
                self._vectors.update(zip(missing, fresh, strict=True))
                while len(self._vectors) > self._size:
                    self._vectors.popitem(last=False)
        with self._lock:
            for text in texts:
                self._vectors.move_to_end(text)
            return [self._vectors[t] for t in texts], billed


RoleCall = Callable[[ModelProvider, Any], "tuple[BaseModel, Usage]"]

ROLE_CALLS: dict[type, RoleCall] = {
    ReadRequest: lambda p, r: p.read_ticket(r.text),
    RouteRequest: lambda p, r: p.route(r.question),
    SourceRouteRequest: lambda p, r: p.route_sources(r.query, r.sources),
    PlanRequest: lambda p, r: p.plan(r.question, max_sub_queries=r.max_sub_queries,
                                     context=r.context, fields=r.fields),
    CheckRequest: lambda p, r: p.check_sufficiency(r.sub_query, r.evidence, found=r.found,
                                                   attempt=r.attempt, previous=r.previous),
    VerifyRequest: lambda p, r: p.verify(r.question, r.evidence, findings=r.findings,
                                         missing=r.missing),
    RerankRequest: lambda p, r: p.rerank(r.question, r.candidates, asks=r.asks),
    SynthesizeRequest: lambda p, r: p.synthesize(r.question, r.context, strategy=r.strategy,
                                                 findings=r.findings, asks=r.asks,
                                                 chain_ends=r.chain_ends),
}


def call_role(action: CallRole, state: JobState, ledger: FlowLedger,
              adapters: Adapters) -> Event:
    """Ask the provider; a call the provider reports no latency for is timed here."""
    provider = adapters.provider
    started = time.perf_counter()
    try:
        with adapters.step_turns.waiting():
            value, usage = ROLE_CALLS[type(action.request)](provider, action.request)
    except ProviderError as exc:
        if not isinstance(exc.usage, Usage):
            raise
        return RoleFailed(action, exc.usage, provider.name, exc)
    if not usage.attempts and not usage.latency_ms:
        usage = usage.model_copy(update={"latency_ms": (time.perf_counter() - started) * 1000})
    return RoleAnswered(action, value, usage, provider.name)


LOCAL_ROLES: dict[type, Callable[[Any, Adapters], BaseModel]] = {
    RouteRequest: lambda r, _: local.route(r.question),
    RerankRequest: lambda r, _: local.rerank(r.question, r.candidates, r.asks),
    CheckRequest: lambda r, adapters: local.check(r.sub_query, r.evidence, adapters.embedder,
                                                  found=r.found, attempt=r.attempt,
                                                  previous=r.previous),
}


def decide_locally(action: DecideLocally, state: JobState, ledger: FlowLedger,
                   adapters: Adapters) -> Event:
    """The role's answer from its in-process rules: no usage, so no model call is recorded."""
    call = action.call
    return RoleAnswered(call, LOCAL_ROLES[type(call.request)](call.request, adapters), None,
                        "local")


def answer_extractively(action: AnswerExtractively, state: JobState, ledger: FlowLedger,
                        adapters: Adapters) -> Event:
    request = action.call.request
    assert isinstance(request, SynthesizeRequest)
    draft = extractive.synthesize(request.question, request.context, strategy=request.strategy,
                                  findings=request.findings, asks=request.asks,
                                  chain_ends=request.chain_ends)
    return RoleAnswered(action.call, draft, None)


def look_up_plan(action: LookUpPlan, state: JobState, ledger: FlowLedger,
                 adapters: Adapters) -> Event:
    plan = adapters.plan_cache.get(action.question, provider=adapters.provider.name,
                                   max_sub_queries=action.max_sub_queries)
    return PlanLookedUp(plan, action.ask)


def probe(action: Probe, state: JobState, ledger: FlowLedger, adapters: Adapters) -> Event:
    """Embed the query (and the job's question, see :func:`_probe_vectors`); an earlier
    request saying the same, else the cache's entry with the current versions of its
    documents."""
    vector, question, others, billed = _probe_vectors(action, adapters)
    probed = partial(Probed, action.request, action.query, vector, billed_tokens=billed,
                     question_vector=question)
    for (request_id, _), other in zip(action.candidates, others, strict=True):
        if cosine(vector, other) >= action.similarity:
            return probed(near_duplicate_of=request_id)
    cached = adapters.evidence_cache.get(action.cache, action.key) if action.cache else None
    if cached is None or action.cache is None:
        return probed()
    versions = ledger.current_versions(action.cache, cached.doc_ids)
    return probed(cached=cached, versions=versions)


def _probe_vectors(action: Probe, adapters: Adapters
                   ) -> tuple[list[float], list[float] | None, list[list[float]], int]:
    """The vectors of the query, of the job's question (None when not asked for) and of the
    candidates, and the tokens billed for them: one embedding batch, through the process's
    query vectors, which keep the question so a job's later searches do not embed it again."""
    asked = [action.question] if action.question is not None else []
    texts = [action.query, *asked, *(query for _, query in action.candidates)]
    vectors, billed = adapters.query_vectors.embed(texts)
    question = vectors[1] if asked else None
    return vectors[0], question, vectors[1 + len(asked):], billed


def search(action: Search, state: JobState, ledger: FlowLedger, adapters: Adapters) -> Event:
    """Each collection's best ``top_k`` for the ACL, several collections in parallel; the
    hits of all, best first, each naming the collection it came from (a chunk id found in
    two collections is kept once, its better hit: a request holds each chunk once). A search
    with metadata filters whose hits are weak (:func:`fallback_reason`) is searched again
    without them: a constraint never hides the only relevant page (issue 37)."""
    started = time.perf_counter()
    collections = action.collections or (state.collection,)
    mode = replace(state.config.search, terms=query_terms(action.query))

    def run(flt: SearchFilter) -> list[CachedHit]:
        def one(collection: str) -> list[CachedHit]:
            found = adapters.vector_store.search(collection, action.vector, action.top_k, flt,
                                                 mode, question=action.question_vector)
            return [hit_of(h, collection) for h in found]

        if len(collections) == 1:
            return one(collections[0])
        with ThreadPoolExecutor(max_workers=len(collections)) as pool:
            return _best_once([h for found in pool.map(one, collections) for h in found])

    hits = run(SearchFilter(acl=state.acl, metadata=action.filters))
    fallback = None
    if action.filters:
        fallback = fallback_reason([h.score for h in hits],
                                   min_top_score=action.fallback_min_top_score)
        if fallback is not None:
            hits = run(SearchFilter(acl=state.acl))
    return Searched(action.request, action.query, tuple(hits),
                    int((time.perf_counter() - started) * 1000), fallback)


def _best_once(hits: Sequence[CachedHit]) -> list[CachedHit]:
    """``hits`` best first, each chunk id once (its best hit)."""
    best: dict[str, CachedHit] = {}
    for hit in sorted(hits, key=lambda h: -h.score):
        best.setdefault(hit.chunk_id, hit)
    return list(best.values())


def hit_of(hit: Hit, source: str = "") -> CachedHit:
    """A vector-store hit as the flow keeps it: the chunk, its scores, its ACL labels and the
    collection (source) it was found in."""
    payload = hit.payload
    return CachedHit(doc_id=str(payload["doc_id"]), chunk_id=str(payload["chunk_id"]),
                     score=hit.score, text_score=hit.text_score,
                     question_score=hit.question_score,
                     source_version=str(payload.get("source_version", "")),
                     authority_tier=int(payload.get("authority_tier", 2)),
                     title=str(payload.get("title", "")), text=str(payload.get("text", "")),
                     acl=[str(a) for a in payload.get("acl") or []], source=source)


Work = Callable[[Any, JobState, "FlowLedger", Adapters], Event]

WORKERS: dict[type[Action], Work] = {
    CallRole: call_role,
    DecideLocally: decide_locally,
    AnswerExtractively: answer_extractively,
    LookUpPlan: look_up_plan,
    Probe: probe,
    Search: search,
}


def perform(action: Action, state: JobState, ledger: FlowLedger, adapters: Adapters) -> Event:
    """Do one piece of work; its answer, as the next event."""
    return WORKERS[type(action)](action, state, ledger, adapters)
