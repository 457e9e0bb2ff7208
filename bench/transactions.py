"""Count the ledger transactions a job opens and the tasks it runs (each one a broker hand-off),
per flow task (SQLite, in one process).

Runs a Celery worker in this process (``celery.contrib.testing``, an in-memory broker), ingests
a two-document knowledge base, and asks a one-hop and a two-hop question one at a time. Every
transaction a worker thread begins is counted against the task running on that thread: write
transactions (``BEGIN IMMEDIATE`` on SQLite, one at a time for the whole database) and read-only
ones (``BEGIN DEFERRED``). The front door's polling is not counted.

Usage: python bench/transactions.py
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun, task_prerun
from sqlalchemy import Engine, event

from ragq.ingestion.submit import ingest_path
from ragq.ledger import upgrade
from ragq.settings import build_settings
from ragq.submission import results, submit_file, wait
from ragq.workers.app import create_app

DOCS = [
    {"id": "zephyr", "title": "Zephyr camera",
     "text": "The Zephyr is a compact mirrorless camera. The Zephyr camera is made by Orion "
             "Labs, which released it in 2019."},
    {"id": "orion", "title": "Orion Labs",
     "text": "Orion Labs is an optics company based in Lyon. Orion Labs was founded in 1998 by "
             "Mara Quint, a former telescope engineer."},
]
QUESTIONS = ["Where is Orion Labs based?",
             "Who founded the company that makes the Zephyr camera?"]

_running = threading.local()
_counts: dict[str, Counter[str]] = defaultdict(Counter)


@task_prerun.connect
def _enter(task: Any = None, **_: Any) -> None:
    _running.task = task.name.rsplit(".", 1)[-1] if task else None
    if task is not None:
        _counts[_running.task]["runs"] += 1


@task_postrun.connect
def _leave(**_: Any) -> None:
    _running.task = None


def _on_begin(connection: Any) -> None:
    task = getattr(_running, "task", None)
    if task is not None:
        kind = "read" if connection.get_execution_options().get("ragq_readonly") else "write"
        _counts[task][kind] += 1


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="ragq-tx-"))
    settings = build_settings(home=home, broker_url="memory://",
                              result_backend_url="cache+memory://")
    upgrade(settings.ledger_url)
    event.listen(Engine, "begin", _on_begin)
    docs = home / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    app = create_app(settings)
    # The in-memory transport polls its queues once a second by default.
    app.conf.broker_transport_options = {**app.conf.broker_transport_options,
                                         "polling_interval": 0.01}
    with start_worker(app, pool="threads", concurrency=4,
                      perform_ping_check=False, loglevel="WARNING"):
        ingest_path(settings, docs, collection="tx")
        for question in QUESTIONS:
            _counts.clear()
            tickets = home / "tickets.jsonl"
            tickets.write_text(json.dumps({"custom_id": "q", "question": question}) + "\n")
            batch = submit_file(settings, tickets, collection="tx").batch_id
            wait(settings, batch, timeout_s=300, poll_s=0.05)
            (result,) = results(settings, batch)
            _report(question, result)


def _report(question: str, result: dict[str, Any]) -> None:
    writes = sum(c["write"] for c in _counts.values())
    reads = sum(c["read"] for c in _counts.values())
    runs = sum(c["runs"] for c in _counts.values())
    print(f"{question!r}: {result['status']}, route {result['route']}: {runs} task runs, "
          f"{writes} write and {reads} read transactions")
    for task, counts in sorted(_counts.items()):
        print(f"  {task:14} runs {counts['runs']:2}  write {counts['write']:3}  "
              f"read {counts['read']:3}")


if __name__ == "__main__":
    main()
