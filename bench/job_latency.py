"""End-to-end latency of one job on the embedded stack, split into work and queueing.

Usage:  python bench/job_latency.py ../shared/data/hotpotqa_train [N=50] [--running]

Starts a throwaway stack, ingests the dataset's corpus, then submits its first N questions one
at a time (so each job has the workers to itself), each as its own ticket read by ``ragq
eval``'s reader (its ACL is its ``acl``, or ``["public"]`` when it names none), and reads the
ledger: total = job finished - job created; work = the sum of the job's model-call and
retrieval latencies; the rest is queueing, task hand-offs and ledger writes. Prints p50/p95 of each.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragq.evaluation import percentile
from ragq.evaluation.run import collection_for, load_questions
from ragq.ingestion.submit import ingest_path
from ragq.ledger import get_job, session_scope
from ragq.ledger.models import ModelCallRow, RetrievalRequestRow
from ragq.settings import Settings, build_settings
from ragq.submission import submit_job, wait
from ragq.workers import supervisor
from ragq.workers.wiring import build_ledger_engine


def split(settings: Settings, job_id: str) -> tuple[float, float]:
    """(total ms, work ms) of a finished job, from the ledger."""
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        job = get_job(session, job_id=job_id)
        total = (job.finished_at - job.created_at).total_seconds() * 1000
        model = session.scalar(select(func.coalesce(func.sum(ModelCallRow.latency_ms), 0))
                               .where(ModelCallRow.job_id == job_id))
        search = session.scalar(select(func.coalesce(func.sum(RetrievalRequestRow.latency_ms), 0))
                                .where(RetrievalRequestRow.job_id == job_id))
    return total, float(model or 0) + float(search or 0)


def measure(settings: Settings, dataset: Path, n: int) -> dict[str, float]:
    collection = collection_for(dataset)
    ingest_path(settings, dataset / "corpus.jsonl", collection=collection)
    totals, works = [], []
    for question in load_questions(dataset, n, settings=settings):
        job_id = submit_job(settings, question.ticket, collection=collection).job_id
        wait(settings, job_id, timeout_s=300, poll_s=0.05)
        total, work = split(settings, job_id)
        totals.append(total)
        works.append(work)
    queueing = [t - w for t, w in zip(totals, works, strict=True)]
    return {
        "jobs": len(totals),
        "total_ms_p50": percentile(totals, 50), "total_ms_p95": percentile(totals, 95),
        "work_ms_p50": percentile(works, 50), "work_ms_p95": percentile(works, 95),
        "queueing_ms_p50": percentile(queueing, 50), "queueing_ms_p95": percentile(queueing, 95),
        "queueing_share_p50": percentile([q / t for q, t in zip(queueing, totals, strict=True)],
                                         50),
    }


def main() -> None:
    dataset = Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    if "--running" in sys.argv:  # measure on the stack of $RAGQ_HOME, already up
        print(json.dumps(measure(build_settings(), dataset, n), indent=2))
        return
    with tempfile.TemporaryDirectory() as home:
        settings = build_settings(home=Path(home))
        supervisor.up(settings)
        try:
            print(json.dumps(measure(settings, dataset, n), indent=2))
        finally:
            supervisor.down(settings)


if __name__ == "__main__":
    main()
