"""Webhook delivery latency: from a job's end (``finished_at`` in the ledger) to the receiver
getting its signed ``job.completed`` event.

Usage:  python bench/webhook_latency.py [N=30]

Starts a throwaway stack (private targets allowed), ingests examples/docs, runs a loopback
receiver, submits N jobs that carry a webhook URL (and no ``acl``: they read as ``public``, the
default of a ticket submitted without an API key), and prints p50/p95 of the latency.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragq.evaluation import percentile
from ragq.ingestion.submit import ingest_path
from ragq.ledger import get_job, session_scope
from ragq.schemas.ticket import Ticket
from ragq.settings import build_settings
from ragq.submission import submit_job, wait
from ragq.workers import supervisor
from ragq.workers.wiring import build_ledger_engine

ROOT = Path(__file__).resolve().parents[1]
received: dict[str, float] = {}


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        received.setdefault(json.loads(body)["data"]["job_id"], time.time())
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


def main(n: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    with tempfile.TemporaryDirectory() as home:
        os.environ["RAGQ_WEBHOOK_ALLOW_PRIVATE"] = "true"  # the workers read it too
        settings = build_settings(home=Path(home))
        supervisor.up(settings)
        try:
            ingest_path(settings, ROOT / "examples" / "docs", collection="bench")
            ids = [submit_job(settings, Ticket(custom_id=f"q{i}", question="How are webhooks "
                                               "signed?", webhook_url=url),
                              collection="bench").job_id for i in range(n)]
            for job_id in ids:
                wait(settings, job_id, timeout_s=300)
            deadline = time.monotonic() + 60
            while len(received) < n and time.monotonic() < deadline:
                time.sleep(0.05)
            latencies = []
            with session_scope(build_ledger_engine(settings), readonly=True) as session:
                for job_id in ids:
                    finished = get_job(session, job_id=job_id).finished_at
                    assert finished is not None
                    got = datetime.fromtimestamp(received[job_id], UTC)
                    latencies.append((got - finished).total_seconds() * 1000)
            print(json.dumps({"jobs": n, "delivered": len(received),
                              "latency_ms_p50": round(percentile(latencies, 50), 1),
                              "latency_ms_p95": round(percentile(latencies, 95), 1)}, indent=2))
        finally:
            supervisor.down(settings)
            server.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
