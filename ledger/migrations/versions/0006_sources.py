"""sources: a job may search several collections, each registered with a description

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 16:00:00.000000

A tenant's sources (a collection and what it holds, set at ingest); each sub-query the sources
the router sent it to and why; each evidence row the collection it came from. Rows recorded
before this revision have none: their job searched its one collection.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The models' types, spelled out: a migration must not import the models it migrates.
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "sources",
        sa.Column("tenant", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "name"),
    )
    with op.batch_alter_table("sub_queries") as batch:
        batch.add_column(sa.Column("sources", JSON, nullable=True))
        batch.add_column(sa.Column("source_route", JSON, nullable=True))
    with op.batch_alter_table("evidence_items") as batch:
        batch.add_column(sa.Column("source", sa.String(length=256), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("evidence_items") as batch:
        batch.drop_column("source")
    with op.batch_alter_table("sub_queries") as batch:
        batch.drop_column("source_route")
        batch.drop_column("sources")
    op.drop_table("sources")
