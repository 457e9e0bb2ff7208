"""Within a step, the work's answer is decided on the job as the step's own writes left it
(ragq.orchestration.flow.carry): the status and budget read again, the rest carried over, the
job read whole after any write that is not carried."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest

import ragq.tasks.runner as runner_module
from ragq.ledger import add_job, make_engine, session_scope
from ragq.ledger.memory import MemoryLedger
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.orchestration.budgets import Budget
from ragq.orchestration.flow import (
    CallRole,
    Charge,
    Enqueue,
    Event,
    JobState,
    OpenBudget,
    RecordModelCall,
    RecordNextStep,
    RecordRetrieval,
    SetQueryText,
    SetStatus,
    SubQueryState,
    carry_over,
)
from ragq.schemas.flow import Usage
from ragq.schemas.statuses import BudgetDimension, JobStatus
from ragq.tasks.inline import InlineDispatcher
from ragq.tasks.runner import Runner
from tests.fakes.flow_world import COLLECTION, config, seeded_world
from tests.ledger_template import migrated


def _state(**changes: Any) -> JobState:
    base = JobState(job_id="job_1", question="q?", collection=COLLECTION, acl=("public",),
                    status=JobStatus.RETRIEVING, config=config(),
                    sub_queries=(SubQueryState("sq_a", 0, 0, "who?"),
                                 SubQueryState("sq_b", 0, 1, "where?")))
    return replace(base, **changes)


# --- the pure part ---------------------------------------------------------------------------


def test_a_sub_querys_searched_text_is_carried_and_nothing_else_changes() -> None:
    state = _state()
    carried = carry_over(state, [SetStatus(JobStatus.RETRIEVING),
                                 SetQueryText("sq_b", "where is it?"),
                                 Charge("k", {BudgetDimension.STEPS: 1}, step="retrieve")])
    assert carried is not None
    assert [sq.final_text for sq in carried.sub_queries] == [None, "where is it?"]
    assert replace(carried, sub_queries=state.sub_queries) == state


def test_model_calls_and_charges_alone_carry_the_state_as_it_was() -> None:
    state = _state()
    usage = Usage(prompt_tokens=1, completion_tokens=1, latency_ms=1.0, model="m")
    assert carry_over(state, [RecordModelCall("sufficiency", "c1", usage, "p"),
                              Charge("k", {BudgetDimension.STEPS: 1}, step="check")]) is state


@pytest.mark.parametrize("write", [
    RecordNextStep(Enqueue("verify", ())),
    RecordRetrieval("sq_a", 0, "who?", "key", 5, ("public",), (), 1),
    OpenBudget("bounded", Budget()),
])
def test_any_write_not_carried_asks_for_the_whole_job(write: Any) -> None:
    assert carry_over(_state(), [Charge("k", {BudgetDimension.STEPS: 1}, step="x"), write]) is None


# --- the ledgers read the status and budget again --------------------------------------------


def _sql_job(tmp_path: Any) -> tuple[SqlFlowLedger, str]:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    migrated(url)
    ledger = SqlFlowLedger(make_engine(url))
    with session_scope(ledger.engine) as session:
        job_id = add_job(session, batch_id=None, custom_id=None, position=None,
                         tenant="t", collection=COLLECTION, question="q?", acl=["public"]).id
    return ledger, job_id


def _memory_job(tmp_path: Any) -> tuple[MemoryLedger, str]:
    ledger = MemoryLedger()
    return ledger, ledger.add_job("q?", collection=COLLECTION)


@pytest.mark.parametrize("make", [_sql_job, _memory_job], ids=["sql", "memory"])
def test_refresh_reads_the_status_and_budget_another_transaction_changed(
        make: Any, tmp_path: Any) -> None:
    ledger, job_id = make(tmp_path)
    with ledger.transaction() as tx:
        tx.write(job_id, SetStatus(JobStatus.ROUTING))
        tx.write(job_id, OpenBudget("bounded", Budget(max_steps=3)))
    state = ledger.snapshot(job_id, config())
    marked = replace(state, question="kept as given")
    with ledger.transaction() as tx:  # another step, after the snapshot
        tx.write(job_id, SetStatus(JobStatus.RETRIEVING))
        two_steps = {BudgetDimension.STEPS: 2}
        assert tx.write(job_id, Charge(f"a-{uuid.uuid4()}", two_steps, step="x")) is None
        assert tx.write(job_id, Charge(f"b-{uuid.uuid4()}", two_steps, step="x")) \
            == BudgetDimension.STEPS

    fresh = ledger.refresh(marked)

    assert (state.status, fresh.status) == (JobStatus.ROUTING, JobStatus.RETRIEVING)
    assert state.budget is not None and fresh.budget is not None
    assert (state.budget.used[BudgetDimension.STEPS], fresh.budget.used[BudgetDimension.STEPS]) \
        == (0, 2)
    assert (state.first_refused, fresh.first_refused) == (None, BudgetDimension.STEPS)
    assert fresh.question == "kept as given"  # nothing but the status and budget is read


# --- the runner ------------------------------------------------------------------------------


class CountingLedger(MemoryLedger):
    """Counts how often the job is read whole and how often refreshed."""

    def __init__(self) -> None:
        super().__init__()
        self.snapshots = self.refreshes = 0

    def snapshot(self, job_id: str, config: Any) -> JobState:
        self.snapshots += 1
        return super().snapshot(job_id, config)

    def refresh(self, state: JobState) -> JobState:
        self.refreshes += 1
        return super().refresh(state)


def _books(seed: int) -> tuple[dict[str, Any], CountingLedger]:
    ledger = CountingLedger()
    job_id = ledger.add_job("Who founded the company that makes the camera lens?",
                            collection=COLLECTION)
    InlineDispatcher(Runner(ledger, seeded_world(seed, failure_rate=0.03), config())).run(job_id)
    job = ledger.jobs[job_id]
    assert job.budget is not None
    result = dict(job.result or {})
    result["usage"] = {k: v for k, v in result.get("usage", {}).items() if k != "latency_ms"}
    return {"status": job.status, "result": result, "used": dict(job.budget.used),
            "sub_queries": sorted((s.round, s.index, str(s.status), s.final_text, s.finding)
                                  for s in job.sub_queries.values()),
            "calls": sorted(job.model_calls)}, ledger


@pytest.mark.parametrize("seed", range(12))
def test_a_job_ends_with_the_same_books_as_when_every_decision_reads_it_whole(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    carried, ledger = _books(seed)
    monkeypatch.setattr(runner_module, "carry_over", lambda state, actions: None)
    whole, reread = _books(seed)
    assert carried == whole
    assert ledger.refreshes > 0 and reread.refreshes == 0
    assert ledger.snapshots + ledger.refreshes == reread.snapshots
    assert ledger.snapshots < reread.snapshots


class CancelDuringCall(Runner):
    """Cancels the job (as the front door would, in another transaction) while its first
    sufficiency call is under way."""

    def perform(self, work: Any, state: JobState) -> Event:
        if isinstance(work, CallRole) and work.role == "sufficiency":
            self.ledger.jobs[state.job_id].status = JobStatus.CANCELLED  # type: ignore[attr-defined]
        return super().perform(work, state)


def test_a_cancellation_during_a_carried_step_is_seen_by_its_next_decision() -> None:
    ledger = CountingLedger()
    job_id = ledger.add_job("Who founded the company that makes the camera lens?",
                            collection=COLLECTION)
    runner = CancelDuringCall(ledger, seeded_world(3), config())
    InlineDispatcher(runner).run(job_id)
    roles = sorted(role for role, *_ in ledger.jobs[job_id].model_calls.values())
    assert roles.count("sufficiency") == 1  # the call under way is still recorded
    assert not {"finder", "verifier", "synthesizer"} & set(roles)  # and nothing follows it
    assert ledger.refreshes > 0
