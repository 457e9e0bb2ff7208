"""Measure the agentic flow with the offline provider, in process: the real decisions
(``orchestration.flow``), the real step runner, an in-memory ledger, no broker.

Ingests a dataset's corpus.jsonl once into an EdgeVectorStore cached under /tmp (MiniLM vectors
of ``embedding_text``, chunks of 180 words with 40 overlap), then runs every question twice:

- agentic: the job flow exactly as the workers run it (``ragq.tasks.inline``), with the
  settings' defaults (``RAGQ_*`` variables apply, caches off so no question helps another);
- baseline: one retrieval of the question, top-k with k = the number of chunks the agentic
  context ended with: the same number of chunks in both final contexts.

Questions are read as ``ragq eval`` reads them (the one ticket parser): each job keeps its
ticket's route, budget and metadata, and both sides search with the question's ACL (its
``acl``, or ``["public"]`` as for a ticket submitted without an API key). A ticket's
``sources`` do not apply here: the store holds one collection.

Usage:
    python bench/offline_flow.py /work/shared/data/hotpotqa_train [more dataset dirs]
        [--limit N] [--verbose] [--json]

The first run of a dataset embeds its corpus (about a minute on two cores); later runs reuse
the store under /tmp/ragq_offline_flow (delete it to start over).

Prints, per route and overall: gold-doc recall in the evidence and in the final context,
the all-gold rate (every gold document in the final context), retrieval calls per question,
and how often the gold answer string appears in the extractive answer (a rough answer figure:
the offline synthesizer quotes sentences, it does not write short answers).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.embed_cache

from ragq.embedding.minilm import MiniLmEmbedder
from ragq.evaluation.questions import EvalQuestion, load_questions
from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.chunking import chunk_document, chunk_point_id, embedding_text
from ragq.orchestration.sparse_terms import document_terms, query_terms
from ragq.orchestration.text import words
from ragq.providers.offline import OfflineProvider
from ragq.schemas.document import Document
from ragq.schemas.metadata import MetadataSchema
from ragq.schemas.search import SearchRequest
from ragq.settings import build_settings
from ragq.submission.access import Caller
from ragq.submission.batches import job_metadata
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.base import SearchFilter, VectorPoint
from ragq.vectorstore.edge import EdgeVectorStore
from ragq.workers.wiring import build_flow_config, build_token_counter

CHUNK_WORDS = 180
CHUNK_OVERLAP = 40
COLLECTION = "corpus"
CACHE_ROOT = Path("/tmp/ragq_offline_flow")
CLI_CALLER = Caller("bench")
"""Who submits here: a local submitter with no API key, so the one default-ACL rule applies."""


def store_dir(corpus: Path) -> Path:
    """The cache directory of a corpus: changes when the corpus or the chunking changes."""
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()[:12]
    return CACHE_ROOT / f"{corpus.parent.name}-{digest}-{CHUNK_WORDS}w{CHUNK_OVERLAP}-terms"


def ingest(corpus: Path, embedder: Any, store_cls: Any,
           schema: MetadataSchema | None = None) -> Path:
    """Chunk, embed and store ``corpus`` as ingest does (text vectors of ``embedding_text``,
    title vectors of the document titles, sparse terms of ``embedding_text``) unless its cache
    is complete; returns the store dir. Vectors are cached on disk too (bench/embed_cache.py),
    so a layout change re-embeds nothing. ``schema``: the metadata fields the chunks store and
    the store indexes (bench/metadata_filters.py), as ingest does for a source with one."""
    from bench.embed_cache import CachedEmbeddings

    root = store_dir(corpus)
    done = root / "INGESTED"
    if done.exists():
        return root
    lines = corpus.read_text().splitlines()
    docs = [Document(**json.loads(line)) for line in lines if line.strip()]
    chunks = [c for d in docs for c in chunk_document(
        d, collection=COLLECTION, size_words=CHUNK_WORDS, overlap_words=CHUNK_OVERLAP,
        schema=schema)]
    cache = CachedEmbeddings(embedder, root=CACHE_ROOT / "embeddings")
    vectors = cache.embed([embedding_text(c) for c in chunks], label=corpus.parent.name)
    titles = sorted({c.title for c in chunks if c.title})
    title_vectors = dict(zip(titles, cache.embed(titles, label="titles"), strict=True))
    store = store_cls(root)
    try:
        store.ensure_collection(COLLECTION, embedder.dim)
        if schema is not None:
            store.index_fields(COLLECTION, {f.name: f.type for f in schema.fields})
        for start in range(0, len(chunks), 256):
            part = range(start, min(start + 256, len(chunks)))
            store.upsert(COLLECTION, [
                VectorPoint(chunk_point_id(COLLECTION, chunks[i].doc_id, chunks[i].chunk_index),
                            vectors[i], chunks[i].payload(),
                            title_vector=title_vectors.get(chunks[i].title),
                            terms=document_terms(embedding_text(chunks[i])))
                for i in part])
    finally:
        store.close()
    done.write_text(str(len(chunks)))
    return root


class Retriever:
    """Embeds queries and searches the store, for the single-shot baseline."""

    def __init__(self, store: Any, embedder: Any, search: SearchRequest):
        self.store, self.embedder, self.search = store, embedder, search

    def top_docs(self, query: str, top_k: int, acl: tuple[str, ...]) -> set[str]:
        """The documents of the ``top_k`` chunks ``acl`` may read (the job's own ACL)."""
        vector = self.embedder.embed([query])[0]
        mode = replace(self.search, terms=query_terms(query))
        return {h.payload["doc_id"] for h in self.store.search(
            COLLECTION, vector, top_k, SearchFilter(acl=acl), mode)}


@dataclass
class Outcome:
    """What one question's job left in the ledger."""

    route: str
    evidence_docs: set[str]
    context_docs: set[str]
    context_chunks: int
    calls: int
    model_calls: int = 0
    roles: tuple[str, ...] = ()  # the model calls' roles, in the order they were recorded
    answer: str = ""
    insufficient: bool = False
    escalated: bool = False
    confidence: float | None = None  # the last verifier verdict's, if the job was verified
    reviewable: bool = False  # ended completed or insufficient_evidence (before any review)


def agentic(ledger: MemoryLedger, dispatcher: InlineDispatcher, question: EvalQuestion
            ) -> Outcome:
    """One job of ``question`` (its ticket: ACL, route, budget, metadata) through the real
    flow, read back from the ledger."""
    job_id = ledger.add_job(question.question, collection=COLLECTION,
                            acl=question.acl(CLI_CALLER), meta=job_metadata(question.ticket),
                            custom_id=question.custom_id)
    dispatcher.run(job_id)
    job = ledger.jobs[job_id]
    result = job.result or {}
    usage = result.get("usage", {})
    review = result.get("review")
    drafted = review["outcome"] if review else result.get("status")
    verdicts = sorted(job.verifications.values(), key=lambda v: v.round)
    roles = tuple(role for role, *_ in job.model_calls.values())
    return Outcome(job.route or "?", set(result.get("evidence_doc_ids", [])),
                   set(result.get("context_doc_ids", [])), usage.get("context_chunks", 0),
                   usage.get("retrieval_calls", 0), len(roles), roles, result.get("answer") or "",
                   drafted == "insufficient_evidence", review is not None,
                   verdicts[-1].confidence if verdicts else None,
                   drafted in ("completed", "insufficient_evidence"))


def run(dataset: Path, limit: int | None, verbose: bool, **overrides: Any) -> dict[str, Any]:
    """Ingest (cached) and run every question of ``dataset`` both ways; returns the figures.
    ``overrides`` are settings (``search_mode``, ``budget_profiles``...) over the defaults."""
    settings = build_settings(cache_enabled=False, **overrides)
    embedder = MiniLmEmbedder()
    root = ingest(dataset / "corpus.jsonl", embedder, EdgeVectorStore)
    questions = load_questions(dataset, limit, settings=settings)
    rows: list[dict[str, Any]] = []
    with EdgeVectorStore(root) as store:
        ledger = MemoryLedger()
        adapters = InlineAdapters(OfflineProvider(embedder), embedder, store)
        config = build_flow_config(settings, build_token_counter(settings))
        dispatcher = InlineDispatcher(Runner(ledger, adapters, config))
        retriever = Retriever(store, embedder, config.search)
        for q in questions:
            gold = set(q.gold_doc_ids)
            out = agentic(ledger, dispatcher, q)
            base = retriever.top_docs(q.question, max(out.context_chunks, 1), q.acl(CLI_CALLER))
            rows.append(_row(q, gold, out, base))
            if verbose:
                lost = sorted((gold & out.evidence_docs) - out.context_docs)
                print(f"[{rows[-1]['all_gold']:d}/{rows[-1]['base_all_gold']:d}] {out.route} "
                      f"lost={lost} calls={','.join(out.roles)} {q.question}", file=sys.stderr)
    return summarize(rows)


def _answer_found(q: EvalQuestion, answer: str) -> bool:
    """Whether the gold answer (or an alias) appears in the extractive answer, normalised."""
    golds = q.answers
    text = " ".join(words(answer))
    return any(g and f" {' '.join(words(g))} " in f" {text} " for g in golds)


def _row(q: EvalQuestion, gold: set[str], out: Outcome, base: set[str]) -> dict[str, Any]:
    return {
        "answer_found": _answer_found(q, out.answer), "insufficient": out.insufficient,
        "route": out.route, "calls": out.calls, "chunks": out.context_chunks,
        "model_calls": out.model_calls,
        **{f"role_{role}": out.roles.count(role) for role in set(out.roles)},
        "ev_recall": len(gold & out.evidence_docs) / len(gold),
        "ctx_recall": len(gold & out.context_docs) / len(gold),
        "all_gold": gold <= out.context_docs, "ev_all_gold": gold <= out.evidence_docs,
        "base_recall": len(gold & base) / len(gold), "base_all_gold": gold <= base,
        "escalated": out.escalated,
        **{f"review_below_{t}": out.escalated or (out.reviewable and out.confidence is not None
                                                  and out.confidence < t)
           for t in REVIEW_THRESHOLDS},
    }


def _figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    def mean(key: str) -> float:
        return round(statistics.fmean(float(r[key]) for r in rows), 3)

    return {"n": len(rows), "evidence_recall": mean("ev_recall"),
            "context_recall": mean("ctx_recall"), "all_gold": mean("all_gold"),
            "all_gold_in_evidence": mean("ev_all_gold"),
            "baseline_recall": mean("base_recall"), "baseline_all_gold": mean("base_all_gold"),
            "retrieval_calls": mean("calls"), "context_chunks": mean("chunks"),
            "model_calls": mean("model_calls"),
            **{key: round(sum(r.get(key, 0) for r in rows) / len(rows), 2)
               for key in sorted({k for r in rows for k in r if k.startswith("role_")})},
            "answer_in_extract": mean("answer_found"), "insufficient": mean("insufficient"),
            "escalated": mean("escalated"),
            **{f"escalated_if_confidence_below_{t}": mean(f"review_below_{t}")
               for t in REVIEW_THRESHOLDS}}


REVIEW_THRESHOLDS = (0.3, 0.5, 0.7)
"""Verifier-confidence thresholds whose share of escalated jobs the figures also report (what
``RAGQ_REVIEW_CONFIDENCE_THRESHOLD`` would add to the settings in force)."""


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures per route and overall."""
    by_route: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_route[row["route"]].append(row)
    return {"overall": _figures(rows), **{k: _figures(v) for k, v in sorted(by_route.items())}}


def table(name: str, figures: dict[str, Any]) -> str:
    """The figures as a small text table, one line per route."""
    lines = [f"{name}: route      n  all-gold agentic/baseline/in evidence  ctx recall "
             "agentic/baseline  evidence recall  retrieval calls  model calls  context chunks  "
             "answer in extract"]
    for route, f in figures.items():
        lines.append(
            f"  {route:10} {f['n']:4}  {f['all_gold']:.2f} / {f['baseline_all_gold']:.2f} / "
            f"{f['all_gold_in_evidence']:.2f}{'':15}"
            f"{f['context_recall']:.3f} / {f['baseline_recall']:.3f}{'':12}"
            f"{f['evidence_recall']:.3f}{'':11}{f['retrieval_calls']:.2f}{'':13}"
            f"{f['model_calls']:.2f}{'':9}"
            f"{f['context_chunks']:.1f}{'':14}{f['answer_in_extract']:.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--verbose", action="store_true", help="trace every question on stderr")
    parser.add_argument("--json", action="store_true", help="one JSON line per dataset")
    args = parser.parse_args()
    for dataset in args.datasets:
        started = time.perf_counter()
        figures = run(dataset, args.limit, args.verbose)
        if args.json:
            print(json.dumps({"dataset": dataset.name,
                              "seconds": round(time.perf_counter() - started, 1), **figures}))
        else:
            print(table(f"{dataset.name} ({time.perf_counter() - started:.0f}s)", figures))


if __name__ == "__main__":
    main()
