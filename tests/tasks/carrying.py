"""Wait until nothing carries a set of jobs on: no flow queue holds a message of theirs and no
worker holds (reserved, running, or waiting out a countdown) a task of theirs.

Tests of cancelling use it instead of sampling the ledger over a pause: a cancelled job whose
steps kept sending steps would always be carried, so the wait fails at its deadline; once
nothing carries the jobs, nothing can write for them any more, and their ledger is final.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection

from celery import Celery

from ragq.errors import StackError
from ragq.settings import Settings
from ragq.workers.client import client_app
from ragq.workers.readiness import node_prefix
from ragq.workers.redelivery import held_requests, uses_redis_transport
from ragq.workers.stack_state import load_state
from ragq.workers.stalls import FLOW_QUEUES, JOB_ID, queued_job_ids


def _queued(app: Celery, job_ids: Collection[str]) -> set[str]:
    """The jobs among ``job_ids`` with a message in a flow queue. RabbitMQ's queues cannot be
    read without taking messages off them: any message in a flow queue counts for all."""
    if uses_redis_transport(app):
        return queued_job_ids(app) & set(job_ids)
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        waiting = sum(channel.queue_declare(queue=q.value, passive=True).message_count
                      for q in FLOW_QUEUES)
    return set(job_ids) if waiting else set()


def carried(settings: Settings, job_ids: Collection[str]) -> set[str]:
    """The jobs among ``job_ids`` that a queue or a worker still carries. Queues are read first:
    a task that hands its job on queues the next step before it ends, so a step moving from a
    worker to a queue between the two readings is seen in one of them."""
    app = client_app(settings)
    state = load_state(settings)
    assert state is not None, "no stack is running"
    workers = sum(1 for p in state.processes if node_prefix(p) is not None)
    queued = _queued(app, job_ids)
    held = {found for request in held_requests(app, timeout_s=2.0, workers=workers)
            for found in JOB_ID.findall(json.dumps(request, default=str))}
    return (queued | held) & set(job_ids)


def wait_uncarried(settings: Settings, job_ids: Collection[str], timeout_s: float = 120.0
                   ) -> None:
    """Return once nothing carries any of ``job_ids``; AssertionError naming the jobs still
    carried at ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    still: set[str] = set(job_ids)
    while time.monotonic() < deadline:
        try:
            still = carried(settings, job_ids)
        except StackError:  # a worker did not answer in time: ask again
            continue
        if not still:
            return
        time.sleep(0.2)
    raise AssertionError(f"{len(still)} job(s) still carried after {timeout_s}s: "
                         f"{sorted(still)[:5]}")
