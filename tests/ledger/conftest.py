"""Ledger fixtures: a fresh SQLite file per test, and a fresh PostgreSQL schema when one is offered.

PostgreSQL tests run when ``RAGQ_TEST_POSTGRES_URL`` names a database the tests may create schemas
in (e.g. ``postgresql://postgres@127.0.0.1:5432/test``); each test gets its own schema through
``search_path``, dropped afterwards, so reruns and parallel runs never see each other's tables.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from ragq.ledger import JobRow, make_engine, normalize_url, session_scope
from tests.ledger_template import migrated

Race = Callable[[int, Callable[[int], Any]], list[Any]]
POSTGRES_ENV = "RAGQ_TEST_POSTGRES_URL"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file that does not exist yet, in a directory that does not exist yet either."""
    return f"sqlite:///{tmp_path / 'home' / 'ledger.db'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL whose connections live in a new, empty schema; skipped without a test server."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set; e.g. postgresql://postgres@127.0.0.1:5432/test")
    schema = f"ragq_test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(base)
    with admin.begin() as connection:
        connection.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    url = normalize_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as connection:
            connection.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def ledger_url(request: pytest.FixtureRequest) -> str:
    """Each test that takes this runs once per backend."""
    return str(request.getfixturevalue(f"{request.param}_url"))


@pytest.fixture
def migrated_url(ledger_url: str) -> str:
    """A ledger URL whose schema is at head."""
    migrated(ledger_url)
    return ledger_url


@pytest.fixture
def engine(migrated_url: str) -> Iterator[Engine]:
    """An engine on a migrated ledger, disposed before its database is dropped."""
    built = make_engine(migrated_url)
    try:
        yield built
    finally:
        built.dispose()


@pytest.fixture
def race() -> Race:
    """Run ``fn(i)`` in ``n`` threads released together by a barrier; return results in order."""

    def run(n: int, fn: Callable[[int], Any]) -> list[Any]:
        barrier = threading.Barrier(n)

        def start(i: int) -> Any:
            barrier.wait(timeout=30)
            return fn(i)

        with ThreadPoolExecutor(max_workers=n) as pool:
            return list(pool.map(start, range(n)))

    return run


def new_job(engine: Engine) -> str:
    """A queued job with no budget yet; its id."""
    with session_scope(engine) as session:
        job = JobRow(tenant="t", collection="c", question="q")
        session.add(job)
        session.flush()
        return job.id
