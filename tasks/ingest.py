"""Ingest as tasks: each batch of documents is chunked, embedded and upserted by the worker that
owns the vector store; a chord body closes the ingest run in the ledger.

Safe to redeliver: point ids are derived from (collection, doc id, chunk index), so a repeated
batch overwrites what it wrote; the registry then reports the documents as unchanged.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from celery import shared_task

from ragq import deadlines
from ragq.errors import EmbeddingUnavailableError
from ragq.ledger import (
    add_ingest_counts,
    finish_ingest_run,
    get_documents,
    session_scope,
    upsert_document,
)
from ragq.ledger.errors import LedgerUnavailableError
from ragq.orchestration.chunking import chunk_document, chunk_point_id, embedding_text
from ragq.orchestration.ingest import DocumentAction, StoredDocument, content_hash, decide
from ragq.orchestration.sparse_terms import document_terms
from ragq.schemas.document import Chunk, Document
from ragq.schemas.embedder import Embedder
from ragq.schemas.metadata import MetadataSchema
from ragq.schemas.tasks import Task
from ragq.settings import Settings
from ragq.tasks.runtime import resources, settings
from ragq.vectorstore.base import SearchFilter, VectorPoint, VectorStore
from ragq.vectorstore.errors import StoreClosedError, VectorStoreUnavailableError

log = logging.getLogger(__name__)
# Only what may heal by waiting; a dimension mismatch or a bad name would fail every retry.
_TRANSIENT = (
    VectorStoreUnavailableError, StoreClosedError, EmbeddingUnavailableError,
    LedgerUnavailableError,
)


def _stored(
    store: VectorStore, collection: str, rows: dict[str, Any], doc: Document
) -> StoredDocument | None:
    row = rows.get(doc.id)
    if row is None:
        return None
    in_store = store.count(collection, SearchFilter(doc_ids=(doc.id,)))
    return StoredDocument(row.source_version, row.content_hash, row.chunk_count, in_store)


def _write_chunks(
    store: VectorStore, embedder: Embedder, collection: str, chunks: Sequence[Chunk], batch: int
) -> int:
    """Embed and upsert ``chunks``, ``batch`` at a time, each with its document's title vector;
    returns the tokens the embedder's provider bills for what was embedded.

    The title vector lets a query naming a document find chunks whose text is about a sub-topic
    (see :mod:`vectorstore.fusion`). Chunks of one document share a title, so each distinct
    title of a batch is embedded once, in the same call as the texts; an untitled chunk gets no
    title vector and the store reuses its text vector.
    """
    billed = 0
    last_s = 0.0
    for start in range(0, len(chunks), batch):
        # Stop before a batch that would end past the task's bound (see ragq.deadlines):
        # what was upserted stays, and a redelivery rewrites the same point ids.
        deadlines.check(f"ingest into {collection} at chunk {start} of {len(chunks)}",
                        needs_s=last_s)
        began = time.monotonic()
        part = chunks[start : start + batch]
        titles = sorted({c.title for c in part if c.title})
        texts = [embedding_text(c) for c in part] + titles
        vectors = embedder.embed(texts)
        billed += embedder.billed_tokens(texts)
        title_vectors = dict(zip(titles, vectors[len(part) :], strict=True))
        store.upsert(
            collection,
            [
                VectorPoint(
                    chunk_point_id(collection, c.doc_id, c.chunk_index), v, c.payload(),
                    title_vector=title_vectors.get(c.title),
                    terms=document_terms(embedding_text(c)),
                )
                for c, v in zip(part, vectors[: len(part)], strict=True)
            ],
        )
        last_s = time.monotonic() - began
    return billed


def ingest_batch(
    docs: Sequence[Document], *, collection: str, settings: Settings, store: VectorStore,
    embedder: Embedder, engine: Any, run_id: str | None = None,
    schema: MetadataSchema | None = None,
) -> dict[str, int]:
    """Bring ``docs`` into ``collection``; returns counts per action, the chunks written and the
    ``embedding_tokens`` billed.

    The spend (those tokens, priced by ``settings.prices``) is added to ingest run ``run_id``
    in the transaction that registers the documents, so it is recorded once per attempt that
    embedded: a retry that embeds again is billed again, as the provider bills it; an attempt
    that fails after embedding (store or ledger down) goes unrecorded.
    """
    store.ensure_collection(collection, embedder.dim)
    if schema is not None and schema.fields:
        store.index_fields(collection, {f.name: f.type for f in schema.fields})
    with session_scope(engine) as session:
        rows = get_documents(session, collection=collection, doc_ids=[d.id for d in docs])
    actions = {d.id: decide(d, _stored(store, collection, rows, d)) for d in docs}
    todo = [d for d in docs if actions[d.id] is not DocumentAction.SKIP]
    chunked = {
        d.id: chunk_document(
            d, collection=collection, size_words=settings.chunk_words,
            overlap_words=settings.chunk_overlap_words, schema=schema,
        )
        for d in todo
    }
    for doc in todo:
        same_version = doc.id in rows and rows[doc.id].source_version == doc.source_version
        if actions[doc.id] is DocumentAction.REPLACE and same_version:
            # Content changed under the same version label: ids of surplus chunks would survive
            # a version-based cleanup, so clear the document first.
            store.delete_stale(collection, doc.id, keep_source_version="")
    all_chunks = [c for d in todo for c in chunked[d.id]]
    billed = _write_chunks(store, embedder, collection, all_chunks, settings.embedding_batch_size)
    for doc in todo:
        store.delete_stale(collection, doc.id, keep_source_version=doc.source_version)
    with session_scope(engine) as session:
        if run_id is not None and billed:
            add_ingest_counts(session, run_id=run_id, embedding_tokens=billed,
                              cost_usd=settings.prices.embedding_cost(billed))
        for doc in todo:
            upsert_document(
                session, collection=collection, doc_id=doc.id, title=doc.title,
                source_version=doc.source_version, content_hash=content_hash(doc),
                acl=list(doc.acl), authority_tier=doc.authority_tier,
                chunk_count=len(chunked[doc.id]),
            )
    counts = Counter(a.value for a in actions.values())
    return {**{a.value: counts.get(a.value, 0) for a in DocumentAction}, "chunks": len(all_chunks),
            "embedding_tokens": billed}


@shared_task(
    name=Task.INGEST_DOCUMENTS, bind=True, autoretry_for=_TRANSIENT,
    retry_backoff=True, retry_jitter=True, max_retries=5,
)
def ingest_documents(
    self: Any, run_id: str, collection: str, documents: list[dict[str, Any]],
    metadata_schema: dict[str, Any] | None = None,
) -> dict[str, int]:
    """Ingest one batch of validated documents (dicts of the JSONL format); the source's
    ``metadata_schema`` (JSON; None: none) says which metadata the chunks store and index."""
    res = resources(self)
    docs = [Document.model_validate(d) for d in documents]
    schema = MetadataSchema.model_validate(metadata_schema) if metadata_schema else None
    counts = ingest_batch(
        docs, collection=collection, settings=settings(self), store=res.vector_store,
        embedder=res.embedder, engine=res.engine, run_id=run_id, schema=schema,
    )
    log.info("ingest run=%s collection=%s batch of %d: %s", run_id, collection, len(docs), counts)
    return counts


@shared_task(
    name=Task.FINISH_INGEST, bind=True,
    autoretry_for=(LedgerUnavailableError,), retry_backoff=True, max_retries=5,
)
def finish_ingest(self: Any, batch_counts: list[dict[str, int]], run_id: str) -> dict[str, int]:
    """Chord body: add up the batches and close the run in the ledger (embedding spend is
    already there: each batch added its own)."""
    total: Counter[str] = Counter()
    for counts in batch_counts:
        total.update(counts)
    written = total["new"] + total["replace"] + total["repair"]
    with session_scope(resources(self).engine) as session:
        add_ingest_counts(
            session, run_id=run_id, documents_ingested=written,
            documents_replaced=total["replace"], documents_unchanged=total["skip"],
            chunks=total["chunks"],
        )
        finish_ingest_run(session, run_id=run_id)
    return dict(total)
