"""The closed vocabularies the ledger stores, each checked by the database as well as by Python.

Values are the strings written to the database and shown in the API; members are ``StrEnum`` so a
plain string compares equal to its member.
"""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import Enum

from ragq.schemas.statuses import (
    TERMINAL_JOB_STATUSES,
    BatchStatus,
    BudgetDimension,
    ChargeOutcome,
    IngestStatus,
    JobStatus,
    ModelCallStatus,
    ReviewDecision,
    SubQueryOrigin,
    SubQueryStatus,
)

__all__ = [
    "TERMINAL_JOB_STATUSES",
    "BatchStatus",
    "JobStatus",
    "BudgetDimension",
    "ChargeOutcome",
    "SubQueryOrigin",
    "SubQueryStatus",
    "ModelCallStatus",
    "IngestStatus",
    "ReviewDecision",
    "db_enum",
]


def db_enum(enum: type[StrEnum], name: str) -> Enum:
    """A VARCHAR column with a CHECK constraint listing ``enum``'s values (not its member names).

    Non-native on purpose: PostgreSQL ``ENUM`` types cannot lose values and complicate migrations,
    while a named CHECK constraint can be replaced in one batch migration on both backends.
    """
    return Enum(
        enum,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=32,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )
