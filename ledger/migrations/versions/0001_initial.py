"""Initial ledger: every table of the ledger (docs/architecture.md), empty.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Written by autogenerate, then tidied: column helpers replace repeated type spellings, and indexes
are created with plain ``op.create_index`` (SQLite needs no table copy for them). Constraint names
come from the models' naming convention, which Alembic applies to every ``op`` call because
``env.py`` passes the models' metadata as ``target_metadata``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id(name: str = "id", *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.String(length=64), nullable=nullable)


def _json(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    kind = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
    return sa.Column(name, kind, nullable=nullable)


def _ts(name: str, *, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _int(
    name: str, *, nullable: bool = False, kind: type[sa.Integer] = sa.Integer
) -> sa.Column[Any]:
    return sa.Column(name, kind(), nullable=nullable)


def _money(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.Numeric(precision=18, scale=8), nullable=nullable)


def _enum(column: str, name: str, *values: str) -> sa.Column[Any]:
    kind = sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=32)
    return sa.Column(column, kind, nullable=False)


def _fk(column: str, target: str, ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], [target], ondelete=ondelete)


JOB_STATUSES = (
    "queued",
    "routing",
    "planning",
    "retrieving",
    "verifying",
    "synthesizing",
    "completed",
    "insufficient_evidence",
    "budget_exhausted",
    "failed",
    "cancelled",
)
BATCH_STATUSES = (
    "validating",
    "in_progress",
    "finalizing",
    "completed",
    "cancelling",
    "cancelled",
    "failed",
)
DIMENSIONS = (
    "steps",
    "retrieval_calls",
    "unique_queries",
    "rerank_calls",
    "context_tokens",
    "llm_tokens",
    "cost_usd",
    "latency_ms",
)
SUB_QUERY_STATUSES = ("pending", "retrieving", "sufficient", "insufficient", "failed", "skipped")


def _submission() -> None:
    op.create_table(
        "api_keys",
        _id(),
        sa.Column("tenant", sa.String(length=128), nullable=False),
        sa.Column("key_hash", sa.String(length=128), nullable=False),
        _json("acl"),
        _ts("created_at", nullable=False),
        _ts("revoked_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_hash"),
    )
    op.create_index("ix_api_keys_tenant", "api_keys", ["tenant"])

    op.create_table(
        "batches",
        _id(),
        sa.Column("tenant", sa.String(length=128), nullable=False),
        _enum("status", "batch_status", *BATCH_STATUSES),
        sa.Column("collection", sa.String(length=256), nullable=False),
        sa.Column("input_filename", sa.String(length=1024), nullable=True),
        _int("total_count"),
        _int("completed_count"),
        _int("insufficient_evidence_count"),
        _int("budget_exhausted_count"),
        _int("failed_count"),
        _int("cancelled_count"),
        _int("invalid_count"),
        _json("budget", nullable=True),
        sa.Column("webhook_url", sa.String(length=2048), nullable=True),
        sa.Column("webhook_secret", sa.String(length=256), nullable=True),
        _json("metadata"),
        _json("error", nullable=True),
        _ts("created_at", nullable=False),
        _ts("started_at"),
        _ts("finished_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_batches_status", "batches", ["status"])
    op.create_index("ix_batches_tenant_created_at", "batches", ["tenant", "created_at"])

    op.create_table(
        "jobs",
        _id(),
        _id("batch_id", nullable=True),
        sa.Column("custom_id", sa.String(length=512), nullable=True),
        _int("position", nullable=True),
        sa.Column("tenant", sa.String(length=128), nullable=False),
        sa.Column("collection", sa.String(length=256), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        _json("acl"),
        sa.Column("question_class", sa.String(length=32), nullable=True),
        sa.Column("route", sa.String(length=32), nullable=True),
        sa.Column("route_reason", sa.Text(), nullable=True),
        _enum("status", "job_status", *JOB_STATUSES),
        sa.Column("stop_reason", sa.String(length=64), nullable=True),
        sa.Column("exhausted_dimension", sa.String(length=32), nullable=True),
        _json("error", nullable=True),
        _json("result", nullable=True),
        _json("metadata"),
        _ts("created_at", nullable=False),
        _ts("started_at"),
        _ts("finished_at"),
        _fk("batch_id", "batches.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("batch_id", "custom_id"),
    )
    op.create_index("ix_jobs_batch_id_status", "jobs", ["batch_id", "status"])
    op.create_index("ix_jobs_status", "jobs", ["status"])
    op.create_index("ix_jobs_tenant_created_at", "jobs", ["tenant", "created_at"])


def _budgets() -> None:
    op.create_table(
        "job_budgets",
        _id("job_id"),
        sa.Column("profile", sa.String(length=64), nullable=True),
        _int("limit_steps", nullable=True),
        _int("used_steps"),
        _int("limit_retrieval_calls", nullable=True),
        _int("used_retrieval_calls"),
        _int("limit_unique_queries", nullable=True),
        _int("used_unique_queries"),
        _int("limit_rerank_calls", nullable=True),
        _int("used_rerank_calls"),
        _int("limit_context_tokens", nullable=True, kind=sa.BigInteger),
        _int("used_context_tokens", kind=sa.BigInteger),
        _int("limit_llm_tokens", nullable=True, kind=sa.BigInteger),
        _int("used_llm_tokens", kind=sa.BigInteger),
        _money("limit_cost_usd", nullable=True),
        _money("used_cost_usd"),
        _int("limit_latency_ms", nullable=True, kind=sa.BigInteger),
        _int("used_latency_ms", kind=sa.BigInteger),
        _ts("deadline_at"),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.create_table(
        "budget_charges",
        _id(),
        _id("job_id"),
        _enum("dimension", "dimension", *DIMENSIONS),
        sa.Column("amount", sa.Numeric(precision=20, scale=8), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=False),
        sa.Column("step", sa.String(length=128), nullable=True),
        _int("attempt"),
        _enum("outcome", "charge_outcome", "granted", "refused"),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "idempotency_key"),
    )


def _planning() -> None:
    op.create_table(
        "plans",
        _id(),
        _id("job_id"),
        _int("round"),
        _json("plan"),
        sa.Column("strategy", sa.String(length=64), nullable=True),
        sa.Column("repair_reason", sa.Text(), nullable=True),
        sa.Column("cache_hit", sa.Boolean(), nullable=False),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "round"),
    )
    op.create_table(
        "sub_queries",
        _id(),
        _id("job_id"),
        _int("round"),
        _int("index"),
        _enum("origin", "sub_query_origin", "plan", "follow_up", "rewrite"),
        sa.Column("original_text", sa.Text(), nullable=False),
        sa.Column("final_text", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        _json("depends_on"),
        _enum("status", "sub_query_status", *SUB_QUERY_STATUSES),
        sa.Column("finding", sa.Text(), nullable=True),
        _ts("created_at", nullable=False),
        _ts("finished_at"),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "round", "index"),
    )
    op.create_table(
        "verifications",
        _id(),
        _id("job_id"),
        _int("round"),
        sa.Column("sufficient", sa.Boolean(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        _json("missing_info"),
        _json("follow_up_queries"),
        sa.Column("reason", sa.Text(), nullable=True),
        _int("new_evidence_count", nullable=True),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "round"),
    )


def _retrieval() -> None:
    op.create_table(
        "retrieval_requests",
        _id(),
        _id("job_id"),
        _id("sub_query_id", nullable=True),
        _int("attempt"),
        sa.Column("query_text", sa.Text(), nullable=False),
        sa.Column("normalized_key", sa.String(length=128), nullable=False),
        _int("top_k"),
        _json("filters"),
        sa.Column("cache_hit", sa.Boolean(), nullable=False),
        _id("dedup_of", nullable=True),
        _int("hit_count"),
        sa.Column("top_score", sa.Float(), nullable=True),
        _int("latency_ms", nullable=True),
        _ts("created_at", nullable=False),
        _fk("dedup_of", "retrieval_requests.id", ondelete="SET NULL"),
        _fk("job_id", "jobs.id"),
        _fk("sub_query_id", "sub_queries.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "sub_query_id", "attempt"),
    )
    op.create_index(
        "ix_retrieval_requests_job_id_normalized_key",
        "retrieval_requests",
        ["job_id", "normalized_key"],
    )
    op.create_index("ix_retrieval_requests_sub_query_id", "retrieval_requests", ["sub_query_id"])

    op.create_table(
        "evidence_items",
        _id(),
        _id("job_id"),
        _id("retrieval_request_id"),
        _id("sub_query_id", nullable=True),
        sa.Column("doc_id", sa.String(length=512), nullable=False),
        sa.Column("chunk_id", sa.String(length=600), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        _int("rank"),
        sa.Column("source_version", sa.String(length=256), nullable=False),
        _int("authority_tier"),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("in_context", sa.Boolean(), nullable=False),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        _fk("retrieval_request_id", "retrieval_requests.id"),
        _fk("sub_query_id", "sub_queries.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("retrieval_request_id", "chunk_id"),
    )
    op.create_index("ix_evidence_items_job_id_doc_id", "evidence_items", ["job_id", "doc_id"])
    op.create_index("ix_evidence_items_sub_query_id", "evidence_items", ["sub_query_id"])

    op.create_table(
        "sufficiency_checks",
        _id(),
        _id("job_id"),
        _id("sub_query_id"),
        _id("retrieval_request_id", nullable=True),
        _int("attempt"),
        sa.Column("sufficient", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("rewrite", sa.Text(), nullable=True),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        _fk("retrieval_request_id", "retrieval_requests.id"),
        _fk("sub_query_id", "sub_queries.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("sub_query_id", "attempt"),
    )
    op.create_index("ix_sufficiency_checks_job_id", "sufficiency_checks", ["job_id"])


def _outcome() -> None:
    op.create_table(
        "model_calls",
        _id(),
        _id("job_id", nullable=True),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=256), nullable=False),
        _int("attempt"),
        sa.Column("call_key", sa.String(length=255), nullable=False),
        _int("prompt_tokens"),
        _int("completion_tokens"),
        _money("cost_usd"),
        _int("latency_ms", nullable=True),
        _enum("status", "model_call_status", "ok", "error", "fallback"),
        sa.Column("error", sa.Text(), nullable=True),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "call_key"),
    )
    op.create_table(
        "answers",
        _id(),
        _id("job_id"),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("extractive", sa.Boolean(), nullable=False),
        _json("contradictions"),
        _ts("created_at", nullable=False),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id"),
    )
    op.create_table(
        "citations",
        _id(),
        _id("answer_id"),
        _id("evidence_item_id", nullable=True),
        sa.Column("doc_id", sa.String(length=512), nullable=False),
        sa.Column("chunk_id", sa.String(length=600), nullable=False),
        sa.Column("quote", sa.Text(), nullable=True),
        _int("position"),
        _fk("answer_id", "answers.id"),
        _fk("evidence_item_id", "evidence_items.id", ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("answer_id", "position"),
    )


def _webhooks() -> None:
    op.create_table(
        "webhook_endpoints",
        _id(),
        sa.Column("tenant", sa.String(length=128), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("secret", sa.String(length=256), nullable=False),
        _ts("disabled_at"),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        _ts("created_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tenant", "url"),
    )
    op.create_table(
        "webhook_deliveries",
        _id(),
        sa.Column("webhook_id", sa.String(length=64), nullable=False),
        _id("endpoint_id", nullable=True),
        _id("batch_id", nullable=True),
        _id("job_id", nullable=True),
        sa.Column("event_type", sa.String(length=64), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        _json("payload"),
        _int("attempt"),
        _int("status_code", nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        _ts("next_attempt_at"),
        _ts("created_at", nullable=False),
        _fk("batch_id", "batches.id"),
        _fk("endpoint_id", "webhook_endpoints.id", ondelete="SET NULL"),
        _fk("job_id", "jobs.id"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("webhook_id", "attempt"),
    )
    for column in ("batch_id", "endpoint_id", "job_id", "next_attempt_at"):
        op.create_index(f"ix_webhook_deliveries_{column}", "webhook_deliveries", [column])


def _corpus() -> None:
    op.create_table(
        "documents",
        sa.Column("collection", sa.String(length=256), nullable=False),
        sa.Column("doc_id", sa.String(length=512), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("source_version", sa.String(length=256), nullable=False),
        sa.Column("content_hash", sa.String(length=128), nullable=False),
        _json("acl"),
        _int("authority_tier"),
        _int("chunk_count"),
        _ts("ingested_at", nullable=False),
        _ts("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("collection", "doc_id"),
    )
    op.create_table(
        "ingest_runs",
        _id(),
        sa.Column("collection", sa.String(length=256), nullable=False),
        sa.Column("source_path", sa.String(length=4096), nullable=False),
        _enum("status", "ingest_status", "running", "completed", "failed", "cancelled"),
        _int("documents_total"),
        _int("documents_ingested"),
        _int("documents_unchanged"),
        _int("documents_replaced"),
        _int("chunks"),
        _int("bad_lines"),
        sa.Column("error", sa.Text(), nullable=True),
        _ts("created_at", nullable=False),
        _ts("finished_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_ingest_runs_collection", "ingest_runs", ["collection"])


def upgrade() -> None:
    _submission()
    _budgets()
    _planning()
    _retrieval()
    _outcome()
    _webhooks()
    _corpus()


def downgrade() -> None:
    # Children before parents; indexes go with their tables.
    for table in (
        "ingest_runs",
        "documents",
        "webhook_deliveries",
        "webhook_endpoints",
        "citations",
        "answers",
        "model_calls",
        "sufficiency_checks",
        "evidence_items",
        "retrieval_requests",
        "verifications",
        "sub_queries",
        "plans",
        "budget_charges",
        "job_budgets",
        "jobs",
        "batches",
        "api_keys",
    ):
        op.drop_table(table)
