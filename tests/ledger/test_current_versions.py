"""The ledger's current versions are what cached evidence is re-checked against."""

from __future__ import annotations

from sqlalchemy import Engine

from ragq.ledger import current_versions, session_scope, upsert_document


def _register(engine: Engine, doc_id: str, version: str, collection: str = "kb") -> None:
    with session_scope(engine) as session:
        upsert_document(session, collection=collection, doc_id=doc_id, title="t",
                        source_version=version, content_hash=f"h-{version}", acl=["public"],
                        authority_tier=2, chunk_count=1)


def test_current_versions_of_known_documents_only(engine: Engine) -> None:
    _register(engine, "d1", "v1")
    _register(engine, "d2", "v1")
    _register(engine, "d2", "v2")
    _register(engine, "d1", "v9", collection="other")
    with session_scope(engine) as session:
        found = current_versions(session, collection="kb", doc_ids=["d1", "d2", "gone", "d1"])
    assert found == {"d1": "v1", "d2": "v2"}


def test_current_versions_of_many_ids_and_of_none(engine: Engine) -> None:
    _register(engine, "d0", "v1")
    with session_scope(engine) as session:
        many = current_versions(session, collection="kb",
                                doc_ids=[f"d{i}" for i in range(1200)])
        none = current_versions(session, collection="kb", doc_ids=[])
    assert many == {"d0": "v1"}
    assert none == {}
