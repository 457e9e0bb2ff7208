"""Tune and measure the agentic flow with the offline provider, in process (no Celery).

Ingests a dataset's corpus.jsonl once into an EdgeVectorStore cached under /tmp (MiniLM vectors
of ``embedding_text``, chunks of 180 words with 40 overlap), then runs every question twice:

- agentic: route -> simple: one retrieval | plan -> validate -> layers, with substitution of
  findings -> per sub-query top-5 retrieval, sufficiency check and up to 2 rewrites -> find ->
  (a plan of several parts also searches the question itself, as one more group) -> verify /
  follow-ups until a stop rule fires (each round's follow-ups form one group) -> lexical
  rerank with the question's words (orchestration.context.rerank_lexical) ->
  assemble_context under ``--max-tokens`` (round-robin over the groups) -> synthesize;
- baseline: one retrieval of the question, top-k with k = the number of chunks the agentic
  context ended with. Same number of chunks in both final contexts: the fair comparison (the
  agentic context is also cut by the token budget; the baseline gets as many chunks, whatever
  their length). A simple question takes the same single retrieval in both, so its figures
  match by construction.

Usage:
    python bench/offline_flow.py /work/shared/data/hotpotqa_train [more dataset dirs]
        [--max-tokens 1000] [--lexical-weight 0.4] [--limit N] [--verbose] [--json]

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragq.orchestration.chunking import chunk_document, chunk_point_id, embedding_text
from ragq.orchestration.context import LEXICAL_WEIGHT, assemble_context, rerank_lexical
from ragq.orchestration.plan import layers, validate_plan
from ragq.orchestration.routing import budget_for, path_for
from ragq.orchestration.stop_rules import VerifyRound, decide_stop
from ragq.orchestration.substitution import substitute
from ragq.orchestration.text import words
from ragq.schemas.document import Document
from ragq.schemas.flow import Evidence
from ragq.vectorstore.base import VectorPoint

CHUNK_WORDS = 180
CHUNK_OVERLAP = 40
COLLECTION = "corpus"
CACHE_ROOT = Path("/tmp/ragq_offline_flow")


def store_dir(corpus: Path) -> Path:
    """The cache directory of a corpus: changes when the corpus or the chunking changes."""
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()[:12]
    return CACHE_ROOT / f"{corpus.parent.name}-{digest}-{CHUNK_WORDS}w{CHUNK_OVERLAP}-titled"


def ingest(corpus: Path, embedder: Any, store_cls: Any) -> Path:
    """Chunk, embed and store ``corpus`` as ingest does (text vectors of ``embedding_text``,
    title vectors of the document titles) unless its cache is complete; returns the store dir.
    Vectors are cached on disk too (bench/embed_cache.py), so a layout change re-embeds
    nothing."""
    from bench.embed_cache import CachedEmbeddings

    root = store_dir(corpus)
    done = root / "INGESTED"
    if done.exists():
        return root
    lines = corpus.read_text().splitlines()
    docs = [Document(**json.loads(line)) for line in lines if line.strip()]
    chunks = [c for d in docs for c in chunk_document(
        d, collection=COLLECTION, size_words=CHUNK_WORDS, overlap_words=CHUNK_OVERLAP)]
    cache = CachedEmbeddings(embedder, root=CACHE_ROOT / "embeddings")
    vectors = cache.embed([embedding_text(c) for c in chunks], label=corpus.parent.name)
    titles = sorted({c.title for c in chunks if c.title})
    title_vectors = dict(zip(titles, cache.embed(titles, label="titles"), strict=True))
    store = store_cls(root)
    try:
        store.ensure_collection(COLLECTION, embedder.dim)
        for start in range(0, len(chunks), 256):
            part = range(start, min(start + 256, len(chunks)))
            store.upsert(COLLECTION, [
                VectorPoint(chunk_point_id(COLLECTION, chunks[i].doc_id, chunks[i].chunk_index),
                            vectors[i], chunks[i].payload(),
                            title_vector=title_vectors.get(chunks[i].title))
                for i in part])
    finally:
        store.close()
    done.write_text(str(len(chunks)))
    return root


TOP_K = 5
WITH_QUESTION = True  # also search the question itself when the plan has several parts
SIMPLE_TOP_K = 20  # candidates of the one retrieval of a simple question


class Retriever:
    """Embeds queries (cached) and searches the store; counts the calls."""

    def __init__(self, store: Any, embedder: Any):
        self.store, self.embedder = store, embedder
        self.calls = 0
        self._vectors: dict[str, list[float]] = {}

    def search(self, query: str, top_k: int, index: int | None) -> list[Evidence]:
        self.calls += 1
        if query not in self._vectors:
            self._vectors[query] = self.embedder.embed([query])[0]
        hits = self.store.search(COLLECTION, self._vectors[query], top_k)
        return [Evidence(chunk_id=h.payload["chunk_id"], doc_id=h.payload["doc_id"],
                         title=h.payload.get("title", ""), text=h.payload["text"],
                         score=h.score, sub_query_index=index) for h in hits]


@dataclass
class Outcome:
    """What one question's run produced."""

    route: str
    evidence_docs: set[str]
    context_docs: set[str]
    context_chunks: int
    calls: int
    trace: list[str] = field(default_factory=list)
    answer: str = ""
    insufficient: bool = False


def _add(pool: list[Evidence], found: list[Evidence]) -> int:
    """Add evidence not yet in ``pool`` (by chunk); returns how many were new."""
    seen = {e.chunk_id for e in pool}
    fresh = [e for e in found if e.chunk_id not in seen]
    pool.extend(fresh)
    return len(fresh)


def retrieve_sub_query(provider: Any, retriever: Retriever, text: str, index: int,
                       attempts: int, trace: list[str]) -> list[Evidence]:
    """Search, check sufficiency, rewrite while insufficient (at most ``attempts`` searches)."""
    found = retriever.search(text, TOP_K, index)
    tried = [text]
    for attempt in range(1, attempts):
        verdict, _ = provider.check_sufficiency(text, found)
        trace.append(f"    check {verdict.sufficient} {verdict.reason}")
        if verdict.sufficient:
            break
        rewrite, _ = provider.rewrite(text, found, attempt=attempt, previous=tried)
        tried.append(rewrite.text)
        trace.append(f"    rewrite {rewrite.text!r}")
        _add(found, retriever.search(rewrite.text, TOP_K, index))
    return found


def agentic(provider: Any, retriever: Retriever, question: str, max_tokens: int,
            lexical_weight: float = LEXICAL_WEIGHT) -> Outcome:
    """The flow of SPEC "The life of a job", in process. Planned evidence is reranked with the
    question's wording (orchestration.context.rerank_lexical) before context assembly."""
    start_calls = retriever.calls
    decision, _ = provider.route(question)
    path = path_for(decision.question_class)
    budget = budget_for(path)
    trace = [f"route {path.value}: {decision.reason}"]
    strategy, findings = "single", list[str]()
    if budget.max_sub_queries == 1 and budget.max_retrieval_attempts == 1:
        pool = retriever.search(question, SIMPLE_TOP_K, 0)
    else:
        pool, strategy, findings = run_plan(provider, retriever, question, budget, trace)
        pool = rerank_lexical(pool, question, weight=lexical_weight)
    context = assemble_context(pool, max_tokens=max_tokens)
    trace.append("  pool " + "; ".join(f"{e.sub_query_index}:{e.doc_id[:18]}:{e.score:.2f}"
                                       for e in pool))
    draft, _ = provider.synthesize(question, context, strategy=strategy, findings=findings)
    trace.append(f"  answer {draft.answer[:160]!r}")
    return Outcome(path.value, {e.doc_id for e in pool}, {e.doc_id for e in context},
                   len(context), retriever.calls - start_calls, trace, draft.answer,
                   draft.insufficient)


def run_plan(provider: Any, retriever: Retriever, question: str, budget: Any,
             trace: list[str]) -> tuple[list[Evidence], str, list[str]]:
    """Plan, validate, run the layers with substitution, then verify and follow up until a
    stop rule fires; returns the evidence pool, the strategy and the findings."""
    plan, _ = provider.plan(question, max_sub_queries=budget.max_sub_queries)
    valid = validate_plan(plan, question=question, max_sub_queries=budget.max_sub_queries)
    trace.append(f"plan {valid.strategy.value} repairs={list(valid.repairs)}")
    pool: list[Evidence] = []
    findings: dict[int, str | None] = {}
    resolved: dict[int, str] = {}
    for layer in layers(valid):
        for index in layer:
            text = substitute(valid.sub_queries[index], findings, dependency_texts=resolved).text
            resolved[index] = text
            found = retrieve_sub_query(provider, retriever, text, index,
                                       budget.max_retrieval_attempts, trace)
            finding, _ = provider.find(text, found)
            findings[index] = finding.text or None
            trace.append(f"  sq{index} {text!r} -> {finding.text!r}")
            _add(pool, found)
    if WITH_QUESTION and len(valid.sub_queries) > 1:
        _add(pool, retriever.search(question, TOP_K, -1))
    history: list[VerifyRound] = []
    asked = set(resolved.values())
    new = len(pool)
    next_index = len(valid.sub_queries)
    for _ in range(budget.max_verify_rounds):
        verdict, _ = provider.verify(question, pool, findings=[f or "" for f in findings.values()])
        history.append(VerifyRound(verdict.sufficient, verdict.confidence, new))
        stop = decide_stop(history, max_rounds=budget.max_verify_rounds)
        trace.append(f"  verify {verdict.reason} -> {stop.reason}")
        if stop.stop or not verdict.follow_up_queries:
            break
        new = 0
        for query in verdict.follow_up_queries:
            if query in asked:
                continue
            asked.add(query)
            trace.append(f"  follow-up {query!r}")
            new += _add(pool, retriever.search(query, TOP_K, next_index))
        next_index += 1  # one group per round: follow-ups share the context's slots
    return pool, valid.strategy.value, [f for f in findings.values() if f]


def baseline(retriever: Retriever, question: str, k: int) -> set[str]:
    """Single shot: the top ``k`` chunks of the question itself."""
    return {e.doc_id for e in retriever.search(question, max(k, 1), None)}


def run(dataset: Path, max_tokens: int, limit: int | None, verbose: bool,
        lexical_weight: float = LEXICAL_WEIGHT) -> dict[str, Any]:
    """Ingest (cached) and run every question of ``dataset`` both ways; returns the figures."""
    from ragq.embedding.minilm import MiniLmEmbedder
    from ragq.providers.offline import OfflineProvider
    from ragq.vectorstore.edge import EdgeVectorStore

    embedder = MiniLmEmbedder()
    root = ingest(dataset / "corpus.jsonl", embedder, EdgeVectorStore)
    questions = [json.loads(x) for x in (dataset / "questions.jsonl").read_text().splitlines()
                 if x.strip()][:limit]
    provider = OfflineProvider(embedder)
    rows: list[dict[str, Any]] = []
    with EdgeVectorStore(root) as store:
        retriever = Retriever(store, embedder)
        for q in questions:
            gold = set(q["gold_doc_ids"])
            out = agentic(provider, retriever, q["question"], max_tokens, lexical_weight)
            base = baseline(retriever, q["question"], out.context_chunks)
            rows.append(_row(q, gold, out, base))
            if verbose:
                lost = sorted((gold & out.evidence_docs) - out.context_docs)
                print(f"[{rows[-1]['all_gold']:d}/{rows[-1]['base_all_gold']:d}] lost={lost} "
                      f"{q['question']}\n" + "\n".join(out.trace), file=sys.stderr)
    return summarize(rows)


def _answer_found(q: dict[str, Any], answer: str) -> bool:
    """Whether the gold answer (or an alias) appears in the extractive answer, normalised."""
    golds = [q.get("answer") or "", *q.get("answer_aliases", [])]
    text = " ".join(words(answer))
    return any(g and f" {' '.join(words(g))} " in f" {text} " for g in golds)


def _row(q: dict[str, Any], gold: set[str], out: Outcome, base: set[str]) -> dict[str, Any]:
    return {
        "answer_found": _answer_found(q, out.answer), "insufficient": out.insufficient,
        "route": out.route, "calls": out.calls, "chunks": out.context_chunks,
        "ev_recall": len(gold & out.evidence_docs) / len(gold),
        "ctx_recall": len(gold & out.context_docs) / len(gold),
        "all_gold": gold <= out.context_docs,
        "base_recall": len(gold & base) / len(gold), "base_all_gold": gold <= base,
    }


def _figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    def mean(key: str) -> float:
        return round(statistics.fmean(float(r[key]) for r in rows), 3)

    return {"n": len(rows), "evidence_recall": mean("ev_recall"),
            "context_recall": mean("ctx_recall"), "all_gold": mean("all_gold"),
            "baseline_recall": mean("base_recall"), "baseline_all_gold": mean("base_all_gold"),
            "retrieval_calls": mean("calls"), "context_chunks": mean("chunks"),
            "answer_in_extract": mean("answer_found"), "insufficient": mean("insufficient")}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures per route and overall."""
    by_route: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_route[row["route"]].append(row)
    return {"overall": _figures(rows), **{k: _figures(v) for k, v in sorted(by_route.items())}}


def table(name: str, figures: dict[str, Any]) -> str:
    """The figures as a small text table, one line per route."""
    lines = [f"{name}: route      n  all-gold agentic/baseline  ctx recall agentic/baseline  "
             "evidence recall  retrieval calls  context chunks  answer in extract"]
    for route, f in figures.items():
        lines.append(
            f"  {route:10} {f['n']:4}  {f['all_gold']:.2f} / {f['baseline_all_gold']:.2f}"
            f"{'':15}{f['context_recall']:.3f} / {f['baseline_recall']:.3f}{'':12}"
            f"{f['evidence_recall']:.3f}{'':11}{f['retrieval_calls']:.2f}{'':13}"
            f"{f['context_chunks']:.1f}{'':14}{f['answer_in_extract']:.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--max-tokens", type=int, default=1000,
                        help="context-token budget of the final context (estimated tokens)")
    parser.add_argument("--lexical-weight", type=float, default=LEXICAL_WEIGHT,
                        help="weight of the question's wording in the rerank (0: dense only)")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--verbose", action="store_true", help="trace every question on stderr")
    parser.add_argument("--json", action="store_true", help="one JSON line per dataset")
    args = parser.parse_args()
    for dataset in args.datasets:
        started = time.perf_counter()
        figures = run(dataset, args.max_tokens, args.limit, args.verbose, args.lexical_weight)
        if args.json:
            print(json.dumps({"dataset": dataset.name, "max_tokens": args.max_tokens,
                              "seconds": round(time.perf_counter() - started, 1), **figures}))
        else:
            print(table(f"{dataset.name} (max_tokens={args.max_tokens}, "
                        f"{time.perf_counter() - started:.0f}s)", figures))


if __name__ == "__main__":
    main()
