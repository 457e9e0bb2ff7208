"""The batch status machine: what a batch's status becomes when it starts, when one of
its jobs ends, and when it is cancelled.

Pure functions of the batch's current status and job counts, so the rules are tested without a
database; the ledger loads the counts, asks here, and writes what comes back (stamping
``finished_at`` and recording the batch's webhook event when a transition says it ``ended``).

::

    validating --start(n>0)--> in_progress --last job ends--> completed
    validating --start(0)----> completed
    validating | in_progress --cancel--> cancelling --last open job ends--> cancelled
    validating | in_progress | cancelling --cancel, no open job--> cancelled
    finalizing --last job ends--> completed          (a cancel leaves finalizing as it is)

A finished status (completed, cancelled, failed) is never left, and a batch ends exactly once:
only the transition into a finished status has ``ended`` set.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragq.schemas.statuses import BatchStatus

__all__ = [
    "ACTIVE_BATCH_STATUSES",
    "CANCELLABLE_BATCH_STATUSES",
    "FINISHED_BATCH_STATUSES",
    "BatchTransition",
    "on_cancel",
    "on_job_finished",
    "on_start",
]

FINISHED_BATCH_STATUSES = frozenset(
    {BatchStatus.COMPLETED, BatchStatus.CANCELLED, BatchStatus.FAILED})
"""Statuses a batch never leaves; reaching one is the batch's end (and its webhook event)."""

ACTIVE_BATCH_STATUSES = frozenset(
    {BatchStatus.IN_PROGRESS, BatchStatus.FINALIZING, BatchStatus.CANCELLING})
"""Statuses of a started batch that still has (or just had) open jobs."""

CANCELLABLE_BATCH_STATUSES = frozenset(
    {BatchStatus.VALIDATING, BatchStatus.IN_PROGRESS, BatchStatus.CANCELLING})
"""Statuses a cancel moves to ``cancelling`` (or straight to ``cancelled``)."""

_END_OF_LAST_JOB = {
    BatchStatus.IN_PROGRESS: BatchStatus.COMPLETED,
    BatchStatus.FINALIZING: BatchStatus.COMPLETED,
    BatchStatus.CANCELLING: BatchStatus.CANCELLED,
}


@dataclass(frozen=True)
class BatchTransition:
    """The batch's status after an event, and whether this event ended the batch (the caller
    then stamps ``finished_at`` and records the batch's webhook event, once)."""

    status: BatchStatus
    ended: bool = False


def _check_count(name: str, value: int) -> None:
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


def on_start(status: BatchStatus, *, total_jobs: int) -> BatchTransition:
    """A validated batch opens: ``in_progress`` with jobs, ``completed`` (ended) without any
    (every line was invalid). A batch past ``validating`` is not started again: its status is
    returned unchanged. Raises ValueError for a negative count."""
    _check_count("total_jobs", total_jobs)
    if status is not BatchStatus.VALIDATING:
        return BatchTransition(status)
    if total_jobs:
        return BatchTransition(BatchStatus.IN_PROGRESS)
    return BatchTransition(BatchStatus.COMPLETED, ended=True)


def on_job_finished(status: BatchStatus, *, open_jobs: int) -> BatchTransition:
    """One of the batch's jobs ended, leaving ``open_jobs`` still open. The end of the last open
    job ends a started batch: ``completed``, or ``cancelled`` when it was being cancelled.
    Otherwise, and for a batch not started or already finished, nothing changes. Raises
    ValueError for a negative count."""
    _check_count("open_jobs", open_jobs)
    after = _END_OF_LAST_JOB.get(status)
    if open_jobs or after is None:
        return BatchTransition(status)
    return BatchTransition(after, ended=True)


def on_cancel(status: BatchStatus, *, open_jobs: int) -> BatchTransition:
    """A cancel of the batch while ``open_jobs`` of its jobs are open. A cancellable batch
    becomes ``cancelling`` (its open jobs are then cancelled one by one, and the last one's end
    makes it ``cancelled`` through :func:`on_job_finished`), or ``cancelled`` at once (ended)
    when no job is open. ``finalizing`` and finished batches keep their status. Raises
    ValueError for a negative count."""
    _check_count("open_jobs", open_jobs)
    if status not in CANCELLABLE_BATCH_STATUSES:
        return BatchTransition(status)
    if open_jobs:
        return BatchTransition(BatchStatus.CANCELLING)
    return BatchTransition(BatchStatus.CANCELLED, ended=True)
