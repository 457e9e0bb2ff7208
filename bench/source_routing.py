"""Measure jobs over several sources, in process (offline provider, MiniLM, embedded vector
store, in-memory ledger, no broker): a dataset's corpus split into two sources by a rule on
document ids, each with a description, against the same corpus as one collection.

For every question, two jobs: ``routed`` may search both sources (each sub-query goes where
the source router sends it), ``single`` searches one collection of the whole corpus (what a
job does without sources). Prints gold-document recall in the final context, the all-gold
rate, retrieval calls per question, and for ``routed``: how many sub-queries went to one source
or to both, and how often the chosen sources held a gold document of the question.

Usage:
    python bench/source_routing.py /work/shared/data/anthropic_docs [--limit N] [--json]

Questions are read as ``ragq eval`` reads them (the one ticket parser), and both jobs of a
question run with its ACL (its ``acl``, or ``["public"]`` as for a ticket submitted without an
API key). The split (``SPLIT``) is by document id: ``/en/api/`` pages are the API reference,
the rest the guides; the descriptions say what each holds in general words, not the questions'.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.embed_cache

from ragq.embedding.minilm import MiniLmEmbedder
from ragq.evaluation.questions import load_questions
from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.chunking import chunk_document, chunk_point_id, embedding_text
from ragq.providers.offline import OfflineProvider
from ragq.schemas.document import Document
from ragq.settings import build_settings
from ragq.submission.access import Caller
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.base import VectorPoint
from ragq.vectorstore.edge import EdgeVectorStore
from ragq.workers.wiring import build_flow_config, build_token_counter

API, GUIDES, WHOLE = "api-reference", "guides", "corpus"
DESCRIPTIONS = {
    API: "API reference: HTTP endpoints, authentication and API keys, request headers and "
         "parameters, responses, streaming, rate limits, errors, client SDKs, IP addresses, "
         "versions.",
    GUIDES: "Guides: what Claude is and how to use it, models, prompt engineering, use cases, "
            "building, testing and evaluating applications, embeddings, tool use, release "
            "notes.",
}
CACHE = Path("/tmp/ragq_source_routing")


def source_of(doc_id: str) -> str:
    """The rule that splits the corpus: API reference pages by their URL."""
    return API if "/en/api/" in doc_id else GUIDES


def build_store(corpus: Path, embedder: MiniLmEmbedder, root: Path) -> None:
    """Each source a collection of its documents, and the whole corpus as one more."""
    from bench.embed_cache import CachedEmbeddings

    docs = [Document(**json.loads(x)) for x in corpus.read_text().splitlines() if x.strip()]
    cache = CachedEmbeddings(embedder, root=CACHE / "embeddings")
    with EdgeVectorStore(root) as store:
        for collection, members in ((API, [d for d in docs if source_of(d.id) == API]),
                                    (GUIDES, [d for d in docs if source_of(d.id) == GUIDES]),
                                    (WHOLE, docs)):
            chunks = [c for d in members for c in chunk_document(
                d, collection=collection, size_words=180, overlap_words=40)]
            vectors = cache.embed([embedding_text(c) for c in chunks], label=corpus.parent.name)
            store.ensure_collection(collection, embedder.dim)
            for start in range(0, len(chunks), 256):
                store.upsert(collection, [
                    VectorPoint(chunk_point_id(collection, c.doc_id, c.chunk_index), v,
                                c.payload())
                    for c, v in zip(chunks[start:start + 256], vectors[start:start + 256],
                                    strict=True)])


def run(dataset: Path, limit: int | None) -> dict[str, Any]:
    settings = build_settings(cache_enabled=False)
    embedder = MiniLmEmbedder()
    root = CACHE / dataset.name
    if not (root / "BUILT").exists():
        build_store(dataset / "corpus.jsonl", embedder, root)
        (root / "BUILT").write_text("ok")
    questions = load_questions(dataset, limit, settings=settings)
    figures: dict[str, Counter[str]] = {"routed": Counter(), "single": Counter()}
    with EdgeVectorStore(root) as store:
        ledger = MemoryLedger()
        ledger.sources.update(DESCRIPTIONS)
        config = build_flow_config(settings, build_token_counter(settings))
        runner = Runner(ledger, InlineAdapters(OfflineProvider(embedder), embedder, store),
                        config)
        for q in questions:
            gold = set(q.gold_doc_ids)
            gold_sources = {source_of(d) for d in gold}
            for flow, meta, collection in (("routed", {"sources": [API, GUIDES]}, API),
                                           ("single", {}, WHOLE)):
                job_id = ledger.add_job(q.question, collection=collection, meta=meta,
                                        acl=q.acl(Caller("bench")))
                InlineDispatcher(runner).run(job_id)
                job = ledger.jobs[job_id]
                result = job.result or {}
                context = set(result.get("context_doc_ids", []))
                tally = figures[flow]
                tally["questions"] += 1
                tally["gold"] += len(gold)
                tally["gold_in_context"] += len(gold & context)
                tally["all_gold"] += gold <= context
                tally["retrieval_calls"] += (result.get("usage") or {}).get("retrieval_calls", 0)
                for route in job.source_routes.values():
                    chosen = set(route.choice.sources)
                    tally["sub_queries_routed"] += 1
                    tally[f"to_{len(chosen)}_sources"] += 1
                    tally["to_a_gold_source"] += bool(chosen & gold_sources)
                tally["gold_in_both_sources"] += len(gold_sources) > 1 and flow == "routed"
    return {flow: _summary(t) for flow, t in figures.items()}


def _summary(t: Counter[str]) -> dict[str, float]:
    n = max(1, t["questions"])
    out = {"questions": t["questions"], "context_recall": t["gold_in_context"] / max(1, t["gold"]),
           "all_gold_rate": t["all_gold"] / n, "retrieval_calls_per_q": t["retrieval_calls"] / n}
    if t["sub_queries_routed"]:
        routed = t["sub_queries_routed"]
        out |= {"sub_queries_routed": routed, "to_one_source": t["to_1_sources"] / routed,
                "to_both_sources": t["to_2_sources"] / routed,
                "to_a_gold_source": t["to_a_gold_source"] / routed,
                "questions_with_gold_in_both": t["gold_in_both_sources"]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.dataset, args.limit)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for flow, figures in report.items():
        shown = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                          for k, v in figures.items())
        print(f"{flow}: {shown}")


if __name__ == "__main__":
    main()
