"""Does a backlog starve a single ticket? Issue 36's measurement, over HTTP on a throwaway
embedded stack.

Usage:  python bench/fair_share.py [DATASET] [--tickets 300] [--delay-s 1] [--latency-ms 0]
                                   [--pair 0] [--out FILE]

The stack runs with the API in its own process (``ragq up --api``'s way); the dataset's corpus
is ingested and one job warms the workers up. Then:

1. alone: tenant B posts one ticket (``POST /v1/jobs``) to an idle stack; its latency (post to
   the job seen ended, polled every 50 ms) is the ticket's own work time;
2. behind a backlog: tenant A posts ``--tickets`` tickets as one JSON batch
   (``POST /v1/batches``); ``--delay-s`` later B posts the same one ticket. B's latency, A's
   batch time (post to its last job ended, from the ledger) and B's place among A's endings
   are reported;
3. with ``--pair N``: tenants C and D each post an N-ticket batch at once, then (after both
   end) one 2N-ticket batch runs alone; each batch's time is reported.

``--latency-ms 0`` (the default) runs the offline provider, as the issue measured; above 0 the
model roles go to bench/loopback_llm.py answering after that latency (bench/throughput.py's
way). The tickets cycle through the dataset's questions, read by ``ragq eval``'s reader. Figures
go to stdout and, as JSON, to bench/results/fair_share-<UTC time>.json (or ``--out``). Only
public HTTP routes and the ledger are used, so the script also measures a checkout from before
issue 36 (for before/after figures). Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loopback_llm import LoopbackLLM
from bench.throughput import DEFAULT_DATASET, loopback_only
from ragq.evaluation.run import collection_for, load_questions
from ragq.ingestion.submit import ingest_path
from ragq.ledger import batch_jobs, create_api_key, get_job, session_scope
from ragq.settings import Settings, build_settings
from ragq.workers import supervisor
from ragq.workers.processes import free_port
from ragq.workers.wiring import build_ledger_engine

ROOT = Path(__file__).resolve().parents[1]
ENDED = {"completed", "insufficient_evidence", "budget_exhausted", "needs_review", "failed",
         "cancelled", "rejected"}
NOT_TICKET = {"gold_doc_ids", "answer", "answer_aliases"}


@contextlib.contextmanager
def stack(home: Path, latency_ms: float) -> Iterator[Settings]:
    """A throwaway stack with the API; the offline provider, or the loopback model server."""
    saved = dict(os.environ)
    with contextlib.ExitStack() as exits:
        os.environ.update({"RAGQ_HOME": str(home),
                           "RAGQ_API_PORT": str(free_port("127.0.0.1"))})
        if latency_ms > 0:
            llm = exits.enter_context(LoopbackLLM(latency_ms))
            os.environ.update({"RAGQ_PROVIDER": "openai", "RAGQ_OPENAI_BASE_URL": llm.v1_url,
                               "RAGQ_OPENAI_API_KEY": "sk-bench", "RAGQ_EMBEDDER": "minilm",
                               "RAGQ_CACHE_ENABLED": "false"})
        settings = build_settings()
        supervisor.up(settings, api=True)
        try:
            yield settings
        finally:
            supervisor.down(settings)
            os.environ.clear()
            os.environ.update(saved)


class Client:
    """Tenants' keys and the few requests the bench makes."""

    def __init__(self, settings: Settings, collection: str):
        self.settings, self.collection = settings, collection
        self.base = f"http://{settings.api_host}:{settings.api_port}"
        self.http = httpx.Client(timeout=600)

    def key(self, tenant: str) -> dict[str, str]:
        with session_scope(build_ledger_engine(self.settings)) as session:
            key = create_api_key(session, tenant=tenant, acl=["public"])[1]
        return {"Authorization": f"Bearer {key}"}

    def batch(self, auth: dict[str, str], tickets: list[dict[str, Any]]) -> str:
        response = self.http.post(f"{self.base}/v1/batches", headers=auth, json={
            "tickets": tickets, "collection": self.collection})
        response.raise_for_status()
        return str(response.json()["id"])

    def job(self, auth: dict[str, str], ticket: dict[str, Any]) -> str:
        response = self.http.post(f"{self.base}/v1/jobs", headers=auth,
                                  json={**ticket, "collection": self.collection})
        response.raise_for_status()
        return str(response.json()["id"])

    def wait_job(self, auth: dict[str, str], job_id: str) -> None:
        while self.http.get(f"{self.base}/v1/jobs/{job_id}",
                            headers=auth).json()["status"] not in ENDED:
            time.sleep(0.05)

    def wait_batch(self, auth: dict[str, str], batch_id: str) -> None:
        while self.http.get(f"{self.base}/v1/batches/{batch_id}",
                            headers=auth).json()["status"] not in {"completed", "cancelled",
                                                                   "failed"}:
            time.sleep(0.2)


def batch_wall(settings: Settings, batch_id: str) -> tuple[float, list[Any]]:
    """Seconds from the batch's first job created to its last ended, and the end times."""
    with session_scope(build_ledger_engine(settings), readonly=True) as session:
        jobs = batch_jobs(session, batch_id=batch_id)
        ends = sorted(j.finished_at for j in jobs if j.finished_at)
        return (ends[-1] - min(j.created_at for j in jobs)).total_seconds(), ends


def single(client: Client, auth: dict[str, str], ticket: dict[str, Any]) -> tuple[str, float]:
    """Post one ticket; its id and its latency until seen ended (seconds)."""
    started = time.perf_counter()
    job_id = client.job(auth, ticket)
    client.wait_job(auth, job_id)
    return job_id, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--tickets", type=int, default=300)
    parser.add_argument("--delay-s", type=float, default=1.0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--pair", type=int, default=0, help="tickets of each pair batch")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    loopback_only()
    questions = load_questions(args.dataset, None)
    tickets = [{k: v for k, v in q.ticket.model_dump(mode="json", exclude_none=True).items()
                if k not in NOT_TICKET} for q in questions]

    def renamed(n: int, label: str) -> list[dict[str, Any]]:
        return [{**tickets[i % len(tickets)], "custom_id": f"{label}-{i}"} for i in range(n)]

    collection = collection_for(args.dataset)
    report: dict[str, Any] = {"dataset": args.dataset.name, "tickets": args.tickets,
                              "delay_s": args.delay_s, "latency_ms": args.latency_ms,
                              "cpus": os.cpu_count(), "load_average_at_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as home, stack(Path(home) / "home",
                                                      args.latency_ms) as settings:
        ingest_path(settings, args.dataset / "corpus.jsonl", collection=collection)
        client = Client(settings, collection)
        a, b = client.key("tenant-a"), client.key("tenant-b")
        single(client, b, renamed(1, "warmup")[0])
        probe = renamed(1, "b")[0]
        report["window"] = settings.open_jobs_window
        report["b_alone_s"] = single(client, b, probe)[1]
        posted = time.perf_counter()
        backlog = client.batch(a, renamed(args.tickets, "a"))
        report["a_accept_s"] = time.perf_counter() - posted
        time.sleep(max(0.0, args.delay_s - (time.perf_counter() - posted)))
        b_job, report["b_behind_backlog_s"] = single(client, b, probe | {"custom_id": "b-2"})
        client.wait_batch(a, backlog)
        report["a_batch_s"], ends = batch_wall(settings, backlog)
        with session_scope(build_ledger_engine(settings), readonly=True) as session:
            b_end = get_job(session, job_id=b_job).finished_at
        report["a_jobs_ended_before_b"] = sum(1 for e in ends if e < b_end)
        if args.pair:
            c, d = client.key("tenant-c"), client.key("tenant-d")
            both = [client.batch(c, renamed(args.pair, "c")), client.batch(d, renamed(
                args.pair, "d"))]
            for auth, batch_id in zip((c, d), both, strict=True):
                client.wait_batch(auth, batch_id)
            report["pair_batch_s"] = [batch_wall(settings, x)[0] for x in both]
            whole = client.batch(c, renamed(2 * args.pair, "w"))
            client.wait_batch(c, whole)
            report["one_double_batch_s"] = batch_wall(settings, whole)[0]
    out = args.out or ROOT / "bench" / "results" / time.strftime(
        "fair_share-%Y%m%dT%H%M%SZ.json", time.gmtime())
    out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(json.dumps(report, indent=2, default=str))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
