"""Alembic environment of the ledger; driven by :mod:`ledger.migrate`, which builds the config.

The caller normally hands over an open connection inside its own transaction
(``config.attributes["connection"]``), so the whole upgrade commits or rolls back as one unit and
the caller decides how concurrent upgraders are serialised. ``config.attributes["url"]`` (or the
``sqlalchemy.url`` option) is the fallback for the ``alembic`` command line and ``--sql`` mode.
"""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection

from ragq.ledger.db import make_engine, normalize_url
from ragq.ledger.models import Base, UTCDateTime

config = context.config
target_metadata = Base.metadata


def _render_item(kind: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    # Migrations must not import ledger.models: a later refactor of the models would break them.
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        transactional_ddl=True,
        compare_type=True,
        render_item=_render_item,
    )


def _url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no ledger URL: set config.attributes['url'] or sqlalchemy.url")
    return str(url)


def run_offline() -> None:
    context.configure(
        url=normalize_url(_url()),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        render_item=_render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_url(), sqlite_foreign_keys=False)
    try:
        with engine.begin() as own_connection:
            _configure(own_connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
