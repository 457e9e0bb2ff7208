"""Engines and sessions for the ledger, tuned for many writer processes on one database.

SQLite (the default) is shared by the CLI and several threaded Celery worker processes. WAL lets
readers run beside the writer, ``busy_timeout`` makes a writer wait for the lock instead of failing,
and every write transaction starts with ``BEGIN IMMEDIATE``: it takes the write lock up front, so
two transactions can never both read and then deadlock trying to upgrade to writing (the one case a
busy timeout cannot resolve, which surfaces as "database is locked").
PostgreSQL is reached through psycopg 3 whatever spelling of the URL is given.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, CursorResult, Result, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection, StaticPool

from ragq.ledger.errors import LedgerConfigurationError, LedgerError, translate_error

__all__ = [
    "SQLITE_BUSY_TIMEOUT_MS",
    "ledger_errors",
    "make_engine",
    "make_session_factory",
    "normalize_url",
    "race_guard",
    "session_scope",
]

SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for the lock before the ledger reports it unavailable."""

_READONLY_OPTION = "ragq_readonly"
_POSTGRES_DRIVERS = {"postgres": "postgresql+psycopg", "postgresql": "postgresql+psycopg"}
_SUPPORTED = "sqlite:///path/to/ledger.db or postgresql://user:password@host:5432/dbname"


def normalize_url(url: str | URL) -> URL:
    """Parse ``url`` and point bare ``postgres://``/``postgresql://`` URLs at psycopg 3.

    Raises :class:`LedgerConfigurationError` for a URL that does not parse or names a backend
    other than SQLite or PostgreSQL.
    """
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError as exc:
        message = f"ledger URL does not parse ({exc}); use {_SUPPORTED}"
        raise LedgerConfigurationError(message) from exc
    parsed = parsed.set(drivername=_POSTGRES_DRIVERS.get(parsed.drivername, parsed.drivername))
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        shown = parsed.render_as_string(hide_password=True)
        raise LedgerConfigurationError(f"unsupported ledger URL {shown!r}; use {_SUPPORTED}")
    return parsed


def ledger_exists(url: str | URL) -> bool:
    """Whether the ledger at ``url`` is there to read. A SQLite file that does not exist yet is
    not (connecting would create an empty one where a status was only asked for); a server's
    database is taken to be there (connecting tells)."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() != "sqlite" or _is_memory(parsed):
        return True
    return Path(parsed.database or "").is_file()


def _is_memory(url: URL) -> bool:
    return url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"


def _enable_wal(cursor: sqlite3.Cursor) -> None:
    # WAL is a property of the file, so this only works once per database. Switching a brand-new
    # file that another process is opening can fail with "database is locked" at once, without
    # the busy handler ever running; retry it for as long as the busy timeout would have waited.
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _on_sqlite_connect(
    dbapi_connection: Any, record: ConnectionPoolEntry, *, foreign_keys: bool, memory: bool
) -> None:
    # Autocommit at the driver level: pysqlite's own implicit BEGIN would defeat BEGIN IMMEDIATE
    # and break SAVEPOINT; the ``begin`` listener below emits BEGIN itself.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        if not memory:
            _enable_wal(cursor)
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")
    finally:
        cursor.close()


class _TurnTaking(sqlite3.Connection):
    """A SQLite connection whose write transactions take turns with the other connections of
    its engine in this process, on a lock held from ``BEGIN IMMEDIATE`` until the transaction's
    COMMIT or ROLLBACK has run.

    Without it every thread of a 256-thread worker that wanted to write met SQLite's lock and
    slept in its busy handler, 1, 2, 5 … up to 100 ms between tries, while the lock was mostly
    free: a writer that woke too late waited on an idle database. On this lock a waiting
    thread wakes as soon as the writer before it commits. Other processes still meet SQLite's
    own lock, but then only one writer per process is asking. ``turn`` is set on a subclass
    made per engine (:func:`_sqlite_engine`)."""

    turn: threading.Lock
    _holds_turn = False

    def take_turn(self) -> None:
        if not self.turn.acquire(timeout=SQLITE_BUSY_TIMEOUT_MS / 1000):
            raise sa_exc.OperationalError(
                "BEGIN IMMEDIATE", None, sqlite3.OperationalError(
                    "database is locked: no write turn in this process within "
                    f"{SQLITE_BUSY_TIMEOUT_MS} ms"))
        self._holds_turn = True

    def pass_turn(self) -> None:
        if self._holds_turn:
            self._holds_turn = False
            self.turn.release()

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self.pass_turn()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.pass_turn()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.pass_turn()


def _on_sqlite_begin(connection: Connection) -> None:
    if connection.get_execution_options().get(_READONLY_OPTION, False):
        connection.exec_driver_sql("BEGIN DEFERRED")
        return
    turn = connection.connection.dbapi_connection
    if not isinstance(turn, _TurnTaking):  # every connection of a SQLite engine is made by
        raise LedgerError("a SQLite connection not made by the ledger's engine")  # its factory
    turn.take_turn()
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    except BaseException:
        turn.pass_turn()
        raise


def _remember_pid(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
    record.info["pid"] = os.getpid()


def _refuse_inherited(
    dbapi_connection: Any, record: ConnectionPoolEntry, proxy: PoolProxiedConnection
) -> None:
    # A connection opened before a fork (Celery prefork) must never be used by the child: two
    # processes on one socket corrupt the protocol. The pool replaces it with a fresh one.
    if record.info.get("pid") != os.getpid():
        # SQLAlchemy's own recipe for pools across os.fork() ("Using Connection Pools with
        # Multiprocessing"); its stubs declare these interfaces with empty __slots__, while the
        # pool's concrete record and proxy take the assignment.
        record.dbapi_connection = proxy.dbapi_connection = None  # type: ignore[misc]
        raise sa_exc.DisconnectionError("connection was opened by another process")


def _sqlite_engine(url: URL, *, echo: bool, foreign_keys: bool, pooling: dict[str, Any]
                   ) -> Engine:
    memory = _is_memory(url)
    turn_taking = type("TurnTaking", (_TurnTaking,), {"turn": threading.Lock()})
    options: dict[str, Any] = {
        "connect_args": {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False,
                         "factory": turn_taking}
    }
    if memory:
        # One shared connection, or each checkout would be a new empty database; so an in-memory
        # ledger serves one transaction at a time and suits single-threaded tests only.
        options["poolclass"] = StaticPool
    else:
        options.update(pooling)
        Path(str(url.database)).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, echo=echo, **options)
    event.listen(
        engine, "connect", partial(_on_sqlite_connect, foreign_keys=foreign_keys, memory=memory)
    )
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


def make_engine(url: str | URL, *, echo: bool = False, sqlite_foreign_keys: bool = True,
                pool_size: int | None = None, pool_timeout_s: float | None = None) -> Engine:
    """Build the engine for a ledger URL (see the module docstring for the SQLite tuning).

    ``pool_size`` connections stay open (twice as many more may open under load) and a
    checkout waits ``pool_timeout_s`` for one; None keeps SQLAlchemy's defaults (5, 30 s).
    ``sqlite_foreign_keys=False`` exists for migrations only: SQLite batch migrations recreate
    tables, and with foreign keys on, dropping the old table would cascade-delete child rows.
    Raises :class:`LedgerConfigurationError` for an unsupported URL or a missing driver.
    """
    parsed = normalize_url(url)
    pooling: dict[str, Any] = {}
    if pool_size is not None:
        pooling |= {"pool_size": pool_size, "max_overflow": 2 * pool_size}
    if pool_timeout_s is not None:
        pooling["pool_timeout"] = pool_timeout_s
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = _sqlite_engine(parsed, echo=echo, foreign_keys=sqlite_foreign_keys,
                                    pooling=pooling)
        else:
            engine = create_engine(parsed, echo=echo, pool_pre_ping=True, **pooling)
    except ImportError as exc:
        raise LedgerConfigurationError(
            f"no driver for {parsed.drivername} ({exc}); "
            "install it with pip install 'ragq[postgres]'"
        ) from exc
    except sa_exc.SQLAlchemyError as exc:
        raise translate_error(exc) from exc
    event.listen(engine, "connect", _remember_pid)
    event.listen(engine, "checkout", _refuse_inherited)
    return engine


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """A session factory whose objects stay readable after commit (``expire_on_commit=False``).

    Ledger functions return rows to callers that have already left :func:`session_scope`; without
    this, touching an attribute would try to reload it from a closed session.
    """
    return sessionmaker(bind=engine, expire_on_commit=False)


@contextmanager
def ledger_errors() -> Iterator[None]:
    """Re-raise any SQLAlchemy error inside the block as the matching :class:`LedgerError`."""
    try:
        yield
    except sa_exc.SQLAlchemyError as exc:
        raise translate_error(exc) from exc


@contextmanager
def session_scope(
    bind: Engine | sessionmaker[Session], *, readonly: bool = False
) -> Iterator[Session]:
    """One transaction: commit when the block ends, roll back when it raises.

    Rows loaded inside stay readable after the block. ``readonly=True`` starts a deferred SQLite
    transaction that does not queue behind writers and ends without committing; it raises
    :class:`LedgerError` if ORM changes are pending at the end, since they would be silently lost.
    SQLAlchemy errors leave as :class:`LedgerError` subclasses (see
    :func:`ledger.errors.translate_error`); other exceptions pass through unchanged.
    """
    factory = bind if isinstance(bind, sessionmaker) else make_session_factory(bind)
    session = factory()
    try:
        if readonly:
            session.connection(execution_options={_READONLY_OPTION: True})
        yield session
        if readonly:
            if session.new or session.dirty or session.deleted:
                raise LedgerError(
                    "pending writes in a readonly session_scope; open it without readonly=True"
                )
            # No rollback(): it would expire the rows the caller is taking away. close() below
            # ends the transaction at the connection and leaves the loaded rows readable.
        else:
            session.commit()
    except sa_exc.SQLAlchemyError as exc:
        _quiet_rollback(session)
        raise translate_error(exc) from exc
    except BaseException:
        _quiet_rollback(session)
        raise
    finally:
        session.close()


@contextmanager
def read_scope(engine: Engine) -> Iterator[Connection]:
    """One read-only transaction on a Core connection, for reads that build plain values and
    never ORM rows (a step's snapshot): an ORM session's own bookkeeping (its creation, the
    connection it binds, its close) cost more than a one-statement read. Deferred on SQLite, as
    :func:`session_scope`'s ``readonly``; it ends without committing. SQLAlchemy errors leave as
    :class:`LedgerError` subclasses."""
    try:
        with engine.connect() as conn:
            conn.execution_options(**{_READONLY_OPTION: True})
            yield conn
    except sa_exc.SQLAlchemyError as exc:
        raise translate_error(exc) from exc


@contextmanager
def race_guard(session: Session) -> Iterator[None]:
    """Inserts that a concurrent writer may race to (the same key read as missing by two
    deliveries of one step): a savepoint, so the loser's ``IntegrityError`` undoes only them,
    then the block's ORM rows flushed.

    On SQLite there is no such race: a write transaction holds the database's one write lock
    from ``BEGIN IMMEDIATE`` on, so a key read as missing stays missing until commit. There the
    savepoint would be cost alone (two statements and the session's nested-transaction
    bookkeeping on every charge and ledger row: a tenth of a step's CPU), and is skipped; the
    session is still flushed first, as a savepoint does, so the block's statements see the
    ORM changes made before it, and a constraint that fails there is no lost race: it leaves
    as :class:`LedgerIntegrityError` past the caller's retry of the read."""
    if session.get_bind().dialect.name != "sqlite":
        with session.begin_nested():
            yield
        return
    session.flush()
    try:
        yield
        session.flush()
    except sa_exc.IntegrityError as exc:  # no race lost: a constraint failed, say which
        raise translate_error(exc) from exc


def _quiet_rollback(session: Session) -> None:
    # The connection may be gone (that may be why we are here); the original error matters more.
    try:
        session.rollback()
    except sa_exc.SQLAlchemyError:
        session.invalidate()


def rows_changed(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE run through ``Session.execute`` changed. The session
    types every result as a plain ``Result``, yet a DML statement's is a ``CursorResult``, the
    one kind that carries ``rowcount``: checked here at run time instead of ignored per call."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"{type(result).__name__} of a statement that returns rows has no rowcount")
    return result.rowcount
