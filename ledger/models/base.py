"""The declarative base every ledger table derives from, and the column types they share.

Constraint names come from one naming convention so Alembic migrations name them identically on
SQLite and PostgreSQL and a later migration can drop them by name.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from functools import partial
from typing import Any, cast

from sqlalchemy import JSON, DateTime, Dialect, ForeignKey, MetaData, Numeric, String, Table
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, MappedColumn, mapped_column
from sqlalchemy.types import TypeDecorator

from ragq.ledger.ids import new_id

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s",
    "pk": "pk_%(table_name)s",
}

ID_LENGTH = 64
"""Room for any ``new_id`` value (prefix + 27 chars) and for ids chosen by callers."""

MONEY = Numeric(18, 8)
"""USD amounts: eight decimals keep per-token prices exact; PostgreSQL sums them exactly."""

MONEY_QUANTUM = Decimal("0.00000001")
"""The smallest amount :data:`MONEY` holds; quantize to it before binding a USD value."""

PortableJSON = JSON().with_variant(JSONB(), "postgresql")
"""JSON on SQLite, JSONB on PostgreSQL (comparable, indexable, compact)."""


def utcnow() -> datetime:
    """The current time as an aware UTC datetime, the only kind the ledger stores."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC when read back, on every backend.

    SQLite keeps no offset, so values are normalised to UTC on the way in and stamped UTC on the
    way out; naive datetimes are refused because their meaning depends on the writer's clock.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}; pass an aware one, e.g. ledger.utcnow()")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    """Root of the ledger's tables; its ``metadata`` is what Alembic compares against."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 - SQLAlchemy reads this class attribute as is
        datetime: UTCDateTime(),
        Decimal: MONEY,
        dict[str, Any]: PortableJSON,
        list[Any]: PortableJSON,
        list[str]: PortableJSON,
        list[int]: PortableJSON,
    }


def table_of(model: type[Base]) -> Table:
    """The Core table of a ledger row class, for prebuilt statements that build no ORM row."""
    return cast(Table, model.__table__)


ID_FACTORY = "new_id"
"""The key of an id column's ``info`` that holds its id factory (a callable of no argument)."""


def id_column(prefix: str) -> MappedColumn[Any]:
    """A string primary key filled with ``new_id(prefix)`` when the caller gives none."""
    new_id(prefix)  # fail at import time on a bad prefix, not at the first insert
    factory = partial(new_id, prefix)
    # info keeps the factory itself for Core inserts that must know the id they write
    # (steps.insert_once); the column default wraps it in a callable of the execution context.
    return mapped_column(String(ID_LENGTH), primary_key=True, default=factory,
                         info={ID_FACTORY: factory})


def ref_column(
    target: str,
    *,
    nullable: bool = False,
    ondelete: str = "CASCADE",
    primary_key: bool = False,
    index: bool | None = None,
) -> MappedColumn[Any]:
    """A foreign key to another table's string id.

    ``CASCADE`` by default so purging a job or batch removes its whole trail in one statement;
    PostgreSQL does not index foreign keys by itself, so pass ``index=True`` where no unique
    constraint or index already starts with this column.
    """
    return mapped_column(
        String(ID_LENGTH),
        ForeignKey(target, ondelete=ondelete),
        nullable=nullable,
        primary_key=primary_key,
        index=index,
    )


def created_column() -> MappedColumn[Any]:
    """``created_at``: set by the ledger at insert, never by the caller's clock."""
    return mapped_column(default=utcnow, nullable=False)
