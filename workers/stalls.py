"""Resume the jobs whose next message was lost (see :mod:`ragq.ledger.stalls`).

The ledger names the idle jobs and the message each was last handed on with; the broker says
whether anything still carries them: a worker holding one of their tasks (reserved, running,
or waiting out a retry's countdown) or a queue holding one. An idle job nothing carries gets
its message again, stamped in the ledger first so the next sweeps leave it alone for the idle
time. Only on a Redis-protocol broker, whose queues can be read without taking messages off
them; RabbitMQ requeues a dead consumer's messages itself.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable

from celery import Celery
from sqlalchemy.engine import Engine

from ragq.ledger import session_scope
from ragq.ledger.stalls import IdleJob, idle_jobs, mark_resumed
from ragq.tasks.dispatch import CeleryDispatcher
from ragq.workers.queues import Queue
from ragq.workers.redelivery import held_requests

log = logging.getLogger(__name__)

#: A job id anywhere in a message or a request (ULID: 26 Crockford base32 characters).
JOB_ID = re.compile(r"job_[0-9A-HJKMNP-TV-Z]{26}")

#: The queues a flow step waits in.
FLOW_QUEUES = (Queue.MODELS, Queue.RETRIEVAL, Queue.BOOKKEEPING)


def resume_stalled_jobs(app: Celery, engine: Engine, *, idle_s: float, workers: int,
                        running_for_s: float, timeout_s: float = 2.0) -> list[str]:
    """Send the recorded message of every idle job nothing carries; returns their ids. A task
    a worker has reported running for longer than ``running_for_s`` (the tasks' time limit)
    carries nothing: its thread is gone (seen: a task whose result could not be stored while
    the broker restarted stays "active" in its worker for good).

    Raises StackError when not every one of the stack's ``workers`` answered (ask later)."""
    with session_scope(engine, readonly=True) as session:
        idle = idle_jobs(session, idle_s=idle_s)
    queued = queued_job_ids(app) if idle else set()
    waiting = [job for job in idle if job.job_id not in queued]
    if not waiting:
        return []
    held = _job_ids(json.dumps(r, default=str) for r in held_requests(app, timeout_s, workers)
                    if not _outlived(r, running_for_s))
    stalled = [job for job in waiting if job.job_id not in held]
    log.info("%d idle job(s): %d with a queued message, %d held by a worker, %d stalled",
             len(idle), len(idle) - len(waiting), len(waiting) - len(stalled), len(stalled))
    if not stalled:
        return []
    with session_scope(engine) as session:
        resumed = set(mark_resumed(session, [job.job_id for job in stalled]))
    dispatcher = CeleryDispatcher(app)
    for job in stalled:
        if job.job_id in resumed:
            _send(dispatcher, job)
    return [job.job_id for job in stalled if job.job_id in resumed]


def queued_job_ids(app: Celery) -> set[str]:
    """Ids of the jobs with a message waiting in a flow queue (every priority of it)."""
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        client = channel.client
        names = [channel._q_for_pri(queue.value, pri)
                 for queue in FLOW_QUEUES for pri in channel.priority_steps]
        pipe = client.pipeline(transaction=False)
        for name in names:
            pipe.lrange(name, 0, -1)
        messages = [m for queued in pipe.execute() for m in queued]
    return _job_ids(m.decode() if isinstance(m, bytes) else str(m) for m in messages)


def _outlived(request: dict[str, object], running_for_s: float) -> bool:
    started = request.get("time_start")
    return isinstance(started, int | float) and time.time() - started > running_for_s


def _job_ids(texts: Iterable[str]) -> set[str]:
    return {found for text in texts for found in JOB_ID.findall(text)}


def _send(dispatcher: CeleryDispatcher, job: IdleJob) -> None:
    log.warning("job=%s idle for %.0fs with nothing carrying it: sending %s again",
                job.job_id, job.idle_s, job.step)
    dispatcher.send_again(job.job_id, job.step, job.priority)
