"""Every ledger table as a typed SQLAlchemy model, split by the part of the SPEC it records."""

from ledger.models.answers import AnswerRow, CitationRow
from ledger.models.base import Base, UTCDateTime, utcnow
from ledger.models.budget import BudgetChargeRow, JobBudgetRow
from ledger.models.calls import ModelCallRow
from ledger.models.corpus import DocumentRow, IngestRunRow
from ledger.models.enums import (
    TERMINAL_JOB_STATUSES,
    BatchStatus,
    BudgetDimension,
    ChargeOutcome,
    IngestStatus,
    JobStatus,
    ModelCallStatus,
    SubQueryOrigin,
    SubQueryStatus,
)
from ledger.models.planning import PlanRow, SubQueryRow, VerificationRow
from ledger.models.retrieval import EvidenceItemRow, RetrievalRequestRow, SufficiencyCheckRow
from ledger.models.submission import ApiKeyRow, BatchInputErrorRow, BatchRow, JobRow
from ledger.models.webhooks import WebhookDeliveryRow, WebhookEndpointRow

__all__ = [
    # foundation
    "Base",
    "UTCDateTime",
    "utcnow",
    # submission
    "ApiKeyRow",
    "BatchInputErrorRow",
    "BatchRow",
    "JobRow",
    # budgets
    "BudgetChargeRow",
    "JobBudgetRow",
    # execution
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
    "WebhookDeliveryRow",
    "WebhookEndpointRow",
    # corpus
    "DocumentRow",
    "IngestRunRow",
    # vocabularies
    "TERMINAL_JOB_STATUSES",
    "BatchStatus",
    "BudgetDimension",
    "ChargeOutcome",
    "IngestStatus",
    "JobStatus",
    "ModelCallStatus",
    "SubQueryOrigin",
    "SubQueryStatus",
]
