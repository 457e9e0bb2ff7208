"""Title vectors, measured: does fusing a per-chunk title vector into search find documents by
their title, without costing question retrieval?

In-process, no Celery. For each dataset folder (``corpus.jsonl`` + ``questions.jsonl`` whose
``gold_doc_ids`` name documents) it chunks every document as ingest does (180 words, 40 overlap),
embeds with MiniLM (vectors cached under /tmp between runs, see embed_cache.py), and writes two
embedded stores in a temporary folder:

- ``text only``: points without a title vector, so the title slot holds the text vector and
  the fused score is the text score: search exactly as before title vectors;
- ``title``: points as ``tasks.ingest._write_chunks`` writes them, searched with each fusion
  rule asked for (``max(text, title - margin)`` for every ``--margins`` value).

It reports, per store and rule: title search over all documents (see title_scores.py; top_k is
the largest group of documents sharing a title) and question retrieval at top_k=8 (mean
gold-document recall, and the all-gold rate: every gold document among the hits).

Usage:
    python bench/title_vector.py ../shared/data/musique_train ../shared/data/hotpotqa_train \\
        ../shared/data/anthropic_docs [--margins 0,0.05,0.1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from embed_cache import CachedEmbeddings
from title_scores import score_title_search, title_top_k

from ragq.embedding.minilm import MiniLmEmbedder
from ragq.orchestration.chunking import chunk_document, chunk_point_id, embedding_text
from ragq.schemas.document import Chunk, Document
from ragq.tasks.ingest import _write_chunks
from ragq.vectorstore import EdgeVectorStore, TitleFusion, VectorPoint, VectorStore

CHUNK_WORDS = 180
CHUNK_OVERLAP = 40
QUESTION_TOP_K = 8
COLLECTION = "bench"
BATCH = 64


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def chunks_of(docs: Sequence[dict[str, Any]]) -> list[Chunk]:
    return [
        chunk
        for d in docs
        for chunk in chunk_document(
            Document(**d), collection=COLLECTION, size_words=CHUNK_WORDS,
            overlap_words=CHUNK_OVERLAP,
        )
    ]


def write_text_only(store: VectorStore, embedder: CachedEmbeddings, chunks: list[Chunk]) -> None:
    """The points ingest wrote before title vectors: the chunk vector alone."""
    for start in range(0, len(chunks), BATCH):
        part = chunks[start : start + BATCH]
        vectors = embedder.embed([embedding_text(c) for c in part])
        store.upsert(COLLECTION, [
            VectorPoint(chunk_point_id(COLLECTION, c.doc_id, c.chunk_index), v, c.payload())
            for c, v in zip(part, vectors, strict=True)
        ])


def build(root: Path, embedder: CachedEmbeddings, chunks: list[Chunk], titled: bool) -> None:
    with EdgeVectorStore(root) as store:
        store.ensure_collection(COLLECTION, embedder.dim)
        if titled:
            _write_chunks(store, embedder, COLLECTION, chunks, BATCH)
        else:
            write_text_only(store, embedder, chunks)


def search_all(
    store: VectorStore, vectors: list[list[float]], top_k: int
) -> list[list[dict[str, Any]]]:
    return [[h.payload for h in store.search(COLLECTION, v, top_k)] for v in vectors]


def question_scores(
    questions: Sequence[dict[str, Any]], results: Sequence[Sequence[dict[str, Any]]]
) -> dict[str, float]:
    """Mean share of gold documents among the hits, and share of questions with all of them."""
    recall = all_gold = 0.0
    for question, hits in zip(questions, results, strict=True):
        gold = set(question["gold_doc_ids"])
        found = gold & {h["doc_id"] for h in hits}
        recall += len(found) / len(gold)
        all_gold += found == gold
    n = len(questions)
    return {"gold_recall": recall / n, "all_gold": all_gold / n}


def measure(folder: Path, embedder: CachedEmbeddings, margins: list[float]) -> dict[str, Any]:
    docs = read_jsonl(folder / "corpus.jsonl")
    questions = [q for q in read_jsonl(folder / "questions.jsonl") if q.get("gold_doc_ids")]
    chunks = chunks_of(docs)
    title_vectors = embedder.embed([d["title"] for d in docs], f"{folder.name} titles")
    question_vectors = embedder.embed([q["question"] for q in questions], f"{folder.name} qs")
    top_k = title_top_k(docs)
    report: dict[str, Any] = {
        "documents": len(docs), "chunks": len(chunks), "questions": len(questions),
        "title_top_k": top_k,
    }
    variants = [("text only", False, TitleFusion())] + [
        (f"title, margin {m:g}", True, TitleFusion(title_margin=m)) for m in margins
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for titled in (False, True):
            started = time.perf_counter()
            build(Path(tmp) / str(titled), embedder, chunks, titled)
            report[f"build_s ({'title' if titled else 'text only'})"] = round(
                time.perf_counter() - started, 1)
        for name, titled, fusion in variants:
            with EdgeVectorStore(Path(tmp) / str(titled), fusion=fusion) as store:
                started = time.perf_counter()
                titles = score_title_search(docs, search_all(store, title_vectors, top_k))
                asked = question_scores(
                    questions, search_all(store, question_vectors, QUESTION_TOP_K))
                elapsed = time.perf_counter() - started
            report[name] = {
                **{k: round(v, 4) for k, v in {**titles, **asked}.items()},
                "search_ms": round(1000 * elapsed / (len(docs) + len(questions)), 2),
            }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path, help="folders with corpus.jsonl")
    parser.add_argument("--margins", default="0", help="title margins to try, comma-separated")
    args = parser.parse_args()
    margins = [float(m) for m in args.margins.split(",")]
    embedder = CachedEmbeddings(MiniLmEmbedder())
    print(json.dumps(
        {folder.name: measure(folder, embedder, margins) for folder in args.datasets}, indent=2
    ))


if __name__ == "__main__":
    main()
