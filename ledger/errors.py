"""The ledger's subtree of :class:`ragq.errors.LedgerError`; the one place vendor errors map to it.

Callers catch the subclass that matches what they can do about it: retry when the database is
unavailable, treat an integrity error as "someone else already wrote this", migrate when the schema
is missing.
"""

from __future__ import annotations

from sqlalchemy import exc as sa_exc

from ragq.errors import LedgerError

__all__ = [
    "LedgerConfigurationError",
    "LedgerError",
    "LedgerIntegrityError",
    "LedgerMigrationError",
    "LedgerNotFoundError",
    "LedgerNotMigratedError",
    "LedgerUnavailableError",
    "translate_error",
]

_UNDEFINED_TABLE_SQLSTATE = "42P01"  # PostgreSQL


class LedgerConfigurationError(LedgerError):
    """Raised when a ledger URL names a database or driver the ledger does not support."""


class LedgerUnavailableError(LedgerError):
    """Raised when the database cannot be reached, stays locked too long or drops a connection."""


class LedgerIntegrityError(LedgerError):
    """Raised when a write breaks a unique, foreign-key or check constraint.

    ``detail`` holds the database's own message, which names the constraint.
    """

    def __init__(self, message: str, *, detail: str | None = None):
        self.detail = detail
        super().__init__(message)


class LedgerNotMigratedError(LedgerError):
    """Raised when a table is missing because the migrations were never applied."""


class LedgerMigrationError(LedgerError):
    """Raised when Alembic cannot apply or read the ledger's migrations."""


class LedgerNotFoundError(LedgerError):
    """Raised when a function is given the id of a row that does not exist.

    ``table`` and ``key`` name the row that was looked for.
    """

    def __init__(self, message: str, *, table: str, key: str):
        self.table = table
        self.key = key
        super().__init__(message)


def _orig_message(exc: sa_exc.SQLAlchemyError) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _is_missing_table(exc: sa_exc.SQLAlchemyError) -> bool:
    orig = getattr(exc, "orig", None)
    if getattr(orig, "sqlstate", None) == _UNDEFINED_TABLE_SQLSTATE:
        return True
    return isinstance(exc, sa_exc.OperationalError) and "no such table" in str(orig)


def translate_error(exc: sa_exc.SQLAlchemyError) -> LedgerError:
    """Map a SQLAlchemy exception to the ledger exception a caller can act on.

    Most specific first: a missing table becomes :class:`LedgerNotMigratedError` whatever class the
    driver chose for it (SQLite says OperationalError, PostgreSQL ProgrammingError).
    """
    detail = _orig_message(exc)
    if _is_missing_table(exc):
        return LedgerNotMigratedError(
            f"ledger schema is missing ({detail}); apply the migrations: `ragq db upgrade` "
            "(`ragq up` does it too), or ragq.ledger.upgrade(url) from Python"
        )
    if isinstance(exc, sa_exc.IntegrityError):
        return LedgerIntegrityError(f"ledger constraint violated: {detail}", detail=detail)
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError | sa_exc.DisconnectionError):
        return LedgerUnavailableError(f"ledger database unavailable: {detail}")
    if isinstance(exc, sa_exc.TimeoutError):
        return LedgerUnavailableError(f"no ledger connection free in time: {detail}")
    if isinstance(exc, sa_exc.ArgumentError | sa_exc.NoSuchModuleError):
        return LedgerConfigurationError(f"invalid ledger URL or option: {detail}")
    return LedgerError(f"ledger operation failed: {type(exc).__name__}: {detail}")
