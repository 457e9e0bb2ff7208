"""Jobs over several sources through the real flow in process (offline provider, MiniLM, the
embedded vector store with two collections, the in-memory ledger): each sub-query is sent to
the source whose description fits it, the answer cites both sources, the ledger keeps the
routing, and a job restricted to one source never searches the other."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ragq.embedding.minilm import MiniLmEmbedder
from ragq.ledger import (
    get_job,
    job_ledger,
    list_sources,
    make_engine,
    register_source,
    session_scope,
)
from ragq.ledger.jobs import add_job
from ragq.ledger.memory import MemoryLedger
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.orchestration.flow import FlowConfig
from ragq.providers.offline import OfflineProvider
from ragq.schemas.document import Document
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.edge import EdgeVectorStore
from tests.ledger_template import migrated
from tests.tasks.inprocess import shared_embedder, store

BILLING, API = "billing-policy", "api-reference"
DESCRIPTIONS = {
    BILLING: "Billing policy: plans and pricing, invoices, refunds, seats and payment methods.",
    API: "API reference: endpoints, request parameters, rate limits, authentication tokens "
         "and error codes.",
}
CORPUS = {
    BILLING: [
        {"id": "refunds", "title": "Refunds",
         "text": "Annual plans can be refunded within 45 days of purchase. Monthly plans are "
                 "not refundable once the billing period has started."},
        {"id": "invoices", "title": "Invoices",
         "text": "Invoices are issued on the first day of each billing period and are payable "
                 "within 30 days by card or bank transfer."},
    ],
    API: [
        {"id": "search-endpoint", "title": "The search endpoint",
         "text": "The search endpoint accepts a query and returns ranked passages. Its rate "
                 "limit is 120 requests per minute per token."},
        {"id": "errors", "title": "Error codes",
         "text": "Error code 429 means the rate limit was exceeded; error code 401 means the "
                 "authentication token is missing or expired."},
    ],
}
QUESTION = ("How many days after purchase can annual plans be refunded, and what is the rate "
            "limit of the search endpoint?")


@dataclass(frozen=True)
class Sources:
    """Two collections, embedded and stored, and a way to run jobs over them."""

    embedder: MiniLmEmbedder
    vectors: EdgeVectorStore

    def ledger(self) -> MemoryLedger:
        ledger = MemoryLedger()
        ledger.sources.update(DESCRIPTIONS)
        return ledger

    def run(self, ledger: MemoryLedger, question: str, *, sources: list[str] | None,
            collection: str = BILLING, **meta: Any) -> str:
        """Run one job to its end; its id."""
        runner = Runner(ledger, InlineAdapters(OfflineProvider(self.embedder), self.embedder,
                                               self.vectors), FlowConfig())
        if sources:
            meta["sources"] = sources
        job_id = ledger.add_job(question, collection=collection, meta=meta)
        InlineDispatcher(runner).run(job_id)
        return job_id


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sources]:
    embedder = shared_embedder()
    with EdgeVectorStore(tmp_path_factory.mktemp("vectors")) as vectors:
        for collection, docs in CORPUS.items():
            store(embedder, vectors, collection, [Document(**d) for d in docs])
        yield Sources(embedder, vectors)


def _routes(ledger: MemoryLedger, job_id: str) -> dict[str, tuple[str, ...]]:
    """{sub-query text: the sources the router chose} of a job."""
    job = ledger.jobs[job_id]
    texts = {sq.id: sq.text for sq in job.sub_queries.values()}
    return {texts[sq_id]: tuple(r.choice.sources) for sq_id, r in job.source_routes.items()}


def test_each_sub_query_goes_to_its_source_and_the_answer_cites_both(kb):
    ledger = kb.ledger()
    job_id = kb.run(ledger, QUESTION, sources=[BILLING, API])
    job = ledger.jobs[job_id]
    result = job.result
    assert result is not None and result["status"] == "completed", result

    routes = _routes(ledger, job_id)
    refund = next(t for t in routes if "refund" in t.lower() and "rate" not in t.lower())
    rate = next(t for t in routes if "rate limit" in t.lower() and "refund" not in t.lower())
    assert routes[refund] == (BILLING,)
    assert routes[rate] == (API,)
    # every routed sub-query has a recorded decision: the score of each source, and why
    for decision in job.source_routes.values():
        assert set(decision.choice.scores) == {BILLING, API}
        assert decision.choice.reason and decision.provider == "offline"

    # each request searched only where its sub-query was sent; evidence names its source
    by_sub_query = {sq.id: sq.sources for sq in job.sub_queries.values()}
    for request in job.requests.values():
        assert request.sources == by_sub_query[request.sub_query_id]
    for item in job.evidence:
        assert item.item.source in by_sub_query[item.sub_query_id]

    cited = {(c["doc_id"], c["source"]) for c in result["citations"]}
    assert ("refunds", BILLING) in cited, result["citations"]
    assert ("search-endpoint", API) in cited, result["citations"]
    assert "45 days" in result["answer"] and "120 requests" in result["answer"]


def test_a_search_of_two_sources_is_charged_as_two_retrieval_calls(kb):
    ledger = kb.ledger()
    job_id = kb.run(ledger, QUESTION, sources=[BILLING, API])
    job = ledger.jobs[job_id]
    searched = [r for r in job.requests.values() if r.searched]
    # the question searched whole fits both descriptions about as well: both are searched
    assert any(len(r.sources) == 2 for r in searched)
    calls = sum(len(r.sources) for r in searched)
    assert calls > len(searched)
    assert job.budget is not None
    assert job.budget.used[_dimension("retrieval_calls")] == calls
    assert job.result is not None and job.result["usage"]["retrieval_calls"] == calls
    by_source = job.result["usage"]["retrieval_calls_by_source"]
    assert by_source == {name: sum(name in r.sources for r in searched)
                         for name in (API, BILLING)}
    assert by_source[API] >= 1 and by_source[BILLING] >= 1


def test_a_job_restricted_to_one_source_never_searches_the_other(kb):
    ledger = kb.ledger()
    job_id = kb.run(ledger, QUESTION, sources=[API], collection=API)
    job = ledger.jobs[job_id]
    assert job.result is not None and job.result["status"] in {"completed",
                                                              "insufficient_evidence"}
    assert not job.source_routes  # one source: nothing to choose
    assert job.requests and all(r.sources == (API,) for r in job.requests.values())
    assert {e.item.source for e in job.evidence} == {API}
    assert "refunds" not in job.result["evidence_doc_ids"]
    assert {c["source"] for c in job.result["citations"]} <= {API}


def test_a_job_without_sources_searches_its_collection_as_before(kb):
    ledger = kb.ledger()
    job_id = kb.run(ledger, "How many days after purchase can annual plans be refunded?",
                    sources=None, collection=BILLING)
    job = ledger.jobs[job_id]
    assert job.result is not None and job.result["status"] == "completed"
    assert not job.source_routes
    assert not any(role == "source_router" for role, *_ in job.model_calls.values())
    assert {e.item.source for e in job.evidence} == {BILLING}
    assert "refunds" in {c["doc_id"] for c in job.result["citations"]}


def test_past_hits_make_the_prior_of_a_source(kb):
    ledger = kb.ledger()
    kb.run(ledger, QUESTION, sources=[BILLING, API])
    job_id = ledger.add_job("anything", meta={"sources": [BILLING, API]})
    profiles = {p.name: p for p in ledger.snapshot(job_id, FlowConfig()).sources}
    assert profiles[BILLING].description == DESCRIPTIONS[BILLING]
    assert profiles[BILLING].hits > 0 and profiles[API].hits > 0


def _dimension(name: str) -> Any:
    from ragq.schemas.statuses import BudgetDimension

    return BudgetDimension(name)


def test_the_sql_ledger_shows_where_each_sub_query_went(kb, tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    ledger = SqlFlowLedger(make_engine(url))
    with session_scope(ledger.engine) as session:
        for name, description in DESCRIPTIONS.items():
            register_source(session, tenant="t", name=name, description=description)
        job_id = add_job(session, batch_id=None, custom_id="q", position=None, tenant="t",
                         collection=BILLING, question=QUESTION, acl=["public"],
                         metadata={"sources": [BILLING, API]}).id
    runner = Runner(ledger, InlineAdapters(OfflineProvider(kb.embedder), kb.embedder,
                                           kb.vectors), FlowConfig())
    InlineDispatcher(runner).run(job_id)
    with session_scope(ledger.engine, readonly=True) as session:
        report = job_ledger(session, job_id)
        result = get_job(session, job_id=job_id).result
        listed = {s.name: s for s in list_sources(session, tenant="t")}
    assert result is not None and result["status"] == "completed"
    routes = {r.text: r for r in report.source_routes}
    refund = next(r for t, r in routes.items() if "refund" in t and "rate" not in t)
    rate = next(r for t, r in routes.items() if "rate limit" in t and "refund" not in t)
    assert refund.sources == [BILLING] and rate.sources == [API]
    assert set(rate.scores) == {BILLING, API} and rate.by == "offline" and rate.reason
    assert {(c["doc_id"], c["source"]) for c in result["citations"]} >= {
        ("refunds", BILLING), ("search-endpoint", API)}
    # what reached the answer is each source's prior for the next job
    assert listed[BILLING].hits > 0 and listed[API].hits > 0
    assert listed[API].description == DESCRIPTIONS[API]
