"""A sub-query's metadata filters on a real search (issue 37): a filtered search that finds
nothing, or only weak hits, is searched again unfiltered, so a constraint never hides the only
relevant page; a job records each request's filters, keyed apart from the unfiltered ones."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.flow import FlowConfig, JobState, RetrieveDue, Search, Searched
from ragq.orchestration.retrieval_keys import retrieval_key
from ragq.schemas.metadata import FieldType, FilterOp, MetadataField, MetadataFilter, MetadataSchema
from ragq.schemas.statuses import JobStatus
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.tasks.work import search
from ragq.vectorstore import EdgeVectorStore, SearchFilter
from tests.fakes.flow_world import COLLECTION, config, seeded_world
from tests.vectorstore.points import DIM, axis, point

PLANS = {"d0": "Pro", "d1": "Pro", "d2": "Enterprise"}


def _store(tmp_path: Path) -> EdgeVectorStore:
    store = EdgeVectorStore(tmp_path / "vectors")
    store.ensure_collection("kb", DIM)
    store.index_fields("kb", {"plan": FieldType.ENUM})
    # d0 and d1 lie along the query; d2 (the only Enterprise page) points elsewhere.
    points = [point("d0", 0, axis(0)), point("d1", 0, axis(0, 0.5)), point("d2", 0, axis(3))]
    store.upsert("kb", [replace(p, payload={**p.payload, "meta": {"plan": PLANS[doc]}})
                        for p, doc in zip(points, PLANS, strict=True)])
    return store


def _search(store: EdgeVectorStore, value: str) -> Searched:
    state = JobState(job_id="j", question="q", collection="kb", acl=("public",),
                     status=JobStatus.RETRIEVING, config=FlowConfig())
    action = Search(RetrieveDue(0, 0, 0), "q", axis(0), 5, ("kb",),
                    filters=(MetadataFilter(field="plan", op=FilterOp.EQ, value=value,
                                            kind=FieldType.ENUM),),
                    fallback_min_top_score=0.45)
    event = search(action, state, None, SimpleNamespace(vector_store=store))  # type: ignore[arg-type]
    assert isinstance(event, Searched)
    return event


def test_a_strong_filtered_search_keeps_its_filter(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        found = _search(store, "Pro")
    assert found.fallback is None
    assert {h.doc_id for h in found.hits} == {"d0", "d1"}


def test_a_filter_that_leaves_only_weak_hits_falls_back_to_the_unfiltered_search(
        tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        assert store.search("kb", axis(0), 5, SearchFilter(acl=("public",), metadata=(
            MetadataFilter(field="plan", value="Enterprise", kind=FieldType.ENUM),)))[0].score \
            < 0.45  # the filtered search alone holds only the weak page
        found = _search(store, "Enterprise")
    assert found.fallback is not None and "weak" in found.fallback
    assert {h.doc_id for h in found.hits} == {"d0", "d1", "d2"}


def test_a_filter_that_empties_the_result_falls_back_to_the_unfiltered_search(
        tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        found = _search(store, "Free")
    assert found.fallback is not None and "no hits" in found.fallback
    assert found.hits and found.hits[0].doc_id == "d0"


def _job(schema: MetadataSchema | None) -> tuple[MemoryLedger, str]:
    ledger = MemoryLedger()
    if schema is not None:
        ledger.schemas[COLLECTION] = schema
    job_id = ledger.add_job("Which drone does the company sell, and the camera lens?",
                            collection=COLLECTION)
    InlineDispatcher(Runner(ledger, seeded_world(3), config())).run(job_id)
    return ledger, job_id


def test_a_job_records_each_requests_filters_and_keys_them_apart() -> None:
    schema = MetadataSchema(fields=(
        MetadataField(name="product", type=FieldType.ENUM, values=("camera", "drone")),))
    ledger, job_id = _job(schema)
    job = ledger.jobs[job_id]
    assert ledger.filter_log, "some query of the job names a declared product"
    for record in ledger.filter_log:
        named = [v for v in ("camera", "drone") if v in record["query"].lower()]
        kept = [d["proposed"] for d in record["decisions"] if d["kept"]]
        assert {k["value"] if isinstance(k["value"], str) else tuple(k["value"])
                for k in kept} == ({named[0]} if len(named) == 1 else {tuple(sorted(named))})
        request = next(r for r in job.requests.values() if r.id == record["request_id"])
        assert request.filters == record["label"] != ""
        plain = retrieval_key(request.query, collection=COLLECTION, acl=["public"],
                              top_k=request.top_k, mode="dense")
        assert request.key != plain


def test_a_job_without_a_schema_searches_and_keys_as_before() -> None:
    ledger, job_id = _job(None)
    assert ledger.filter_log == []
    for request in ledger.jobs[job_id].requests.values():
        assert request.filters == ""
        if request.sub_query_id and not request.dedup_of:
            assert request.key == retrieval_key(request.query, collection=COLLECTION,
                                                acl=["public"], top_k=request.top_k,
                                                mode="dense")


