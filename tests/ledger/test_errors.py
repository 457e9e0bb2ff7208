"""Every SQLAlchemy error leaves the ledger as a LedgerError subclass a caller can act on."""

from __future__ import annotations

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import select, text

from ragq.errors import RagqError
from ragq.ledger import (
    IngestRunRow,
    LedgerConfigurationError,
    LedgerError,
    LedgerIntegrityError,
    LedgerNotMigratedError,
    LedgerUnavailableError,
    make_engine,
    session_scope,
)
from ragq.ledger.errors import translate_error


class _PgError(Exception):
    """Stands in for a psycopg error, which carries its SQLSTATE."""

    def __init__(self, message: str, sqlstate: str):
        super().__init__(message)
        self.sqlstate = sqlstate


def _dbapi(cls: type[sa_exc.DBAPIError], orig: Exception) -> sa_exc.DBAPIError:
    return cls("SELECT 1", {}, orig)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            _dbapi(sa_exc.IntegrityError, Exception("UNIQUE constraint failed")),
            LedgerIntegrityError,
        ),
        (_dbapi(sa_exc.OperationalError, Exception("database is locked")), LedgerUnavailableError),
        (_dbapi(sa_exc.OperationalError, Exception("no such table: jobs")), LedgerNotMigratedError),
        (
            _dbapi(sa_exc.ProgrammingError, _PgError('relation "jobs" does not exist', "42P01")),
            LedgerNotMigratedError,
        ),
        (_dbapi(sa_exc.InterfaceError, Exception("connection closed")), LedgerUnavailableError),
        (sa_exc.DisconnectionError("server went away"), LedgerUnavailableError),
        (sa_exc.TimeoutError("QueuePool limit reached"), LedgerUnavailableError),
        (sa_exc.ArgumentError("bad url"), LedgerConfigurationError),
        (sa_exc.NoSuchModuleError("no dialect"), LedgerConfigurationError),
        (_dbapi(sa_exc.DataError, Exception("value too long")), LedgerError),
        (_dbapi(sa_exc.ProgrammingError, _PgError("syntax error", "42601")), LedgerError),
        (sa_exc.StatementError("bad bind", "SELECT 1", {}, ValueError("x")), LedgerError),
        (sa_exc.SQLAlchemyError("anything else"), LedgerError),
    ],
)
def test_each_vendor_error_maps_to_its_ledger_error(
    error: sa_exc.SQLAlchemyError, expected: type[LedgerError]
) -> None:
    translated = translate_error(error)
    assert type(translated) is expected
    assert isinstance(translated, RagqError)
    assert str(translated)


def test_integrity_errors_carry_the_database_detail() -> None:
    orig = Exception("UNIQUE constraint failed: budget_charges.job_id")
    translated = translate_error(_dbapi(sa_exc.IntegrityError, orig))
    assert isinstance(translated, LedgerIntegrityError)
    assert translated.detail == "UNIQUE constraint failed: budget_charges.job_id"


def test_an_unmigrated_ledger_says_how_to_migrate(ledger_url: str) -> None:
    engine = make_engine(ledger_url)
    try:
        with (
            pytest.raises(LedgerNotMigratedError, match=r"ledger\.upgrade"),
            session_scope(engine, readonly=True) as session,
        ):
            session.scalars(select(IngestRunRow)).all()
    finally:
        engine.dispose()


def test_a_real_syntax_error_is_still_a_ledger_error(ledger_url: str) -> None:
    engine = make_engine(ledger_url)
    try:
        with pytest.raises(LedgerError) as caught, session_scope(engine) as session:
            session.execute(text("SELEKT 1"))
        assert isinstance(caught.value.__cause__, sa_exc.SQLAlchemyError)
    finally:
        engine.dispose()
