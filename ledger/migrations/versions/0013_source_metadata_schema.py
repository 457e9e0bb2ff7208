"""sources metadata_schema: the filterable metadata fields of a source (issue 37), inferred at
ingest and overridable with ``ragq ingest --metadata-schema``

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 03:30:00.000000

Sources registered before this revision have none: their searches are never filtered on
metadata until an ingest declares the fields.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        kind = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
        batch.add_column(sa.Column("metadata_schema", kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("metadata_schema")
