"""Title search on an ingested corpus: how often does searching a document's own title return
that document first?

Usage (starts a throwaway stack unless RAGQ_HOME points at a running one):
    python bench/title_search.py ../shared/data/musique_train/corpus.jsonl

Reports three figures, because titles repeat in real corpora (several paragraphs of one article):
strict top-1 (the very document), title top-1 (a document with that title), and within-k (the
document ranks no lower than the number of documents sharing its title); see title_scores.py.
For the same figures in-process, with and without title vectors, see title_vector.py.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from title_scores import score_title_search, title_top_k

from ragq.ingestion.submit import ingest_path
from ragq.schemas.tasks import Task
from ragq.settings import Settings, build_settings
from ragq.workers import supervisor
from ragq.workers.client import call

SEARCH_BATCH = Task.SEARCH_BATCH


def measure(settings: Settings, corpus: Path, collection: str) -> dict[str, float]:
    """Ingest ``corpus`` into ``collection`` and score title search over all its documents."""
    docs = [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]
    started = time.perf_counter()
    report = ingest_path(settings, corpus, collection=collection)
    ingest_s = time.perf_counter() - started
    top_k = title_top_k(docs)
    # Every document must be findable by its title, so the search reads every label the corpus
    # uses (searches always carry an ACL filter).
    acl = sorted({a.strip() for d in docs for a in d.get("acl") or ["public"]})
    results: list[list[dict]] = []
    started = time.perf_counter()
    for start in range(0, len(docs), 200):
        part = docs[start : start + 200]
        found = call(settings, SEARCH_BATCH, collection, [d["title"] for d in part], top_k,
                     list(acl), timeout_s=600)
        results += cast(list[list[dict]], found)
    return {
        "documents": len(docs), "chunks": report.counts.get("chunks", 0),
        "ingest_s": round(ingest_s, 1), "search_s": round(time.perf_counter() - started, 1),
        **score_title_search(docs, results),
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
