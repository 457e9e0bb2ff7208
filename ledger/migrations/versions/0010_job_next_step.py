"""job next_step and resumed_at: the message a job was last handed on with, so a job whose
message was lost with a dead broker or worker can be resumed

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 14:00:00.000000

Jobs recorded before this revision have no next step: the supervisor leaves them as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        kind = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
        batch.add_column(sa.Column("next_step", kind, nullable=True))
        batch.add_column(sa.Column("resumed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("resumed_at")
        batch.drop_column("next_step")
