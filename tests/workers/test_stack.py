"""The stack `ragq up` starts really runs Celery canvases across its worker processes."""

from __future__ import annotations

import os

from celery import chord

from ragq.schemas.tasks import Task
from ragq.workers.client import client_app
from ragq.workers.stack_state import load_state
from ragq.workers.supervisor import worker_specs

ECHO = Task.ECHO
ECHO_RETRIEVAL = Task.ECHO_RETRIEVAL
GATHER = Task.GATHER


def test_a_chord_runs_across_the_worker_processes(stack):
    app = client_app(stack.settings)
    header = [app.signature(ECHO, args=(i,)) for i in range(6)]
    header += [app.signature(ECHO_RETRIEVAL, args=(i,)) for i in range(6, 12)]
    result = chord(header)(app.signature(GATHER))
    summary = result.get(timeout=60)
    assert summary["count"] == 12
    assert summary["total"] == sum(range(12))
    worker_pids = {p.pid for p in load_state(stack.settings).processes if p.name != "valkey"}
    assert os.getpid() not in summary["pids"]
    assert set(summary["pids"]) <= worker_pids
    # Both queues were served, by different processes when the vector store is embedded.
    assert len(summary["pids"]) == len(worker_specs(stack.settings))


def test_every_recorded_process_is_running(stack):
    state = load_state(stack.settings)
    assert state is not None
    names = [p.name for p in state.processes]
    expected = [s.name for s in worker_specs(stack.settings)]
    supervised = [*expected, "supervisor"]  # the resident supervisor starts last
    assert names == (["valkey", *supervised] if stack.kind == "embedded" else supervised)
    assert all(p.is_running() for p in state.processes)
