"""The resident supervisor `ragq up` leaves running: it restarts what dies, alone.

Every ``RAGQ_SUPERVISOR_POLL_S`` it checks each recorded process by pid and start time. A dead
one is started again with its recorded command — the broker on the same port over the same
append-only file, so queued messages and results survive — and the healthy ones are left
alone. Once the replacement is ready:

1. deliveries no live worker holds go back to the head of their queues (Redis-protocol
   brokers, see :mod:`workers.redelivery`; RabbitMQ requeues them itself), so the step that was
   in flight runs again at once instead of after the visibility timeout;
2. every open job's deadline moves by the outage (:func:`ragq.ledger.extend_open_deadlines`),
   so time lost to a crash is not spent from a job's latency budget.

Beside it runs the recovery sweep (:mod:`ragq.workers.sweeper`, the code `ragq sweeper` runs
in other topologies): it starts the waiting jobs of a backlog that nobody started and resumes
the jobs whose next message was lost.

Run as ``python -m ragq.workers.healing``; `ragq down` stops it first, so it never restarts what
`down` is stopping.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from ragq.errors import StackError
from ragq.settings import Settings, build_settings
from ragq.workers.flower import flower_env
from ragq.workers.processes import respawn
from ragq.workers.readiness import node_prefix, wait_for_port, wait_for_redis, wait_for_workers
from ragq.workers.stack_state import ProcessRecord, StackState, load_state, save_state

log = logging.getLogger(__name__)
T = TypeVar("T")

SUPERVISOR = "supervisor"
"""The name of the resident supervisor's own record in the stack state."""

HEALED_IDLE_S = 1.0
"""Right after a restart, a job nothing has moved for this long and nothing carries is resumed."""


def supervisor_argv() -> list[str]:
    """The command of the resident supervisor."""
    return [sys.executable, "-m", "ragq.workers.healing"]


def stack_env(settings: Settings, broker_url: str) -> dict[str, str]:
    """The environment of the stack's processes: this one's, with the home and the broker."""
    env = dict(os.environ)
    env["RAGQ_HOME"] = str(settings.home.resolve())
    env["RAGQ_BROKER_URL"] = broker_url
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def heal(settings: Settings, name: str, *, known_good_at: float) -> ProcessRecord:
    """Start the dead process ``name`` of the recorded stack again, wait until it is ready,
    give back the deliveries nobody holds and move open deadlines by the outage; returns the
    new record (also saved). ``known_good_at`` is when the process was last seen alive.

    Raises StackError when the replacement does not come up.
    """
    state = _load(settings)
    old = _record(state, name)
    log.warning("%s (pid %s) is not running: restarting it", name, old.pid)
    broker = state.broker_url or settings.broker_url
    env = stack_env(settings, broker) if broker and name != "valkey" else dict(os.environ)
    if name == "flower":  # its password lives in the home's run dir, not in the record
        env |= flower_env(settings)
    fresh = respawn(old, env)
    _replace(settings, state, fresh)
    _wait_ready(settings, state, fresh)
    lost_since = known_good_at
    if name != SUPERVISOR:
        workers = _worker_count(state)
        oldest = _guarded(_restore_orphans, settings, workers)
        lost_since = min(known_good_at, oldest if oldest is not None else known_good_at)
    ready = time.time()
    outage_s = max(0.0, ready - lost_since)
    if name != SUPERVISOR:
        _guarded(_extend_deadlines, settings, outage_s)
        # A step the dead process had committed but not yet handed on (killed between the
        # two) left its job with no message anywhere: resume such jobs now, not after the
        # sweep's idle time. Idle for a moment and carried by nothing is enough: the commit
        # can fall after the process was last seen alive (a waiting-line claim in its dying
        # moment), and whatever is under way is queued or held by a worker, which the broker
        # is asked.
        _guarded(_resume_stalled, settings, workers, HEALED_IDLE_S)
    fresh = fresh.model_copy(update={"last_restart_at": ready, "last_outage_s": outage_s})
    _replace(settings, _load(settings), fresh)
    log.warning("%s restarted (pid %s, restart %d, outage %.1fs)", name, fresh.pid,
                fresh.restarts, outage_s)
    return fresh


def _worker_count(state: StackState) -> int:
    """How many Celery workers the recorded stack runs (each must answer before a restore or a
    resumption trusts what the workers say they hold)."""
    return sum(1 for p in state.processes if node_prefix(p) is not None)


def _load(settings: Settings) -> StackState:
    state = load_state(settings)
    if state is None:
        raise StackError(f"no stack is recorded under {settings.home}: nothing to heal")
    return state


def _record(state: StackState, name: str) -> ProcessRecord:
    for record in state.processes:
        if record.name == name:
            return record
    raise StackError(f"no process named {name!r} in the stack "
                     f"(known: {[p.name for p in state.processes]})")


def _replace(settings: Settings, state: StackState, record: ProcessRecord) -> None:
    state.processes = [record if p.name == record.name else p for p in state.processes]
    save_state(settings, state)


def _wait_ready(settings: Settings, state: StackState, record: ProcessRecord) -> None:
    timeout = settings.start_timeout_s
    prefix = node_prefix(record)
    if record.name == "valkey" and state.broker_url:
        wait_for_redis(state.broker_url, record, timeout)
    elif prefix is not None:
        wait_for_workers(settings, [record], [prefix], timeout)
    elif record.name == "api":
        wait_for_port(settings.api_host, settings.api_port, record, timeout)


def _guarded(step: Callable[..., T], *args: object, attempts: int = 10) -> T | None:
    """Run a step that follows a restart until it succeeds, ``attempts`` times at most, a
    second apart: a broker that has just come back drops old connections, and workers take a
    moment to reconnect. None when every attempt failed (logged)."""
    for attempt in range(1, attempts + 1):
        try:
            return step(*args)
        except Exception as exc:
            log.warning("%s failed (attempt %d of %d): %s", step.__name__, attempt, attempts,
                        exc)
            time.sleep(1.0)
    log.error("%s gave up after %d attempts", step.__name__, attempts)
    return None


def _restore_orphans(settings: Settings, workers: int) -> float | None:
    """Restore what nobody holds; returns the oldest restored delivery's time, if any."""
    from ragq.workers.client import client_app
    from ragq.workers.redelivery import restore_orphans, uses_redis_transport

    app = client_app(settings)
    if not uses_redis_transport(app):
        return None
    restored = restore_orphans(app, workers=workers)
    log.warning("restored %d deliveries nobody held", restored.count)
    return restored.oldest_delivery_at


def _resume_stalled(settings: Settings, workers: int, idle_s: float) -> None:
    from ragq.workers.client import client_app
    from ragq.workers.redelivery import uses_redis_transport
    from ragq.workers.resources import resources_for
    from ragq.workers.stalls import resume_stalled_jobs

    app = client_app(settings)
    if not uses_redis_transport(app):
        return
    resumed = resume_stalled_jobs(app, resources_for(settings).engine,
                                  idle_s=max(idle_s, HEALED_IDLE_S),
                                  workers=workers, running_for_s=settings.task_time_limit_s)
    if resumed:
        log.warning("resumed %d job(s) nothing carried: %s", len(resumed), ", ".join(resumed))


def _extend_deadlines(settings: Settings, outage_s: float) -> None:
    from ragq.ledger import extend_open_deadlines, session_scope
    from ragq.workers.wiring import build_ledger_engine

    engine = build_ledger_engine(settings)
    try:
        with session_scope(engine) as session:
            moved = extend_open_deadlines(session, by=timedelta(seconds=outage_s))
    finally:
        engine.dispose()
    log.warning("moved the deadlines of %d open jobs by %.1fs", moved, outage_s)


def watch(settings: Settings, stop: threading.Event) -> None:
    """Heal the recorded stack until ``stop`` is set or the stack is no longer recorded; run
    the recovery sweep beside it, in its own thread, so a sweep waiting on a broker that is
    down never holds back the restart of that broker."""
    sweeper = threading.Thread(target=_sweep_until, args=(settings, stop), daemon=True,
                               name="recovery-sweep")
    sweeper.start()
    seen: dict[str, float] = {}
    while not stop.wait(settings.supervisor_poll_s):
        _reap_children()
        state = load_state(settings)
        if state is None:
            return
        if state.owner is not None and not state.owner.is_running():
            _stop_orphaned_stack(settings, state)
            stop.set()
            return
        for record in state.processes:
            if record.name == SUPERVISOR or stop.is_set():
                continue
            if record.is_running():
                seen[record.name] = time.time()
                continue
            try:
                heal(settings, record.name, known_good_at=seen.get(record.name, time.time()))
            except Exception:  # keep watching the others; the next poll tries again
                log.exception("could not restart %s", record.name)


def _stop_orphaned_stack(settings: Settings, state: StackState) -> None:
    """Stop every other process of a stack whose owner died without `ragq down` (a killed test
    run), newest first as `down` does, and clear its record."""
    from ragq.workers.processes import stop
    from ragq.workers.stack_state import clear_state

    assert state.owner is not None
    log.warning("the stack's owner (pid %s) is gone: stopping the stack", state.owner.pid)
    for record in reversed(state.processes):
        if record.name != SUPERVISOR:
            stop(record, timeout_s=10.0)
    clear_state(settings)


def _sweep_until(settings: Settings, stop: threading.Event) -> None:
    """The recovery sweep every `RAGQ_SWEEPER_INTERVAL_S`: the same :class:`Sweeper` as
    `ragq sweeper` runs, so an embedded stack heals lost messages as any topology does."""
    from ragq.workers.sweeper import run_sweeper

    run_sweeper(settings, stop)


def sweep_waiting(settings: Settings) -> None:
    """Start the waiting jobs nobody started: a job's ending starts the next ones itself, but
    not when its process died between the two, or when the ledger was busy just then."""
    from ragq.workers.client import client_app
    from ragq.workers.resources import resources_for
    from ragq.workers.waiting import start_waiting_jobs

    try:
        start_waiting_jobs(client_app(settings), resources_for(settings).engine, settings)
    except Exception as exc:  # the next sweep tries again
        log.warning("starting waiting jobs failed: %s", exc)


def _reap_children() -> None:
    """Collect the exit status of replacements that died, so they do not linger as zombies."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def main() -> None:
    """Entry point of the resident supervisor process."""
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    watch(build_settings(), stop)


if __name__ == "__main__":
    main()
