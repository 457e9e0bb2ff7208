"""The VectorStore contract, run against every adapter (see conftest.py): what callers rely on."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from ragq.errors import CollectionNotFoundError, RetrievalError
from ragq.vectorstore import (
    InvalidCollectionNameError,
    InvalidVectorError,
    SearchFilter,
    StoreClosedError,
    VectorDimensionError,
    VectorPoint,
    VectorStore,
)
from tests.vectorstore.points import DIM, axis, point, random_unit


@pytest.fixture
def filled(store: VectorStore, collection: str) -> str:
    """A collection with public, staff and mixed documents in two versions."""
    store.ensure_collection(collection, DIM)
    store.upsert(
        collection,
        [
            point("pub", 0, axis(0)),
            point("pub", 1, axis(0, 0.5)),
            point("staff", 0, axis(0, 0.1), acl=("staff",)),
            point("both", 0, axis(1), acl=("public", "staff")),
            point("new", 0, axis(2), version="v2"),
        ],
    )
    return collection


def test_search_returns_the_nearest_first_with_the_stored_payload(store, filled):
    hits = store.search(filled, axis(0), top_k=3)
    assert [h.payload["chunk_id"] for h in hits] == ["pub:0", "staff:0", "pub:1"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].payload == point("pub", 0, axis(0)).payload
    assert hits[0].id == point("pub", 0, axis(0)).id


def test_scores_are_cosine_whatever_the_vector_length(store, filled):
    scaled = [x * 7.5 for x in axis(0, 0.5)]
    hit = store.search(filled, scaled, top_k=1)[0]
    assert hit.payload["chunk_id"] == "pub:1"
    assert hit.score == pytest.approx(1.0, abs=1e-5)


def test_upserting_the_same_ids_again_overwrites_instead_of_adding(store, filled):
    before = store.count(filled)
    store.upsert(filled, [point("pub", 0, axis(3), version="v9")])
    store.upsert(filled, [point("pub", 0, axis(3), version="v9")])
    assert store.count(filled) == before == 5
    hit = store.search(filled, axis(3), top_k=1)[0]
    assert (hit.payload["chunk_id"], hit.payload["source_version"]) == ("pub:0", "v9")


def test_an_empty_upsert_is_a_no_op(store, filled):
    store.upsert(filled, [])
    assert store.count(filled) == 5


def test_delete_stale_removes_only_other_versions_of_that_document(store, collection):
    store.ensure_collection(collection, DIM)
    store.upsert(collection, [point("doc", i, axis(i), version="v1") for i in range(4)])
    store.upsert(collection, [point("other", 0, axis(5), version="v1")])
    store.upsert(collection, [point("doc", i, axis(i), version="v2") for i in range(2)])
    assert store.delete_stale(collection, "doc", keep_source_version="v2") == 2
    assert store.count(collection, SearchFilter(doc_ids=("doc",))) == 2
    assert store.count(collection, SearchFilter(source_versions=("v1",))) == 1  # "other"
    assert store.delete_stale(collection, "doc", keep_source_version="v2") == 0
    assert store.delete_stale(collection, "doc", keep_source_version="") == 2
    assert store.count(collection) == 1


def test_delete_stale_on_a_missing_collection_deletes_nothing(store):
    assert store.delete_stale("never_made", "doc", "v1") == 0


@pytest.mark.parametrize(
    ("acl", "visible"),
    [
        (("public",), {"pub", "both", "new"}),
        (("staff",), {"staff", "both"}),
        (("public", "staff"), {"pub", "staff", "both", "new"}),
        (("nobody",), set()),
        ((), set()),
        (None, {"pub", "staff", "both", "new"}),
    ],
)
def test_acl_shows_a_chunk_only_to_requesters_sharing_a_label(store, filled, acl, visible):
    flt = SearchFilter(acl=acl)
    hits = store.search(filled, axis(0), top_k=50, flt=flt)
    assert {h.payload["doc_id"] for h in hits} == visible
    assert store.count(filled, flt) == sum(
        1 for h in store.search(filled, axis(0), 50) if h.payload["doc_id"] in visible
    )


def test_a_public_requester_never_gets_a_staff_chunk_even_when_it_is_the_best_match(
    store, collection
):
    rng = np.random.default_rng(7)
    store.ensure_collection(collection, DIM)
    staff = [point(f"s{i}", 0, random_unit(rng), acl=("staff",)) for i in range(40)]
    public = [point(f"p{i}", 0, random_unit(rng)) for i in range(5)]
    store.upsert(collection, staff + public)
    for target in staff[:10]:
        hits = store.search(collection, list(target.vector), 10, SearchFilter(acl=("public",)))
        assert hits and all(h.payload["acl"] == ["public"] for h in hits)


@pytest.mark.parametrize(
    ("flt", "docs"),
    [
        (SearchFilter(doc_ids=("pub", "new")), {"pub", "new"}),
        (SearchFilter(doc_ids=()), set()),
        (SearchFilter(source_versions=("v2",)), {"new"}),
        (SearchFilter(exclude_doc_ids=("pub", "staff")), {"both", "new"}),
        (SearchFilter(acl=("public",), doc_ids=("pub", "staff")), {"pub"}),
        (SearchFilter(acl=("staff",), exclude_doc_ids=("both",)), {"staff"}),
    ],
)
def test_document_and_version_filters(store, filled, flt, docs):
    hits = store.search(filled, axis(0), top_k=50, flt=flt)
    assert {h.payload["doc_id"] for h in hits} == docs
    assert store.count(filled, flt) == len(hits)


def test_count_is_exact_and_zero_for_a_missing_collection(store, filled):
    assert store.count(filled) == 5
    assert store.count(filled, SearchFilter(doc_ids=("pub",))) == 2
    assert store.count("never_made") == 0


def test_collections_lists_what_was_ensured(store, collection):
    store.ensure_collection(collection, DIM)
    store.ensure_collection(collection, DIM)  # idempotent
    assert collection in store.collections()


def test_a_mismatching_dimension_is_refused_with_both_sizes(store, filled):
    with pytest.raises(VectorDimensionError) as ensure:
        store.ensure_collection(filled, DIM * 2)
    assert (ensure.value.expected, ensure.value.got, ensure.value.collection) == (
        DIM,
        DIM * 2,
        filled,
    )
    assert isinstance(ensure.value, RetrievalError)
    with pytest.raises(VectorDimensionError, match="8-dimensional vectors but got 3"):
        store.search(filled, [1.0, 0.0, 0.0], top_k=3)
    with pytest.raises(VectorDimensionError):
        store.upsert(filled, [point("x", 0, [1.0] * (DIM + 1))])
    assert store.count(filled) == 5


def test_searching_or_writing_a_missing_collection_says_so(store, tmp_path):
    with pytest.raises(CollectionNotFoundError) as missing:
        store.search("never_made", axis(0), top_k=3)
    assert missing.value.collection == "never_made"
    # a failed job's result shows this message: no server path, no other collection's name
    assert str(tmp_path) not in str(missing.value) and "/" not in str(missing.value)
    with pytest.raises(CollectionNotFoundError):
        store.upsert("never_made", [point("x", 0, axis(0))])


@pytest.mark.parametrize("name", ["", "../escape", "a/b", ".hidden", "x" * 65, "sp ace", "end."])
def test_unusable_collection_names_are_refused_with_the_rule(store, name):
    with pytest.raises(InvalidCollectionNameError, match="letters, digits"):
        store.ensure_collection(name, DIM)


def test_non_finite_vectors_are_refused(store, filled):
    with pytest.raises(InvalidVectorError):
        store.search(filled, [math.nan] + [0.0] * (DIM - 1), top_k=3)
    with pytest.raises(InvalidVectorError):
        store.upsert(filled, [point("x", 0, [math.inf] + [0.0] * (DIM - 1))])


def test_a_point_id_that_is_not_a_uuid_is_refused_as_a_retrieval_error(store, filled):
    bad = point("x", 0, axis(0))
    with pytest.raises(RetrievalError, match="not-a-uuid"):
        store.upsert(filled, [VectorPoint("not-a-uuid", bad.vector, bad.payload)])
    assert store.count(filled) == 5


def test_top_k_below_one_is_a_caller_bug(store, filled):
    with pytest.raises(ValueError, match="top_k"):
        store.search(filled, axis(0), top_k=0)


def test_searches_from_many_threads_during_upserts_stay_consistent(store, collection):
    """Readers see whole points (payload matches id), sorted hits, only their ACL, a count
    that never goes down, and no errors, while a writer keeps adding batches."""
    rng = np.random.default_rng(1)
    store.ensure_collection(collection, DIM)
    acls = (("public",), ("staff",))
    batches = [
        [point(f"d{b}-{i}", 0, random_unit(rng), acl=acls[i % 2]) for i in range(20)]
        for b in range(12)
    ]
    expected = {p.id: p.payload for batch in batches for p in batch}
    store.upsert(collection, batches[0])
    errors: list[BaseException] = []
    seen_counts: set[int] = set()
    done = threading.Event()

    def reader(seed: int) -> None:
        local = np.random.default_rng(seed)
        last = 0
        try:
            while not done.is_set():
                flt = SearchFilter(acl=("public",))
                hits = store.search(collection, random_unit(local), 10, flt)
                assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
                assert all(h.payload == expected[h.id] for h in hits)
                assert all(h.payload["acl"] == ["public"] for h in hits)
                now = store.count(collection)
                assert now >= last
                seen_counts.add(now)
                last = now
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)

    readers = [threading.Thread(target=reader, args=(s,)) for s in range(3)]
    for t in readers:
        t.start()
    try:
        for batch in batches[1:]:
            store.upsert(collection, batch)
    finally:
        done.set()
        for t in readers:
            t.join(timeout=60)
    assert not errors, errors[0]
    assert len(seen_counts) > 1, "readers never overlapped the writer"
    assert store.count(collection) == len(expected)


def test_a_closed_store_refuses_further_use_and_closes_once(store, filled):
    store.close()
    store.close()
    with pytest.raises(StoreClosedError):
        store.search(filled, axis(0), top_k=1)
