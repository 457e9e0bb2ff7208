"""The batch status machine without a database: each rule, what holds for every status and
count, and whole batches driven through random interleavings of job ends and cancels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.batches import (
    FINISHED_BATCH_STATUSES,
    BatchTransition,
    on_cancel,
    on_job_finished,
    on_start,
)
from ragq.schemas.statuses import BatchStatus as S

Rule = Callable[..., BatchTransition]


def test_a_batch_with_jobs_starts_in_progress_and_an_empty_one_ends_completed():
    assert on_start(S.VALIDATING, total_jobs=3) == BatchTransition(S.IN_PROGRESS)
    assert on_start(S.VALIDATING, total_jobs=0) == BatchTransition(S.COMPLETED, ended=True)
    assert on_start(S.IN_PROGRESS, total_jobs=0) == BatchTransition(S.IN_PROGRESS)


@pytest.mark.parametrize(("status", "after"), [
    (S.IN_PROGRESS, S.COMPLETED), (S.FINALIZING, S.COMPLETED), (S.CANCELLING, S.CANCELLED)])
def test_the_end_of_the_last_open_job_ends_a_started_batch(status, after):
    assert on_job_finished(status, open_jobs=0) == BatchTransition(after, ended=True)
    assert on_job_finished(status, open_jobs=1) == BatchTransition(status)


def test_a_cancel_waits_for_open_jobs_or_ends_at_once_without_any():
    assert on_cancel(S.IN_PROGRESS, open_jobs=2) == BatchTransition(S.CANCELLING)
    assert on_cancel(S.VALIDATING, open_jobs=2) == BatchTransition(S.CANCELLING)
    assert on_cancel(S.IN_PROGRESS, open_jobs=0) == BatchTransition(S.CANCELLED, ended=True)
    assert on_cancel(S.CANCELLING, open_jobs=0) == BatchTransition(S.CANCELLED, ended=True)
    assert on_cancel(S.FINALIZING, open_jobs=2) == BatchTransition(S.FINALIZING)
    assert on_cancel(S.COMPLETED, open_jobs=0) == BatchTransition(S.COMPLETED)


RULES: list[tuple[Rule, str]] = [(on_start, "total_jobs"), (on_job_finished, "open_jobs"),
                                 (on_cancel, "open_jobs")]


@pytest.mark.parametrize(("rule", "count"), RULES)
def test_a_negative_count_is_refused(rule: Rule, count: str):
    with pytest.raises(ValueError, match=count):
        rule(S.IN_PROGRESS, **{count: -1})


@given(st.sampled_from(RULES), st.sampled_from(list(S)), st.integers(0, 10_000))
def test_finished_is_never_left_and_only_entering_it_ends_a_batch(rule, status, n):
    decide, count = rule
    step = decide(status, **{count: n})
    if status in FINISHED_BATCH_STATUSES:
        assert step == BatchTransition(status)
    assert step.ended == (step.status in FINISHED_BATCH_STATUSES
                          and status not in FINISHED_BATCH_STATUSES)


@dataclass
class LedgerModel:
    """What the ledger does with the rules: a batch, its open jobs, and how often it ended."""

    status: S = S.VALIDATING
    open_jobs: int = 0
    ends: int = 0
    cancelled_before_end: bool = False

    def apply(self, step: BatchTransition) -> None:
        if self.status in FINISHED_BATCH_STATUSES:
            assert step.status == self.status, "a finished batch changed status"
        self.status, self.ends = step.status, self.ends + step.ended

    def start(self, jobs: int) -> None:
        self.open_jobs = jobs
        self.apply(on_start(self.status, total_jobs=jobs))

    def finish_one(self) -> None:
        if self.open_jobs:
            self.open_jobs -= 1
            self.apply(on_job_finished(self.status, open_jobs=self.open_jobs))

    def cancel(self) -> None:
        if self.status not in FINISHED_BATCH_STATUSES:
            self.cancelled_before_end = True
        self.apply(on_cancel(self.status, open_jobs=self.open_jobs))
        while self.open_jobs:  # the ledger cancels every open job in the same transaction
            self.finish_one()


@given(st.integers(0, 30), st.lists(st.sampled_from(["finish", "cancel"]), max_size=60))
def test_every_batch_ends_exactly_once_completed_or_cancelled(jobs, events):
    batch = LedgerModel()
    batch.start(jobs)
    for event in events:
        batch.finish_one() if event == "finish" else batch.cancel()
    while batch.open_jobs:  # every job ends sooner or later
        batch.finish_one()
    assert batch.ends == 1
    assert batch.status is (S.CANCELLED if batch.cancelled_before_end else S.COMPLETED)


@given(st.integers(1, 30), st.integers(0, 29))
def test_a_batch_is_not_over_while_a_job_is_open(jobs, finished):
    batch = LedgerModel()
    batch.start(jobs)
    for _ in range(min(finished, jobs - 1)):
        batch.finish_one()
    assert batch.status is S.IN_PROGRESS and batch.ends == 0
    batch.cancel()
    assert batch.status is S.CANCELLED and batch.ends == 1
