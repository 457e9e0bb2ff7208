"""The recovery sweep (workers/sweeper.py) on real brokers, from the ledger alone: a stalled job
gets the step that is due — its recorded message, or its layer's follow-up when every
sub-query of the layer has ended (a lost chord join) — its deadline moves by the time it stood
still, a job not idle long enough is left alone, and of two replicas only the lease holder
acts. The same on a Valkey server and on RabbitMQ: nothing here asks the broker what it holds."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from hypothesis import given
from hypothesis import strategies as st
from kombu import Queue as KombuQueue
from sqlalchemy import Engine

from ragq.ledger import add_job, make_engine, session_scope
from ragq.ledger.budgets import charge_many, create_job_budget
from ragq.ledger.jobs import set_job_status
from ragq.ledger.models import JobBudgetRow, SubQueryRow, utcnow
from ragq.ledger.stalls import record_next_step
from ragq.orchestration.flow import Enqueue, EnqueueLayer
from ragq.schemas.statuses import BudgetDimension, JobStatus, SubQueryStatus
from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings, build_settings
from ragq.workers.app import create_app
from ragq.workers.queues import route_task
from ragq.workers.sweeper import Sweeper, due_step
from tests.conftest import AMQP_URL, REDIS_URL, inherited_settings
from tests.ledger_template import migrated
from tests.workers.test_stalls import _let_go_of_results

STALL_S = 0.5
JOB_ID = re.compile(r"job_[0-9A-Z]{26}")
VERIFY = Enqueue(Task.VERIFY, (0,))
LAYER = EnqueueLayer(0, 1, (0, 1))


@given(st.sets(st.integers(0, 6), min_size=1), st.sets(st.integers(0, 6)))
def test_a_layer_gets_its_follow_up_exactly_when_every_sub_query_of_it_ended(
        indexes: set[int], ended: set[int]) -> None:
    layer = EnqueueLayer(2, 3, tuple(sorted(indexes)))
    due = due_step(layer, ended)
    if indexes <= ended:
        assert due == Enqueue(Task.AFTER_LAYER, (2, 3))
    else:
        assert due == layer
    assert due_step(VERIFY, ended) == VERIFY


@dataclass
class World:
    """A ledger of its own and a Celery client on a broker no worker consumes."""

    settings: Settings
    app: Celery
    engine: Engine

    def sweeper(self, holder: str, **more: object) -> Sweeper:
        settings = self.settings.model_copy(update=more) if more else self.settings
        return Sweeper(self.app, self.engine, settings, holder=holder)


@pytest.fixture(params=["valkey", "rabbitmq"])
def world(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    for key in inherited_settings():
        monkeypatch.delenv(key)
    servers: dict[str, object]
    if request.param == "valkey":
        valkey: tuple[str, subprocess.Popen[bytes]] = request.getfixturevalue("valkey")
        servers = {"broker_url": valkey[0]}
    else:
        if not (AMQP_URL and REDIS_URL):
            pytest.skip("set RAGQ_TEST_AMQP_URL and RAGQ_TEST_REDIS_URL to sweep on RabbitMQ")
        servers = {"broker_url": AMQP_URL, "result_backend_url": REDIS_URL}
    settings = build_settings(home=tmp_path / "home", stall_after_s=STALL_S, **servers)
    migrated(settings.ledger_url)
    engine = make_engine(settings.ledger_url)
    app = create_app(settings, include_tasks=False)
    # Queues of this test's own: a worker of another stack on the same broker (the session's
    # RabbitMQ stack) must not take what the sweeper sends before the test reads it.
    prefix = f"sweep-{uuid.uuid4().hex[:8]}."
    app.conf.task_queues = [KombuQueue(prefix + q.value, routing_key=prefix + q.value)
                            for q in Queue]
    app.conf.task_routes = (lambda name, *_a, **_k:
                            {"queue": prefix + route_task(name, None, None, None)["queue"]},)
    app.amqp.queues = app.amqp.Queues(app.conf.task_queues)
    drain(app)
    try:
        yield World(settings, app, engine)
    finally:
        drain(app)
        with app.connection_for_write() as connection:  # RabbitMQ keeps queues: delete them
            for queue in app.amqp.queues.values():
                queue.bind(connection.default_channel).delete()
        _let_go_of_results(app)  # while the server still runs (the valkey fixture ends after)
        app.close()
        engine.dispose()


def drain(app: Celery) -> list[tuple[str, str]]:
    """Take every message off the flow's queues; (task name, job id) of each."""
    sent = []
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        for queue in app.amqp.queues.values():
            queue.bind(channel).declare()
            while (message := channel.basic_get(queue.name, no_ack=True)) is not None:
                headers = message.headers
                found = JOB_ID.search(f"{headers.get('argsrepr')} {headers.get('kwargsrepr')}")
                sent.append((headers["task"], found.group(0) if found else ""))
    return sorted(sent)


def stalled_job(engine: Engine, step: Enqueue | EnqueueLayer,
                ended: tuple[int, ...] = ()) -> str:
    """A job under way that paid a step, recorded ``step`` as its next message and whose
    message was lost; sub-queries 0 and 1 of round 0, ``ended`` of them ended."""
    with session_scope(engine) as session:
        job_id = add_job(session, batch_id=None, custom_id=None, position=None, tenant="t",
                         collection="c", question="q?", acl=["public"]).id
        set_job_status(session, job_id=job_id, status=JobStatus.RETRIEVING)
        create_job_budget(session, job_id=job_id, limits={BudgetDimension.STEPS: 50},
                          deadline_at=utcnow() + timedelta(seconds=60))
        charge_many(session, job_id=job_id, amounts={BudgetDimension.STEPS: 1},
                    idempotency_key="route")
        for index in (0, 1):
            status = SubQueryStatus.SUFFICIENT if index in ended else SubQueryStatus.RETRIEVING
            session.add(SubQueryRow(job_id=job_id, round=0, index=index, original_text="q",
                                    status=status))
        record_next_step(session, job_id, step)
    return job_id


def deadline(engine: Engine, job_id: str) -> float:
    with session_scope(engine, readonly=True) as session:
        row = session.get(JobBudgetRow, job_id)
        assert row is not None and row.deadline_at is not None
        return row.deadline_at.timestamp()


def test_a_stalled_job_gets_the_step_that_is_due_and_its_deadline_moves(world: World):
    verifying = stalled_job(world.engine, VERIFY)
    joined = stalled_job(world.engine, LAYER, ended=(0, 1))
    half_done = stalled_job(world.engine, LAYER, ended=(0,))
    before = {job: deadline(world.engine, job) for job in (verifying, joined, half_done)}
    time.sleep(STALL_S * 3)

    swept = world.sweeper("a").sweep()

    assert swept.acted and set(swept.resumed) == {verifying, joined, half_done}
    assert swept.joined == [joined]
    assert drain(world.app) == sorted([
        (Task.VERIFY, verifying), (Task.AFTER_LAYER, joined),  # the join alone, no search
        (Task.RETRIEVE, half_done), (Task.RETRIEVE, half_done)])  # the whole layer again
    for job, was in before.items():  # by the time it stood still, at least the idle time
        assert deadline(world.engine, job) - was >= STALL_S * 3


def test_a_job_no_resumption_moves_gets_its_step_again_but_its_deadline_moves_once(
        world: World):
    """A job that no resend moves must still run out of latency budget some day: were its
    deadline moved on every round, it would stay open for good."""
    job = stalled_job(world.engine, VERIFY)
    time.sleep(STALL_S * 3)
    assert world.sweeper("a").sweep().resumed == [job]
    moved_once = deadline(world.engine, job)
    time.sleep(STALL_S * 3)  # the step sent was lost as well: nothing moved the job

    assert world.sweeper("a").sweep().resumed == [job]

    assert drain(world.app) == [(Task.VERIFY, job), (Task.VERIFY, job)]
    assert deadline(world.engine, job) == moved_once


def test_a_job_is_left_alone_until_idle_long_enough_and_once_resumed(world: World):
    job = stalled_job(world.engine, VERIFY)
    assert world.sweeper("a", stall_after_s=600.0).sweep().resumed == []
    time.sleep(STALL_S * 3)
    assert world.sweeper("a", stall_after_s=600.0).sweep().resumed == []
    assert drain(world.app) == []
    assert world.sweeper("a").sweep().resumed == [job]
    assert world.sweeper("a", stall_after_s=600.0).sweep().resumed == []  # just resumed
    assert drain(world.app) == [(Task.VERIFY, job)]


def test_of_two_replicas_only_the_lease_holder_sweeps(world: World):
    job = stalled_job(world.engine, VERIFY)
    time.sleep(STALL_S * 3)
    first, second = world.sweeper("host-a:1"), world.sweeper("host-b:1")
    assert first.sweep().resumed == [job]
    time.sleep(STALL_S * 3)  # idle again: only the lease keeps the second replica out
    assert second.sweep().acted is False
    assert drain(world.app) == [(Task.VERIFY, job)]
    assert first.sweep().resumed == [job]
