"""The real flow in process for tests that judge what a job finds and answers: the offline
provider, MiniLM vectors, the embedded vector store and the in-memory ledger; no broker."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ragq.embedding.minilm import MiniLmEmbedder
from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.chunking import chunk_document, chunk_point_id, embedding_text
from ragq.orchestration.flow import FlowConfig
from ragq.providers.offline import OfflineProvider
from ragq.schemas.document import Chunk, Document
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.base import VectorPoint
from ragq.vectorstore.edge import EdgeVectorStore

COLLECTION = "kb"


@dataclass(frozen=True)
class Index:
    """A small knowledge base, embedded and stored, ready for jobs."""

    embedder: MiniLmEmbedder
    vectors: EdgeVectorStore
    texts: dict[str, str]  # chunk id -> stored chunk text

    def run(self, question: str, ledger: MemoryLedger | None = None,
            dispatcher_class: type[InlineDispatcher] = InlineDispatcher,
            **meta: Any) -> dict[str, Any]:
        """Run one job to its end; its result."""
        ledger = ledger or MemoryLedger()
        runner = Runner(ledger, InlineAdapters(OfflineProvider(self.embedder), self.embedder,
                                               self.vectors), FlowConfig())
        job_id = ledger.add_job(question, collection=COLLECTION, meta=meta)
        dispatcher_class(runner).run(job_id)
        result = ledger.jobs[job_id].result
        assert result is not None
        return result


def store(embedder: MiniLmEmbedder, vectors: EdgeVectorStore, collection: str,
          docs: Sequence[Document]) -> list[Chunk]:
    """``docs`` chunked as ingestion chunks them (180 words, 40 overlap), embedded and stored
    in ``collection``; the chunks."""
    vectors.ensure_collection(collection, embedder.dim)
    chunks = [c for d in docs for c in chunk_document(
        d, collection=collection, size_words=180, overlap_words=40)]
    points = embedder.embed([embedding_text(c) for c in chunks])
    vectors.upsert(collection, [
        VectorPoint(chunk_point_id(collection, c.doc_id, c.chunk_index), v, c.payload())
        for c, v in zip(chunks, points, strict=True)])
    return chunks


@cache
def shared_embedder() -> MiniLmEmbedder:
    """The real embedder, loaded once per test process (a load costs about 0.7 s of CPU), on
    one intra-op thread: pytest-xdist already runs one test process per core, and a second
    thread would spin waiting for work on a core the other process needs."""
    return MiniLmEmbedder(threads=1)


@contextmanager
def indexed(docs: Sequence[Document], path: Path) -> Iterator[Index]:
    """``docs`` stored (see :func:`store`) in the collection ``kb`` of a store at ``path``."""
    embedder = shared_embedder()
    with EdgeVectorStore(path) as vectors:
        chunks = store(embedder, vectors, COLLECTION, docs)
        yield Index(embedder, vectors, {c.chunk_id: c.text for c in chunks})
