"""The question a search also scores (``question_score``), on every adapter: the cosine of the
question with the chunk's stored text vector, what the offline verifier would otherwise embed
the titled text again to get; it changes neither the hits nor their order."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ragq.embedding.minilm import MiniLmEmbedder
from ragq.orchestration.chunking import chunk_point_id
from ragq.orchestration.sparse_terms import document_terms, query_terms
from ragq.providers.offline.similarity import Similarity
from ragq.schemas.search import SearchFusion, SearchMode, SearchRequest
from ragq.vectorstore import VectorPoint, VectorStore

CHUNKS = {
    "Finlandia": "Finlandia is a tone poem by the Finnish composer Jean Sibelius, written in "
                 "1899 as a protest against Russian censorship.",
    "Jean Sibelius": "Sibelius was born in Hämeenlinna in 1865 and studied in Helsinki, "
                     "Berlin and Vienna.",
    "Refund policy": "Refunds are issued within 14 days of the request. Annual plans are "
                     "refunded pro rata.",
    "Karelia Suite": "The Karelia Suite was written in 1893 for a pageant in Viipuri.",
}
QUERY = "Finlandia composer"
QUESTION = "Where was the composer of Finlandia born?"
MODES = [SearchRequest(), SearchRequest(SearchMode.SPARSE),
         SearchRequest(SearchMode.HYBRID, SearchFusion.RRF),
         SearchRequest(SearchMode.HYBRID, SearchFusion.DBSF)]


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    return MiniLmEmbedder(threads=1)


def titled(title: str) -> str:
    return f"{title}\n{CHUNKS[title]}"


@pytest.fixture
def corpus(store: VectorStore, collection: str, embedder: MiniLmEmbedder) -> str:
    """The chunks stored as ingest stores them: the text vector embeds the titled text."""
    titles = list(CHUNKS)
    vectors = embedder.embed([titled(t) for t in titles])
    title_vectors = embedder.embed(titles)
    store.ensure_collection(collection, embedder.dim)
    store.upsert(collection, [
        VectorPoint(chunk_point_id(collection, t, 0), v,
                    {"doc_id": t, "chunk_id": f"{t}:0", "title": t, "text": CHUNKS[t],
                     "source_version": "v1", "acl": ["public"]},
                    title_vector=tv, terms=document_terms(titled(t)))
        for t, v, tv in zip(titles, vectors, title_vectors, strict=True)])
    return collection


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.label)
def test_the_question_score_is_the_embedders_cosine_of_the_question_with_the_titled_text(
        store, corpus, embedder, mode):
    query, question = embedder.embed([QUERY, QUESTION])
    request = replace(mode, terms=query_terms(QUERY))
    hits = store.search(corpus, query, 4, None, request, question=question)
    assert hits
    expected = Similarity(embedder).scores(QUESTION, [titled(h.payload["doc_id"]) for h in hits])
    assert [h.question_score for h in hits] == pytest.approx(expected, abs=1e-4)
    # the question is not the query: its cosines are not the text scores
    assert [h.question_score for h in hits] != pytest.approx([h.text_score for h in hits],
                                                              abs=1e-3)


def test_scoring_a_question_changes_neither_the_hits_nor_their_order(store, corpus, embedder):
    query, question = embedder.embed([QUERY, QUESTION])
    plain = store.search(corpus, query, 3)
    scored = store.search(corpus, query, 3, question=question)
    assert [(h.id, h.score, h.text_score) for h in scored] == \
        [(h.id, h.score, h.text_score) for h in plain]
    assert all(h.question_score is None for h in plain)
    assert all(h.question_score is not None for h in scored)


def test_a_question_that_is_the_query_scores_as_the_text(store, corpus, embedder):
    (query,) = embedder.embed([QUESTION])
    hits = store.search(corpus, query, 4, question=list(query))
    assert [h.question_score for h in hits] == [h.text_score for h in hits]
