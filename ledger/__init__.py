"""The ledger: every batch, job, step, charge and answer of ragq in one SQL database (SPEC C10).

SQLite by default, PostgreSQL by URL. Build an engine with :func:`make_engine`, bring the schema up
to date with :func:`upgrade`, and write through the keyword-only functions below inside
:func:`session_scope`, which commits, rolls back and turns database errors into
:class:`LedgerError` subclasses.
"""

from ledger.budgets import ChargeResult, charge_budget, create_job_budget, get_job_budget
from ledger.db import (
    SQLITE_BUSY_TIMEOUT_MS,
    ledger_errors,
    make_engine,
    make_session_factory,
    normalize_url,
    session_scope,
)
from ledger.documents import UpsertOutcome, count_documents, get_documents, upsert_document
from ledger.errors import (
    LedgerConfigurationError,
    LedgerError,
    LedgerIntegrityError,
    LedgerMigrationError,
    LedgerNotFoundError,
    LedgerNotMigratedError,
    LedgerUnavailableError,
    translate_error,
)
from ledger.ids import new_id
from ledger.ingest_runs import (
    add_ingest_counts,
    create_ingest_run,
    finish_ingest_run,
    get_ingest_run,
)
from ledger.migrate import current_revision, head_revision, is_up_to_date, upgrade
from ledger.models import (
    TERMINAL_JOB_STATUSES,
    AnswerRow,
    ApiKeyRow,
    Base,
    BatchRow,
    BatchStatus,
    BudgetChargeRow,
    BudgetDimension,
    ChargeOutcome,
    CitationRow,
    DocumentRow,
    EvidenceItemRow,
    IngestRunRow,
    IngestStatus,
    JobBudgetRow,
    JobRow,
    JobStatus,
    ModelCallRow,
    ModelCallStatus,
    PlanRow,
    RetrievalRequestRow,
    SubQueryOrigin,
    SubQueryRow,
    SubQueryStatus,
    SufficiencyCheckRow,
    UTCDateTime,
    VerificationRow,
    WebhookDeliveryRow,
    WebhookEndpointRow,
    utcnow,
)

__all__ = [
    # connecting
    "SQLITE_BUSY_TIMEOUT_MS",
    "ledger_errors",
    "make_engine",
    "make_session_factory",
    "normalize_url",
    "session_scope",
    # schema migrations
    "current_revision",
    "head_revision",
    "is_up_to_date",
    "upgrade",
    # corpus registry and ingest runs
    "UpsertOutcome",
    "add_ingest_counts",
    "count_documents",
    "create_ingest_run",
    "finish_ingest_run",
    "get_documents",
    "get_ingest_run",
    "upsert_document",
    # budgets
    "ChargeResult",
    "charge_budget",
    "create_job_budget",
    "get_job_budget",
    # tables
    "AnswerRow",
    "ApiKeyRow",
    "Base",
    "BatchRow",
    "BudgetChargeRow",
    "CitationRow",
    "DocumentRow",
    "EvidenceItemRow",
    "IngestRunRow",
    "JobBudgetRow",
    "JobRow",
    "ModelCallRow",
    "PlanRow",
    "RetrievalRequestRow",
    "SubQueryRow",
    "SufficiencyCheckRow",
    "UTCDateTime",
    "VerificationRow",
    "WebhookDeliveryRow",
    "WebhookEndpointRow",
    # vocabularies and values
    "TERMINAL_JOB_STATUSES",
    "BatchStatus",
    "BudgetDimension",
    "ChargeOutcome",
    "IngestStatus",
    "JobStatus",
    "ModelCallStatus",
    "SubQueryOrigin",
    "SubQueryStatus",
    "new_id",
    "utcnow",
    # errors
    "LedgerConfigurationError",
    "LedgerError",
    "LedgerIntegrityError",
    "LedgerMigrationError",
    "LedgerNotFoundError",
    "LedgerNotMigratedError",
    "LedgerUnavailableError",
    "translate_error",
]
