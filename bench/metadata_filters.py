"""Measure metadata filters on tau2_banking_dev (issue 37): the same offline agentic flow with
and without the source's metadata schema, on the same store.

The fields are the ones the pages imply, declared by rule by bench/tau2_fields.py (product
family from the page's knowledge-base section, document type from its title); nothing is
labelled per question. Both arms run the flow of bench/offline_flow.py in process (offline
provider, MiniLM, embedded store, caches off); "with" gives the in-memory ledger the schema, so
each sub-query's constraints are read, validated and sent as filters, with the fallback to the
unfiltered search when the filtered one is weak.

Prints, per arm: all-gold in context (every gold page in the final context), gold recall in
context and in evidence, retrieval calls per ticket; and for the filtered arm: how many
searches carried a filter, how many fell back, and how often a filter was wrong:

- removed a gold page: the filter (applied, no fallback) excluded a gold page of the ticket
  that the same search without the filter returned (it hid a page the search would have found);
- excluded a gold page: the filter excluded some gold page of the ticket at all (stricter: a
  sub-query about one product rightly excludes another product's gold page).

Usage:
    python bench/metadata_filters.py [/work/shared/data/tau2_banking_dev] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.offline_flow

from bench.offline_flow import CLI_CALLER, COLLECTION, agentic, ingest
from bench.tau2_fields import write
from ragq.embedding.minilm import MiniLmEmbedder
from ragq.evaluation.questions import load_questions
from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.metadata_filters import validate_filters
from ragq.orchestration.sparse_terms import query_terms
from ragq.providers.offline import OfflineProvider
from ragq.schemas.metadata import FilterOp, MetadataFilter, MetadataSchema
from ragq.settings import build_settings
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.base import SearchFilter
from ragq.vectorstore.edge import EdgeVectorStore
from ragq.workers.wiring import build_flow_config, build_token_counter

DATASET = Path("/work/shared/data/tau2_banking_dev")
WORK = Path("/tmp/ragq_metadata_filters")


def passes(meta: dict[str, Any], flt: MetadataFilter) -> bool:
    """Whether a page with ``meta`` passes an (enum or keyword) filter, as the store says."""
    value = meta.get(flt.field)
    if value is None:
        return False
    values = value if isinstance(value, list) else [value]
    wanted = flt.value if isinstance(flt.value, list) else [flt.value]
    assert flt.op in (FilterOp.EQ, FilterOp.IN), "tau2's declared fields are enums"
    return any(str(v) in {str(w) for w in wanted} for v in values)


def run(dataset: Path, limit: int | None) -> dict[str, Any]:
    declared = write(dataset, WORK / dataset.name)
    schema = MetadataSchema.model_validate(declared)
    pages = {json.loads(line)["id"]: json.loads(line)["metadata"] for line in
             (WORK / dataset.name / "corpus.jsonl").read_text().splitlines() if line.strip()}
    settings = build_settings(cache_enabled=False)
    embedder = MiniLmEmbedder()
    root = ingest(WORK / dataset.name / "corpus.jsonl", embedder, EdgeVectorStore, schema=schema)
    questions = load_questions(WORK / dataset.name, limit, settings=settings)
    out: dict[str, Any] = {"dataset": dataset.name, "n": len(questions)}
    with EdgeVectorStore(root) as store:
        config = build_flow_config(settings, build_token_counter(settings))
        for arm in ("without", "with"):
            started = time.perf_counter()
            ledger = MemoryLedger()
            if arm == "with":
                ledger.schemas[COLLECTION] = schema
            adapters = InlineAdapters(OfflineProvider(embedder), embedder, store)
            dispatcher = InlineDispatcher(Runner(ledger, adapters, config))
            rows, gold_of = [], {}
            for q in questions:
                gold = set(q.gold_doc_ids)
                result = agentic(ledger, dispatcher, q)
                gold_of[next(reversed(ledger.jobs))] = (gold, q.acl(CLI_CALLER))
                rows.append({"all_gold": gold <= result.context_docs,
                             "ctx_recall": len(gold & result.context_docs) / len(gold),
                             "ev_recall": len(gold & result.evidence_docs) / len(gold),
                             "calls": result.calls})
            figures = {k: round(statistics.fmean(float(r[k]) for r in rows), 3)
                       for k in ("all_gold", "ctx_recall", "ev_recall", "calls")}
            searches = sum(1 for j in ledger.jobs.values() for r in j.requests.values()
                           if r.sub_query_id)
            figures["searches"] = searches
            if arm == "with":
                figures |= _filter_figures(ledger, schema, pages, gold_of, store, embedder,
                                           config, searches)
            figures["seconds"] = round(time.perf_counter() - started, 1)
            out[arm] = figures
    out["all_gold_gain"] = round(out["with"]["all_gold"] - out["without"]["all_gold"], 3)
    return out


def _filter_figures(ledger: MemoryLedger, schema: MetadataSchema,
                    pages: dict[str, dict[str, Any]], gold_of: dict[str, Any],
                    store: EdgeVectorStore, embedder: Any, config: Any, searches: int
                    ) -> dict[str, Any]:
    filtered = fell_back = removed = excluded = 0
    examples: list[str] = []
    for record in ledger.filter_log:
        kept_proposals = [d["proposed"] for d in record["decisions"] if d["kept"]]
        if not kept_proposals:
            continue
        filters, _ = validate_filters(kept_proposals, schema)
        filtered += 1
        if record.get("fallback"):
            fell_back += 1
            continue
        gold, acl = gold_of[record["job_id"]]
        hidden = {g for g in gold if not all(passes(pages[g], f) for f in filters)}
        excluded += bool(hidden)
        if not hidden:
            continue
        request = next(r for r in ledger.jobs[record["job_id"]].requests.values()
                       if r.id == record["request_id"])
        vector = embedder.embed([request.query])[0]
        mode = replace(config.search, terms=query_terms(request.query))
        found = {h.payload["doc_id"] for h in store.search(
            COLLECTION, vector, request.top_k, SearchFilter(acl=acl), mode)}
        lost = hidden & found
        removed += bool(lost)
        if lost and len(examples) < 5:
            examples.append(f"{[f.model_dump(exclude={'kind'}) for f in filters]} hid "
                            f"{sorted(lost)} from {request.query[:80]!r}")
    return {"filtered_searches": filtered, "fell_back": fell_back,
            "filter_removed_gold": removed, "filter_excluded_some_gold": excluded,
            "wrong_rate_of_filtered": round(removed / filtered, 3) if filtered else None,
            "wrong_rate_of_all_searches": round(removed / searches, 3) if searches else None,
            "examples": examples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DATASET)
    parser.add_argument("--limit", type=int, default=None, help="first N tickets only")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args()
    figures = run(args.dataset, args.limit)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{figures['dataset']}: {figures['n']} tickets")
    for arm in ("without", "with"):
        f = figures[arm]
        print(f"  {arm:8} filters: all-gold in context {f['all_gold']:.3f}  context recall "
              f"{f['ctx_recall']:.3f}  evidence recall {f['ev_recall']:.3f}  retrieval calls "
              f"{f['calls']:.2f}  ({f['seconds']:.0f}s)")
    f = figures["with"]
    print(f"  all-gold gain {figures['all_gold_gain']:+.3f}; {f['filtered_searches']} of "
          f"{f['searches']} searches filtered, {f['fell_back']} fell back; a filter removed a "
          f"gold page the unfiltered search found in {f['filter_removed_gold']} "
          f"({f['wrong_rate_of_filtered']} of filtered, {f['wrong_rate_of_all_searches']} of "
          f"all searches); excluded some gold page in {f['filter_excluded_some_gold']}")
    for example in f["examples"]:
        print(f"    {example}")


if __name__ == "__main__":
    main()
