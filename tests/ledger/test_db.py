"""Engines and sessions: URL handling, SQLite tuning, transactions and concurrent writers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select, text

from ragq.ledger import (
    IngestRunRow,
    LedgerConfigurationError,
    LedgerError,
    LedgerIntegrityError,
    LedgerUnavailableError,
    create_ingest_run,
    make_engine,
    normalize_url,
    read_scope,
    session_scope,
    upgrade,
)
from tests.ledger.conftest import Race

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("given", "driver"),
    [
        ("postgres://u:p@h:5432/db", "postgresql+psycopg"),
        ("postgresql://u:p@h/db", "postgresql+psycopg"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg"),
        ("sqlite:////tmp/x.db", "sqlite"),
    ],
)
def test_normalize_url_points_postgres_at_psycopg(given: str, driver: str) -> None:
    url = normalize_url(given)
    assert url.drivername == driver
    assert url.database in {"db", "/tmp/x.db"}


@pytest.mark.parametrize("given", ["mysql://u@h/db", "not a url", "mongodb://h/db"])
def test_unsupported_url_is_refused_with_the_valid_forms(given: str) -> None:
    with pytest.raises(LedgerConfigurationError, match=r"sqlite:///.*postgresql://"):
        make_engine(given)


def test_unsupported_url_message_hides_the_password() -> None:
    with pytest.raises(LedgerConfigurationError) as caught:
        normalize_url("mysql://user:hunter2@h/db")
    assert "hunter2" not in str(caught.value)


def test_sqlite_engine_creates_the_directory_and_sets_pragmas(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    try:
        with engine.connect() as connection:
            pragmas = {
                name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
                for name in ("journal_mode", "busy_timeout", "foreign_keys", "synchronous")
            }
    finally:
        engine.dispose()
    assert Path(sqlite_url.removeprefix("sqlite:///")).is_file()
    assert pragmas == {
        "journal_mode": "wal",
        "busy_timeout": 30_000,
        "foreign_keys": 1,
        "synchronous": 1,
    }


def test_in_memory_sqlite_is_one_database_for_every_connection() -> None:
    # Without a single shared connection each checkout would open a new, empty database.
    engine = make_engine("sqlite://")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (n INTEGER)")
    worker = threading.Thread(target=_insert, args=(engine, 1))
    worker.start()
    worker.join()
    _insert(engine, 2)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM t").scalar() == 2


def _insert(engine: Engine, value: int) -> None:
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t (n) VALUES (:n)"), {"n": value})


def test_session_scope_commits_on_success(engine: Engine) -> None:
    with session_scope(engine) as session:
        run_id = create_ingest_run(session, collection="c", source_path="p").id
    with session_scope(engine, readonly=True) as session:
        assert session.get(IngestRunRow, run_id) is not None


def test_rows_stay_readable_after_either_scope(engine: Engine) -> None:
    with session_scope(engine) as session:
        written = create_ingest_run(session, collection="c", source_path="p")
    with session_scope(engine, readonly=True) as session:
        read = session.get(IngestRunRow, written.id)
    assert read is not None
    assert (written.collection, read.source_path, read.chunks) == ("c", "p", 0)


def test_session_scope_rolls_back_and_reraises_other_errors(engine: Engine) -> None:
    with pytest.raises(KeyError), session_scope(engine) as session:
        create_ingest_run(session, collection="c", source_path="p")
        raise KeyError("boom")
    with session_scope(engine, readonly=True) as session:
        assert session.scalar(select(func.count()).select_from(IngestRunRow)) == 0


def test_session_scope_translates_database_errors(engine: Engine) -> None:
    with pytest.raises(LedgerIntegrityError) as caught, session_scope(engine) as session:
        session.add(IngestRunRow(id="ing_same", collection="c", source_path="p"))
        session.flush()
        session.add(IngestRunRow(id="ing_same", collection="c", source_path="p"))
    assert caught.value.detail
    assert isinstance(caught.value.__cause__, Exception)


def test_readonly_scope_refuses_to_drop_pending_writes(engine: Engine) -> None:
    with (
        pytest.raises(LedgerError, match="readonly"),
        session_scope(engine, readonly=True) as session,
    ):
        session.add(IngestRunRow(collection="c", source_path="p"))
    with session_scope(engine, readonly=True) as session:
        assert session.scalar(select(func.count()).select_from(IngestRunRow)) == 0


def test_unreachable_postgres_is_reported_unavailable() -> None:
    engine = make_engine("postgresql://nobody@127.0.0.1:1/nothing?connect_timeout=2")
    with pytest.raises(LedgerUnavailableError), session_scope(engine) as session:
        session.execute(text("SELECT 1"))


def test_read_then_write_transactions_never_hit_database_is_locked(
    sqlite_url: str, race: Race
) -> None:
    # The classic SQLite deadlock: two deferred transactions both read, then both try to write;
    # one gets SQLITE_BUSY at once, whatever the busy timeout. BEGIN IMMEDIATE must prevent it.
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)

    def read_then_write(i: int) -> None:
        for _ in range(10):
            with session_scope(engine) as session:
                session.scalar(select(func.count()).select_from(IngestRunRow))
                time.sleep(0.001)
                create_ingest_run(session, collection=f"c{i}", source_path="p")

    try:
        race(12, read_then_write)
        with session_scope(engine, readonly=True) as session:
            assert session.scalar(select(func.count()).select_from(IngestRunRow)) == 120
    finally:
        engine.dispose()


_WRITER = textwrap.dedent(
    """
    import sys, time
    from ragq.ledger import add_ingest_counts, make_engine, session_scope
    url, run_id, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    engine = make_engine(url)
    time.sleep(max(0.0, start - time.time()))
    for _ in range(40):
        with session_scope(engine) as session:
            add_ingest_counts(session, run_id=run_id, chunks=1)
    """
)


def test_writer_processes_share_one_sqlite_file(sqlite_url: str) -> None:
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    with session_scope(engine) as session:
        run_id = create_ingest_run(session, collection="c", source_path="p").id
    start = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, sqlite_url, run_id, str(start)],
            cwd=REPO_ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0], errors
    with session_scope(engine, readonly=True) as session:
        assert session.get(IngestRunRow, run_id).chunks == 160  # type: ignore[union-attr]
    engine.dispose()


_FORK_CHECK = """
import multiprocessing, sys
from sqlalchemy import text
from ragq.ledger import make_engine

def child(engine, queue):
    with engine.connect() as connection:
        queue.put(id(connection.connection.dbapi_connection))

if __name__ == "__main__":
    engine = make_engine(sys.argv[1])
    with engine.connect() as connection:
        parent_id = id(connection.connection.dbapi_connection)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=child, args=(engine, queue))
    process.start()
    child_id = queue.get(timeout=30)
    process.join(timeout=30)
    assert process.exitcode == 0, process.exitcode
    assert child_id != parent_id, "the child reused the parent's connection"
    with engine.connect() as connection:  # the parent's pooled connection still works
        assert connection.execute(text("SELECT 1")).scalar() == 1
    print("ok")
"""


def test_forked_child_never_reuses_the_parents_connection(migrated_url: str) -> None:
    # Forked from a fresh interpreter: forking this multi-threaded test process (stack clients,
    # pools) can deadlock the child for reasons unrelated to the ledger.
    proc = subprocess.run([sys.executable, "-c", _FORK_CHECK, migrated_url], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def _turn(engine: Engine) -> threading.Lock:
    """The write turn of ``engine``'s SQLite connections in this process."""
    raw = engine.raw_connection()
    try:
        return raw.dbapi_connection.turn  # type: ignore[union-attr]
    finally:
        raw.close()


def test_a_sqlite_write_transaction_holds_the_turn_until_it_commits_or_rolls_back(
        sqlite_url: str) -> None:
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    turn = _turn(engine)
    try:
        with session_scope(engine, readonly=True) as session:
            session.execute(text("SELECT 1"))
            assert not turn.locked()  # readers never queue behind writers
        with session_scope(engine) as session:
            create_ingest_run(session, collection="c", source_path="p")
            session.flush()
            assert turn.locked()
        assert not turn.locked()
        with pytest.raises(RuntimeError), session_scope(engine) as session:
            create_ingest_run(session, collection="c", source_path="p")
            session.flush()
            raise RuntimeError("the step failed")
        assert not turn.locked()
        with pytest.raises(LedgerIntegrityError), session_scope(engine) as session:
            session.execute(text("INSERT INTO ingest_runs (id) VALUES (NULL)"))
        assert not turn.locked()
    finally:
        engine.dispose()


def test_a_second_writer_in_the_process_waits_for_the_first_to_commit(sqlite_url: str) -> None:
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    first_writing, second_done = threading.Event(), threading.Event()
    order: list[str] = []

    def second() -> None:
        first_writing.wait(timeout=30)
        with session_scope(engine) as session:
            create_ingest_run(session, collection="b", source_path="p")
            session.flush()
            order.append("second writes")
        second_done.set()

    thread = threading.Thread(target=second)
    thread.start()
    try:
        with session_scope(engine) as session:
            create_ingest_run(session, collection="a", source_path="p")
            session.flush()
            first_writing.set()
            assert not second_done.wait(timeout=0.3)  # it waits on the turn meanwhile
            order.append("first commits")
        thread.join(timeout=30)
        assert order == ["first commits", "second writes"] and second_done.is_set()
    finally:
        thread.join(timeout=30)
        engine.dispose()


def test_a_writer_that_cannot_begin_gives_the_turn_back(sqlite_url: str) -> None:
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    turn = _turn(engine)
    holder = make_engine(sqlite_url)  # another process's writer, as far as SQLite knows
    try:
        with holder.connect() as other, other.begin():
            other.exec_driver_sql("CREATE TABLE lock_holder (x INTEGER)")
            with engine.connect() as mine:
                mine.connection.dbapi_connection.execute(  # type: ignore[union-attr]
                    "PRAGMA busy_timeout = 50")
                with pytest.raises(Exception, match="locked"):
                    mine.begin()
                assert not turn.locked()
    finally:
        holder.dispose()
        engine.dispose()


def test_read_scope_reads_what_is_committed_without_waiting_for_a_writer(
        sqlite_url: str) -> None:
    """A snapshot's read scope is deferred: it neither takes nor waits for the write lock a
    step's transaction holds, and sees what was committed before it."""
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    with session_scope(engine) as session:
        create_ingest_run(session, collection="c", source_path="p")
    writing, release = threading.Event(), threading.Event()

    def writer() -> None:
        with session_scope(engine) as session:
            create_ingest_run(session, collection="c2", source_path="p")
            session.flush()
            writing.set()
            release.wait(timeout=30)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert writing.wait(timeout=30)
        started = time.monotonic()
        with read_scope(engine) as conn:
            count = conn.execute(select(func.count()).select_from(IngestRunRow)).scalar_one()
        waited = time.monotonic() - started
        still_writing = not release.is_set()
    finally:
        release.set()
        thread.join(timeout=30)
        engine.dispose()
    assert (count, still_writing) == (1, True)
    assert waited < 10  # a reader queued behind the writer would wait for release (30 s)


def test_read_scope_translates_database_errors(engine: Engine) -> None:
    with pytest.raises(LedgerError, match="no_such_table"), read_scope(engine) as conn:
        conn.execute(text("SELECT * FROM no_such_table"))
