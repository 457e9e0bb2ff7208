"""sweeper_leases: the lease that lets one of several sweeper replicas act per round, and the
counters of what the sweeps did (for the operator's metrics)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 00:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sweeper_leases",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=256), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_round_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("resumed_jobs", sa.Integer(), nullable=False),
        sa.Column("joined_layers", sa.Integer(), nullable=False),
        sa.Column("started_jobs", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_sweeper_leases")),
    )


def downgrade() -> None:
    op.drop_table("sweeper_leases")
