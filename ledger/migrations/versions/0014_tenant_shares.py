"""tenants and job priority: a tenant's weight and max open jobs, and whether a job is
interactive or bulk, so the waiting line shares the window fairly (issue 36)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 03:30:00.000000

Jobs recorded before this revision count as bulk; tenants without a row have weight 1 and no
limit of their own.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tenants",
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("weight", sa.Integer(), nullable=False),
        sa.Column("max_open_jobs", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_tenants")),
    )
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("priority", sa.String(length=16), nullable=False,
                                   server_default="bulk"))
    op.create_index("ix_jobs_waiting_line", "jobs", ["status", "tenant", "batch_id", "priority",
                                                     "created_at", "position", "id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_waiting_line", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("priority")
    op.drop_table("tenants")
