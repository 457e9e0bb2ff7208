"""How long the HTTP API takes to accept a 5,000-ticket JSONL batch, and the API process's peak
memory while it does.

Usage:  python bench/http_submit.py [N=5000]

Starts a throwaway stack with `--api` (the API in its own process, as `ragq up --api` runs it),
creates a key, uploads N tickets as one ``application/jsonl`` body and times the request until the
201 (parsed, recorded in the ledger, every job enqueued). RSS of the API process is sampled every
5 ms. The batch is cancelled afterwards so the workers do not answer 5,000 questions. The
tickets name no ACL, so they get the key's (``public``: the default-ACL rule of docs/formats.md).
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragq.ledger import create_api_key, session_scope
from ragq.settings import build_settings
from ragq.workers import supervisor
from ragq.workers.processes import free_port
from ragq.workers.stack_state import load_state
from ragq.workers.wiring import build_ledger_engine

QUESTIONS = ["How do I rotate an API key?", "What is the rate limit on the Standard plan?",
             "Which regions does Acme Cloud run in?", "When are invoices issued?"]


class PeakRss:
    """Samples a process's RSS in a thread; ``peak`` in bytes."""

    def __init__(self, pid: int):
        self.proc, self.peak, self._stop = psutil.Process(pid), 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.005)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        settings = build_settings(home=Path(home), api_port=free_port("127.0.0.1"))
        supervisor.up(settings, api=True)
        try:
            with session_scope(build_ledger_engine(settings)) as session:
                key = create_api_key(session, tenant="bench", acl=["public"])[1]
            body = "".join(json.dumps({"custom_id": f"t{i}", "question": QUESTIONS[i % 4]}) + "\n"
                           for i in range(n)).encode()
            (api,) = [p for p in load_state(settings).processes if p.name == "api"]
            base = f"http://{settings.api_host}:{settings.api_port}"
            headers = {"Authorization": f"Bearer {key}", "content-type": "application/jsonl"}
            idle = psutil.Process(api.pid).memory_info().rss
            with PeakRss(api.pid) as rss:
                started = time.perf_counter()
                response = httpx.post(f"{base}/v1/batches", headers=headers, content=body,
                                      timeout=600)
                elapsed = time.perf_counter() - started
            response.raise_for_status()
            batch = response.json()
            httpx.post(f"{base}/v1/batches/{batch['id']}/cancel", headers=headers, timeout=600)
            print(json.dumps({"tickets": n, "upload_bytes": len(body),
                              "accepted_jobs": batch["counts"]["total"],
                              "accept_s": round(elapsed, 2),
                              "api_rss_idle_mb": round(idle / 2**20, 1),
                              "api_rss_peak_mb": round(rss.peak / 2**20, 1)}, indent=2))
        finally:
            supervisor.down(settings)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
