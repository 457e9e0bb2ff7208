"""Why jobs end ``needs_review``, per dataset, with the offline provider in process: the review
rate, the jobs escalated for each reason and, for every contradiction escalation, the pairs of
statements (with their subjects) that sent it there.

The flow and store are bench/offline_flow.py's (its ingest, cached under /tmp, caches off); each
question is submitted with its own ``acl`` (a set whose tickets read staff-only pages needs it).

Usage:
    python bench/review_reasons.py DATASET_DIR [more] [--limit N] [--jsonl FILE]

Prints one summary line per dataset, then each escalated question's reasons and contradiction
pairs; ``--jsonl`` also writes one line per question (status, reasons, contradictions).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.offline_flow

from bench.offline_flow import COLLECTION, ingest
from ragq.embedding.minilm import MiniLmEmbedder
from ragq.ledger.memory import MemoryLedger
from ragq.providers.offline import OfflineProvider
from ragq.settings import build_settings
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.edge import EdgeVectorStore
from ragq.workers.wiring import build_flow_config, build_token_counter


def run(dataset: Path, limit: int | None) -> list[dict[str, Any]]:
    """One line per question of ``dataset``: its custom id, status, review reasons and
    contradictions."""
    settings = build_settings(cache_enabled=False)
    embedder = MiniLmEmbedder()
    root = ingest(dataset / "corpus.jsonl", embedder, EdgeVectorStore)
    lines = (dataset / "questions.jsonl").read_text().splitlines()
    questions = [json.loads(x) for x in lines if x.strip()][:limit]
    rows = []
    with EdgeVectorStore(root) as store:
        ledger = MemoryLedger()
        config = build_flow_config(settings, build_token_counter(settings))
        runner = Runner(ledger, InlineAdapters(OfflineProvider(embedder), embedder, store),
                        config)
        dispatcher = InlineDispatcher(runner)
        for q in questions:
            job_id = ledger.add_job(q["question"], collection=COLLECTION,
                                    acl=q.get("acl") or ("public",))
            dispatcher.run(job_id)
            result = ledger.jobs[job_id].result or {}
            rows.append({"dataset": dataset.name, "custom_id": q.get("custom_id"),
                         "status": result.get("status"),
                         "reasons": (result.get("review") or {}).get("reasons", []),
                         "contradictions": result.get("contradictions") or []})
    return rows


def report(name: str, rows: list[dict[str, Any]]) -> str:
    """The summary line, then each escalation with its reasons and contradiction pairs."""
    n = len(rows)
    reviewed = [r for r in rows if r["status"] == "needs_review"]
    reasons = Counter(reason for r in rows for reason in r["reasons"])
    out = [f"{name}: {n} jobs, needs_review {len(reviewed)} ({len(reviewed) / max(n, 1):.0%}); "
           + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))]
    for r in reviewed:
        out.append(f"  {r['custom_id']}: {', '.join(r['reasons'])}")
        if "contradictions" not in r["reasons"]:
            continue
        for c in r["contradictions"]:
            sides = zip(c["statements"], c.get("subjects") or [""] * len(c["statements"]),
                        c["doc_ids"], strict=False)
            out += [f"    [{subject or '-'}] {doc}: {' '.join(text.split())[:120]}"
                    for text, subject, doc in sides]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--jsonl", type=Path, default=None, help="also write one line each")
    args = parser.parse_args()
    for dataset in args.datasets:
        rows = run(dataset, args.limit)
        if args.jsonl:
            with args.jsonl.open("a") as out:
                out.writelines(json.dumps(r) + "\n" for r in rows)
        print(report(dataset.name, rows), flush=True)


if __name__ == "__main__":
    main()
