"""Metadata filters mean one thing on every adapter (issue 37): the same plan, rendered alike
in qdrant-edge's and qdrant-client's types, selecting the same chunks, on indexed fields."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from qdrant_client import models

from ragq.schemas.metadata import FieldType, FilterOp, MetadataFilter
from ragq.vectorstore import SearchFilter, VectorPoint, VectorStore
from ragq.vectorstore.edge_shards import EDGE_INDEX, edge_filter
from ragq.vectorstore.filters import AnyOf, InRange, plan_search
from ragq.vectorstore.server_models import SERVER_INDEX, render_filter
from tests.vectorstore.points import DIM, point, random_unit

ROWS: list[dict[str, Any]] = [
    {"plan": "Pro", "region": ["EU"], "price": 10.0, "effective": "2021-06-01"},
    {"plan": "Enterprise", "region": ["EU", "US"], "price": 50.0, "effective": "2023-01-01"},
    {"plan": "Pro", "region": ["US"], "price": 25.0, "effective": "2024-02-29"},
    {"plan": "Free", "region": ["US"], "price": 0.0, "effective": "1947-12-31"},
]
FIELDS = {"plan": FieldType.ENUM, "region": FieldType.ENUM, "price": FieldType.NUMBER,
          "effective": FieldType.DATE}


def _f(field: str, op: str, value: Any) -> MetadataFilter:
    return MetadataFilter(field=field, op=FilterOp(op), value=value, kind=FIELDS[field])


CASES: list[tuple[tuple[MetadataFilter, ...], set[int]]] = [
    ((_f("plan", "eq", "Pro"),), {0, 2}),
    ((_f("plan", "in", ["Enterprise", "Free"]),), {1, 3}),
    ((_f("region", "eq", "EU"),), {0, 1}),  # a list field contains the value
    ((_f("price", "gt", 10.0),), {1, 2}),
    ((_f("price", "lte", 10.0),), {0, 3}),
    ((_f("price", "eq", 25.0),), {2}),
    ((_f("effective", "lt", "1948-01-01"),), {3}),
    ((_f("effective", "gte", "2023-01-01"),), {1, 2}),
    ((_f("plan", "eq", "Pro"), _f("region", "eq", "US")), {2}),
    ((_f("plan", "eq", "Gold"),), set()),
]


def _plain(value: object) -> object:
    """A rendered filter as plain data, whatever library's classes it was built from."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _instant(value: object) -> object:
    """A date bound as an aware datetime, from qdrant-client's datetime or qdrant-edge's text
    ("1948-01-01 00:00:00 UTC"); numbers as they are."""
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    if isinstance(value, str):
        return datetime.strptime(value, "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=UTC)
    return value


def _edge_plain(flt: Any) -> object:
    """qdrant-edge's filter objects expose their fields as attributes; read the ones ragq sets
    into the same plain shape as qdrant-client's models."""
    def cond(c: Any) -> dict[str, object]:
        out: dict[str, object] = {"key": c.key}
        if c.match is not None:
            out["match"] = {"any": list(c.match.value)}
        if c.range is not None:
            out["range"] = {k: getattr(c.range, k) for k in ("gt", "gte", "lt", "lte")
                            if getattr(c.range, k) is not None}
        return out

    return {k: [cond(c) for c in getattr(flt, k)] for k in ("must", "must_not")
            if getattr(flt, k)}


def test_metadata_filters_plan_as_matches_and_ranges_on_meta_keys() -> None:
    plan = plan_search(SearchFilter(acl=("public",), metadata=(
        _f("plan", "in", ["Pro", "Free"]), _f("price", "gt", 10.0),
        _f("effective", "lt", "1948-01-01"), _f("price", "eq", 5.0))))
    assert plan.must == (AnyOf("acl", ("public",)), AnyOf("meta.plan", ("Pro", "Free")))
    assert plan.ranges == (InRange("meta.price", gt=10.0),
                           InRange("meta.effective", lt="1948-01-01T00:00:00Z", dates=True),
                           InRange("meta.price", gte=5.0, lte=5.0))


@pytest.mark.parametrize(("filters", "_"), CASES)
def test_both_adapters_render_the_same_filter(filters: tuple[MetadataFilter, ...],
                                              _: set[int]) -> None:
    plan = plan_search(SearchFilter(acl=("public",), metadata=filters))
    server = _plain(render_filter(plan))
    edge = _edge_plain(edge_filter(plan))
    assert isinstance(server, dict) and isinstance(edge, dict)
    for rendered in (server, edge):  # both libraries parse date bounds: compare the instants
        for conditions in rendered.values():
            for c in conditions:
                c["range"] = {k: _instant(v) for k, v in c.get("range", {}).items()} or None
    assert edge == server


def test_every_field_type_has_an_index_on_both_adapters() -> None:
    assert set(EDGE_INDEX) == set(SERVER_INDEX) == set(FieldType)
    assert SERVER_INDEX[FieldType.DATE] == models.PayloadSchemaType.DATETIME


def _points() -> list[VectorPoint]:
    rng = np.random.default_rng(7)
    out = []
    for i, meta in enumerate(ROWS):
        p = point(f"d{i}", 0, random_unit(rng))
        out.append(replace(p, payload={**p.payload, "meta": meta}))
    return out


def test_each_adapter_returns_exactly_the_matching_chunks(store: VectorStore) -> None:
    store.ensure_collection("kb", DIM)
    store.index_fields("kb", FIELDS)
    store.index_fields("kb", FIELDS)  # idempotent
    store.upsert("kb", _points())
    query = [1.0] + [0.0] * (DIM - 1)
    for filters, expected in CASES:
        hits = store.search("kb", query, 10, SearchFilter(acl=("public",), metadata=filters))
        assert {int(h.payload["doc_id"][1:]) for h in hits} == expected, filters
        assert store.count("kb", SearchFilter(acl=("public",), metadata=filters)) == len(expected)


def test_indexing_fields_of_a_missing_collection_is_refused(store: VectorStore) -> None:
    from ragq.errors import CollectionNotFoundError

    with pytest.raises(CollectionNotFoundError):
        store.index_fields("nowhere", FIELDS)
