"""A tenant's sources: collections with a description of what they hold (issue 16).

Registered at ingest (every ingest registers its collection; ``--source-description`` sets or
replaces the description); read at submission, to resolve and check a ticket's ``sources``,
and by the flow's snapshot, which gives the source router each description and past hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from ragq.ledger.models import DocumentRow, EvidenceItemRow, JobRow, SourceRow


@dataclass(frozen=True)
class SourceView:
    """A source as ``ragq sources list`` and ``GET /v1/sources`` show it."""

    name: str
    description: str
    documents: int
    hits: int


def register_source(session: Session, *, tenant: str, name: str,
                    description: str | None = None,
                    metadata_schema: dict[str, Any] | None = None) -> SourceRow:
    """The tenant's source ``name``, created on first use; ``description`` and
    ``metadata_schema`` (when given) replace the ones it had."""
    row = session.get(SourceRow, (tenant, name))
    if row is None:
        row = SourceRow(tenant=tenant, name=name, description=description or "",
                        metadata_schema=metadata_schema)
        session.add(row)
    else:
        if description is not None:
            row.description = description
        if metadata_schema is not None:
            row.metadata_schema = metadata_schema
    session.flush()
    return row


def source_schema(session: Session, *, tenant: str, name: str) -> dict[str, Any] | None:
    """The stored metadata schema of the tenant's source ``name`` (JSON); None when it has
    none or does not exist."""
    row = session.get(SourceRow, (tenant, name))
    return None if row is None else row.metadata_schema


def source_schemas(conn: Session | Connection, *, tenant: str, names: Sequence[str]
                   ) -> dict[str, dict[str, Any]]:
    """{source: metadata schema (JSON)} of the tenant's sources among ``names`` that have one."""
    if not names:
        return {}
    rows = conn.execute(select(SourceRow.name, SourceRow.metadata_schema).where(
        SourceRow.tenant == tenant, SourceRow.name.in_(names)))
    return {name: schema for name, schema in rows if schema}


def source_names(session: Session, *, tenant: str) -> list[str]:
    """The tenant's source names, sorted."""
    return list(session.scalars(select(SourceRow.name).where(SourceRow.tenant == tenant)
                                .order_by(SourceRow.name)))


def sources_holding_documents(session: Session, *, tenant: str) -> list[str]:
    """The tenant's source names that hold at least one document, sorted: what a ticket may
    name as its collection, and what a ticket that names none searches."""
    holds = select(DocumentRow.collection).where(DocumentRow.collection == SourceRow.name)
    return list(session.scalars(select(SourceRow.name).where(
        SourceRow.tenant == tenant, holds.exists()).order_by(SourceRow.name)))


def collection_holds_documents(session: Session, *, collection: str) -> bool:
    """Whether ``collection`` holds at least one ingested document."""
    return session.scalar(select(DocumentRow.doc_id).where(
        DocumentRow.collection == collection).limit(1)) is not None


def list_sources(session: Session, *, tenant: str) -> list[SourceView]:
    """The tenant's sources, sorted by name, with their document counts and past hits
    (evidence of the tenant's jobs from the source that reached an answer)."""
    rows = session.scalars(select(SourceRow).where(SourceRow.tenant == tenant)
                           .order_by(SourceRow.name)).all()
    names = [r.name for r in rows]
    counted = session.execute(
        select(DocumentRow.collection, func.count()).where(DocumentRow.collection.in_(names))
        .group_by(DocumentRow.collection))
    docs = {collection: count for collection, count in counted}
    hits = source_hits(session, tenant=tenant, names=names)
    return [SourceView(r.name, r.description, docs.get(r.name, 0), hits.get(r.name, 0))
            for r in rows]


def source_hits(session: Session | Connection, *, tenant: str, names: Sequence[str]
                ) -> dict[str, int]:
    """{source: evidence rows of the tenant's jobs from it that reached an answer}."""
    if not names:
        return {}
    rows = session.execute(
        select(EvidenceItemRow.source, func.count())
        .join(JobRow, JobRow.id == EvidenceItemRow.job_id)
        .where(JobRow.tenant == tenant, EvidenceItemRow.in_context.is_(True),
               EvidenceItemRow.source.in_(names))
        .group_by(EvidenceItemRow.source))
    return {source: count for source, count in rows if source}


def source_descriptions(session: Session | Connection, *, tenant: str, names: Sequence[str]
                        ) -> dict[str, str]:
    """{source: description} of the tenant's sources among ``names``."""
    if not names:
        return {}
    rows = session.execute(select(SourceRow.name, SourceRow.description).where(
        SourceRow.tenant == tenant, SourceRow.name.in_(names)))
    return {name: description for name, description in rows}
