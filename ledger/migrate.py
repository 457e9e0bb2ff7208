"""Apply and inspect the ledger's Alembic migrations from code, with no ``alembic.ini`` on disk.

Several processes may start at once on a fresh machine (``ragq up`` starting workers beside a CLI
command), and each may call :func:`upgrade`. The upgrade runs as one transaction that first takes
a database-wide lock: ``BEGIN IMMEDIATE`` on SQLite (the write lock, held to commit) and
``pg_advisory_xact_lock`` on PostgreSQL. The second caller waits, then finds the schema current.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import func, select
from sqlalchemy.engine import URL

from ragq.ledger.db import ledger_errors, make_engine, normalize_url
from ragq.ledger.errors import LedgerMigrationError

__all__ = [
    "MIGRATIONS_DIR",
    "alembic_config",
    "current_revision",
    "head_revision",
    "is_up_to_date",
    "upgrade",
]

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).with_name("migrations")

_PG_LOCK_KEY = 0x7261_6771_6C65_6467  # "ragqledg": one id all ragq installs agree on


def alembic_config(url: str | URL | None = None) -> Config:
    """An Alembic config pointing at the migrations shipped in this package.

    The URL travels in ``config.attributes`` rather than ``sqlalchemy.url`` because the ini
    parser would read a ``%`` in a password as interpolation.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    if url is not None:
        config.attributes["url"] = normalize_url(url).render_as_string(hide_password=False)
    return config


def head_revision() -> str:
    """The newest revision shipped with this version of ragq."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise LedgerMigrationError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


def upgrade(url: str | URL, revision: str = "head") -> None:
    """Bring the ledger at ``url`` to ``revision``; a no-op when it is already there.

    Safe to call from several processes at once (see the module docstring). Raises
    :class:`LedgerMigrationError` for an unknown revision and another :class:`LedgerError`
    subclass when the database cannot be reached.
    """
    parsed = normalize_url(url)
    config = alembic_config(parsed)
    # Foreign keys off on SQLite: batch migrations recreate tables, and a DROP of the old table
    # would otherwise cascade into its children.
    engine = make_engine(parsed, sqlite_foreign_keys=False)
    try:
        with ledger_errors(), engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(select(func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    except CommandError as exc:
        raise LedgerMigrationError(f"cannot upgrade the ledger to {revision!r}: {exc}") from exc
    finally:
        engine.dispose()
    log.info("ledger %s at revision %s", parsed.render_as_string(), revision)


def current_revision(url: str | URL) -> str | None:
    """The revision the ledger at ``url`` is at, or ``None`` when it was never migrated."""
    engine = make_engine(url)
    try:
        with ledger_errors(), engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def is_up_to_date(url: str | URL) -> bool:
    """True when the ledger at ``url`` is at the newest shipped revision."""
    return current_revision(url) == head_revision()


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m ledger.migrate upgrade|current|revision URL [-m MESSAGE]`` for developers.

    ``revision`` autogenerates a new migration by comparing the models with a database at head.
    """
    parser = argparse.ArgumentParser(prog="python -m ledger.migrate")
    parser.add_argument("action", choices=["upgrade", "current", "revision"])
    parser.add_argument("url")
    parser.add_argument("-m", "--message", default="change")
    args = parser.parse_args(argv)
    if args.action == "upgrade":
        upgrade(args.url)
    elif args.action == "revision":
        command.revision(alembic_config(args.url), message=args.message, autogenerate=True)
    print(current_revision(args.url) or "(empty)")


if __name__ == "__main__":
    main()
