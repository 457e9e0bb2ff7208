"""review queue: jobs escalated to a human, and how they were resolved

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 16:00:00.000000

Two job statuses join the ``job_status`` CHECK constraint (``needs_review``, ``rejected``):
job status is a VARCHAR with a named CHECK, not a native enum, so the constraint is replaced
(SQLite copies the table in batch mode; PostgreSQL drops and adds the constraint). Batches count
the jobs awaiting review and the rejected ones; ``reviews`` holds one row per escalated job.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The models' types, spelled out: a migration must not import the models it migrates.
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
OLD_STATUSES = ("queued", "routing", "planning", "retrieving", "verifying", "synthesizing",
                "completed", "insufficient_evidence", "budget_exhausted", "failed", "cancelled")
NEW_STATUSES = (*OLD_STATUSES[:9], "needs_review", "rejected", *OLD_STATUSES[9:])
DECISIONS = ("answered", "rejected")


def _status_check(statuses: Sequence[str]) -> str:
    return "status IN (" + ", ".join(f"'{s}'" for s in statuses) + ")"


def _enum(name: str, values: Sequence[str]) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=32)


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_constraint(op.f("ck_jobs_job_status"), type_="check")
        batch.create_check_constraint("job_status", _status_check(NEW_STATUSES))
    with op.batch_alter_table("batches") as batch:
        batch.add_column(sa.Column("needs_review_count", sa.Integer(), server_default="0",
                                   nullable=False))
        batch.add_column(sa.Column("rejected_count", sa.Integer(), server_default="0",
                                   nullable=False))
    op.create_table(
        "reviews",
        sa.Column("job_id", sa.String(length=64), nullable=False),
        sa.Column("tenant", sa.String(length=128), nullable=False),
        sa.Column("reasons", JSON, nullable=False),
        sa.Column("outcome", _enum("review_outcome", NEW_STATUSES), nullable=False),
        sa.Column("decision", _enum("review_decision", DECISIONS), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("reviewer", sa.String(length=256), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.create_index("ix_reviews_tenant_resolved_at_created_at", "reviews",
                    ["tenant", "resolved_at", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_reviews_tenant_resolved_at_created_at", table_name="reviews")
    op.drop_table("reviews")
    with op.batch_alter_table("batches") as batch:
        batch.drop_column("rejected_count")
        batch.drop_column("needs_review_count")
    # Jobs in a status the old constraint does not know leave the queue as they were drafted.
    op.execute("UPDATE jobs SET status = 'completed' WHERE status IN ('needs_review', 'rejected')")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_constraint(op.f("ck_jobs_job_status"), type_="check")
        batch.create_check_constraint("job_status", _status_check(OLD_STATUSES))
