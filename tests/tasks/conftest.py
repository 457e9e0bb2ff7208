"""Fixtures of the flow tests that run workers against the fake OpenAI server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from celery import Celery
from celery.contrib.testing.worker import start_worker

from ragq.schemas.tasks import Queue, Task
from ragq.settings import Settings, build_settings
from ragq.workers.app import create_app
from ragq.workers.resources import resources_for
from tests.conftest import inherited_settings
from tests.fakes import FakeOpenAIServer
from tests.ledger_template import migrated


@pytest.fixture(scope="module")
def chat_server() -> Iterator[FakeOpenAIServer]:
    """Module-scoped so that it outlives the workers of the module's stack."""
    with FakeOpenAIServer() as server:
        yield server


def openai_overrides(server: FakeOpenAIServer, home: Path, **more: object) -> dict[str, object]:
    """Settings of a small stack whose every model role is answered by ``server``: one I/O
    process (the crash tests kill *the* general worker) of two threads."""
    return {"home": home, "provider": "openai", "openai_base_url": server.v1_url,
            "openai_api_key": "sk-test", "general_worker_processes": 1,
            "general_worker_threads": 2,
            "vector_worker_threads": 2, **more}


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """Celery's in-process test worker on an in-memory broker: the real tasks, chords, task
    replacement and redelivery, and no stack (no broker process, no worker processes). The
    ledger is SQLite and the vector store the embedded engine, in a directory of the module's
    own; one worker serves the module's tests."""
    with _without_ragq_environment():
        yield from _queue(tmp_path_factory.mktemp("queue"))


@contextmanager
def _without_ragq_environment() -> Iterator[None]:
    """The session's own RAGQ_ settings (not the RAGQ_TEST_ servers) hidden: these workers
    are built from explicit settings only."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for key in inherited_settings():
            monkeypatch.delenv(key)
        yield


@pytest.fixture(scope="module")
def tight_queue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """:func:`queue` whose workers have one ledger connection (and two more under load) and
    wait 0.2 s for one: a ledger out of reach on demand."""
    with _without_ragq_environment():
        yield from _queue(tmp_path_factory.mktemp("tight"), ledger_pool_size=1,
                          ledger_pool_timeout_s=0.2)


@pytest.fixture(scope="module")
def narrow_queue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """:func:`queue` that keeps at most two jobs open: a backlog waits in line."""
    with _without_ragq_environment():
        yield from _queue(tmp_path_factory.mktemp("narrow"), max_open_jobs=2)


def _queue(home: Path, **more: object) -> Iterator[Settings]:
    settings = build_settings(home=home, broker_url="memory://",
                              result_backend_url="cache+memory://", cache_enabled=False, **more)
    migrated(settings.ledger_url)
    app = create_app(settings)
    # The in-memory transport polls its queues, once a second by default: every hop would wait.
    app.conf.broker_transport_options = {**app.conf.broker_transport_options,
                                         "polling_interval": 0.01}
    _purge(app)
    stopped = threading.Event()
    with start_worker(app, pool="threads", concurrency=4, perform_ping_check=False,
                      loglevel="WARNING"):
        yield settings
        _wake_until(app, stopped)
    stopped.set()
    _purge(app)
    resources_for(settings).close()


def _wake_until(app: Celery, stopped: threading.Event) -> None:
    """Send a no-op every 50 ms until ``stopped``: the in-memory transport's consumer sleeps in
    two-second polls and sees the worker's stop only between them, so without a message the
    worker's exit takes about 4 s."""

    def wake() -> None:
        while not stopped.wait(0.05):
            app.send_task(Task.ECHO, args=(0,), ignore_result=True)

    threading.Thread(target=wake, daemon=True).start()


def _purge(app: Celery) -> None:
    """The in-memory broker lives as long as the process: empty it between tests."""
    with app.connection_for_write() as connection:
        for queue in Queue:
            connection.default_channel.queue_purge(queue.value)
