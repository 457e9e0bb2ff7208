"""The ingest registry: which version of each document a collection holds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from sqlalchemy import exc as sa_exc
from sqlalchemy import select
from sqlalchemy.orm import Session

from ragq.ledger.db import race_guard
from ragq.ledger.models import DocumentRow

__all__ = [
    "UpsertOutcome",
    "current_versions",
    "get_documents",
    "upsert_document",
]

UpsertOutcome = Literal["new", "unchanged", "replaced"]

_IN_CHUNK = 500  # stay far below SQLite's bound-parameter limit


def get_documents(
    session: Session, *, collection: str, doc_ids: Iterable[str]
) -> dict[str, DocumentRow]:
    """The registered documents among ``doc_ids``, keyed by doc id; unknown ids are absent."""
    wanted = list(dict.fromkeys(doc_ids))
    found: dict[str, DocumentRow] = {}
    for start in range(0, len(wanted), _IN_CHUNK):
        query = select(DocumentRow).where(
            DocumentRow.collection == collection,
            DocumentRow.doc_id.in_(wanted[start : start + _IN_CHUNK]),
        )
        found.update((row.doc_id, row) for row in session.scalars(query))
    return found


def current_versions(
    session: Session, *, collection: str, doc_ids: Iterable[str]
) -> dict[str, str]:
    """{doc_id: source_version} of the registered documents among ``doc_ids``; unknown ids are
    absent. What a cached evidence entry is re-checked against: two columns only, so
    the check stays cheap on every cache hit."""
    wanted = list(dict.fromkeys(doc_ids))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), _IN_CHUNK):
        query = select(DocumentRow.doc_id, DocumentRow.source_version).where(
            DocumentRow.collection == collection,
            DocumentRow.doc_id.in_(wanted[start : start + _IN_CHUNK]),
        )
        found.update((doc_id, version) for doc_id, version in session.execute(query))
    return found


def upsert_document(
    session: Session,
    *,
    collection: str,
    doc_id: str,
    title: str,
    source_version: str,
    content_hash: str,
    acl: Sequence[str],
    authority_tier: int,
    chunk_count: int,
) -> UpsertOutcome:
    """Register a document and say what ingest must do with its chunks.

    ``"new"``: first time seen. ``"unchanged"``: everything that reaches the vector payload is the
    same, so its chunks may be skipped. ``"replaced"``: the source version or content hash changed,
    or the title, ACL or authority tier did; its chunks must be rewritten. An ACL-only change counts
    as replaced on purpose: skipping it would leave the old ACL on the stored vectors.
    Safe when two tasks upsert the same document at once (the loser re-reads and compares).
    """
    fields = {
        "title": title,
        "source_version": source_version,
        "content_hash": content_hash,
        "acl": list(acl),
        "authority_tier": authority_tier,
        "chunk_count": chunk_count,
    }
    row = session.get(DocumentRow, (collection, doc_id), with_for_update=True)
    if row is None:
        try:
            with race_guard(session):
                session.add(DocumentRow(collection=collection, doc_id=doc_id, **fields))
            return "new"
        except sa_exc.IntegrityError:
            row = session.get(
                DocumentRow, (collection, doc_id), with_for_update=True, populate_existing=True
            )
            if row is None:
                raise
    changed = (
        row.source_version != source_version
        or row.content_hash != content_hash
        or row.title != title
        or sorted(set(row.acl)) != sorted(set(acl))
        or row.authority_tier != authority_tier
    )
    for name, value in fields.items():
        setattr(row, name, value)
    session.flush()
    return "replaced" if changed else "unchanged"
