"""evidence question score: the job's question's cosine to the chunk's stored text vector

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 11:00:00.000000

Nullable: evidence recorded before this revision, served from the evidence cache, or found by a
job whose provider does not read it has none, and the offline verifier then embeds the texts as
it did before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("evidence_items") as batch:
        batch.add_column(sa.Column("question_score", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("evidence_items") as batch:
        batch.drop_column("question_score")
