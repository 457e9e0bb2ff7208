"""The document registry decides what ingest rewrites: new, unchanged or replaced."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from ragq.ledger import current_versions, get_documents, session_scope, upsert_document
from tests.ledger.conftest import Race

BASE = {
    "title": "Refunds",
    "source_version": "v1",
    "content_hash": "h1",
    "acl": ["public"],
    "authority_tier": 1,
    "chunk_count": 3,
}


def _upsert(engine: Engine, doc_id: str = "d1", collection: str = "kb", **changes: object) -> str:
    fields = {**BASE, **changes}
    with session_scope(engine) as session:
        return upsert_document(session, collection=collection, doc_id=doc_id, **fields)  # type: ignore[arg-type]


def test_first_upsert_is_new_and_a_repeat_is_unchanged(engine: Engine) -> None:
    assert _upsert(engine) == "new"
    assert _upsert(engine) == "unchanged"
    assert _upsert(engine, acl=["public", "public"]) == "unchanged"


@pytest.mark.parametrize(
    "change",
    [
        {"source_version": "v2"},
        {"content_hash": "h2"},
        {"acl": ["support"]},
        {"authority_tier": 2},
        {"title": "Refund policy"},
    ],
)
def test_changes_that_reach_the_vectors_are_replaced(engine: Engine, change: dict) -> None:
    _upsert(engine)
    assert _upsert(engine, **change) == "replaced"
    assert _upsert(engine, **change) == "unchanged"
    with session_scope(engine, readonly=True) as session:
        row = get_documents(session, collection="kb", doc_ids=["d1"])["d1"]
    for name, value in change.items():
        assert getattr(row, name) == value


def test_the_same_doc_id_in_two_collections_is_two_documents(engine: Engine) -> None:
    assert _upsert(engine, collection="a") == "new"
    assert _upsert(engine, collection="b") == "new"
    assert _upsert(engine, collection="b", source_version="v2") == "replaced"
    with session_scope(engine, readonly=True) as session:
        assert current_versions(session, collection="a", doc_ids=["d1"]) == {"d1": "v1"}
        assert current_versions(session, collection="b", doc_ids=["d1"]) == {"d1": "v2"}
        assert get_documents(session, collection="missing", doc_ids=["d1"]) == {}


def test_get_documents_returns_only_known_ids_even_for_long_lists(engine: Engine) -> None:
    with session_scope(engine) as session:
        for n in range(1200):
            upsert_document(session, collection="kb", doc_id=f"d{n}", **BASE)  # type: ignore[arg-type]
    wanted = [f"d{n}" for n in range(0, 2400, 2)]
    with session_scope(engine, readonly=True) as session:
        found = get_documents(session, collection="kb", doc_ids=wanted)
        versions = current_versions(session, collection="kb", doc_ids=wanted)
    assert set(found) == set(versions) == {f"d{n}" for n in range(0, 1200, 2)}
    assert found["d10"].source_version == "v1"


def test_racing_upserts_of_one_document_see_one_new(engine: Engine, race: Race) -> None:
    outcomes = race(8, lambda i: _upsert(engine, doc_id="hot"))
    assert sorted(outcomes) == ["new"] + ["unchanged"] * 7
