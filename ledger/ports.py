"""The ledger as the job flow sees it: a small interface with a SQL and an in-memory
implementation (:class:`ragq.ledger.sql_flow.SqlFlowLedger`, :class:`ragq.ledger.memory.
MemoryLedger`), so the step runner is the same against both."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from ragq.orchestration.fair_share import Claimed
from ragq.orchestration.flow import Action, FlowConfig, JobState
from ragq.schemas.statuses import BudgetDimension


class FlowWriter(Protocol):
    """The writes of one transaction."""

    def write(self, job_id: str, action: Action) -> BudgetDimension | None:
        """Apply one ledger write (see ``orchestration.flow.LEDGER_WRITES``); for a charge, the
        dimension the budget refused, None when it was paid."""
        ...


class FlowLedger(Protocol):
    """What the step runner needs from the ledger."""

    def snapshot(self, job_id: str, config: FlowConfig) -> JobState:
        """The job as the ledger holds it now. Raises ``LedgerNotFoundError`` (SQL) or
        KeyError (memory) for an unknown job."""
        ...

    def refresh(self, state: JobState) -> JobState:
        """``state`` with the job's status and budget (its charges, its first refusal) read
        again: what a step's carried writes (see :mod:`ragq.orchestration.flow.carry`) and
        anybody else's cancellation may have changed since ``state`` was read."""
        ...

    def transaction(self) -> AbstractContextManager[FlowWriter]:
        """One transaction: every write in it commits together when the block ends, none when
        it raises."""
        ...

    def current_versions(self, collection: str, doc_ids: Sequence[str]) -> dict[str, str]:
        """{doc_id: source_version} of the registered documents among ``doc_ids``."""
        ...

    def pending_webhooks(self, job_id: str) -> list[str]:
        """Webhook ids of the unsent events of the job and of its batch."""
        ...

    def claim_next(self) -> list[Claimed]:
        """The waiting jobs the window of open jobs now has room for (with their priorities),
        marked sent in a committed transaction: their route steps are the caller's to send (see
        :mod:`ragq.ledger.waiting_line`)."""
        ...
