"""What one claim of the waiting line costs with a large backlog behind the window: the ledger
work every job's ending pays (issue 36's fair share must not slow a backlog down).

Usage:  python bench/claim_cost.py [--backlog 5000] [--window 32] [--claims 500] [--tenants 1]
                                   [--url sqlite:///…]

A fresh ledger (SQLite in a temporary folder unless ``--url`` names one) gets ``--backlog``
queued jobs, spread over ``--tenants`` tenants' batches; the window is filled, then
``--claims`` times one open job ends and :func:`ragq.ledger.claim_due` runs (as a worker does
at a job's end). Prints the mean and p95 of a claim in milliseconds, as JSON. Uses only ledger
functions that predate issue 36, so it measures a checkout from before it too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragq.ledger import (
    WaitingLine,
    add_job,
    claim_due,
    create_batch,
    make_engine,
    session_scope,
    start_batch,
    upgrade,
)
from ragq.ledger.jobs import finish_job
from ragq.schemas.statuses import JobStatus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backlog", type=int, default=5000)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--claims", type=int, default=500)
    parser.add_argument("--tenants", type=int, default=1)
    parser.add_argument("--url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        url = args.url or f"sqlite:///{home}/ledger.db"
        upgrade(url)
        engine = make_engine(url)
        with session_scope(engine) as session:
            for t in range(args.tenants):
                batch = create_batch(session, tenant=f"t{t}", collection="c",
                                     input_filename=None)
                for i in range(args.backlog // args.tenants):
                    add_job(session, batch_id=batch.id, custom_id=f"c{i}", position=i + 1,
                            tenant=f"t{t}", collection="c", question="q?", acl=["public"])
                start_batch(session, batch_id=batch.id)
        line = WaitingLine(args.window, timedelta(minutes=10))
        open_jobs = [c.job_id for c in claim_due(engine, line)]
        times = []
        for _ in range(args.claims):
            with session_scope(engine) as session:
                finish_job(session, job_id=open_jobs.pop(0), status=JobStatus.COMPLETED,
                           result={})
            started = time.perf_counter()
            open_jobs += [c.job_id for c in claim_due(engine, line)]
            times.append((time.perf_counter() - started) * 1000)
        engine.dispose()
    times.sort()
    print(json.dumps({"backlog": args.backlog, "window": args.window, "tenants": args.tenants,
                      "claims": len(times), "claim_ms_mean": round(statistics.mean(times), 2),
                      "claim_ms_p95": round(times[int(0.95 * len(times))], 2)}))


if __name__ == "__main__":
    main()
