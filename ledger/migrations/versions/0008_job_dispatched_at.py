"""job dispatched_at: when the job's first step was sent, so a backlog waits unsent

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 10:50:00.000000

Jobs recorded before this revision were all sent at submission: they count as sent then.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("dispatched_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE jobs SET dispatched_at = created_at")


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("dispatched_at")
