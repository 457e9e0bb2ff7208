"""The ingest registry: which documents each collection holds, at which version.

``documents.source_version`` is the current version of a document; cached evidence stamped with
another version is stale.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import MONEY, Base, created_column, id_column, utcnow
from ragq.ledger.models.enums import IngestStatus, db_enum


class DocumentRow(Base):
    """One document of one collection, as last ingested."""

    __tablename__ = "documents"

    collection: Mapped[str] = mapped_column(String(256), primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    title: Mapped[str] = mapped_column(Text, default="")
    source_version: Mapped[str] = mapped_column(String(256))
    content_hash: Mapped[str] = mapped_column(String(128))
    acl: Mapped[list[str]] = mapped_column(default=list)
    authority_tier: Mapped[int] = mapped_column(Integer, default=2)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    ingested_at: Mapped[datetime] = created_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class SourceRow(Base):
    """A source of a tenant: a collection and what it holds, in words (set at ingest with
    ``--source-description``), which the source router reads to send sub-queries there."""

    __tablename__ = "sources"

    tenant: Mapped[str] = mapped_column(String(128), primary_key=True)
    name: Mapped[str] = mapped_column(String(256), primary_key=True)
    description: Mapped[str] = mapped_column(Text, default="")
    #: The filterable metadata fields (``schemas.metadata.MetadataSchema`` as JSON); None: none
    #: declared, searches of the source are never filtered on metadata.
    metadata_schema: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    created_at: Mapped[datetime] = created_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class IngestRunRow(Base):
    """One ``ragq ingest`` of a path; counters are bumped by parallel ingest tasks.

    ``documents_ingested`` counts documents processed so far whatever the outcome, so it drives the
    progress bar against ``documents_total``; new documents are ``ingested - unchanged - replaced``.
    ``embedding_tokens`` and ``cost_usd`` are what embedding billed (every attempt, a retried
    batch included, since each attempt is paid); the server defaults give runs recorded before
    the columns existed a zero.
    """

    __tablename__ = "ingest_runs"

    id: Mapped[str] = id_column("ing")
    collection: Mapped[str] = mapped_column(String(256), index=True)
    source_path: Mapped[str] = mapped_column(String(4096))
    status: Mapped[IngestStatus] = mapped_column(
        db_enum(IngestStatus, "ingest_status"), default=IngestStatus.RUNNING
    )
    documents_total: Mapped[int] = mapped_column(Integer, default=0)
    documents_ingested: Mapped[int] = mapped_column(Integer, default=0)
    documents_unchanged: Mapped[int] = mapped_column(Integer, default=0)
    documents_replaced: Mapped[int] = mapped_column(Integer, default=0)
    chunks: Mapped[int] = mapped_column(Integer, default=0)
    bad_lines: Mapped[int] = mapped_column(Integer, default=0)
    embedding_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    cost_usd: Mapped[Decimal] = mapped_column(MONEY, default=Decimal(0), server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_column()
    finished_at: Mapped[datetime | None]
