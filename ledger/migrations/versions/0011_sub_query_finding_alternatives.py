"""sub_queries finding_alternatives: the finder's runners-up, which a dependent sub-query that
found nothing with the finding searches with next

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 20:30:00.000000

Sub-queries recorded before this revision have none: their dependents rewrite as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sub_queries") as batch:
        kind = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
        batch.add_column(sa.Column("finding_alternatives", kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sub_queries") as batch:
        batch.drop_column("finding_alternatives")
