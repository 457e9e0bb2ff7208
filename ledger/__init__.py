"""The ledger: every batch, job, step, charge and answer of ragq in one SQL database.

SQLite by default, PostgreSQL by URL. Build an engine with :func:`make_engine` (once per
process), bring the schema up to date with :func:`upgrade`. The job flow reads and writes
through its port, :class:`FlowLedger` (:class:`SqlFlowLedger` here, :class:`MemoryLedger` in
process); the front door calls the keyword-only functions below inside :func:`session_scope`,
which commits, rolls back and turns database errors into :class:`LedgerError` subclasses. The
tables themselves (``ragq.ledger.models``) are the ledger's own business.
"""

from ragq.ledger.api_keys import create_api_key, find_api_key, list_api_keys, revoke_api_key
from ragq.ledger.db import ledger_exists, make_engine, normalize_url, read_scope, session_scope
from ragq.ledger.documents import UpsertOutcome, current_versions, get_documents, upsert_document
from ragq.ledger.errors import (
    LedgerConfigurationError,
    LedgerError,
    LedgerIntegrityError,
    LedgerMigrationError,
    LedgerNotFoundError,
    LedgerNotMigratedError,
    LedgerUnavailableError,
)
from ragq.ledger.ingest_runs import (
    add_ingest_counts,
    close_stale_ingest_runs,
    create_ingest_run,
    finish_ingest_run,
    get_ingest_run,
)
from ragq.ledger.jobs import (
    add_job,
    batch_errors,
    batch_jobs,
    cancel_batch,
    cancel_job,
    create_batch,
    get_batch,
    get_job,
    list_batches,
    record_input_error,
    start_batch,
)
from ragq.ledger.memory import MemoryLedger
from ragq.ledger.migrate import current_revision, head_revision, is_up_to_date, upgrade
from ragq.ledger.models import (
    ApiKeyRow,
    BatchInputErrorRow,
    BatchRow,
    DocumentRow,
    IngestRunRow,
    JobRow,
    ReviewRow,
)
from ragq.ledger.outages import extend_open_deadlines
from ragq.ledger.ports import FlowLedger, FlowWriter
from ragq.ledger.reports import batch_report, job_ledger
from ragq.ledger.reviews import Resolution, list_reviews, resolve_review
from ragq.ledger.sources import (
    SourceView,
    collection_holds_documents,
    list_sources,
    register_source,
    source_names,
    source_schema,
    sources_holding_documents,
)
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.ledger.tenants import set_tenant_share, tenant_share, tenant_shares
from ragq.ledger.views import (
    TRAIL_TABLES,
    MetricsSnapshot,
    batch_cost,
    evidence_records,
    job_trail,
    metrics_snapshot,
    ping,
)
from ragq.ledger.waiting_line import (
    Claimed,
    WaitingLine,
    claim_due,
    claim_next,
    jobs_by_tenant,
    open_job_count,
)
from ragq.ledger.webhooks import (
    ClaimedDelivery,
    claim_delivery,
    disable_endpoint,
    ensure_endpoint,
    first_attempts,
    record_attempt,
    schedule_attempt,
)

__all__ = [
    # connecting and migrating
    "current_revision",
    "head_revision",
    "is_up_to_date",
    "ledger_exists",
    "make_engine",
    "normalize_url",
    "read_scope",
    "session_scope",
    "upgrade",
    # the job flow's port
    "FlowLedger",
    "FlowWriter",
    "MemoryLedger",
    "SqlFlowLedger",
    # the front door: batches and jobs
    "add_job",
    "batch_errors",
    "batch_jobs",
    "cancel_batch",
    "cancel_job",
    "create_batch",
    "get_batch",
    "get_job",
    "list_batches",
    "record_input_error",
    "start_batch",
    # the waiting line of a backlog
    "Claimed",
    "WaitingLine",
    "claim_due",
    "claim_next",
    "jobs_by_tenant",
    "set_tenant_share",
    "tenant_share",
    "tenant_shares",
    "open_job_count",
    # the front door: reading back, reports
    "TRAIL_TABLES",
    "MetricsSnapshot",
    "batch_cost",
    "batch_report",
    "evidence_records",
    "job_ledger",
    "job_trail",
    "metrics_snapshot",
    "ping",
    # the review queue
    "Resolution",
    "list_reviews",
    "resolve_review",
    # the resident supervisor: outages do not spend latency budgets
    "extend_open_deadlines",
    # API keys
    "create_api_key",
    "find_api_key",
    "list_api_keys",
    "revoke_api_key",
    # the corpus registry and ingest runs
    "UpsertOutcome",
    "add_ingest_counts",
    "close_stale_ingest_runs",
    "create_ingest_run",
    "current_versions",
    "finish_ingest_run",
    "get_documents",
    "get_ingest_run",
    "upsert_document",
    # sources: collections with a description, for jobs searching several
    "SourceView",
    "list_sources",
    "register_source",
    "source_schema",
    "collection_holds_documents",
    "source_names",
    "sources_holding_documents",
    # webhook endpoints and deliveries
    "ClaimedDelivery",
    "claim_delivery",
    "disable_endpoint",
    "ensure_endpoint",
    "first_attempts",
    "record_attempt",
    "schedule_attempt",
    # the rows those functions return
    "ApiKeyRow",
    "BatchInputErrorRow",
    "BatchRow",
    "DocumentRow",
    "IngestRunRow",
    "JobRow",
    "ReviewRow",
    # errors
    "LedgerConfigurationError",
    "LedgerError",
    "LedgerIntegrityError",
    "LedgerMigrationError",
    "LedgerNotFoundError",
    "LedgerNotMigratedError",
    "LedgerUnavailableError",
]
