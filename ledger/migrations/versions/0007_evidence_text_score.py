"""evidence text score: the searched query's cosine to the chunk's stored text vector

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 07:00:00.000000

Nullable: evidence recorded before this revision (and hits of adapters that do not report it)
has none, and the sufficiency check then embeds the texts as it did before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("evidence_items") as batch:
        batch.add_column(sa.Column("text_score", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("evidence_items") as batch:
        batch.drop_column("text_score")
