"""Tiny tasks that prove the queue works end to end: `ragq status --check` and the tests use them.

``echo`` runs on any queue's worker and reports where it ran; ``gather`` is a chord body that
collects them, so a chord across worker processes can be observed.
"""

from __future__ import annotations

import os
import socket

from celery import shared_task

from ragq.schemas.tasks import Task


@shared_task(name=Task.ECHO)
def echo(value: int) -> dict[str, object]:
    """Return ``value`` with the host and pid of the worker process that ran it."""
    return {"value": value, "pid": os.getpid(), "host": socket.gethostname()}


@shared_task(name=Task.ECHO_RETRIEVAL)
def echo_retrieval(value: int) -> dict[str, object]:
    """Like :func:`echo`, but routed to the retrieval queue (the vector-owning worker)."""
    return {"value": value, "pid": os.getpid(), "host": socket.gethostname()}


@shared_task(name=Task.GATHER)
def gather(results: list[dict[str, object]]) -> dict[str, object]:
    """Chord body: the sum of the values and the set of worker pids that produced them."""
    values = [int(str(r["value"])) for r in results]
    pids = sorted({int(str(r["pid"])) for r in results})
    return {"count": len(values), "total": sum(values), "pids": pids, "gatherer": os.getpid()}
