"""The one meaning of a SearchFilter: stated as plans, and checked against a plain-Python oracle
on every adapter for many generated filters."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragq.vectorstore import AnyOf, FilterPlan, SearchFilter, VectorStore, plan_search, plan_stale
from tests.vectorstore.points import DIM, point, random_unit

DOCS = ("a", "b", "c", "d")
LABELS = ("public", "staff", "legal")
VERSIONS = ("v1", "v2")


def test_plans_name_the_payload_fields_and_their_polarity():
    plan = plan_search(
        SearchFilter(
            acl=("public",), doc_ids=("a",), source_versions=("v1",), exclude_doc_ids=("b",)
        )
    )
    assert plan == FilterPlan(
        must=(AnyOf("acl", ("public",)), AnyOf("doc_id", ("a",)), AnyOf("source_version", ("v1",))),
        must_not=(AnyOf("doc_id", ("b",)),),
    )
    assert plan_search(None).is_empty and plan_search(SearchFilter()).is_empty
    assert plan_search(SearchFilter(acl=())).matches_nothing
    assert plan_stale("a", "v2") == FilterPlan(
        must=(AnyOf("doc_id", ("a",)),), must_not=(AnyOf("source_version", ("v2",)),)
    )


def visible(payload: dict, flt: SearchFilter) -> bool:
    """The oracle: the documented meaning of SearchFilter, written independently of the plans."""
    if flt.acl is not None and not set(payload["acl"]) & set(flt.acl):
        return False
    if flt.doc_ids is not None and payload["doc_id"] not in flt.doc_ids:
        return False
    if flt.source_versions is not None and payload["source_version"] not in flt.source_versions:
        return False
    return payload["doc_id"] not in flt.exclude_doc_ids


def subsets(values: tuple[str, ...]) -> st.SearchStrategy[tuple[str, ...] | None]:
    return st.none() | st.lists(st.sampled_from(values), unique=True).map(tuple)


filters = st.builds(
    SearchFilter,
    acl=subsets(LABELS),
    doc_ids=subsets(DOCS),
    source_versions=subsets(VERSIONS),
    exclude_doc_ids=st.lists(st.sampled_from(DOCS), unique=True).map(tuple),
)


@pytest.fixture
def corpus(store: VectorStore, collection: str) -> list:
    """One point per (document, version, non-empty label set) combination."""
    rng = np.random.default_rng(3)
    label_sets = [c for r in (1, 2, 3) for c in itertools.combinations(LABELS, r)]
    points = [
        point(doc, i, random_unit(rng), version=version, acl=labels)
        for doc in DOCS
        for i, (version, labels) in enumerate(itertools.product(VERSIONS, label_sets))
    ]
    store.ensure_collection(collection, DIM)
    store.upsert(collection, points)
    return points


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(flt=filters)
def test_every_adapter_filters_exactly_like_the_oracle(store, collection, corpus, flt):
    expected = {p.id for p in corpus if visible(p.payload, flt)}
    assert store.count(collection, flt) == len(expected)
    hits = store.search(collection, random_unit(np.random.default_rng(0)), len(corpus), flt)
    assert {h.id for h in hits} == expected
