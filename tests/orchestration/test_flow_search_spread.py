"""A search keeps its hits spread over documents in a whole job: a long page cut into many
chunks must not take every hit of a search from the other documents the question needs."""

from __future__ import annotations

import random
from collections.abc import Sequence

from ragq.ledger.memory import MemoryLedger
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.base import Hit, SearchFilter
from tests.fakes.flow_world import HashEmbedder, SeededProvider, config

QUESTION = "How do I rotate a signing key without downtime?"
# (doc id, chunks, score of its first chunk): one long guide, then short pages.
PAGES = [("key-rotation-guide", 6, 0.9), ("signing-keys", 1, 0.7), ("downtime-notes", 1, 0.6),
         ("webhook-secrets", 1, 0.5), ("audit-log", 1, 0.4)]


class PagedStore:
    """Every search returns the same chunks, best first, whatever the query; records the
    widths it was asked for."""

    def __init__(self) -> None:
        self.widths: list[int] = []
        self.chunks = sorted(((score - 0.01 * i, doc, f"{doc}::{i}")
                              for doc, count, score in PAGES for i in range(count)),
                             reverse=True)

    def search(self, collection: str, vector: Sequence[float], top_k: int,
               flt: SearchFilter | None = None, request: SearchRequest | None = None,
               question: Sequence[float] | None = None) -> list[Hit]:
        self.widths.append(top_k)
        return [Hit(chunk, score, {"doc_id": doc, "chunk_id": chunk, "text": f"about {doc}",
                                   "title": doc, "source_version": "v1", "acl": ["public"]},
                    text_score=score)
                for score, doc, chunk in self.chunks[:top_k]]


def _searched_docs() -> tuple[list[str], PagedStore]:
    store = PagedStore()
    adapters = InlineAdapters(SeededProvider(random.Random(1)), HashEmbedder(), store)
    ledger = MemoryLedger()
    job_id = ledger.add_job(QUESTION, collection="docs", acl=["public"],
                            meta={"route": "simple"})
    InlineDispatcher(Runner(ledger, adapters, config())).run(job_id)
    job = ledger.jobs[job_id]
    (request,) = job.requests.values()
    return [e.item.doc_id for e in job.evidence if e.request_id == request.id], store


def test_the_whole_question_search_reaches_every_document_past_a_long_page():
    docs, store = _searched_docs()
    assert len(docs) == config().context_max_chunks == 8
    assert set(docs) == {doc for doc, _, _ in PAGES}
    assert store.widths and store.widths[0] > 8  # fetched wider, kept eight


def test_the_long_page_fills_the_room_left_in_the_engines_order():
    docs, _ = _searched_docs()
    assert docs.count("key-rotation-guide") == 4
    assert docs[0] == "key-rotation-guide"


def test_a_hybrid_search_asks_the_engine_for_its_own_width():
    store = PagedStore()
    adapters = InlineAdapters(SeededProvider(random.Random(1)), HashEmbedder(), store)
    ledger = MemoryLedger()
    job_id = ledger.add_job(QUESTION, collection="docs", acl=["public"],
                            meta={"route": "simple"})
    hybrid = SearchRequest(SearchMode.HYBRID, SearchFusion.DBSF)
    InlineDispatcher(Runner(ledger, adapters, config(search=hybrid))).run(job_id)
    assert store.widths == [8]
