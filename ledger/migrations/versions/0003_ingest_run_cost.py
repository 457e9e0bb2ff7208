"""ingest run cost: embedding tokens and USD billed per ingest run

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 10:00:00.000000

Written by autogenerate, then given server defaults so that runs recorded before this revision
read as having cost nothing (the columns are NOT NULL). Batch mode lets SQLite drop the columns
on downgrade.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("ingest_runs") as batch:
        batch.add_column(
            sa.Column("embedding_tokens", sa.BigInteger(), server_default="0", nullable=False)
        )
        batch.add_column(
            sa.Column(
                "cost_usd", sa.Numeric(precision=18, scale=8), server_default="0", nullable=False
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("ingest_runs") as batch:
        batch.drop_column("cost_usd")
        batch.drop_column("embedding_tokens")
