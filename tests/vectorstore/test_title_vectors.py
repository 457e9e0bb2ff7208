"""Title vectors on every adapter: a query naming a document finds it whatever its chunk says,
and the fused score is the documented rule, with both raw scores reported."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragq.vectorstore import (
    InvalidVectorError,
    SearchFilter,
    TitleFusion,
    VectorDimensionError,
    VectorStore,
)
from tests.vectorstore.conftest import opened_store
from tests.vectorstore.points import DIM, axis, point, random_unit

MARGIN = TitleFusion().title_margin


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_a_query_equal_to_a_title_ranks_that_document_first_even_when_other_text_is_closer(
    store: VectorStore, collection: str
):
    store.ensure_collection(collection, DIM)
    title = axis(0)  # the query: the title "Myanmar" alone
    store.upsert(collection, [
        # its paragraph is about a sub-topic, far from the bare title
        point("myanmar", 0, axis(3), title="Myanmar", title_vector=title),
        # another document's text mentions the title's entity, so it sits near the query
        point("airline", 0, axis(0, 0.6), title="Myanmar Airways International",
              title_vector=axis(0, 0.9)),
    ])
    hits = store.search(collection, title, top_k=2)
    assert [h.payload["doc_id"] for h in hits] == ["myanmar", "airline"]
    assert hits[1].text_score is not None and hits[0].text_score is not None
    assert hits[1].text_score > hits[0].text_score  # the other text was closer
    assert hits[0].title_score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].score == pytest.approx(1.0 - MARGIN, abs=1e-5)


def test_a_title_must_beat_the_text_by_the_margin_to_count(store, collection):
    """A near-perfect text match still outranks a title match: questions stay text-driven."""
    store.ensure_collection(collection, DIM)
    tilt = 0.5 * math.sqrt(MARGIN)  # text cosine above 1 - margin
    store.upsert(collection, [
        point("named", 0, axis(3), title_vector=axis(0)),
        point("answer", 0, axis(0, tilt), title_vector=axis(5)),
    ])
    hits = store.search(collection, axis(0), top_k=2)
    assert [h.payload["doc_id"] for h in hits] == ["answer", "named"]
    assert hits[0].score == pytest.approx(hits[0].text_score)


def test_a_point_without_a_title_vector_is_scored_by_its_text(store, collection):
    store.ensure_collection(collection, DIM)
    store.upsert(collection, [point("untitled", 0, axis(0, 0.5), title="")])
    (hit,) = store.search(collection, axis(0), top_k=3)
    expected = cosine(axis(0), axis(0, 0.5))
    assert hit.text_score == pytest.approx(expected, abs=1e-5)
    assert hit.title_score == pytest.approx(expected, abs=1e-5)
    assert hit.score == pytest.approx(expected, abs=1e-5)
    assert hit.payload == point("untitled", 0, axis(0, 0.5), title="").payload


@pytest.mark.parametrize("margin", [0.0, MARGIN, 0.3])
def test_the_fused_top_k_is_exactly_the_rule_over_every_point(adapter, tmp_path, margin):
    """Brute force over all points: max(text, title - margin), with exact raw scores, even when
    top_k is small and many points are good on one vector only."""
    rng = np.random.default_rng(11)
    fusion = TitleFusion(title_margin=margin)
    points = [
        point(f"d{i}", 0, random_unit(rng), title_vector=random_unit(rng)) for i in range(60)
    ]
    with opened_store(adapter, tmp_path, fusion) as store:
        store.ensure_collection("fused", DIM)
        store.upsert("fused", points)
        for _ in range(10):
            query = random_unit(rng)
            expected = sorted(
                (
                    fusion.score(cosine(query, list(p.vector)),
                                 cosine(query, list(p.title_vector or p.vector))),
                    p.id,
                )
                for p in points
            )[::-1][:3]
            hits = store.search("fused", query, top_k=3)
            assert [h.id for h in hits] == [pid for _, pid in expected]
            assert [h.score for h in hits] == pytest.approx([s for s, _ in expected], abs=1e-5)
            for h in hits:
                p = next(p for p in points if p.id == h.id)
                assert h.text_score == pytest.approx(cosine(query, list(p.vector)), abs=1e-5)
                assert h.title_score == pytest.approx(
                    cosine(query, list(p.title_vector or [])), abs=1e-5
                )


def test_both_adapters_return_the_same_hits(tmp_path):
    rng = np.random.default_rng(5)
    points = [
        point(f"d{i}", j, random_unit(rng), title=f"T{i}", title_vector=random_unit(rng),
              acl=(("public",), ("staff",))[i % 2])
        for i in range(30) for j in range(2)
    ]
    queries = [random_unit(rng) for _ in range(8)]
    flt = SearchFilter(acl=("public",), exclude_doc_ids=("d2",))
    seen = []
    for kind in ("edge", "memory"):
        with opened_store(kind, tmp_path / kind) as store:
            store.ensure_collection("same", DIM)
            store.upsert("same", points)
            seen.append([
                [(h.id, round(h.score, 4), round(h.text_score or 0, 4)) for h in hits]
                for q in queries for hits in (store.search("same", q, 5, flt),)
            ])
    assert seen[0] == seen[1]


def test_filters_hold_on_title_matches_too(store, collection):
    store.ensure_collection(collection, DIM)
    store.upsert(collection, [
        point("secret", 0, axis(3), acl=("staff",), title_vector=axis(0)),
        point("dropped", 0, axis(4), title_vector=axis(0)),
        point("open", 0, axis(0, 2.0), title_vector=axis(6)),
    ])
    flt = SearchFilter(acl=("public",), exclude_doc_ids=("dropped",))
    hits = store.search(collection, axis(0), top_k=5, flt=flt)
    assert [h.payload["doc_id"] for h in hits] == ["open"]


def test_upserting_again_replaces_the_title_vector_too(store, collection):
    store.ensure_collection(collection, DIM)
    store.upsert(collection, [point("doc", 0, axis(3), title_vector=axis(0))])
    store.upsert(collection, [point("doc", 0, axis(3), title_vector=axis(5))])
    (hit,) = store.search(collection, axis(0), top_k=1)
    assert hit.title_score == pytest.approx(0.0, abs=1e-5)
    assert store.count(collection) == 1


def test_a_bad_title_vector_is_refused_like_a_bad_text_vector(store, collection):
    store.ensure_collection(collection, DIM)
    with pytest.raises(VectorDimensionError) as wrong:
        store.upsert(collection, [point("x", 0, axis(0), title_vector=[1.0] * (DIM + 2))])
    assert (wrong.value.expected, wrong.value.got) == (DIM, DIM + 2)
    with pytest.raises(InvalidVectorError):
        store.upsert(collection, [point("x", 0, axis(0), title_vector=[math.nan] * DIM)])
    assert store.count(collection) == 0
