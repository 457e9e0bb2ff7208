"""The search mode in a whole job (issue 14): every search the flow makes asks the store for
the configured mode with the query's terms, and the mode is part of every retrieval key."""

from __future__ import annotations

from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.sparse_terms import query_terms
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world

QUESTION = "Who founded the company that makes the camera?"


def run_job(search: SearchRequest) -> tuple[list, list[str], list[str]]:
    """One job under ``search``: what the store was asked, the job's retrieval keys and the
    queries it searched."""
    world = seeded_world(7)
    ledger = MemoryLedger()
    ledger.documents.update({(COLLECTION, f"doc{i}"): "v1" for i in range(8)})
    runner = Runner(ledger, world, config(search=search))
    job_id = ledger.add_job(QUESTION, collection=COLLECTION, acl=["public"])
    InlineDispatcher(runner).run(job_id)
    requests = ledger.jobs[job_id].requests.values()
    return (world.vector_store.requests,  # type: ignore[attr-defined]
            [r.key for r in requests], [r.query for r in requests])


def test_every_search_asks_for_the_configured_mode_with_the_querys_terms():
    hybrid = SearchRequest(SearchMode.HYBRID, SearchFusion.DBSF)
    asked, _, queries = run_job(hybrid)
    assert asked, "the job searched"
    for request in asked:
        assert (request.mode, request.fusion) == (SearchMode.HYBRID, SearchFusion.DBSF)
    assert {r.terms for r in asked} <= {query_terms(q) for q in queries}


def test_the_same_job_under_another_mode_makes_other_keys():
    _, dense, _ = run_job(SearchRequest())
    _, sparse, _ = run_job(SearchRequest(SearchMode.SPARSE))
    assert dense and sparse
    assert not set(dense) & set(sparse)
