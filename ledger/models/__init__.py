"""Every ledger table as a typed SQLAlchemy model, split by the part of a job it records."""

from ragq.ledger.models.answers import AnswerRow, CitationRow
from ragq.ledger.models.base import Base, UTCDateTime, table_of, utcnow
from ragq.ledger.models.budget import BudgetChargeRow, JobBudgetRow
from ragq.ledger.models.calls import ModelCallRow
from ragq.ledger.models.corpus import DocumentRow, IngestRunRow, SourceRow
from ragq.ledger.models.enums import (
    TERMINAL_JOB_STATUSES,
    BatchStatus,
    BudgetDimension,
    ChargeOutcome,
    IngestStatus,
    JobStatus,
    ModelCallStatus,
    ReviewDecision,
    SubQueryOrigin,
    SubQueryStatus,
)
from ragq.ledger.models.planning import AskRow, PlanRow, SubQueryRow, VerificationRow
from ragq.ledger.models.retrieval import EvidenceItemRow, RetrievalRequestRow, SufficiencyCheckRow
from ragq.ledger.models.review import ReviewRow
from ragq.ledger.models.submission import (
    ApiKeyRow,
    BatchInputErrorRow,
    BatchRow,
    JobRow,
    TenantRow,
)
from ragq.ledger.models.sweeper import SweeperLeaseRow
from ragq.ledger.models.webhooks import WebhookDeliveryRow, WebhookEndpointRow

__all__ = [
    # foundation
    "Base",
    "UTCDateTime",
    "table_of",
    "utcnow",
    # submission
    "ApiKeyRow",
    "BatchInputErrorRow",
    "BatchRow",
    "JobRow",
    "TenantRow",
    # budgets
    "BudgetChargeRow",
    "JobBudgetRow",
    # execution
    "AskRow",
    "EvidenceItemRow",
    "ModelCallRow",
    "PlanRow",
    "RetrievalRequestRow",
    "SubQueryRow",
    "SufficiencyCheckRow",
    "VerificationRow",
    # outcome
    "AnswerRow",
    "CitationRow",
    "ReviewRow",
    "SweeperLeaseRow",
    "WebhookDeliveryRow",
    "WebhookEndpointRow",
    # corpus
    "DocumentRow",
    "IngestRunRow",
    "SourceRow",
    # vocabularies
    "TERMINAL_JOB_STATUSES",
    "BatchStatus",
    "BudgetDimension",
    "ChargeOutcome",
    "IngestStatus",
    "JobStatus",
    "ModelCallStatus",
    "ReviewDecision",
    "SubQueryOrigin",
    "SubQueryStatus",
]
