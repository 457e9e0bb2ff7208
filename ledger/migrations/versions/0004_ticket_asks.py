"""ticket asks: a job is read into asks, each routed and planned, each answered

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 15:00:00.000000

A job gains its reading (the ticket's context and noise), a row per ask (text, route, plan),
its sub-queries the ask they serve, its answer the per-ask answers. Jobs recorded before this
revision have no asks: their results read as one unnamed ask, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The models' types, spelled out: a migration must not import the models it migrates.
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "asks",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("job_id", sa.String(length=64), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("question_class", sa.String(length=32), nullable=True),
        sa.Column("route", sa.String(length=32), nullable=True),
        sa.Column("route_reason", sa.Text(), nullable=True),
        sa.Column("plan", JSON, nullable=True),
        sa.Column("repair_reason", sa.Text(), nullable=True),
        sa.Column("cache_hit", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "index"),
    )
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("reading", JSON, nullable=True))
    with op.batch_alter_table("sub_queries") as batch:
        batch.add_column(sa.Column("ask", sa.Integer(), nullable=True))
    with op.batch_alter_table("answers") as batch:
        batch.add_column(sa.Column("asks", JSON, server_default="[]", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("answers") as batch:
        batch.drop_column("asks")
    with op.batch_alter_table("sub_queries") as batch:
        batch.drop_column("ask")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("reading")
    op.drop_table("asks")
