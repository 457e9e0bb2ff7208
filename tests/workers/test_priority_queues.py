"""An interactive job's steps are taken before a bulk backlog's on the real brokers (a Valkey
server of the test's own, RabbitMQ on a vhost of the CI's), and RabbitMQ queues an older ragq
declared without priorities are upgraded, or refused while they hold messages
(docs/fair-share.md#priority)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery
from kombu import Connection, Consumer
from kombu import Queue as KombuQueue

from ragq.api.metrics import queue_depths
from ragq.errors import StackError
from ragq.schemas.tasks import Queue, Task
from ragq.schemas.ticket import Priority
from ragq.tasks.dispatch import CeleryDispatcher
from ragq.workers.app import create_app
from ragq.workers.priority_queues import ensure_priority_queues, queue_arguments
from ragq.workers.queues import route_task
from ragq.workers.stalls import queued_job_ids
from tests.conftest import AMQP_URL
from tests.fakes.broker import memory_settings

needs_rabbitmq = pytest.mark.skipif(not AMQP_URL,
                                    reason="set RAGQ_TEST_AMQP_URL to run on RabbitMQ")


def _app(tmp_path: Path, broker_url: str) -> Celery:
    return create_app(memory_settings(tmp_path, broker_url=broker_url), include_tasks=False)


def _taken_in_order(app: Celery, queue: str, count: int) -> list[str]:
    """The job ids of ``count`` messages as a worker takes them: a consumer with prefetch 1
    (the workers' setting), each message acknowledged before the next is delivered."""
    taken: list[str] = []

    def take(body: Any, message: Any) -> None:
        taken.append(body[0][0])
        message.ack()

    with app.connection_for_read() as connection:
        kombu_queue = next(q for q in app.conf.task_queues if q.name == queue)
        with Consumer(connection, queues=[kombu_queue], callbacks=[take], accept=["json"],
                      prefetch_count=1):
            while len(taken) < count:
                connection.drain_events(timeout=10)
    return taken


@pytest.fixture(params=["valkey", pytest.param("rabbitmq", marks=needs_rabbitmq)])
def broker_app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Celery]:
    """A client app on a real broker: the test's own Valkey, or the CI's RabbitMQ."""
    if request.param == "valkey":
        url, _ = request.getfixturevalue("valkey")
    else:
        assert AMQP_URL
        url = AMQP_URL
    app = _app(tmp_path, url)
    # Queues of this test's own: a worker of another stack on the same broker (the session's
    # RabbitMQ stack) must not take what the test sends before the test reads it.
    prefix = f"priority-{uuid.uuid4().hex[:8]}."
    app.conf.task_queues = [KombuQueue(prefix + q.value, routing_key=prefix + q.value,
                                       queue_arguments=queue_arguments()) for q in Queue]
    app.conf.task_routes = (lambda name, *_a, **_k:
                            {"queue": prefix + route_task(name, None, None, None)["queue"]},)
    app.amqp.queues = app.amqp.Queues(app.conf.task_queues)
    ensure_priority_queues(app)
    try:
        yield app
    finally:
        with app.connection_for_write() as connection:  # RabbitMQ keeps queues: delete them
            for queue in app.conf.task_queues:
                queue.bind(connection.default_channel).delete()


def test_a_worker_takes_the_interactive_step_before_the_bulk_backlog(broker_app: Celery):
    dispatcher = CeleryDispatcher(broker_app)
    for n in range(20):
        dispatcher.enqueue(f"bulk_{n}", Task.ROUTE, ())
    dispatcher.enqueue("interactive", Task.ROUTE, (), Priority.INTERACTIVE)
    dispatcher.enqueue("bulk_last", Task.ROUTE, (), Priority.BULK)
    (models,) = [q.name for q in broker_app.conf.task_queues if q.name.endswith(".models")]
    taken = _taken_in_order(broker_app, models, 22)
    assert taken[0] == "interactive"
    assert taken[1:] == [*(f"bulk_{n}" for n in range(20)), "bulk_last"]  # in send order


def test_a_redis_queue_counts_and_lists_every_priority(valkey: tuple[str, Any], tmp_path: Path):
    """/metrics' depth and the stall sweep's queued jobs see both priorities' messages (they
    sit in different lists on Redis)."""
    url, _ = valkey
    app = _app(tmp_path, url)
    bulk, interactive = "job_01ARZ3NDEKTSV4RRFFQ69G5FAV", "job_01ARZ3NDEKTSV4RRFFQ69G5FAW"
    dispatcher = CeleryDispatcher(app)
    dispatcher.enqueue(bulk, Task.ROUTE, (), Priority.BULK)
    dispatcher.enqueue(interactive, Task.ROUTE, (), Priority.INTERACTIVE)
    dispatcher.enqueue(bulk, Task.PLAN, (), Priority.BULK)
    assert sum(1 for key in redis.Redis.from_url(url).keys("models*")) == 2  # two lists
    assert queue_depths(url)[Queue.MODELS.value] == 3
    assert queued_job_ids(app) == {bulk, interactive}


@needs_rabbitmq
class TestUpgrade:
    """An older ragq's queue (no ``x-max-priority``) on RabbitMQ, under a name of the test's
    own so no other user of the broker is touched."""

    @pytest.fixture
    def old_queue(self, tmp_path: Path) -> Iterator[tuple[Celery, KombuQueue]]:
        assert AMQP_URL
        app = _app(tmp_path, AMQP_URL)
        name = f"t_priority_{uuid.uuid4().hex[:8]}"
        with Connection(AMQP_URL) as connection:
            KombuQueue(name, routing_key=name)(connection.default_channel).declare()
        try:
            yield app, KombuQueue(name, routing_key=name, queue_arguments=queue_arguments())
        finally:
            with Connection(AMQP_URL) as connection:
                connection.default_channel.queue_delete(name)

    def test_an_empty_queue_is_declared_again_with_priorities(
            self, old_queue: tuple[Celery, KombuQueue]) -> None:
        app, queue = old_queue
        assert ensure_priority_queues(app, [queue]) == [queue.name]
        # Declared with priorities now: the same declaration is accepted as it is, and the
        # older one (no arguments) is refused.
        assert ensure_priority_queues(app, [queue]) == []
        assert not _declares_as_older_ragq(queue.name)

    def test_a_queue_holding_messages_refuses_the_start_with_its_counts(
            self, old_queue: tuple[Celery, KombuQueue]) -> None:
        app, queue = old_queue
        assert AMQP_URL
        with Connection(AMQP_URL) as connection:
            producer = connection.Producer()
            for n in range(3):
                producer.publish({"n": n}, routing_key=queue.name)
        with pytest.raises(StackError, match=rf"{queue.name}: 3 message\(s\), 0 consumer"):
            ensure_priority_queues(app, [queue])
        assert _declares_as_older_ragq(queue.name) == 3  # left as it was, messages and all


def _declares_as_older_ragq(name: str) -> int | None:
    """Declare the queue as an older ragq did (no arguments): its message count, or None when
    the broker refuses (the queue takes priorities)."""
    assert AMQP_URL
    with Connection(AMQP_URL) as connection:
        channel = connection.channel()
        try:
            return int(channel.queue_declare(queue=name, durable=True, auto_delete=False)
                       .message_count)
        except connection.channel_errors:
            return None
