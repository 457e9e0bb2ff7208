"""Fixtures that build real parts: an embedded stack started the way `ragq up` starts it, and,
when the CI machine offers them, the same stack on its Redis and PostgreSQL servers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ragq.settings import Settings, build_settings
from ragq.workers import supervisor
from ragq.workers.client import call

pytest_plugins = ["tests.fakes.plugin"]


STACK_FIXTURES = {"stack", "full_stack"}
"""Fixtures that start a stack: a test using one (directly or through another fixture) is a
``stack`` test, so ``pytest -m "not stack"`` is the fast suite."""

_running: list[pytest.Item] = []


@pytest.hookimpl(tryfirst=True)  # before xdist turns -n into workers
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A run that leaves the stack tests out (``-m "not stack"``) is spread over every core
    (pytest-xdist) unless ``-n`` says otherwise; a run with them stays in one process. Stacks
    share this machine's broker queues, Redis databases and ports, so two must never run side
    by side, and xdist's ``loadgroup`` cannot keep them together under pytest 9.2 (it renames
    node ids through an attribute pytest no longer reads)."""
    if hasattr(config, "workerinput"):  # an xdist worker: it must not start workers of its own
        return
    unset = getattr(config.option, "numprocesses", 0) is None  # absent under -p no:xdist
    if unset and _leaves_out_stack_tests(config.option.markexpr):
        config.option.numprocesses = "auto"


def _leaves_out_stack_tests(markexpr: str) -> bool:
    """True when ``-m`` deselects a test that carries every mark (so surely a stack test)."""
    if not markexpr:
        return False
    from _pytest.mark.expression import Expression

    return not Expression.compile(markexpr).evaluate(lambda *_args, **_kw: True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if STACK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.stack)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running[:] = [item]


def _guarded_up(up: Any) -> Any:
    """``supervisor.up`` refusing to run for a test without the ``stack`` marker (whatever the
    scope of the fixture that calls it), naming the fix."""

    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _running and _running[0].get_closest_marker("stack") is None:
            raise AssertionError(f"{_running[0].nodeid} starts a stack: mark it "
                                 "@pytest.mark.stack or add its fixture to STACK_FIXTURES")
        return up(*args, **kwargs)

    return guarded


supervisor.up = _guarded_up(supervisor.up)  # type: ignore[method-assign]

REDIS_URL = os.environ.get("RAGQ_TEST_REDIS_URL")
POSTGRES_URL = os.environ.get("RAGQ_TEST_POSTGRES_URL")
AMQP_URL = os.environ.get("RAGQ_TEST_AMQP_URL")
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@dataclass
class Stack:
    """A running stack and the settings that reach it."""

    settings: Settings
    kind: str

    def call(self, name: str, *args: object, timeout_s: float = 120.0) -> object:
        return call(self.settings, name, *args, timeout_s=timeout_s)


def _fresh_postgres_database(url: str) -> tuple[str, str]:
    """Create an empty database on the test server; returns (its URL, its name)."""
    import psycopg

    name = f"ragq_test_{uuid.uuid4().hex[:8]}"
    admin = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = admin.rsplit("/", 1)[0]
    return f"{base}/{name}", name


def _drop_postgres_database(url: str, name: str) -> None:
    import psycopg

    admin = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def _other_redis_db(url: str, db: int) -> str:
    """``url`` on database ``db`` (the RabbitMQ stack keeps its results apart from the Redis
    stack's broker)."""
    return f"{url.rsplit('/', 1)[0]}/{db}"


def _purge_amqp(url: str) -> None:
    """Empty ragq's queues on the RabbitMQ server, so a run never sees an earlier run's tasks."""
    from kombu import Connection

    from ragq.workers.queues import Queue

    with Connection(url) as conn:
        for queue in Queue:
            channel = conn.channel()
            try:
                channel.queue_purge(queue.value)
            except conn.channel_errors:  # not declared yet: nothing to purge
                pass
            finally:
                if channel.is_open:
                    channel.close()


def inherited_settings() -> list[str]:
    """The ``RAGQ_`` settings in this process's environment (the tests' own ``RAGQ_TEST_*``
    aside): a stack a test starts must not pick up another stack's broker or database."""
    return [k for k in os.environ if k.startswith("RAGQ_") and not k.startswith("RAGQ_TEST")]


@contextmanager
def running_stack(overrides: dict[str, object], *, kind: str = "embedded") -> Iterator[Stack]:
    """A stack started by the supervisor behind `ragq up` with exactly ``overrides`` as its
    settings (``{"home": …, "provider": "openai"}``), stopped by `ragq down` on exit.

    Workers inherit the environment, so it describes this stack (not the developer's) while the
    stack runs, and is restored afterwards.
    """
    env_backup = dict(os.environ)
    for key in inherited_settings():
        del os.environ[key]
    os.environ.update({f"RAGQ_{k.upper()}": str(v) for k, v in overrides.items()})
    settings = build_settings()
    try:
        # Owned by this test run: killed before its `down`, the supervisor stops the stack.
        supervisor.up(settings, owner_pid=os.getpid())
        yield Stack(settings, kind)
    finally:
        supervisor.down(settings)
        os.environ.clear()
        os.environ.update(env_backup)


STACK_KINDS = [
    pytest.param("embedded", id="embedded"),
    pytest.param(
        "servers", id="redis+postgres",
        marks=pytest.mark.skipif(
            not (REDIS_URL and POSTGRES_URL),
            reason="set RAGQ_TEST_REDIS_URL and RAGQ_TEST_POSTGRES_URL to run on real servers",
        ),
    ),
    pytest.param(
        "rabbitmq", id="rabbitmq+postgres",
        marks=pytest.mark.skipif(
            not (AMQP_URL and REDIS_URL and POSTGRES_URL),
            reason="set RAGQ_TEST_AMQP_URL (with RAGQ_TEST_REDIS_URL for results and "
                   "RAGQ_TEST_POSTGRES_URL) to run on RabbitMQ",
        ),
    ),
]


@pytest.fixture(scope="session", params=STACK_KINDS)
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Stack]:
    """A stack started by the supervisor behind `ragq up`, stopped by `ragq down` at the end."""
    home = tmp_path_factory.mktemp(f"ragq-{request.param}")
    # Webhook receivers in tests are loopback servers, and retries must not take minutes.
    overrides: dict[str, object] = {"home": home, "webhook_allow_private": True,
                                    "webhook_backoff_base_s": 0.05, "webhook_backoff_max_s": 0.5}
    dropped: tuple[str, str] | None = None
    if request.param == "servers":
        assert REDIS_URL and POSTGRES_URL
        _flush_redis(REDIS_URL)
        db_url, db_name = _fresh_postgres_database(POSTGRES_URL)
        dropped = (POSTGRES_URL, db_name)
        overrides |= {"broker_url": REDIS_URL, "database_url": db_url}
    if request.param == "rabbitmq":
        assert AMQP_URL and REDIS_URL and POSTGRES_URL
        _purge_amqp(AMQP_URL)
        results = _other_redis_db(REDIS_URL, int(REDIS_URL.rsplit("/", 1)[1] or 0) - 1)
        _flush_redis(results)
        db_url, db_name = _fresh_postgres_database(POSTGRES_URL)
        dropped = (POSTGRES_URL, db_name)
        overrides |= {"broker_url": AMQP_URL, "result_backend_url": results,
                      "database_url": db_url}
    try:
        with running_stack(overrides, kind=request.param) as started:
            yield started
    finally:
        if dropped:
            _drop_postgres_database(*dropped)


@pytest.fixture
def collection() -> str:
    """A collection name no other test uses."""
    return f"t_{uuid.uuid4().hex[:10]}"
