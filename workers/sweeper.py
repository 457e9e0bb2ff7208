"""The recovery sweep: resume every job whose next message was lost, on any broker, from the
ledger alone.

Every step that hands its job on records that message in the ledger (``jobs.next_step``)
before sending it. A message can still be lost — a worker killed between commit and send, a
broker restarted before it persisted a message, a chord whose join counter in the result
backend was lost between the header's stores — and then no step of the job would ever run
again. Each round, the sweeper:

1. starts the waiting jobs the window has room for, and sends again the route steps of claims
   that were lost (:func:`ragq.workers.waiting.start_waiting_jobs`);
2. finds the open jobs nothing has moved for ``RAGQ_STALL_AFTER_S`` (no charge: every step
   pays one) and sends each the step that is due (:func:`due_step`): its recorded message, or,
   for a layer whose every sub-query has ended in the ledger, the layer's follow-up
   (``after_layer``) — its chord's join was lost, not its work;
3. moves each resumed job's deadline by the time it stood still, so an outage is not spent
   from the job's latency budget — once per stall: a job the last resumption did not move is
   sent its step again, but its deadline stays. Were it moved on every round, a job that no
   resend can move would never run out of latency budget, and would stay open (and hold a
   place in the open-jobs window) forever.

It needs nothing from the broker, so it works the same on Redis, Valkey and RabbitMQ. A job
merely slow past the idle time gets its step twice; steps are keyed in the ledger, so a
duplicate costs repeated work, never a double charge or row. (Where queues can be read without
taking messages off them — Redis protocol — a job whose message waits in a queue is left to it,
so a backlog is not doubled.)

Several replicas may run: a lease in the ledger (:mod:`ragq.ledger.sweeper_lease`) lets one act
per round. It runs as `ragq sweeper` (the compose topology's ``sweeper`` service) and inside the
embedded stack's resident supervisor, which calls the same :class:`Sweeper`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta

from celery import Celery
from sqlalchemy.engine import Engine

from ragq.ledger import extend_open_deadlines, session_scope
from ragq.ledger.stalls import IdleJob, Step, ended_sub_queries, idle_jobs, mark_resumed
from ragq.ledger.sweeper_lease import record_round, take_lease
from ragq.orchestration.flow import Enqueue, EnqueueLayer
from ragq.schemas.tasks import Task
from ragq.settings import Settings
from ragq.tasks.dispatch import CeleryDispatcher
from ragq.workers.waiting import start_waiting_jobs

__all__ = ["SweepRound", "Sweeper", "due_step", "run_sweeper"]

log = logging.getLogger(__name__)

LEASE_ROUNDS = 3
"""A lease lasts this many rounds: a holder that died is replaced after about as long."""


@dataclass(frozen=True)
class SweepRound:
    """What one round did. ``acted`` is False when another replica held the lease."""

    acted: bool
    started: int = 0
    resumed: list[str] = field(default_factory=list)
    joined: list[str] = field(default_factory=list)
    """Of ``resumed``: the jobs sent their layer's follow-up (a lost chord join)."""


def due_step(step: Step, ended: Collection[int]) -> Step:
    """The step that moves a stalled job on: its recorded message, except a layer whose every
    sub-query has ended (``ended``: indexes of its round's ended sub-queries), which waits only
    for its join: then ``after_layer`` of that layer, not the whole chord again."""
    if isinstance(step, EnqueueLayer) and set(step.indexes) <= set(ended):
        return Enqueue(Task.AFTER_LAYER, (step.round, step.layer))
    return step


def default_holder() -> str:
    """This replica's name in the lease: host and pid, unique across machines."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Sweeper:
    """One replica of the sweep over ``engine``'s ledger, sending through ``app``."""

    def __init__(self, app: Celery, engine: Engine, settings: Settings, *,
                 holder: str | None = None):
        self._app = app
        self._engine = engine
        self._settings = settings
        self.holder = holder or default_holder()

    @property
    def interval_s(self) -> float:
        return self._settings.sweeper_interval_s

    def sweep(self) -> SweepRound:
        """One round, if this replica holds the lease. Raises LedgerError when the ledger is
        out of reach, kombu's OperationalError when the broker is (the next round tries
        again)."""
        term = timedelta(seconds=self.interval_s * LEASE_ROUNDS)
        with session_scope(self._engine) as session:
            if not take_lease(session, holder=self.holder, term=term):
                return SweepRound(acted=False)
        started = start_waiting_jobs(self._app, self._engine, self._settings)
        resumed, joined = self._resume_stalled()
        with session_scope(self._engine) as session:
            record_round(session, holder=self.holder, resumed=len(resumed), joined=len(joined),
                         started=started)
        return SweepRound(True, started, resumed, joined)

    def _resume_stalled(self) -> tuple[list[str], list[str]]:
        with session_scope(self._engine, readonly=True) as session:
            idle = idle_jobs(session, idle_s=self._settings.stall_after_s)
        idle = self._not_queued(idle)
        if not idle:
            return [], []
        with session_scope(self._engine, readonly=True) as session:
            due = {job.job_id: self._due(session, job) for job in idle}
        with self._app.producer_or_acquire() as producer:  # the broker first: see waiting.py
            producer.connection.ensure_connection(max_retries=1)
        with session_scope(self._engine) as session:
            marked = set(mark_resumed(session, list(due)))
            for job in idle:
                if job.job_id in marked and job.idle_s != float("inf") and not job.again:
                    extend_open_deadlines(session, by=timedelta(seconds=job.idle_s),
                                          job_ids=[job.job_id])
        dispatcher = CeleryDispatcher(self._app)
        resumed = [job for job in idle if job.job_id in marked]
        for job in resumed:
            _send(dispatcher, job, due[job.job_id])
        joined = [job.job_id for job in resumed if due[job.job_id] != job.step]
        return [job.job_id for job in resumed], joined

    def _not_queued(self, idle: list[IdleJob]) -> list[IdleJob]:
        """``idle`` less the jobs with a message waiting in a flow queue, where the broker lets
        queues be read without taking messages off them (Redis protocol): under a backlog a
        job may wait its turn past the idle time, and sending its step again would only add
        to the backlog. Elsewhere (RabbitMQ) all of them: a duplicate is harmless."""
        from ragq.workers.redelivery import uses_redis_transport
        from ragq.workers.stalls import queued_job_ids

        if not idle or not uses_redis_transport(self._app):
            return idle
        queued = queued_job_ids(self._app)
        return [job for job in idle if job.job_id not in queued]

    @staticmethod
    def _due(session: object, job: IdleJob) -> Step:
        from sqlalchemy.orm import Session

        assert isinstance(session, Session)
        if not isinstance(job.step, EnqueueLayer):
            return job.step
        return due_step(job.step, ended_sub_queries(session, job.job_id, job.step.round))

    def run(self, stop: threading.Event) -> None:
        """Sweep every ``sweeper_interval_s`` until ``stop`` is set; a round that fails (a
        ledger or broker out of reach) is logged, and the next one tries again."""
        log.info("sweeper %s: a round every %.1fs, jobs idle for %.0fs resumed", self.holder,
                 self.interval_s, self._settings.stall_after_s)
        while not stop.wait(self.interval_s):
            try:
                self.sweep()
            except Exception as exc:
                log.warning("sweeper %s: round failed: %s", self.holder, exc)


def _send(dispatcher: CeleryDispatcher, job: IdleJob, step: Step) -> None:
    log.warning("job=%s idle for %.0fs: sending %s again", job.job_id, job.idle_s, step)
    dispatcher.send_again(job.job_id, step, job.priority)


def run_sweeper(settings: Settings, stop: threading.Event) -> None:
    """`ragq sweeper`: one replica of the sweep on this process's ledger and broker, until
    ``stop`` is set."""
    from ragq.workers.client import client_app
    from ragq.workers.wiring import build_ledger_engine

    engine = build_ledger_engine(settings)
    try:
        Sweeper(client_app(settings), engine, settings).run(stop)
    finally:
        engine.dispose()
