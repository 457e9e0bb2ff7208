"""Dense, sparse and hybrid search (issue 14), on every adapter (see conftest.py), and the
collections made before sparse vectors, which keep working dense-only."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import pytest

from ragq.orchestration.sparse_terms import document_terms, query_terms
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest
from ragq.vectorstore import EdgeVectorStore, QdrantServerStore, VectorPoint, VectorStore
from tests.vectorstore.points import DIM, axis, point

SPARSE = SearchRequest(SearchMode.SPARSE)
HYBRIDS = [SearchRequest(SearchMode.HYBRID, SearchFusion.RRF),
           SearchRequest(SearchMode.HYBRID, SearchFusion.DBSF)]

# Dense vectors point every chunk but the part-number one near the query's vector; only the
# part number's chunk holds the exact term the query asks for.
TEXTS = {
    "refunds": (axis(0), "Refunds are paid back within fourteen days of the request."),
    "shipping": (axis(0, 0.2), "Shipping takes three to five days for most parcels."),
    "returns": (axis(0, 0.4), "Returns need the original receipt and the packaging."),
    "parts": (axis(4), "Replacement hinge ZX-4410 fits the older cabinet doors."),
}


def termed(doc_id: str) -> VectorPoint:
    vector, text = TEXTS[doc_id]
    plain = point(doc_id, 0, vector)
    payload = {**plain.payload, "text": text}
    return replace(plain, payload=payload, terms=document_terms(text))


@pytest.fixture
def termed_collection(store: VectorStore, collection: str) -> str:
    store.ensure_collection(collection, DIM)
    store.upsert(collection, [termed(d) for d in TEXTS])
    return collection


def ask(mode: SearchRequest, text: str) -> SearchRequest:
    return replace(mode, terms=query_terms(text))


def doc_ids(hits) -> list[str]:
    return [h.payload["doc_id"] for h in hits]


def test_a_term_exact_query_finds_its_chunk_first_in_sparse_mode_only(store, termed_collection):
    query = "hinge zx-4410"
    dense = store.search(termed_collection, axis(0), 4)
    assert doc_ids(dense)[0] != "parts"
    sparse = store.search(termed_collection, axis(0), 4, None, ask(SPARSE, query))
    assert doc_ids(sparse) == ["parts"]  # no other chunk shares a term with the query
    assert sparse[0].rank_score is not None and sparse[0].rank_score > 0
    # the reported score stays the cosine, whatever ranked the hit
    assert sparse[0].score == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize("mode", HYBRIDS, ids=lambda m: m.label)
def test_hybrid_fuses_the_union_of_both_rankings(store, termed_collection, mode):
    query = ask(mode, "hinge zx-4410 for cabinet doors, with the receipt")
    assert doc_ids(store.search(termed_collection, axis(0), 4))[-1] == "parts"  # dense: last
    hits = store.search(termed_collection, axis(0), 4, None, query)
    assert set(doc_ids(hits)) == set(TEXTS)
    # the two chunks holding query terms rank first: the terms' list counts as much as the
    # vectors' (which are themselves one fused list of text and title)
    assert set(doc_ids(hits)[:2]) == {"returns", "parts"}
    ranks = [h.rank_score for h in hits]
    assert ranks == sorted(ranks, reverse=True)
    refunds = next(h for h in hits if h.payload["doc_id"] == "refunds")
    assert refunds.score == pytest.approx(1.0, abs=1e-5) and refunds.text_score is not None


def test_a_query_without_terms_searches_dense(store, termed_collection):
    hits = store.search(termed_collection, axis(0), 2, None, ask(SPARSE, "what is the"))
    assert doc_ids(hits) == doc_ids(store.search(termed_collection, axis(0), 2))


def test_sparse_search_honours_the_filter(store, termed_collection):
    from ragq.vectorstore import SearchFilter

    flt = SearchFilter(acl=("public",), exclude_doc_ids=("parts",))
    hits = store.search(termed_collection, axis(0), 4, flt, ask(SPARSE, "hinge receipt"))
    assert doc_ids(hits) == ["returns"]


def _legacy_edge(tmp_path) -> EdgeVectorStore:
    """An embedded store holding a collection laid out as before sparse vectors."""
    import qdrant_edge as qe

    root = tmp_path / "vectors"
    params = qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)
    shard = qe.EdgeShard.create(str(root / "old" / "shard"),
                                qe.EdgeConfig(vectors={"text": params, "title": params}))
    shard.close()
    record = {"dim": DIM, "vectors": ["text", "title"], "distance": "cosine",
              "engine": "qdrant-edge"}
    (root / "old" / "collection.json").write_text(json.dumps(record))
    return EdgeVectorStore(root)


def _legacy_memory() -> QdrantServerStore:
    from qdrant_client import models

    store = QdrantServerStore(":memory:")
    params = models.VectorParams(size=DIM, distance=models.Distance.COSINE)
    store._client.create_collection("old", vectors_config={"text": params, "title": params})
    return store


@pytest.mark.parametrize("make", [_legacy_edge, lambda _: _legacy_memory()],
                         ids=["edge", "qdrant-memory"])
def test_a_collection_made_before_sparse_vectors_is_searched_dense_with_a_warning(
        make, tmp_path, caplog):
    store = make(tmp_path)
    try:
        with caplog.at_level(logging.WARNING, logger="ragq.vectorstore.modes"):
            store.upsert("old", [termed(d) for d in TEXTS])  # terms dropped, with a warning
            hits = store.search("old", axis(0), 2, None, ask(HYBRIDS[0], "hinge zx-4410"))
        assert doc_ids(hits) == doc_ids(store.search("old", axis(0), 2))
        warned = " ".join(r.getMessage() for r in caplog.records)
        assert "no sparse 'terms' vector" in warned and "new collection" in warned
        assert "hybrid-rrf" in warned
    finally:
        store.close()
