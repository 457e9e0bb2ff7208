"""A step's next message waits out a broker that is away, then gives up loudly: its job must
not fail for a restart the supervisor heals in seconds, nor hang for good on a broker that
never comes back."""

from __future__ import annotations

import logging
import socket

import pytest
from celery import Celery

from ragq.schemas.tasks import Task
from ragq.tasks.dispatch import BROKER_AWAY, CeleryDispatcher


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def app_without_broker() -> Celery:
    app = Celery("away", broker=f"redis://127.0.0.1:{_closed_port()}/0")
    app.conf.task_publish_retry = False
    app.conf.broker_connection_retry = False
    return app


@pytest.mark.parametrize("send", [
    lambda d: d.enqueue("job_1", Task.VERIFY, (0,)),
    lambda d: d.enqueue_layer("job_1", 0, 0, (0, 1)),
])
def test_a_send_is_tried_again_after_each_pause_then_raises(app_without_broker, send, caplog):
    dispatcher = CeleryDispatcher(app_without_broker, backoff_s=(0.01, 0.02))
    with caplog.at_level(logging.WARNING, logger="ragq.tasks.dispatch"), \
            pytest.raises(BROKER_AWAY):
        send(dispatcher)
    retries = [r.getMessage() for r in caplog.records if "sending failed" in r.getMessage()]
    # Tried three times (kombu's own connection retries make each try take seconds here).
    assert len(retries) == 2 and all("Connection refused" in m for m in retries)
