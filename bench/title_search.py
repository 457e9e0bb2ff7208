"""Title search on an ingested corpus: how often does searching a document's own title return
that document first?

Usage (starts a throwaway stack unless RAGQ_HOME points at a running one):
    python bench/title_search.py ../shared/data/musique_train/corpus.jsonl

Reports three figures, because titles repeat in real corpora (several paragraphs of one article):
strict top-1 (the very document), title top-1 (a document with that title), and within-k (the
document ranks no lower than the number of documents sharing its title).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingestion.submit import ingest_path  # noqa: E402
from ragq.settings import Settings, build_settings  # noqa: E402
from workers import supervisor  # noqa: E402
from workers.client import call  # noqa: E402
from workers.queues import Queue, task_name  # noqa: E402

SEARCH_BATCH = task_name(Queue.RETRIEVAL, "search_batch")


def measure(settings: Settings, corpus: Path, collection: str) -> dict[str, float]:
    """Ingest ``corpus`` into ``collection`` and score title search over all its documents."""
    docs = [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]
    started = time.perf_counter()
    report = ingest_path(settings, corpus, collection=collection)
    ingest_s = time.perf_counter() - started
    shared = Counter(d["title"] for d in docs)
    strict = by_title = within_k = 0
    started = time.perf_counter()
    for start in range(0, len(docs), 200):
        part = docs[start : start + 200]
        results = call(settings, SEARCH_BATCH, collection, [d["title"] for d in part],
                       max(shared.values()), None, timeout_s=600)
        for doc, hits in zip(part, results, strict=True):  # type: ignore[arg-type]
            ids = [h["doc_id"] for h in hits]
            strict += bool(ids) and ids[0] == doc["id"]
            by_title += bool(hits) and hits[0]["title"] == doc["title"]
            within_k += doc["id"] in ids[: shared[doc["title"]]]
    n = len(docs)
    return {
        "documents": n, "chunks": report.counts.get("chunks", 0), "ingest_s": round(ingest_s, 1),
        "search_s": round(time.perf_counter() - started, 1),
        "strict_top1": strict / n, "title_top1": by_title / n, "within_k": within_k / n,
    }


def main() -> None:
    corpus = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as home:
        settings = build_settings(home=Path(home))
        supervisor.up(settings)
        try:
            print(json.dumps(measure(settings, corpus, "title_bench"), indent=2))
        finally:
            supervisor.down(settings)


if __name__ == "__main__":
    main()
